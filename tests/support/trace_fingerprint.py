"""A fingerprint of everything a run records, value by value, for the models of tests/trace/test_trace_fingerprint.py:
every event (its node, op type, iteration, recorded names, each input and output value, its info: If branches,
loop stop reasons and counts, child ranges, GRU/LSTM/RNN gates), every loop iteration record and the outputs.

Each value is its type, dtype, shape and the SHA-1 of its bytes; a float value also carries float64 sums (of the
values, their absolute values and squares, with its NaN and infinity counts), which judge it on another platform
(a CPU whose BLAS rounds differently, another NumPy) than the one that made the stored fingerprint; on that one,
every value's bytes must be the same.

    python tests/support/trace_fingerprint.py        # writes tests/fingerprints/traces.json.gz (made before a change)
    python tests/support/trace_fingerprint.py NAME   # rewrites one model's (after a deliberate change of its values)
"""
from __future__ import annotations

import gzip
import hashlib
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
STORED = ROOT / "tests" / "fingerprints" / "traces.json.gz"
PLATFORM = "(platform)"
sys.path.insert(0, str(ROOT / "bench"))

from real_models import (  # noqa: E402
    GTCRN,
    SILERO,
    bidirectional_rnn,
    gtcrn,
    project_models,
    seeded_light_model,
    silero_vad,
    tabular_models,
    torchscript_loop_with_if,
)


def fingerprint_models() -> Iterator[tuple[str, Any, dict[str, np.ndarray]]]:
    """(name, model, feeds) of every sample model, every real export of tests/models, two light CNNs, the benchmark's
    recurrent and Loop-with-If models, and gtcrn and silero-vad when ../shared/models holds them."""
    from explorer.inputs.samples import sample_inputs, sample_path

    for path in sorted((ROOT / "sample_models").glob("*.onnx")):
        model = onnx.load(str(path))
        feeds = sample_inputs(path.stem)
        if feeds is None:
            import explorer

            feeds = explorer.load(sample_path(path.stem)).example_inputs()
        yield f"sample_models/{path.name}", model, feeds
    for name, path, feeds in project_models():
        yield name, onnx.load(str(path)), feeds
    for name, path, feeds in tabular_models():
        yield name, onnx.load(str(path)), feeds
    yield "light squeezenet", *seeded_light_model("squeezenet")
    yield "light shufflenet", *seeded_light_model("shufflenet")
    yield "bi-GRU x2", *bidirectional_rnn("GRU", seq=20)
    yield "bi-LSTM x2", *bidirectional_rnn("LSTM", seq=20, batch=5)
    yield "Loop with If", *torchscript_loop_with_if()
    if GTCRN.exists():
        yield "gtcrn", *gtcrn()
    if SILERO.exists():
        yield "silero-vad", *silero_vad()


def value_print(value: Any) -> Any:
    """A recorded value's fingerprint: JSON-able, exact for everything but float sums."""
    if value is None:
        return None
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return ["object", list(value.shape), repr(value.tolist())]
        data = np.ascontiguousarray(value)
        digest = hashlib.sha1(data.view(np.uint8).reshape(-1) if data.size else b"").hexdigest()[:16]
        found: list[Any] = [str(value.dtype), list(value.shape), digest]
        if value.dtype.kind in "fc":
            wide = (value.astype(np.complex128).view(np.float64) if value.dtype.kind == "c"
                    else value.astype(np.float64)).ravel()
            finite = wide[np.isfinite(wide)]
            sums = (finite.sum(), np.abs(finite).sum(), (finite * finite).sum())
            found.append([float(f"{s:.9g}") for s in sums] + [int(np.isnan(wide).sum()), int(np.isinf(wide).sum())])
        return found
    if isinstance(value, (list, tuple)):
        return ["seq", [value_print(v) for v in value]]
    if isinstance(value, Mapping):
        return ["map", [[repr(k), value_print(v)] for k, v in value.items()]]
    return ["other", type(value).__name__, repr(value)]


def trace_print(trace: Any) -> dict[str, Any]:
    """Every event, iteration record and output of a trace, value by value. Each distinct value's fingerprint
    is kept once, in `values`; the records name it by its position there (an event's input is most often an
    earlier event's output)."""
    table: dict[str, int] = {}
    values: list[Any] = []

    def ref(value: Any) -> int:
        found = value_print(value)
        key = json.dumps(found)
        if key not in table:
            table[key] = len(values)
            values.append(found)
        return table[key]

    def info_print(info: Mapping[str, Any]) -> list[Any]:
        return [[key, [[k, ref(v)] for k, v in value.items()] if key == "gates" else
                 "yes" if key == "error" else repr(value)] for key, value in sorted(info.items())]

    events = [[e.index, e.node, e.op_type, list(e.iteration), list(e.site.inputs), list(e.site.outputs),
               [ref(v) for v in e.input_values], [ref(v) for v in e.output_values], info_print(e.info),
               e.summarized] for e in trace.events]
    iterations = [[it.node, list(it.index), [[k, ref(v)] for k, v in it.inputs.items()],
                   [[k, ref(v)] for k, v in it.outputs.items()], repr(sorted(it.info.items()))]
                  for it in trace.iteration_records]
    outputs = [[k, ref(v)] for k, v in trace.outputs.items()]
    return {"values": values, "events": events, "iterations": iterations, "outputs": outputs,
            "error": None if trace.error is None else trace.error.message}


def run_print(model: Any, feeds: dict[str, np.ndarray]) -> dict[str, Any]:
    """The fingerprint of one run with BLAS on one thread (a product's rounding may depend on the threads)."""
    import explorer
    from explorer.errors import ExecutionError

    try:
        trace = explorer.run(explorer.load(model), feeds, threads=1)
    except ExecutionError as exc:
        trace = exc.trace
    return trace_print(trace)


def platform_key() -> str:
    """What a float value's bytes depend on besides the code: the CPU, NumPy and its BLAS."""
    import platform

    from numpy._core._multiarray_umath import __cpu_features__

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"].get("version", "")  # type: ignore[index]
    features = ",".join(sorted(k for k, v in __cpu_features__.items() if v))
    return f"{cpu} | numpy {np.__version__} | blas {blas} | {features}"


def write(names: list[str] | None = None) -> None:
    """Writes every model's fingerprint; with `names`, only theirs, the others kept as stored (after a deliberate
    change of what some models record, made elsewhere)."""
    STORED.parent.mkdir(exist_ok=True)
    if names:
        stored = json.loads(gzip.decompress(STORED.read_bytes()))
        stored.update({name: run_print(model, feeds) for name, model, feeds in fingerprint_models() if name in names})
    else:
        stored = {name: run_print(model, feeds) for name, model, feeds in fingerprint_models()}
    stored[PLATFORM] = platform_key()
    STORED.write_bytes(gzip.compress(json.dumps(stored, separators=(",", ":")).encode(), 9, mtime=0))
    print(f"{len(stored) - 1} models -> {STORED}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    write(sys.argv[1:])
