"""explorer: load any ONNX model, run it in a recording NumPy step-through executor, and look at everything."""
from .bridge import captured_side, compare, pytorch
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
from .model import Model, load
from .optimizer import optimize
from .share.notebook import install as _install_notebook_display
from .share.notebook import show
from .share.reduce import reduce
from .sweep import sweep
from .trace import Event, Iteration, Trace
from .values import ValueSummary
from .views.dot import model_to_dot
from .views.render import render, write_diagram

__all__ = [
    "CompareError", "Event", "ExecutionError", "ExplorerError", "FeedError", "Generation", "Iteration", "LimitExceeded", "Limits", "Model",
    "ModelError", "RecurrentCell", "SweepError", "Trace", "UnsupportedOperatorError", "ValueSummary", "captured_side", "compare", "generate", "load",
    "model_to_dot", "optimize", "pytorch", "recurrent_cells", "reduce", "render", "run", "show", "sweep", "write_diagram",
]
__version__ = "0.1.0"
_install_notebook_display()  # Jupyter shows models, traces, comparisons, cells and sweeps as HTML
