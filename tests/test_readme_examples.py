"""The Python examples in README.md run as written (in a fresh folder that has the samples), and what they show
holds: the optimizer's example proves its rewrites equivalent."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def echoed(source: str) -> str:
    """The code with each top-level expression printed, as an interactive session shows it."""
    tree = ast.parse(source)
    tree.body = [ast.Expr(ast.Call(ast.Name("print", ast.Load()), [node.value], []))
                 if isinstance(node, ast.Expr) else node for node in tree.body]
    return ast.unparse(ast.fix_missing_locations(tree))


def test_readme_python_blocks_run_as_written(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.DOTALL)
    assert len(blocks) >= 2
    (tmp_path / "sample_models").symlink_to(ROOT / "sample_models")
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # the real exports the examples open
    result = subprocess.run([sys.executable, "-c", echoed("\n".join(blocks))], capture_output=True, text=True,
                            cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stderr
    assert "'equivalence: equivalent'" in result.stdout, result.stdout[-2000:]
    assert "Trace(73 events, 2 outputs, complete)" in result.stdout  # the saved trace loads back whole
