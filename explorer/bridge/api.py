"""Comparing an ONNX export with the framework model it came from: `explorer.pytorch(module)` (run and captured
here, torch needed) or `explorer.bridge.captured_side(path)` (a capture saved earlier, no framework needed)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..compare.stats import ATOL, RTOL
from ..errors import CompareError, ExecutionError
from ..executor import run
from ..limits import Limits
from ..model.model import Model, load
from .align import Recorded, align_points, recorded_values
from .calls import odd_weight
from .captured import Captured, load_captured
from .cell_fitting import fit_cell
from .fitting import fit
from .loop_fitting import cell_for, departing_gate, fit_loop_cell, mends, replaced_model
from .report import Finding, FrameworkComparison
from .scopes import read_scopes
from .settings_check import odd_setting
from .walk import check_points


@dataclass
class FrameworkSide:
    """The framework side of a comparison: a live module (captured on the feeds when compared) or a capture."""

    label: str
    module: Any = None
    captured: Captured | None = None
    framework: str = "PyTorch"

    def capture(self, inputs: list[np.ndarray]) -> Captured:
        if self.captured is not None:
            return self.captured
        if self.framework == "Keras":
            from .capture_keras import capture_keras  # keras is imported here only

            return capture_keras(self.module, inputs)
        from .capture import capture  # torch is imported here only

        return capture(self.module, inputs)

    def fresh(self) -> FrameworkSide:
        """The same live model, to be captured again (on other inputs)."""
        return FrameworkSide(self.label, module=self.module, framework=self.framework)


def pytorch(module: Any) -> FrameworkSide:
    """A PyTorch nn.Module as a side of `explorer.compare` (run in eval mode on the ONNX model's inputs)."""
    return FrameworkSide(f"PyTorch {type(module).__name__}", module=module)


def keras(model: Any) -> FrameworkSide:
    """A keras.Model (functional or Sequential) as a side of `explorer.compare`; or a function building one, run
    here so that each layer keeps the line of your code that created and called it (its source line)."""
    if not hasattr(model, "layers") and callable(model):
        from .capture_keras import build_with_sources  # keras is imported here only

        model = build_with_sources(model)
    return FrameworkSide(f"Keras {getattr(model, 'name', type(model).__name__)}", module=model, framework="Keras")


def captured_side(source: str | os.PathLike | bytes | Captured, limits: Limits | None = None) -> FrameworkSide:
    """A capture saved by explorer.bridge.capture (an .npz) as a side of `explorer.compare`."""
    found = source if isinstance(source, Captured) else load_captured(
        source if isinstance(source, bytes) else Path(source), limits)
    label = f"{found.framework} capture" + ("" if isinstance(source, (bytes, Captured)) else f" {source}")
    return FrameworkSide(label, captured=found)


def feeds_of(model: Model, captured: Captured) -> dict[str, Any]:
    """The capture's inputs, by the ONNX model's input order."""
    if len(captured.inputs) != len(model.inputs):
        raise CompareError(f"the capture holds {len(captured.inputs)} inputs, the model takes {len(model.inputs)}")
    return {spec.name: value for spec, value in zip(model.inputs, captured.inputs)}


def compare_framework(model: Model | str | os.PathLike | bytes, side: FrameworkSide,
                      feeds: dict[str, Any] | None = None, *, rtol: float = RTOL, atol: float = ATOL,
                      limits: Limits | None = None, diagnose: bool = True) -> FrameworkComparison:
    """The export against its framework, module by module: see FrameworkComparison."""
    model = model if isinstance(model, Model) else load(model)
    if feeds is None:
        if side.captured is None:
            raise CompareError("give the feeds: the framework model runs on them")
        feeds = feeds_of(model, side.captured)
    names = [spec.name for spec in model.inputs]
    missing = [n for n in names if n not in feeds]
    if missing:
        raise CompareError(f"the feeds lack the model's input(s) {', '.join(missing)}")
    captured = side.capture([np.asarray(feeds[n]) for n in names])
    result = FrameworkComparison(model.source, side.label, [], captured, rtol=rtol, atol=atol)
    try:
        trace = run(model, {n: feeds[n] for n in names}, limits=limits)
    except ExecutionError as exc:
        if exc.trace is None:
            raise
        trace = exc.trace
        result.errors["explorer"] = str(exc)
    result.notes += [f"{name!r} is an nn.LSTM with proj_size={info.recurrent['proj_size']}: torch 2.13 does not export "
                     "it faithfully (TorchScript refuses it, dynamo writes an LSTM onnxruntime rejects), and explorer "
                     "compares it whole, not layer by layer"
                     for name, info in captured.modules.items() if info.recurrent and info.recurrent.get("proj_size")]
    scopes = read_scopes(model, captured)
    result.scopes_from = scopes.how
    recorded = recorded_values(trace)
    points = align_points(model, captured, scopes, recorded)
    result.checks = check_points(model, trace, captured, points, recorded, rtol, atol, scopes.stack)
    if diagnose:
        result.diagnosis = _diagnose(model, trace, captured, scopes, result, recorded, rtol, atol,
                                     {n: feeds[n] for n in names})
    return result


def _diagnose(model: Model, trace: Any, captured: Captured, scopes: Any, result: FrameworkComparison,
              recorded: Recorded, rtol: float, atol: float, feeds: dict[str, Any]) -> list[Finding]:
    """A finding for each point departing with its own error: the exporter variant of a recurrent node that
    reproduces the framework, the odd weight of one call of a module called many times, or no explanation."""
    found: list[Finding] = []
    mended: list[Model] = []  # models with a loop cell's fix written in: the points they mend need no finding
    errors = {id(c.point): c.diff.max_abs for c in result.checks if c.diff}
    for index, check in enumerate(result.checks):
        p = check.point
        if check.status != "own error" or not p.module or any(f.module == p.module for f in found):
            continue
        before = [c.point for c in result.checks[:index]]
        if any(mends(fixed, p, before, recorded, errors, rtol, atol) for fixed in mended):
            continue
        fitted = fit(model, trace, captured, p, rtol, atol)
        if fitted is not None:
            found.append(Finding(p.module, p.onnx_node, fitted.finding, fitted.variant.fix, fitted, p.label))
            continue
        odd = fit_cell(model, captured.modules[p.module], p, before, recorded, errors, rtol, atol)
        if odd is not None and odd.replace:  # a cell module's weights: in a Scan's body, its gates are gathered
            _locate_gate(check, trace, replaced_model(model, odd.replace), feeds, cell_for(model, p, before),
                         rtol, atol)
        if odd is None:
            looped = fit_loop_cell(model, p, before, recorded, errors, rtol, atol)
            if looped is not None:
                mended.append(looped.fixed)
                odd = looped.finding
                _locate_gate(check, trace, looped.fixed, feeds, looped.cell, rtol, atol)
        odd = odd or odd_setting(model, scopes, captured.modules[p.module], p)
        if odd is None and captured.modules[p.module].calls > 1:
            odd = odd_weight(model, scopes, p)
        if odd is not None:
            found.append(odd)
            continue
        what = "no exporter variant explorer knows reproduces the framework" if p.kind == "layer_out" else \
            "explorer knows no fix for it"
        found.append(Finding(p.module, p.onnx_node, f"{p.label} ({captured.modules[p.module].class_name}) departs "
                             f"with its own error {check.own.max_abs if check.own else 0:.3g}; {what}",
                             point=p.label))
    return found


def _locate_gate(check: Any, trace: Any, fixed: Model | None, feeds: dict[str, Any], cell: Any, rtol: float,
                 atol: float) -> None:
    """The gate a departing loop-form cell parts at, from its gates against the fixed model's (when none is known)."""
    if cell is not None and fixed is not None and check.where.gate is None:
        check.where.gate = departing_gate(trace, fixed, feeds, cell, check.where.step or 0, rtol, atol)


def factory_names(source: str) -> list[str]:
    """The functions a .py file defines at its top level, read without running it (the factories it may offer);
    [] when it does not parse."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")]


def load_factory(spec: str, framework: str = "PyTorch") -> Any:
    """The object `factory()` returns for SPEC `path/to/file.py:factory` or `package.module:factory` (user code:
    it runs here; a Keras model is built inside keras_sources, so its layers keep their source lines), or the
    model a `.keras` file holds."""
    import importlib
    import importlib.util
    import sys

    if spec.endswith(".keras"):
        import keras as keras_package

        if not Path(spec).is_file():
            raise CompareError(f"no file {spec!r}")
        return keras_package.saving.load_model(spec)
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name:
        raise CompareError(f"a framework model is FILE.py:FACTORY or package.module:FACTORY, got {spec!r}")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise CompareError(f"no file {where!r}")
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise CompareError(f"cannot import {where!r}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules.setdefault(path.stem, module)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    factory = getattr(module, name, None)
    if not callable(factory):
        raise CompareError(f"{where!r} has no function {name!r}")
    if framework == "Keras":
        from .capture_keras import build_with_sources

        return build_with_sources(factory)
    return factory()


def compare(a: Any, b: Any, feeds: dict[str, Any] | None = None, **options: Any) -> Any:
    """`explorer.compare`: an export against its framework model when a side is `explorer.pytorch(module)` or a
    capture (`captured_side`), module by module (a FrameworkComparison); else compare.compare's two runs."""
    from ..compare import compare as two_runs

    if isinstance(a, FrameworkSide) and not isinstance(b, FrameworkSide):
        a, b = b, a
    if isinstance(b, FrameworkSide):
        allowed = {k: v for k, v in options.items() if k in ("rtol", "atol", "limits") and v is not None}
        return compare_framework(a, b, feeds, **allowed)
    return two_runs(a, b, feeds, **options)
