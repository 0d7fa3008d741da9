"""Small real models, everything recorded: what a sweep over thousands of inputs pays per run. explorer.run
against onnxruntime on the same inputs, both on one thread and both with their default threads, measured in the
same rounds; the ratios, their geometric mean, and the fixed cost of a run (a model of one Identity node).

Models: the sample models, recurrent exports of tests/models (Keras through tf2onnx, TorchScript and dynamo
torch.onnx, loops and cells), skl2onnx's tabular models, ShuffleNet (grouped and depthwise convolutions, seeded
weights) and, from ../shared/models when present, silero-vad, tract's byte-level bidirectional LSTM and
quantized LSTM, onnxruntime's Scan test model.

Each figure is the median over rounds of each side's best of a few runs in the round (enough runs to last about
20 ms), each side starting once the other's threads have stopped spinning (timing.settle). Besides wall-clock
time, each run's CPU time in the calling thread is taken: on one thread both sides compute there, so the CPU
ratio is the one a busy machine does not bend (a run of milliseconds is preempted where one of tens of
microseconds is not); with default threads the helpers' CPU is not counted, and the wall-clock ratio is the
figure.

    python bench/bench_small.py [--repeat N] [--only SUBSTRING,...] [--threads one|default|both]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).parent))
from real_models import (
    SHARED,
    SILERO,
    manifest_entries,
    manifest_feeds,
    project_models,
    seeded_light_model,
    silero_vad,
    tabular_models,
)
from timing import settle

import explorer
from explorer.inputs.samples import sample_inputs

ROOT = Path(__file__).resolve().parents[1]

PROJECT = (
    "keras_exports/keras_bilstm.onnx", "keras_exports/keras_lstm_stacked.onnx", "keras_exports/keras_gru.onnx",
    "keras_exports/keras_lstm.onnx", "keras_exports/keras_embedding_bigru.onnx", "keras_exports/keras_lstm_masking.onnx",
    "keras_exports/keras_simple_rnn.onnx", "keras_exports/keras_convlstm2d.onnx", "keras_exports/tf_while_cumprod.onnx",
    "torch_exports/ts_lstm_2layer.onnx", "torch_exports/ts_bilstm_2layer_unfolded.onnx",
    "torch_exports/ts_greedy_tokens.onnx", "torch_exports/ts_rnn_decoder.onnx", "torch_exports/ts_time_loop.onnx",
    "torch_exports/dynamo_while_loop.onnx", "torch_cells/ts_lstmcell_loop.onnx", "torch_cells/ts_grucell_loop.onnx",
    "torch_cells/dynamo_lstm.onnx", "torch_cells/dynamo_scan_gru.onnx", "torch_cells_h0/dynamo_lstmcell_h0.onnx",
    "skl2onnx/gradient_boosting_regressor.onnx", "skl2onnx/random_forest_regressor.onnx",
    "skl2onnx/hist_gradient_boosting_regressor_missing.onnx", "skl2onnx/logistic_regression.onnx",
    "skl2onnx/svr_rbf.onnx", "skl2onnx/decision_tree_regressor.onnx",
)
SHARED_MODELS = {
    "byte bi-LSTM (tract)": "sonos__tract/onnx/test_cases/byte_sb_bidi_lstm/model.onnx",
    "quantized LSTM (tract)": "sonos__tract/onnx/test_cases/qlstm_3-2-3_T3_S1/model.onnx",
    "scan_1 (onnxruntime)": "onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/scan_1.onnx",
}
MOBILE = ("ShuffleNet",)
Model = tuple[onnx.ModelProto, dict[str, np.ndarray]]


def identity() -> Model:
    """One Identity node on a one-element float: the fixed cost of a run."""
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), {"x": np.ones(1, np.float32)}


def small_models() -> dict[str, Model]:
    """Every model of the benchmark but Identity, by display name; ../shared's only when present."""
    models: dict[str, Model] = {}
    for path in sorted((ROOT / "sample_models").glob("*.onnx")):
        feeds = sample_inputs(path.stem)
        if feeds is None:
            feeds = explorer.load(str(path)).example_inputs()
        models[f"sample {path.stem}"] = (onnx.load(str(path)), feeds)
    found = {name: (path, feeds) for name, path, feeds in [*project_models(), *tabular_models()]}
    for name in PROJECT:
        if name in found:
            path, feeds = found[name]
            models[name.split("/")[1].removesuffix(".onnx")] = (onnx.load(str(path)), feeds)
    if SILERO.exists():
        models["silero-vad"] = silero_vad()
    entries = {entry["file"]: entry for entry in manifest_entries()}
    for name, file in SHARED_MODELS.items():
        if file in entries:
            models[name] = (onnx.load(str(SHARED / file)), manifest_feeds(entries[file]))
    models["ShuffleNet"] = seeded_light_model("shufflenet")
    return models


