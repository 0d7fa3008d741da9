"""The Python examples of README.md and of the guide (docs/) run as written, each page's blocks in turn in a fresh
folder that has the samples and the kept exports, and what they show holds: the trace saved loads back whole, the
optimizer's rewrites are proven equivalent, a Keras loop is found as a GRU cell. (The tutorials that export with
PyTorch or TensorFlow need those frameworks, which CI does not install: their commands are the ones this test
and the others run on the kept exports.)"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PAGES = {  # page -> what its examples must print
    "README.md": ["Trace(73 events, 2 outputs, complete)", "(3, 2) then_branch\nNone\n",
                  "GRU · Keras loop, reset_after=True, hidden 4 (5, 1, 2, 4)"],
    "docs/getting-started.md": ["(0, 0) then_branch"],
    "docs/api.md": ["Trace(73 events, 2 outputs, complete)", "(0, 0) then_branch"],
    "docs/recurrent.md": ["GRU · Keras loop, reset_after=True, hidden 4", "(5, 1, 2, 4) (5, 1, 2)"],
    "docs/compare.md": ["first divergence: none"],
    "docs/optimizer.md": ["'equivalence: equivalent'", "onnxruntime loads the optimized model"],
    "docs/sweeps.md": ["0\nNone\n"],
    "docs/tutorials/optimized-models.md": ["False None\nFalse\n"],
    "docs/generation.md": ["[[108  24  26  50 126 102  36  26 106   5  61  16]]", "(12, 1, 128)", "(1, 2, 7, 8)"],
}


def echoed(source: str) -> str:
    """The code with each top-level expression printed, as an interactive session shows it (calls of print as
    they are)."""
    tree = ast.parse(source)

    def printed(node: ast.stmt) -> bool:
        return isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "print"

    tree.body = [ast.Expr(ast.Call(ast.Name("print", ast.Load()), [node.value], []))
                 if isinstance(node, ast.Expr) and not printed(node) else node for node in tree.body]
    return ast.unparse(ast.fix_missing_locations(tree))


def blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(), flags=re.DOTALL)


def test_every_page_with_python_examples_is_run():
    pages = {str(p.relative_to(ROOT)) for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")] if blocks(str(p))}
    exporting = {"docs/tutorials/pytorch-gru.md", "docs/tutorials/keras-lstm.md",  # need torch / tensorflow
                 "docs/framework.md"}
    assert pages - exporting == set(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_python_examples_run_as_written(page, tmp_path):
    (tmp_path / "sample_models").symlink_to(ROOT / "sample_models")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "models").symlink_to(ROOT / "tests" / "models")
    result = subprocess.run([sys.executable, "-c", echoed("\n".join(blocks(page)))], capture_output=True, text=True,
                            cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    for expected in PAGES[page]:
        assert expected in result.stdout, (expected, result.stdout[-2000:])
