"""explorer: load any ONNX model, run it in a recording NumPy step-through executor, and look at everything."""
from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bridge import captured_side, compare, keras, pytorch
    from .cells import RecurrentCell, recurrent_cells
    from .errors import (
        CompareError,
        ExecutionError,
        ExplorerError,
        FeedError,
        LimitExceeded,
        ModelError,
        SweepError,
        UnsupportedOperatorError,
    )
    from .executor import run
    from .generation import Generation, generate
    from .limits import Limits
    from .model.model import Model, load
    from .optimizer import optimize
    from .reduce.reduce import reduce
    from .sweep import sweep
    from .trace.trace import Event, Iteration, Trace
    from .trace.values import ValueSummary
    from .views.dot import model_to_dot
    from .views.notebook import show
    from .views.render import render, write_diagram

__all__ = [
    "CompareError", "Event", "ExecutionError", "ExplorerError", "FeedError", "Generation", "Iteration", "LimitExceeded", "Limits", "Model",
    "ModelError", "RecurrentCell", "SweepError", "Trace", "UnsupportedOperatorError", "ValueSummary", "captured_side", "compare", "generate", "keras", "load",
    "model_to_dot", "optimize", "pytorch", "recurrent_cells", "reduce", "render", "run", "show", "sweep", "write_diagram",
]
__version__ = "0.1.0"

# The API is imported at its first use, whole (and Jupyter's HTML display of its objects installed then): a command
# line answering --help, or a worker importing one module, does not pay seconds of imports (onnx, the executor)
_API = {
    'captured_side': ('.bridge', 'captured_side'),
    'compare': ('.bridge', 'compare'),
    'keras': ('.bridge', 'keras'),
    'pytorch': ('.bridge', 'pytorch'),
    'RecurrentCell': ('.cells', 'RecurrentCell'),
    'recurrent_cells': ('.cells', 'recurrent_cells'),
    'CompareError': ('.errors', 'CompareError'),
    'ExecutionError': ('.errors', 'ExecutionError'),
    'ExplorerError': ('.errors', 'ExplorerError'),
    'FeedError': ('.errors', 'FeedError'),
    'LimitExceeded': ('.errors', 'LimitExceeded'),
    'ModelError': ('.errors', 'ModelError'),
    'SweepError': ('.errors', 'SweepError'),
    'UnsupportedOperatorError': ('.errors', 'UnsupportedOperatorError'),
    'run': ('.executor', 'run'),
    'Generation': ('.generation', 'Generation'),
    'generate': ('.generation', 'generate'),
    'Limits': ('.limits', 'Limits'),
    'Model': ('.model.model', 'Model'),
    'load': ('.model.model', 'load'),
    'optimize': ('.optimizer', 'optimize'),
    'show': ('.views.notebook', 'show'),
    'reduce': ('.reduce.reduce', 'reduce'),
    'sweep': ('.sweep', 'sweep'),
    'Event': ('.trace.trace', 'Event'),
    'Iteration': ('.trace.trace', 'Iteration'),
    'Trace': ('.trace.trace', 'Trace'),
    'ValueSummary': ('.trace.values', 'ValueSummary'),
    'model_to_dot': ('.views.dot', 'model_to_dot'),
    'render': ('.views.render', 'render'),
    'write_diagram': ('.views.render', 'write_diagram'),
}


def _load_api() -> None:
    import importlib

    for name, (module, attribute) in _API.items():
        globals()[name] = getattr(importlib.import_module(module, __name__), attribute)
    from .views.notebook import install

    install()  # Jupyter shows models, traces, comparisons, cells and sweeps as HTML


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'explorer' has no attribute {name!r}")
    _load_api()
    return globals()[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))


class _Package(types.ModuleType):
    """This package, whose subpackages named like functions of its API (compare, sweep) never hide them: the import
    system's binding of such a subpackage to its name is dropped (the subpackage stays in sys.modules)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _API and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
