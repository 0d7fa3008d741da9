"""Generation step by step: a decoder export driven token by token (its caches fed back), recorded as one trace
whose generation loop has one iteration per step, and where two generations part."""
from .against import GenerationComparison, generate_against
from .run import Generation, generate

__all__ = ["Generation", "GenerationComparison", "generate", "generate_against"]
