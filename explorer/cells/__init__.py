"""Recurrent cells however the exporter wrote them: GRU/LSTM/RNN operators, loops and scans whose body is the
cell, and unrolled graphs; found by their dataflow, not their names."""
from .cell import RecurrentCell, Weights
from .find import find_cell, recurrent_cells

__all__ = ["RecurrentCell", "Weights", "find_cell", "recurrent_cells"]
