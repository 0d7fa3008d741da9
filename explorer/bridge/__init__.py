"""From a framework model to its ONNX export and back: capture what every module computed (capture.py, needs the
framework), align each module with the ONNX values it became from what the exporter wrote (scopes.py, align.py),
walk them in the framework's order to the first module with its own error (walk.py, forcing.py), and fit and fix
what the exporter got wrong (fitting.py, cell_fitting.py, loop_fitting.py, calls.py, settings_check.py, fix.py,
weight_writes.py)."""
from .api import FrameworkSide, captured_side, compare, compare_framework, keras, pytorch
from .captured import Captured, load_captured
from .fix import FixReport, fix
from .report import Finding, FrameworkComparison

__all__ = ["Captured", "Finding", "FixReport", "FrameworkComparison", "FrameworkSide", "captured_side", "compare",
           "compare_framework", "fix", "keras", "load_captured", "pytorch"]
