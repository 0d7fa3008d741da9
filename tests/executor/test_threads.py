"""The BLAS threads of a run: the available cores by default (capped by OMP/OPENBLAS/MKL_NUM_THREADS, so the
workers of a process pool that set them to 1 do not oversubscribe the machine), `Limits.threads`,
`run(..., threads=N)`, `--threads` and the sidebar's Threads field; seen from inside a kernel through
threadpoolctl, and restored after the run; a model whose kernels never call BLAS leaves its count as it is."""
from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import explorer
from explorer.cli import main
from explorer.executor import blas, kernels, ops
from explorer.executor.run import program_of
from explorer.inputs.samples import sample_path
from explorer.limits import THREAD_VARIABLES, available_cores


def blas_threads() -> set[int]:
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


@pytest.fixture
def seen(monkeypatch) -> list[set[int]]:
    """The BLAS thread counts each MatMul execution runs with (a spy around explorer's MatMul kernel)."""
    counts: list[set[int]] = []
    make = ops.KERNELS[("", "MatMul")]

    def spying(op):
        kernel = make(op)

        def run(args):
            counts.append(blas_threads())
            return kernel(args)

        return run

    monkeypatch.setitem(ops.KERNELS, ("", "MatMul"), spying)
    return counts


@pytest.fixture
def no_thread_variables(monkeypatch):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def tiny_mlp() -> explorer.Model:
    return explorer.load(str(sample_path("tiny_mlp")))  # two MatMuls; a new Model compiles its kernels anew


def test_the_default_is_the_available_cores(no_thread_variables):
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert available_cores() == cores
    assert explorer.Limits().threads == cores


@pytest.mark.parametrize("name", THREAD_VARIABLES)
def test_a_process_pool_worker_that_sets_a_thread_variable_runs_on_that_many(name, no_thread_variables,
                                                                            monkeypatch, seen):
    monkeypatch.setenv(name, "1")
    assert explorer.Limits().threads == 1
    explorer.run(tiny_mlp())
    assert seen == [{1}, {1}]
    monkeypatch.setenv(name, "not a number")  # ignored, as BLAS ignores it
    assert explorer.Limits().threads == available_cores()


def test_limits_and_the_run_option_set_the_threads_inside_the_kernels(seen):
    before = blas_threads()
    model = tiny_mlp()
    explorer.run(model, limits=explorer.Limits(threads=3))
    explorer.run(model, threads=1)
    explorer.run(model, limits=explorer.Limits(threads=1), threads=2)  # the run option wins
    assert seen == [{3}, {3}, {1}, {1}, {2}, {2}]
    assert blas_threads() == before  # restored when the run ends


def test_a_run_in_another_thread_sets_its_own_count(seen):
    model = tiny_mlp()
    explorer.run(model, threads=3)  # the main thread sets the count first, then gives the control back
    worker = threading.Thread(target=lambda: explorer.run(model, threads=1))
    worker.start()
    worker.join()
    assert seen == [{3}, {3}, {1}, {1}]


def test_a_run_keeps_the_count_another_living_thread_controls(seen):
    from threadpoolctl import threadpool_limits

    holding, done = threading.Event(), threading.Event()

    def hold() -> None:
        with threadpool_limits(limits=2, user_api="blas"):  # takes control of OpenBLAS's pool
            holding.set()
            done.wait()

    worker = threading.Thread(target=hold)
    worker.start()
    holding.wait()
    try:
        explorer.run(tiny_mlp(), threads=3)
    finally:
        done.set()
        worker.join()
    explorer.run(tiny_mlp(), threads=3)  # the worker is gone: its control with it
    assert seen == [{2}, {2}, {3}, {3}]


def test_the_threads_are_restored_when_a_run_fails(seen):
    before = blas_threads()
    with pytest.raises(explorer.FeedError):
        explorer.run(tiny_mlp(), {"X": np.ones((2, 2, 2), np.float32)}, threads=3)
    with pytest.raises(explorer.LimitExceeded):
        explorer.run(tiny_mlp(), limits=explorer.Limits(max_events=1), threads=3)
    assert seen == [{3}] and blas_threads() == before


def test_fewer_than_one_thread_is_refused():
    with pytest.raises(ValueError, match="Limits.threads must be >= 1"):
        explorer.Limits(threads=0)
    with pytest.raises(ValueError, match="Limits.threads must be >= 1"):
        explorer.run(tiny_mlp(), threads=0)


def test_the_command_line_option(seen, capsys):
    assert main(["run", "tiny_mlp", "--threads", "3"]) == 0
    assert main(["run", "tiny_mlp"]) == 0
    assert seen == [{3}, {3}, {explorer.Limits().threads}, {explorer.Limits().threads}]
    with pytest.raises(SystemExit) as stopped:
        main(["run", "tiny_mlp", "--threads", "0"])
    assert stopped.value.code == 2 and "argument --threads: expected a number >= 1, got 0" in capsys.readouterr().err


@pytest.mark.usefixtures("fresh_app")
def test_the_sidebar_field(seen):
    from tests.support.apptest import start

    at = start("tiny_mlp")
    field = at.number_input(key="w_threads")
    assert field.value == explorer.Limits().threads
    field.set_value(3).run()
    assert at.session_state["run_request"].limits.threads == 3
    assert seen[-2:] == [{3}, {3}]


BLAS_CALLS = re.compile(r"np\.(matmul|dot|einsum|tensordot|inner|vdot|linalg)\b|\.dot\(| @ ")


def test_the_blas_families_are_the_kernels_that_call_blas():
    """kernels.BLAS_FAMILIES is every operator family whose code calls a matrix product, or imports one of those
    families' helpers: a family missing from it would run on BLAS's count of the moment."""
    folder = Path(ops.__file__).parent
    calling = {path.stem for path in folder.glob("*.py") if BLAS_CALLS.search(path.read_text())}
    importing = {path.stem for path in folder.glob("*.py")
                 if any(re.search(rf"^from \.{name} import", path.read_text(), re.M) for name in calling)}
    assert calling | importing == kernels.BLAS_FAMILIES


@pytest.mark.parametrize("name, calls", [("nested_loops", False), ("if_sign", False), ("tiny_mlp", True),
                                         ("rnn_relu", True)])
def test_a_run_sets_the_count_only_for_models_that_call_blas(name, calls, monkeypatch):
    """A model of loops, Ifs and elementwise nodes runs without touching BLAS's count; one with a MatMul or a
    recurrent cell sets it for the run (and restores it)."""
    before = blas_threads()
    wanted = 1 if before != {1} else 2
    sets: list[int] = []
    original = blas._Library.set
    monkeypatch.setattr(blas._Library, "set", lambda self, threads: (sets.append(threads), original(self, threads)))
    model = explorer.load(sample_path(name))
    assert program_of(model).calls_blas is calls
    explorer.run(model, threads=wanted)
    assert (wanted in sets) is calls and blas_threads() == before


def test_a_model_local_function_or_an_unknown_kernel_counts_as_calling_blas():
    from onnx import TensorProto, helper

    node = helper.make_node("Twice", ["x"], ["y"], domain="local")
    body = helper.make_function("local", "Twice", ["a"], ["b"], [helper.make_node("Add", ["a", "a"], ["b"])],
                                [helper.make_opsetid("", 18)])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, functions=[body],
                              opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    assert kernels.calls_blas(explorer.load(model))
