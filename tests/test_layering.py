"""Data flows one way: model -> executor -> trace -> views -> ui -> app.py. Checked on the import statements."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "explorer"

# layer of each top-level part of the package; a module may import only its own layer or lower ones. `spec`
# (ONNX operator knowledge several layers share) sits with the model's loading, which checks nodes and bodies against it,
# below the executor and the views; it reads only `graph` and `errors` (test_spec_is_below_executor_and_views).
LAYERS = {
    "errors": 0, "collector": 0, "limits": 0, "values": 0, "judge_worker": 0, "archive": 0,
    "access": 0,
    "graph": 1, "graph_index": 1, "spec": 1, "function_bodies": 1, "model": 1, "model_guards": 1, "model_inference": 1,
    "external_data": 1, "typing_rules": 1, "type_constraints": 1, "feeds": 1, "inputs": 1, "samples": 1,
    "weights": 1, "wire": 1, "model_source": 1, "model_files": 1, "judge": 1, "judge_job": 1,
    "trace": 2, "trace_file": 2, "cell_gates": 2, "cells": 2,
    "executor": 3, "compare": 3,
    "optimizer": 4, "rnn_report": 4, "cell_report": 4, "sweep": 4,
    "views": 5,
    "ui": 6,
    "cli": 7, "__init__": 7, "__main__": 7,
}


def part_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imported_parts(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    parts = set()
    rel = path.relative_to(PACKAGE)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and node.module.startswith("explorer"):
                tail = node.module.split(".")[1:]
                parts.add(tail[0] if tail else "__init__")
            elif node.level > 0:
                base = list(rel.parts[:-1])[: len(rel.parts) - node.level]
                target = base + (node.module.split(".") if node.module else [])
                if target:
                    parts.add(target[0])
                else:
                    parts.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("explorer."):
                    parts.add(alias.name.split(".")[1])
    return parts


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_only_flow_downstream(path):
    mine = part_of(path)
    assert mine in LAYERS, f"{mine} has no layer in tests/test_layering.py"
    for other in imported_parts(path):
        if other == mine or other not in LAYERS:
            continue
        assert LAYERS[other] <= LAYERS[mine], f"{path.relative_to(PACKAGE)} ({mine}) imports {other}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_ui_imports_streamlit(path):
    if part_of(path) == "ui":
        return
    source = path.read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not any(a.name.split(".")[0] == "streamlit" for a in node.names), path
        if isinstance(node, ast.ImportFrom) and node.module:
            assert node.module.split(".")[0] != "streamlit", path


def test_only_the_adapter_touches_onnx_reference_internals():
    for path in MODULES:
        if path.name == "reference.py" and path.parent.name == "executor":
            continue
        source = path.read_text()
        assert "onnx.reference.op" not in source and "reference.ops" not in source, path


def _runtime_imports(path: Path) -> set[str]:
    """Dotted explorer modules a module imports when it runs (imports under `if TYPE_CHECKING:` left out)."""
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
                   for stmt in block.body for n in ast.walk(stmt)}
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + (node.module.split(".") if node.module else []))
            if module.startswith("explorer"):
                found.add(module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("explorer"))
    return found


KERNEL_FAMILIES = sorted(p for p in (PACKAGE / "executor" / "ops").glob("*.py") if p.name != "__init__.py")
KERNELS_MAY_USE = ("explorer.errors", "explorer.limits", "explorer.values", "explorer.graph", "explorer.spec",
                   "explorer.weights",
                   "explorer.executor.ops")


@pytest.mark.parametrize("path", KERNEL_FAMILIES, ids=lambda p: p.name)
def test_kernel_families_are_functions_of_their_inputs(path):
    """A kernel family reads only the model's static knowledge and its sibling families: never the engine,
    the trace or control flow (special kernels get the engine through `Call`)."""
    for module in _runtime_imports(path):
        assert module.startswith(KERNELS_MAY_USE), f"{path.name} imports {module}"


def test_spec_is_below_executor_and_views():
    for path in (PACKAGE / "spec").glob("*.py"):
        for module in _runtime_imports(path):
            assert module.split(".")[1] in ("errors", "graph", "spec"), f"spec/{path.name} imports {module}"


COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|colorscale\s*=\s*[\"']"
                    r"|:(red|orange|yellow|green|blue|violet|gray|grey|rainbow|primary)\[")
STYLED = sorted(p for suffix in ("*.py", "*.js", "*.css", "*.html") for p in PACKAGE.rglob(suffix)
                if "vendor" not in p.parts and p != PACKAGE / "views" / "styles.py")


@pytest.mark.parametrize("path", STYLED, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_colours_live_in_styles(path):
    """Every colour the app draws or writes with (hex colours, plot colour scales, Streamlit's `:red[...]`) is
    named in views/styles.py."""
    found = [f"line {n}: {m.group()}" for n, line in enumerate(path.read_text().splitlines(), 1)
             for m in COLOUR.finditer(line)]
    assert not found, f"{path.relative_to(PACKAGE)} spells colours outside views/styles.py: {found}"
