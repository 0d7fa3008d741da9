"""Data flows one way: model -> executor -> trace -> views -> ui -> app.py. The layers, Streamlit only in ui/ and
the absence of import cycles are import-linter contracts (pyproject.toml); here, what they cannot say: the imports a
cycle contract lets pass are what it says they are, kernel families import only static knowledge, spec/ sits low,
onnx.reference's internals have one adapter, and colours live in views/styles.py."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import house  # tools/house.py, on the tests' path (pyproject: pythonpath)
import pytest

from tests.support.project_config import importlinter_config

PACKAGE = Path(__file__).resolve().parents[2] / "explorer"

MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


def test_the_import_contracts_hold():
    """The layers, Streamlit only in ui/, and no import cycles: pyproject.toml's [tool.importlinter] contracts."""
    result = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                             "sys.exit(lint_imports_command())"], capture_output=True, text=True, cwd=PACKAGE.parent,
                            env={**os.environ, "PYTHONPATH": str(PACKAGE.parent)}, check=False)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


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
KERNELS_MAY_USE = ("explorer.errors", "explorer.limits", "explorer.budgets", "explorer.trace.values", "explorer.proto.graph", "explorer.spec",
                   "explorer.proto.weights",
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
            assert module.split(".")[1] in ("errors", "spec"), f"spec/{path.name} imports {module}"


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


def _declared_cycle_imports() -> list[tuple[str, str]]:
    config = importlinter_config()
    (contract,) = [c for c in config["contracts"] if c["type"] == "acyclic_siblings"]
    return [tuple(line.split(" -> ")) for line in contract["ignore_imports"]]  # type: ignore[misc]


def _modules_matching(expression: str) -> list[Path]:
    """The files of the modules an import-linter expression names (`a.b` or `a.b.**`)."""
    parts = expression.removesuffix(".**").split(".")[1:]
    base = PACKAGE.joinpath(*parts)
    if expression.endswith(".**"):
        return sorted(base.rglob("*.py"))
    return [base / "__init__.py"] if base.is_dir() else [base.with_suffix(".py")]


CALLED_ONLY = {("explorer.trace.trace", "explorer.trace.trace_file"),  # imported inside the functions that need them
               ("explorer.trace.trace", "explorer.cells.cell_gates")}


@pytest.mark.parametrize("importer, imported", _declared_cycle_imports(),
                         ids=[" -> ".join(pair) for pair in _declared_cycle_imports()])
def test_the_imports_a_cycle_may_close_are_type_only_or_made_when_called(importer, imported):
    """Each import the cycle contract lets pass is what its comment says: under `if TYPE_CHECKING:` (the cycle
    exists for the type checker only), or for the listed few, inside a function (never at import time)."""
    files = _modules_matching(importer)
    assert files and all(f.exists() for f in files), importer
    for path in files:
        if (importer, imported) in CALLED_ONLY:
            top = ast.parse(path.read_text()).body
            modules = {f"{node.module}" for node in top if isinstance(node, ast.ImportFrom) and node.module}
            assert imported.rsplit(".", 1)[1] not in {m.split(".")[-1] for m in modules}, path
        else:
            assert imported not in _runtime_imports(path), f"{path.relative_to(PACKAGE)} imports {imported} at run time"


def test_the_house_stands_on_at_most_ten_floors_with_no_circle():
    """The packaging read as rooms and import arrows (tools/house.py): every import counts, but for those the
    no-cycles contract declares with their reasons."""
    rooms, arrows = house.rooms_and_arrows()
    assert house.circles(rooms, arrows) == []
    floors = house.floors(rooms, arrows)
    assert max(floors.values()) + 1 <= 10, floors
    assert "explorer.executor" in rooms and ("explorer.executor", "explorer.views") not in arrows
