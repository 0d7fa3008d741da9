"""The run's limits as command-line options, and numbers checked as arguments are parsed: a bad one is a one-line
error and exit 2 (no usage block, no traceback)."""
from __future__ import annotations

import numpy as np
import pytest

import explorer
from explorer.cli import main


@pytest.mark.parametrize("args, message", [
    (["optimize", "tiny_mlp", "--stop-after", "-1"], "argument --stop-after: expected a number >= 0, got -1"),
    (["run", "tiny_mlp", "--seed", str(2**32)], "argument --seed: a seed is below 2**32, got 4294967296"),
    (["run", "tiny_mlp", "--seed", "-3"], "argument --seed: expected a number >= 0, got -3"),
    (["compare", "tiny_mlp", "--ort", "--rtol", "nan"], "argument --rtol: expected a finite number >= 0, got nan"),
    (["compare", "tiny_mlp", "--ort", "--top", "-1"], "argument --top: expected a number >= 0, got -1"),
    (["run", "tiny_mlp", "--check", "--judge-timeout", "0"], "argument --judge-timeout: expected a duration > 0"),
    (["run", "tiny_mlp", "--max-events", "many"], "argument --max-events: expected a whole number, got 'many'"),
    (["run", "tiny_mlp", "--max-tensor-mb", "-1"], "argument --max-tensor-mb: expected a number >= 0, got -1"),
    (["run"], "the following arguments are required: model"),
    (["nope"], "argument command: invalid choice: 'nope'"),
])
def test_bad_numbers_and_arguments_are_one_line_errors(args, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(args)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_max_events_stops_a_run_before_the_next_node(tmp_path, capsys):
    # tiny_mlp is straight-line: 6 node executions, no loop
    assert main(["run", "tiny_mlp", "--max-events", "3", "--save", str(tmp_path / "partial.npz")]) == 2
    out, err = capsys.readouterr()
    assert "node 'fc2' (MatMul) not run: the run has recorded 3 events, Limits.max_events=3" in err
    assert "the partial trace holds 3 events" in out
    assert len(explorer.Trace.load(tmp_path / "partial.npz").events) == 3
    assert main(["run", "tiny_mlp", "--max-events", "6"]) == 0


def test_max_tensor_mb_refuses_a_value_before_it_is_allocated(capsys):
    assert main(["run", "tiny_mlp", "--max-tensor-mb", "0"]) == 2
    assert "its output would take 64 bytes, beyond Limits.max_tensor_bytes=0" in capsys.readouterr().err


def test_max_input_mb_bounds_inputs_and_trace_files(tmp_path, capsys):
    np.savez(tmp_path / "feeds.npz", X=np.ones((2, 4), np.float32))
    assert main(["run", "tiny_mlp", "--inputs", str(tmp_path / "feeds.npz"), "--max-input-mb", "0"]) == 2
    assert "the inputs file would inflate to more than 0 bytes" in capsys.readouterr().err
    assert main(["run", "tiny_mlp", "--save", str(tmp_path / "t.npz")]) == 0
    assert main(["render", "tiny_mlp", "-o", str(tmp_path / "o.dot"), "--trace", str(tmp_path / "t.npz"),
                 "--max-input-mb", "0"]) == 2
    assert "would inflate to more than 0 bytes" in capsys.readouterr().err
    assert main(["render", "tiny_mlp", "-o", str(tmp_path / "o.dot"), "--trace", str(tmp_path / "t.npz")]) == 0
