"""The tests' own layout: every test lies in the folder of what it checks (none loose in tests/), a test reaches
another module of the tests through the `tests` package (no sys.path edits) and shares helpers only through
tests/support (a test module imports no other test module), and only the tests of the app import
Streamlit or explorer.ui when they are collected (tests/app, tests/hosting; an AppTest elsewhere imports the app
inside its test), so the kernels' tests run without the UI."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
APP_FOLDERS = ("app", "hosting")
SCRIPTS = {TESTS / "support" / "trace_fingerprint.py"}  # run as a script too: it finds bench/ itself


def _is_ui(module: str) -> bool:
    return module.split(".")[0] == "streamlit" or module == "explorer.ui" or module.startswith("explorer.ui.")


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "models" not in p.relative_to(TESTS).parts)


def _collected_imports(path: Path) -> set[str]:
    """The modules `path` imports when it is imported itself: its imports outside functions and classes."""
    found: set[str] = set()
    tree = ast.parse(path.read_text())
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, (ast.If, ast.Try, ast.ExceptHandler)):
            pending.extend(ast.iter_child_nodes(node))
    return found


def _reached(path: Path) -> set[str]:
    """Every module `path` imports on collection, through the modules of `tests` it imports."""
    seen: set[Path] = set()
    modules: set[str] = set()
    pending = [path]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        for module in _collected_imports(current):
            modules.add(module)
            if module.startswith("tests."):
                target = ROOT / Path(*module.split("."))
                pending.extend(p for p in (target.with_suffix(".py"), target / "__init__.py") if p.exists())
    return modules


def test_no_test_lies_loose_in_tests():
    assert sorted(p.name for p in TESTS.glob("*.py")) == ["__init__.py", "conftest.py"]


def test_no_test_edits_sys_path():
    for path in _test_files():
        if path in SCRIPTS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            assert not (isinstance(node, ast.Attribute) and node.attr == "path"
                        and isinstance(node.value, ast.Name) and node.value.id == "sys"), path


def test_only_the_tests_of_the_app_import_it_when_collected():
    for path in _test_files():
        if path.relative_to(TESTS).parts[0] in APP_FOLDERS or path.parent.name == "support":
            continue
        assert not {m for m in _reached(path) if _is_ui(m)}, path


def test_helpers_are_shared_through_tests_support_only():
    """A test module imports no other test module (at any depth): what two test files share lives in
    tests/support, so collecting one never imports the other's tests."""
    for path in _test_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            tests = [n for n in names if n.startswith("tests.") and n.split(".")[-1].startswith("test_")]
            assert not tests, f"{path.relative_to(ROOT)} imports {tests[0]}"
