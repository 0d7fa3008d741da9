"""Models of any size, each loaded and run in a fresh process by explorer and by onnxruntime: MatMul chains with 1
GiB and 2.5 GiB of weights in one external-data file, a Loop whose body reads a 512 MiB weight of the main graph,
and four stacked LSTMs over T=6000 steps (batch 8, hidden 512: 2.2 GiB of recorded gates). Prints load time
(explorer's load against onnxruntime's session creation), run time, peak resident memory and their ratios, the
trace's bytes in memory and on disk, and whether the outputs agree; the 2.5 GiB model is also optimized (its
result written with external data) and proved equivalent by both judges. The models are generated in a temporary
folder, removed at the end.

    python bench/bench_scale.py [--only chain1,chain25,loop,lstm] [--threads N] [--folder DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import scale_models

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"load": 2.0, "peak": 1.5}  # explorer / onnxruntime, at most
LSTM_PEAK_GOAL = 1.5 * 2**30

# One measurement in a fresh process. VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over exec, so a
# child would report the peak of the process that started it.
STEP = r"""
import json, sys, time
import numpy as np
side, path, feeds_path, out, threads = sys.argv[1:6]
def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))
feeds = dict(np.load(feeds_path))
report = {}
if side == "explorer":
    import explorer
    start = time.perf_counter()
    model = explorer.load(path)
    report["load"] = time.perf_counter() - start
    start = time.perf_counter()
    trace = explorer.run(model, feeds, limits=explorer.Limits(threads=int(threads)))
    report["run"] = time.perf_counter() - start
    outputs = {name: np.asarray(value) for name, value in trace.outputs.items()}
    report.update(memory=trace.recorded_bytes, disk=trace.disk_bytes,
                  summarized=sum(event.summarized for event in trace.events), events=len(trace.events))
else:
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = int(threads)
    start = time.perf_counter()
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    report["load"] = time.perf_counter() - start
    start = time.perf_counter()
    values = session.run(None, feeds)
    report["run"] = time.perf_counter() - start
    outputs = {o.name: v for o, v in zip(session.get_outputs(), values)}
np.savez(out, **outputs)
report["peak"] = status("VmHWM")
print(json.dumps(report))
"""


# The optimizer on a model over 2 GiB: its result written with external data, the proof run by both judges.
OPTIMIZE = r"""
import json, os, sys, time
import numpy as np
from explorer.optimizer import optimize
from explorer.optimizer.verify import verify
path, feeds_path, out = sys.argv[1:4]
def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))
start = time.perf_counter()
result = optimize(path)
seconds = time.perf_counter() - start
written = result.save(out)
start = time.perf_counter()
verdict = verify(result, dict(np.load(feeds_path)))
print(json.dumps({"optimize": seconds, "proof": time.perf_counter() - start, "status": verdict.status,
                  "files": {os.path.basename(p): os.path.getsize(p) for p in written}, "peak": status("VmHWM")}))
