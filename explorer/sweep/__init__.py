"""Sweeps: a model compared with its reference over many inputs (a grid of dims and seeds, or a folder of real
inputs), on a Dask cluster, one row per input, worst first."""
from .api import Plan, SweepResult, plan, sweep
from .cluster import Sweep
from .plan import Item, files, grid, input_files

__all__ = ["Item", "Plan", "Sweep", "SweepResult", "files", "grid", "input_files", "plan", "sweep"]
