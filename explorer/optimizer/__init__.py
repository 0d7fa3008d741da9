"""Pattern optimizer: rewrites recorded as data, before/after models of each, proofs of equivalence, bisection."""
from .pattern import MatchResult, Pattern
from .patterns import default_patterns, pattern_names, select_patterns
from .record import RewriteStep
from .result import Decline, OptimizationResult, PatternStats
from .rewrite import optimize
from .state import GraphState

__all__ = [
    "Decline", "GraphState", "MatchResult", "OptimizationResult", "Pattern", "PatternStats", "RewriteStep",
    "default_patterns", "optimize", "pattern_names", "select_patterns",
]
