"""The command line answers --help and argument errors without importing onnx, numpy or the executor (the
commands import them when they run), and `import explorer` stays the whole API on first use."""
from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("onnx", "numpy", "onnxruntime", "streamlit", "explorer.executor", "explorer.model.model", "explorer.compare")


def _modules_after(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, timeout=300, check=True)
    return {"modules": set(json.loads(done.stdout.strip().splitlines()[-1]))}


def test_help_and_bad_arguments_import_nothing_heavy():
    code = ("from explorer.cli import build_parser, main\n"
            "p = build_parser()\n"
            "for argv in (['--help'], ['render', '--help'], ['run', '--seed', 'x', 'm.onnx'], ['nonsense']):\n"
            "    try:\n"
            "        main(argv)\n"
            "    except SystemExit:\n"
            "        pass\n")
    loaded = _modules_after(code)["modules"]
    assert not [m for m in HEAVY if m in loaded]


def test_the_api_loads_whole_on_first_use():
    code = ("import explorer.compare.api, explorer.sweep.api\n"  # subpackages named like API functions
            "import explorer\n"
            "assert callable(explorer.compare) and callable(explorer.sweep), (explorer.compare, explorer.sweep)\n"
            "assert explorer.Model._repr_html_ is not None\n"  # Jupyter's display installed with the API
            "assert set(explorer.__all__) <= set(dir(explorer))\n")
    loaded = _modules_after(code)["modules"]
    assert "explorer.optimizer" in loaded