def timed(fn: Callable[[], object], budget: float = 0.02) -> tuple[float, float]:
    """Best wall-clock seconds and best CPU seconds of the calling thread over a few calls of `fn` (at least 3,
    as many as fill about `budget`)."""
    best, best_cpu, spent, calls = math.inf, math.inf, 0.0, 0
    while calls < 3 or (spent < budget and calls < 200):
        cpu, start = time.thread_time(), time.perf_counter()
        kept = fn()  # a run's trace is the user's to keep: freeing it is not part of the run
        wall, cpu = time.perf_counter() - start, time.thread_time() - cpu
        del kept
        best, best_cpu, spent, calls = min(best, wall), min(best_cpu, cpu), spent + wall, calls + 1
    return best, best_cpu


Timing = tuple[float, float, float, float]
"""explorer's wall and CPU seconds, onnxruntime's wall and CPU seconds."""


def paired(ours: Callable[[], object], theirs: Callable[[], object], rounds: int) -> Timing:
    """Medians over `rounds` of each side's best in the round, the sides taking turns after a pause."""
    ours()
    theirs()
    mine, others = [], []
    for _ in range(rounds):
        settle()
        mine.append(timed(ours))
        settle()
        others.append(timed(theirs))
    return (statistics.median(m[0] for m in mine), statistics.median(m[1] for m in mine),
            statistics.median(o[0] for o in others), statistics.median(o[1] for o in others))


def onnxruntime_session(proto: onnx.ModelProto, one_thread: bool) -> Callable[[dict], object]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    if one_thread:
        options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda feeds: session.run(None, feeds)


def measure(name: str, proto: onnx.ModelProto, feeds: dict[str, np.ndarray], modes: list[str],
            rounds: int) -> dict[str, Timing] | None:
    """{mode: Timing}, or None when onnxruntime does not run the model."""
    model = explorer.load(proto)
    found = {}
    for mode in modes:
        try:
            theirs = onnxruntime_session(proto, mode == "one")
            theirs(feeds)
        except Exception as exc:  # noqa: BLE001 - a model onnxruntime refuses has no ratio
            print(f"{name:<34} onnxruntime does not run it: {str(exc).splitlines()[0][:60]}")
            return None
        threads = 1 if mode == "one" else None
        found[mode] = paired(lambda threads=threads: explorer.run(model, feeds, threads=threads),
                             lambda theirs=theirs: theirs(feeds), rounds)
    return found


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds per model and thread mode")
    parser.add_argument("--only", default="", help="comma-separated substrings of model names")
    parser.add_argument("--threads", choices=("one", "default", "both"), default="both")
    options = parser.parse_args()
    modes = ["one", "default"] if options.threads == "both" else [options.threads]
    only = [s for s in options.only.split(",") if s]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} cores; load average {load}; explorer's default BLAS threads {explorer.Limits().threads}")

    proto, feeds = identity()
    found = measure("Identity", proto, feeds, modes, options.repeat * 3)
    assert found is not None
    for mode, (ours, ours_cpu, theirs, _theirs_cpu) in found.items():
        print(f"fixed cost of a run (one Identity node), {mode} thread(s): explorer {ours * 1e3:.3f} ms "
              f"(CPU {ours_cpu * 1e3:.3f} ms), onnxruntime {theirs * 1e3:.3f} ms (goal: explorer <= 0.3 ms)")

    header = "".join(f" | {mode + ' thread' + ('s' if mode == 'default' else '') + ': wall ms, ratio, CPU ratio':>44}"
                     for mode in modes)
    print(f"{'model':<34} {'nodes':>5} {'events':>6}{header}")
    ratios: dict[str, dict[str, float]] = {mode: {} for mode in modes}
    cpu_ratios: dict[str, dict[str, float]] = {mode: {} for mode in modes}
    for name, (proto, feeds) in small_models().items():
        if only and not any(s in name for s in only):
            continue
        model = explorer.load(proto)
        try:
            events = len(explorer.run(model, feeds).events)
        except Exception as exc:  # noqa: BLE001 - reported, not timed
            print(f"{name:<34} explorer fails: {str(exc)[:60]}")
            continue
        found = measure(name, proto, feeds, modes, options.repeat)
        if found is None:
            continue
        cells = ""
        for mode, (ours, ours_cpu, theirs, theirs_cpu) in found.items():
            ratios[mode][name] = ours / theirs
            cpu_ratios[mode][name] = ours_cpu / theirs_cpu
            cells += f" | {ours * 1e3:8.3f} / {theirs * 1e3:7.3f} {ours / theirs:5.1f}x {ours_cpu / theirs_cpu:5.1f}x"
        print(f"{name:<34} {len(model.index.nodes):>5} {events:>6}{cells}", flush=True)
    for mode in modes:
        kinds = [("wall", ratios[mode])] + ([("CPU", cpu_ratios[mode])] if mode == "one" else [])
        for kind, by_name in kinds:
            if not by_name:
                continue
            worst = max(by_name, key=by_name.__getitem__)
            mobile = [by_name[name] for name in MOBILE if name in by_name]
            print(f"{mode} thread(s), {kind}: geometric mean {geomean(list(by_name.values())):.2f}x over "
                  f"{len(by_name)} models (goal <= 6x), worst {by_name[worst]:.1f}x ({worst}; goal <= 20x); mobile "
                  f"CNNs {', '.join(f'{r:.1f}x' for r in mobile)} (goal <= 6x)")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
