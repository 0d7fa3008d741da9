"""Pattern optimizer: rewrites recorded as data, before/after models of each, proofs of equivalence, bisection."""
from .pattern import MatchResult, Pattern
from .patterns import default_patterns, pattern_names, select_patterns
from .record import RewriteStep
from .result import Decline, OnnxruntimeCheck, OptimizationResult, PatternStats
from .rewrite import first_rewrites, optimize
from .state import GraphState

__all__ = [
    "Decline", "GraphState", "MatchResult", "OnnxruntimeCheck", "OptimizationResult", "Pattern", "PatternStats",
    "RewriteStep", "default_patterns", "first_rewrites", "optimize", "pattern_names", "select_patterns",
]
