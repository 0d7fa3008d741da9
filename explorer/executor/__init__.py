"""The recording NumPy executor."""
from .run import run

__all__ = ["run"]