"""


def optimize_and_prove(model: Path, feeds: Path) -> None:
    out = model.parent / "optimized.onnx"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", OPTIMIZE, str(model), str(feeds), str(out)], capture_output=True,
                          text=True, env=env)
    if done.returncode:
        raise SystemExit(f"optimizing {model} failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    files = ", ".join(f"{name} ({gib(size)})" for name, size in report["files"].items())
    print(f"  optimizer: {report['optimize']:.2f} s, written as {files}; proof (explorer and onnxruntime) "
          f"{report['status']} in {report['proof']:.1f} s; peak memory {gib(report['peak'])}")
    for name in report["files"]:
        (model.parent / name).unlink()


def measure(side: str, model: Path, feeds: Path, threads: int) -> tuple[dict, dict[str, np.ndarray]]:
    out = model.parent / f"outputs_{side}.npz"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", STEP, side, str(model), str(feeds), str(out), str(threads)],
                          capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"{side} on {model} failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    with np.load(out) as values:
        outputs = {name: values[name] for name in values.files}
    out.unlink()
    return report, outputs


def feeds_for(model: Path, name: str, shape: tuple[int, ...]) -> Path:
    path = model.parent / "feeds.npz"
    np.savez(path, **{name: np.random.default_rng(1).standard_normal(shape, dtype=np.float32)})
    return path


def gib(count: int) -> str:
    return f"{count / 2**30:.2f} GiB"


def compare(title: str, model: Path, feeds: Path, threads: int) -> None:
    ours, got = measure("explorer", model, feeds, threads)
    theirs, want = measure("onnxruntime", model, feeds, threads)
    equal = all(np.allclose(got[name], want[name], rtol=1e-4, atol=1e-4) for name in want)
    worst = max(float(np.abs(got[name] - want[name]).max()) for name in want)
    load, peak = ours["load"] / theirs["load"], ours["peak"] / theirs["peak"]
    print(f"{title} ({gib(scale_models.folder_bytes(model.parent))} on disk)")
    print(f"  load: explorer {ours['load']:.3f} s, onnxruntime {theirs['load']:.3f} s -> {load:.2g} x "
          f"(goal <= {GOALS['load']:g} x)")
    print(f"  peak memory: explorer {gib(ours['peak'])}, onnxruntime {gib(theirs['peak'])} -> {peak:.2g} x "
          f"(goal <= {GOALS['peak']:g} x)")
    print(f"  run: explorer {ours['run']:.2f} s, onnxruntime {theirs['run']:.2f} s; trace {gib(ours['memory'])} in "
          f"memory, {gib(ours['disk'])} on disk; outputs {'equal' if equal else 'DIFFER'} (max abs diff {worst:.2g})")


def long_lstm(folder: Path, threads: int) -> None:
    model = scale_models.stacked_lstm(folder / "lstm" / "model.onnx")
    feeds = feeds_for(model, "X", (6000, 8, 64))
    ours, got = measure("explorer", model, feeds, threads)
    theirs, want = measure("onnxruntime", model, feeds, threads)
    equal = all(np.allclose(got[name], want[name], rtol=1e-3, atol=1e-4) for name in want)
    print("4 stacked LSTMs, T=6000, B=8, H=512 (every gate recorded)")
    print(f"  run: explorer {ours['run']:.1f} s, onnxruntime {theirs['run']:.2f} s; outputs "
          f"{'equal' if equal else 'DIFFER'}")
    print(f"  trace: {gib(ours['memory'])} in memory, {gib(ours['disk'])} on disk, {ours['summarized']} of "
          f"{ours['events']} events summarized")
    print(f"  peak memory: explorer {gib(ours['peak'])} (goal < {gib(int(LSTM_PEAK_GOAL))}), onnxruntime "
          f"{gib(theirs['peak'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="chain1,chain25,loop,lstm", help="which models (comma-separated)")
    parser.add_argument("--threads", type=int, default=None, help="threads of both runtimes (default: the cores)")
    parser.add_argument("--folder", default=None, help="where to generate the models (default: a temporary one)")
    args = parser.parse_args()
    from explorer.limits import Limits

    threads = args.threads or Limits().threads
    chosen = set(args.only.split(","))
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores, {threads} thread(s) per run")
    with tempfile.TemporaryDirectory(dir=args.folder, prefix="bench-scale-") as name:
        folder = Path(name)
        if "chain1" in chosen:
            model = scale_models.chain(folder / "chain1", 8)
            compare("MatMul chain, 8 weights of 128 MiB", model, feeds_for(model, "x", (1, 4096)), threads)
            (folder / "chain1" / "weights.bin").unlink()
        if "chain25" in chosen:
            model = scale_models.chain(folder / "chain25", 20)
            feeds = feeds_for(model, "x", (1, 4096))
            compare("MatMul chain, 20 weights of 128 MiB", model, feeds, threads)
            optimize_and_prove(model, feeds)
            (folder / "chain25" / "weights.bin").unlink()
        if "loop" in chosen:
            model = scale_models.loop_capture(folder / "loop")
            compare("Loop whose body reads a 512 MiB outer weight", model, feeds_for(model, "x", (1, 8192)),
                    threads)
        if "lstm" in chosen:
            long_lstm(folder, threads)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
