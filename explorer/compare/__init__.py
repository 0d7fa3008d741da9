"""Comparing two runs: explorer against onnxruntime, against another model of the same function (a re-export,
an fp16 variant, the optimized model), against a framework's values; every value aligned, down to the
iterations of loops and the gates of recurrent nodes."""
from .api import compare
from .framework import GateCheck, check_gates
from .gate_departures import GateDivergence
from .measure import IterationError, ValueComparison
from .report import Comparison, Divergence
from .stats import OutputDiff, compare_values

__all__ = ["Comparison", "Divergence", "GateCheck", "GateDivergence", "IterationError", "OutputDiff",
           "ValueComparison", "check_gates", "compare", "compare_values"]
