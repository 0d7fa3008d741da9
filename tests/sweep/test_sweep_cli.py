"""`python -m explorer sweep`: exit codes 0 (every input agrees), 1 (some differ or could not be compared) and 2
(the sweep could not run), the summary worst first, rows as JSON and CSV; with no --scheduler a local cluster
of --workers processes is started (and closed at the end), and Ctrl-C stops the sweep with the rows already written kept."""
from __future__ import annotations

import csv
import json
import os
import pty
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.cli import main
from tests.support.sweep_models import ACC, PART_AT, planted_pair

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return [str(p) for p in planted_pair(tmp_path_factory.mktemp("pair"))]


def test_exit_codes_summary_and_rows(sweep_scheduler, pair, tmp_path, capsys):
    a, b = pair
    out = tmp_path / "rows.json"
    lengths = f"2-{PART_AT + 2}"
    code = main(["sweep", a, "--against", b, "--dim", f"T={lengths}", "--seeds", "0,1", "--scheduler",
                 sweep_scheduler, "--out", str(out)])
    printed = capsys.readouterr().out.splitlines()
    assert code == 1
    assert printed[0] == "inputs: 10; agree 6, differ 4, error 0, limit 0"
    assert [line.split()[0] for line in printed[2:6]] == [f"T={PART_AT + 2}"] * 2 + [f"T={PART_AT + 1}"] * 2
    assert all(ACC in line and f"iteration ({PART_AT},)" in line for line in printed[2:6])
    rows = json.loads(out.read_text())
    with open(out.with_suffix(".csv"), newline="") as f:
        table = list(csv.DictReader(f))
    assert len(rows) == len(table) == 10
    assert {r["input"]: r["differs"] for r in rows} == {t["input"]: t["verdict"] == "differs" for t in table}
    assert {t["divergence node"] for t in table if t["verdict"] == "differs"} == {ACC}

    assert main(["sweep", a, "--dim", "T=1,3", "--scheduler", sweep_scheduler]) == 0
    assert capsys.readouterr().out.startswith("inputs: 2; agree 2,")
    assert main(["sweep", a, "--inputs", str(tmp_path / "nothing"), "--scheduler", sweep_scheduler]) == 2
    assert "is not a folder of inputs (it does not exist)" in capsys.readouterr().err
    assert main(["sweep", a, "--dim", "T=2", "--inputs", str(tmp_path)]) == 2
    assert main(["sweep", str(tmp_path / "none.onnx"), "--dim", "T=2"]) == 2


def test_ctrl_c_stops_the_sweep_and_keeps_its_rows(sweep_scheduler, pair, tmp_path):
    a, b = pair
    out = tmp_path / "rows.json"
    terminal, progress = pty.openpty()  # the sweep shows its progress on a terminal: a line per row done
    process = subprocess.Popen([sys.executable, "-m", "explorer", "sweep", a, "--against", b, "--dim", "T=100-160",
                                "--scheduler", sweep_scheduler, "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=progress, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    os.close(progress)
    try:
        shown = b""
        while b"/61 inputs" not in shown:  # a row is done (and written: the JSON is valid after every row)
            ready, _, _ = select.select([terminal], [], [], 120)
            assert ready and process.poll() is None, shown.decode(errors="replace")
            shown += os.read(terminal, 4096)
        process.send_signal(signal.SIGINT)
        stdout, _ = process.communicate(timeout=120)
    finally:
        process.kill()
        os.close(terminal)
    rows = json.loads(out.read_text())
    assert process.returncode == 130
    assert 1 <= len(rows) < 61 and all(r["status"] == "ok" and r["differs"] for r in rows)
    assert f"interrupted: {len(rows)} of 61 inputs done; their rows are kept in {out}" in stdout
    with open(out.with_suffix(".csv"), newline="") as f:
        assert len(list(csv.DictReader(f))) == len(rows)


def test_with_no_scheduler_a_local_cluster_is_started_and_closed(pair):
    import psutil

    import explorer

    a, b = pair
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    result = explorer.sweep(a, b, {"T": [2, PART_AT + 1]}, workers=2)
    assert [r["differs"] for r in sorted(result.rows, key=lambda r: r["index"])] == [False, True]
    assert all(r["worker"].startswith("tcp://127.0.0.1:") for r in result.rows)
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.is_running()
            and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, [p.cmdline() for p in left]
