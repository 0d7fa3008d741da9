"""A sweep started from the app runs on Dask workers spawned by multiprocessing, which import the script Streamlit
runs as `__main__` (app.py) under the name `__mp_main__`: the app must not run there (each Streamlit call would
log "missing ScriptRunContext" to the server's log, hundreds per sweep), nor Streamlit be imported."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app.py"


def test_a_spawned_worker_importing_the_app_runs_nothing():
    code = ("import json, runpy, sys\n"
            f"runpy.run_path({str(APP)!r}, run_name='__mp_main__')\n"  # what multiprocessing's spawn does
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('streamlit', 'explorer')))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
    assert "ScriptRunContext" not in done.stderr
