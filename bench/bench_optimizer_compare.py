"""Explorer's optimizer side by side with onnxsim, onnxscript and onnxoptimizer on the real models of
../shared/models (those onnxruntime runs, see models/manifest.json), the exports kept in tests/models (PyTorch,
Keras and optimum exports, named by their folder, e.g. torch_exports/...) and a 14,000-node synthetic graph.

Per model and tool: non-Constant nodes after (bodies included), file size, seconds, and equivalence with the
original through onnxruntime and explorer on the same feeds (an export of tests/models: on each of its feed sets,
each also at another size). Each tool runs in a child process with a time
limit, so a tool that crashes or hangs costs only its own cell. Every child is a fresh interpreter (spawned, not
forked: nothing the bench imported is inherited) that loads the model, then imports its tool, then optimizes; the
two are timed apart, so each tool is measured the same way, with and without its import (onnxsim's brings in
torch). Needs the `bench` extra (pip install ".[bench]"). Run: python bench/bench_optimizer_compare.py
[--only SUBSTRING] [--project] [--anchors FILE] [--timeout SECONDS] [--json OUT] [--tools explorer --saved OUT]
[--repeat N] [--commands N] [--table OUT.md]. `--project --anchors tests/models/anchors.json` measures the exports of
tests/models alone and writes the other tools' node counts there, as the optimizer's tests read them; `--table`
writes the node counts per model as Markdown tables with their totals, one per group of models
(docs/performance.md's; with `--tools '' --saved OUT` from a saved run, nothing run again).
Cells read `nodes seconds-with-import/seconds-of-work`. Each row is appended to OUT (JSON lines) as soon as its
model is done, so a partial run keeps what it measured; `--tools explorer --saved OUT` reruns only explorer and
takes the other tools' cells from a saved run; `--repeat N` runs the tools N times each, taking turns, and keeps
the median times (for a busy machine); `--commands N` also times, N times each taking turns, each tool's command
line as a user runs it in a fresh process (`python -m explorer optimize --no-verify`, `onnxsim IN OUT 0
--no-certify`) on every model.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from real_models import SHARED as ROOT
from real_models import manifest_entries, manifest_feeds, project_feed_sets, proof_sets

TOOLS = ("explorer", "onnxsim", "onnxscript", "onnxoptimizer")
SYNTHETIC = "synthetic_14k"


# Feeds beyond the recorded random ones, for models where a rewrite holds only for some of the inputs the original
# accepts: cpu_if's If picks its branch from the dims of its input (declared [-1, -1, -1]), so a [1, 2, 2] input
# takes the other branch; Polygraphy's loop reads its trip-count limit from an initializer that is also a graph
# input, so a caller may feed it (0: no iteration); gtcrn normalises by sqrt(variance + eps), and on silence (all
# zeros) the variance is 0, so dropping eps changes the result.
EXTRA_FEEDS: dict[str, Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]] = {
    "gtcrn.onnx": lambda base: {k: np.zeros_like(v) for k, v in base.items()},
    "gtcrn_simple.onnx": lambda base: {k: np.zeros_like(v) for k, v in base.items()},
    "multi_stream_models/cpu_if.onnx": lambda base: {"X": np.linspace(0, 1, 4, dtype=np.float32).reshape(1, 2, 2)},
    "Polygraphy/tests/models/loop.onnx": lambda base: {
        **base, "while_maximum_iterations_0": np.array(0, np.int64)},
}


def feed_sets(name: str, feeds: dict[str, np.ndarray] | None) -> list[dict[str, np.ndarray] | None]:
    """The feeds given to onnxruntime as they are, beyond those of the proofs: the recorded ones, then any of
    EXTRA_FEEDS."""
    found: list[dict[str, np.ndarray] | None] = [feeds]
    for key, extra in EXTRA_FEEDS.items():
        if name.endswith(key):
            found.append(extra(dict(feeds or {})))
    return found


def real_nodes(graph: onnx.GraphProto) -> int:
    """Nodes other than Constant, bodies included."""
    count = 0
    for node in graph.node:
        count += node.op_type != "Constant"
        for att in node.attribute:
            for body in ([att.g] if att.type == onnx.AttributeProto.GRAPH else list(att.graphs)):
                count += real_nodes(body)
    return count


def _optimizer(tool: str) -> Callable[[onnx.ModelProto], onnx.ModelProto]:
    """The tool's optimizing function, its module imported."""
    if tool == "explorer":
        from explorer.optimizer import optimize

        return lambda model: optimize(model).optimized
    if tool == "onnxsim":
        import onnxsim

        return lambda model: onnxsim.simplify(model, check_n=0)[0]
    if tool == "onnxscript":
        import onnxscript.optimizer

        return onnxscript.optimizer.optimize
    import onnxoptimizer

    return onnxoptimizer.optimize


def _child(tool: str, source: str, out: str, queue: Any) -> None:
    try:
        model = onnx.load(source)
        start, cpu = time.perf_counter(), time.process_time()
        optimizer = _optimizer(tool)
        imported, imported_cpu = time.perf_counter() - start, time.process_time() - cpu
        optimized = optimizer(model)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        onnx.save(optimized, out)
        queue.put({"seconds": seconds, "cpu": cpu, "import": imported, "work": seconds - imported,
                   "work_cpu": cpu - imported_cpu})
    except BaseException as exc:  # noqa: BLE001 - any failure of a tool is a result of the bench
        queue.put({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:120]})


# A fresh interpreter per run: a forked child would inherit the modules the bench itself imported (explorer's,
# for the equivalence checks), so one tool's import would be timed and another's not.
_SPAWN = mp.get_context("spawn")
TIMES = ("seconds", "cpu", "import", "work", "work_cpu")


def run_tool(tool: str, source: Path, out: Path, timeout: float) -> dict[str, Any]:
    """Runs one tool on one model in a fresh child process; {seconds, cpu, import, work, work_cpu} or {error}."""
    queue: Any = _SPAWN.Queue()
    proc = _SPAWN.Process(target=_child, args=(tool, str(source), str(out), queue))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return {"error": f"timeout after {timeout:.0f} s"}
    return queue.get() if not queue.empty() else {"error": f"crashed (exit code {proc.exitcode})"}


def repeated(tools: list[str], source: Path, prefix: Path, timeout: float, repeat: int) -> dict[str, dict[str, Any]]:
    """Each tool run `repeat` times on one model, the tools taking turns (so a change in the machine's load falls
    on all of them): the last run's cell with the median of each time (CPU: every thread of the child)."""
    runs: dict[str, list[dict[str, Any]]] = {tool: [] for tool in tools}
    for _ in range(max(1, repeat)):
        for tool in tools:
            runs[tool].append(run_tool(tool, source, Path(f"{prefix}{tool}.onnx"), timeout))
    found = {}
    for tool, cells in runs.items():
        ok = [c for c in cells if "error" not in c]
        found[tool] = cells[-1] if len(ok) < len(cells) else {
            key: float(np.median([c[key] for c in ok])) for key in TIMES}
    return found


# Each tool's command line as a user runs it: a fresh process that reads the model and writes the optimized one,
# without checking the result (explorer's equivalence proof, onnxsim's check_n runs and Z3 certificate).
COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "explorer": lambda source, out: [sys.executable, "-m", "explorer", "optimize", str(source), "-o", str(out),
                                     "--no-verify"],
    "onnxsim": lambda source, out: [sys.executable, "-m", "onnxsim", str(source), str(out), "0", "--no-certify"],
}


def command_seconds(tools: list[str], source: Path, prefix: Path, timeout: float, repeat: int) -> dict[str, Any]:
    """Per tool with a command line: the median wall seconds of `repeat` runs of it (taking turns), or an error."""
    runs: dict[str, list[float]] = {tool: [] for tool in tools if tool in COMMANDS}
    errors: dict[str, str] = {}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                                      os.environ.get("PYTHONPATH", "")]))}
    for _ in range(max(1, repeat)):
        for tool in runs:
            start = time.perf_counter()
            try:
                done = subprocess.run(COMMANDS[tool](source, Path(f"{prefix}{tool}_cli.onnx")), env=env,
                                      capture_output=True, timeout=timeout, check=False)
            except subprocess.TimeoutExpired:
                errors[tool] = f"timeout after {timeout:.0f} s"
                continue
            if done.returncode:
                errors[tool] = f"exit code {done.returncode}"
            runs[tool].append(time.perf_counter() - start)
    return {tool: errors.get(tool) or float(np.median(times)) for tool, times in runs.items()}


def equivalence(original: Path, optimized: Path, feeds: list[dict[str, np.ndarray] | None],
                proved: list[dict[str, np.ndarray]] | None = None) -> dict[str, str]:
    """Per judge: 'DIFF' when a set of feeds gives a different result (or only the optimized model fails), else
    'ok' when one agrees, else 'n/a' (the judge cannot run the original). The recorded feeds (`proved`, when
    given: a project model's sets) go through explorer's proof (explorer and onnxruntime); EXTRA_FEEDS go to
    onnxruntime as they are, every name passed (the proof feeds only a model's declared inputs, not initializers a
    caller may override)."""
    from explorer.optimizer.verify import compare_models

    rank = {"n/a": 0, "ok": 1, "DIFF": 2}
    found: dict[str, str] = {}
    verdicts: list[tuple[str, str]] = []
    for one in proved or feeds[:1]:
        for report in compare_models(str(original), str(optimized), one).reports:
            if report.unavailable:
                verdicts.append((report.judge, "n/a"))
            elif report.error or not all(d.ok for d in report.diffs):
                verdicts.append((report.judge, "DIFF"))
            else:
                verdicts.append((report.judge, "ok"))
    verdicts.extend(("onnxruntime", _onnxruntime_as_fed(original, optimized, one or {})) for one in feeds[1:])
    for judge, verdict in verdicts:
        if rank[verdict] >= rank[found.get(judge, "n/a")]:
            found[judge] = verdict
    return found


def _onnxruntime_as_fed(original: Path, optimized: Path, feeds: dict[str, np.ndarray]) -> str:
    import onnxruntime as ort

    def outputs(path: Path) -> list[np.ndarray]:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return session.run(None, feeds)

    try:
        expected = outputs(original)
    except Exception:  # noqa: BLE001 - the original refuses these feeds: no verdict
        return "n/a"
    try:
        got = outputs(optimized)
    except Exception:  # noqa: BLE001 - only the optimized model refuses them
        return "DIFF"
    same = len(got) == len(expected) and all(
        np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
        for a, b in zip(expected, got))
    return "ok" if same else "DIFF"


def synthetic_model(path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_optimizer import synthetic

    onnx.save(synthetic(14_000), path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="models whose path contains this")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--json", default="", help="append each row to this file (JSON lines) as it completes")
    parser.add_argument("--tools", default=",".join(TOOLS), help="comma-separated tools to run")
    parser.add_argument("--saved", default="", help="JSON lines of an earlier run: cells of tools not run")
    parser.add_argument("--models", default=str(ROOT), help="the models directory (holding manifest.json)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each tool per model, the tools taking turns (median seconds; on a busy machine)")
    parser.add_argument("--project", action="store_true", help="only the exports kept in tests/models")
    parser.add_argument("--anchors", default="",
                        help="write the other tools' node counts on the repository's exports to this JSON file "
                             "(tests/models/anchors.json, which the optimizer's tests read)")
    parser.add_argument("--table", default="", metavar="OUT.md",
                        help="write the node counts per model and their totals as a Markdown table")
    parser.add_argument("--commands", type=int, default=0, metavar="N",
                        help="also time each tool's command line in a fresh process, N runs each (median)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="optcompare_"))
    root = Path(args.models)
    models: list[tuple[str, Path, dict | None]] = [] if args.project else [
        (e["file"], root / e["file"], manifest_feeds(e)) for e in manifest_entries(root) if args.only in e["file"]]
    project = {name: (path, sets) for name, path, sets in project_feed_sets() if args.only in name}
    models += [(name, path, sets[0]) for name, (path, sets) in project.items()]
    if args.only in SYNTHETIC and not args.project:
        synthetic_model(work / f"{SYNTHETIC}.onnx")
        models.append((SYNTHETIC, work / f"{SYNTHETIC}.onnx", None))
    run = [t for t in args.tools.split(",") if t]
    unknown = [t for t in run if t not in TOOLS]
    if unknown:
        parser.error(f"unknown tool(s) {', '.join(unknown)}; choose among {', '.join(TOOLS)}")
    saved = load_rows(Path(args.saved)) if args.saved else {}
    out_file = Path(args.json) if args.json else None
    if out_file:
        out_file.write_text("")
    rows = []
    proved: dict[str, list[dict[str, np.ndarray]]] = {}
    print(load_average("at the start"))
    print(f"{'model':46s} {'nodes':>5s} " + " ".join(f"{t[:10]:>22s}" for t in TOOLS))
    for k, (name, path, feeds) in enumerate(models):
        original = onnx.load(str(path))
        row: dict[str, Any] = {"model": name, "nodes": real_nodes(original.graph), "bytes": path.stat().st_size}
        cells = []
        timed = repeated(run, path, work / f"{k}_", args.timeout, args.repeat)
        for tool in TOOLS:
            if tool not in run:
                got = saved.get(name, {}).get(tool, {"error": "not run"})
                row[tool] = got
                cells.append(_cell(got))
                continue
            out = work / f"{k}_{tool}.onnx"
            got = timed[tool]
            if "error" not in got:
                got["nodes"] = real_nodes(onnx.load(str(out)).graph)
                got["bytes"] = out.stat().st_size
                if name in project and name not in proved:
                    proved[name] = proof_sets(path, project[name][1])
                got["equivalent"] = equivalence(path, out, feed_sets(name, feeds), proved.get(name))
            row[tool] = got
            cells.append(_cell(got))
        if args.commands:
            row["commands"] = command_seconds(run, path, work / f"{k}_", args.timeout, args.commands)
        rows.append(row)
        print(f"{name[-46:]:46s} {row['nodes']:5d} " + " ".join(f"{c:>22s}" for c in cells), flush=True)
        if out_file:
            with out_file.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
    print(summary(rows))
    print(times(rows))
    if args.table:
        groups = {"The exports kept in tests/models": [r for r in rows if r["model"] in project],
                  "The real models of ../shared/models": [r for r in rows if r["model"] not in project
                                                          and r["model"] != SYNTHETIC],
                  "The synthetic graph": [r for r in rows if r["model"] == SYNTHETIC]}
        Path(args.table).write_text("".join(f"{title}:\n\n{node_table(found)}\n\n"
                                            for title, found in groups.items() if found))
    if args.anchors:
        write_anchors(Path(args.anchors), [r for r in rows if r["model"] in project], run)
    if args.commands:
        print(commands(rows))
    print(load_average("at the end"))
    return 0


ANCHOR_COMMAND = "python bench/bench_optimizer_compare.py --project --anchors tests/models/anchors.json"


def write_anchors(path: Path, rows: list[dict], run: list[str]) -> None:
    """The other tools' node counts on the repository's exports (null for a result that failed or is not
    equivalent), each model's original count, the tools' versions and the command that measured them, written
    into `path` (JSON) beside the models this run did not measure (a partial run keeps the rest)."""
    from importlib.metadata import version

    old = json.loads(path.read_text()) if path.exists() else {}
    models = dict(old.get("models", {}))
    for row in rows:
        entry = {"nodes": row["nodes"]} | {
            tool: row[tool]["nodes"] if _sound(row[tool]) else None for tool in TOOLS[1:] if tool in run}
        models[row["model"]] = models.get(row["model"], {}) | entry
    head = {"command": ANCHOR_COMMAND, "measured": "nodes other than Constant, bodies included, of each tool's "
            "result when it is equivalent to the original (explorer's proof on every feed set of feeds.json and "
            "each at another size); null otherwise", "versions": {tool: version(tool) for tool in TOOLS[1:]}}
    lines = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in head.items()]
    rows = [f"    {json.dumps(name)}: {json.dumps(counts)}" for name, counts in sorted(models.items())]
    path.write_text("{\n" + ",\n".join(lines) + ',\n  "models": {\n' + ",\n".join(rows) + "\n  }\n}\n")


def load_average(when: str) -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {when}: {one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 minutes)"


def load_rows(path: Path) -> dict[str, dict]:
    """Rows of an earlier run (JSON lines, or the older single JSON list) by model name."""
    text = path.read_text().strip()
    rows = json.loads(text) if text.startswith("[") else [json.loads(line) for line in text.splitlines() if line]
    return {row["model"]: row for row in rows}


def _cell(got: dict[str, Any]) -> str:
    if "error" in got:
        return "error"
    eq = got["equivalent"]
    mark = "" if "DIFF" not in eq.values() else " DIFF"
    work = got.get("work")
    return f"{got['nodes']} {got['seconds']:.2f}/{'-' if work is None else f'{work:.2f}'}s{mark}"


def _sound(got: dict[str, Any]) -> bool:
    """A result that ran and agrees with the original wherever a judge could tell."""
    return "error" not in got and "DIFF" not in got["equivalent"].values()


def node_table(rows: list[dict]) -> str:
    """Markdown: per model its nodes and each tool's (the fewest of the equivalent results in bold, `≠` after a
    result that is not equivalent, `error` for one that failed), then, for more than one model, the totals over
    the models every tool optimized into an equivalent result and per tool the models where it did not."""
    lines = [f"| model | original | {' | '.join(TOOLS)} |", "|---|---:|" + "---:|" * len(TOOLS)]
    for row in rows:
        sound = [row[t]["nodes"] for t in TOOLS if _sound(row[t])]
        cells = []
        for tool in TOOLS:
            got = row[tool]
            if "error" in got:
                cells.append("error")
            elif not _sound(got):
                cells.append(f"{got['nodes']} ≠")
            else:
                cells.append(f"**{got['nodes']}**" if got["nodes"] == min(sound) else str(got["nodes"]))
        lines.append(f"| {_short_name(row['model'])} | {row['nodes']} | {' | '.join(cells)} |")
    if len(rows) < 2:
        return "\n".join(lines)
    every = [r for r in rows if all(_sound(r[t]) for t in TOOLS)]
    totals = [f"{sum(r[t]['nodes'] for r in every):,}" for t in TOOLS]
    lines.append(f"| **total** ({len(every)} models every tool optimized into an equivalent result) | "
                 f"{sum(r['nodes'] for r in every):,} | {' | '.join(totals)} |")
    missed = [str(sum(1 for r in rows if not _sound(r[t]))) for t in TOOLS]
    lines.append(f"| models with a result not equivalent (≠) or no result | | {' | '.join(missed)} |")
    return "\n".join(lines)


def _short_name(model: str) -> str:
    """A model's path with the folders between its first and its last two left out (`a/…/b/model.onnx`)."""
    parts = model.split("/")
    return model if len(parts) <= 3 else f"{parts[0]}/…/{parts[-2]}/{parts[-1]}"


def times(rows: list[dict]) -> str:
    """Per tool, seconds summed over the models where it and onnxsim both ran, with its import and of the work
    alone, each with its ratio to onnxsim's; then the median import seconds."""
    lines = [f"{'seconds':14s} {'models':>6s} {'with import':>11s} {'vs onnxsim':>10s} {'work alone':>10s} "
             f"{'vs onnxsim':>10s} {'import (median)':>15s}"]
    for tool in TOOLS:
        both = [r for r in rows if "work" in r[tool] and "work" in r["onnxsim"]]
        if not both:
            continue
        total = {key: sum(r[tool][key] for r in both) for key in ("seconds", "work")}
        base = {key: sum(r["onnxsim"][key] for r in both) for key in ("seconds", "work")}
        ratio = {key: total[key] / base[key] if base[key] else float("nan") for key in total}
        imported = float(np.median([r[tool]["import"] for r in both]))
        lines.append(f"{tool:14s} {len(both):6d} {total['seconds']:11.2f} {ratio['seconds']:9.2f}x "
                     f"{total['work']:10.2f} {ratio['work']:9.2f}x {imported:15.2f}")
    return "\n".join(lines)


def commands(rows: list[dict]) -> str:
    """Per model, each tool's command line in a fresh process (median wall seconds), its ratio to onnxsim's."""
    lines = ["as a user runs each command (fresh process, median wall seconds):"]
    for row in rows:
        found = row.get("commands", {})
        base = found.get("onnxsim")
        cells = []
        for tool, got in found.items():
            if isinstance(got, str):
                cells.append(f"{tool} {got}")
            else:
                ratio = f" ({got / base:.2f}x onnxsim)" if isinstance(base, float) and tool != "onnxsim" else ""
                cells.append(f"{tool} {got:.2f} s{ratio}")
        lines.append(f"  {row['model'][-46:]}: " + ", ".join(cells))
    return "\n".join(lines)


def summary(rows: list[dict]) -> str:
    """Totals per tool: nodes removed (all models, and the real corpus alone), models where it is the best or
    tied among equivalent results, non-equivalent results, errors, seconds, size ratio; then explorer's misses
    (models where another tool's equivalent result has fewer nodes) and the results that are not equivalent."""
    lines = [(f"{'tool':14s} {'removed':>8s} {'corpus':>7s} {'best/tied':>9s} {'DIFF':>5s} {'errors':>6s} "
              f"{'seconds':>8s} {'max size ratio':>14s}")]
    for tool in TOOLS:
        done = [r for r in rows if "error" not in r[tool]]
        removed = sum(r["nodes"] - r[tool]["nodes"] for r in done)
        corpus_removed = sum(r["nodes"] - r[tool]["nodes"] for r in done if r["model"] != SYNTHETIC)
        best = sum(1 for r in done if _sound(r[tool]) and r[tool]["nodes"] <= min(
            r[t]["nodes"] for t in TOOLS if _sound(r[t])))
        diff = sum(1 for r in done if "DIFF" in r[tool]["equivalent"].values())
        seconds = sum(r[tool]["seconds"] for r in done)
        ratio = max((r[tool]["bytes"] / r["bytes"] for r in done), default=0.0)
        lines.append(f"{tool:14s} {removed:8d} {corpus_removed:7d} {best:9d} {diff:5d} {len(rows) - len(done):6d} "
                     f"{seconds:8.1f} {ratio:14.2f}")
    misses = [f"{r['model'].rsplit('/', 1)[-1]}: {r['explorer'].get('nodes')} vs "
              f"{min(r[t]['nodes'] for t in TOOLS[1:] if _sound(r[t]))}"
              for r in rows if "error" not in r["explorer"] and any(
                  _sound(r[t]) and r[t]["nodes"] < r["explorer"]["nodes"] for t in TOOLS[1:])]
    lines.append(f"explorer behind the best other equivalent result on {len(misses)} of {len(rows)} models"
                 + (": " + "; ".join(misses) if misses else ""))
    unsound = [f"{r['model'].rsplit('/', 1)[-1]} by {t} ({r[t]['nodes']} nodes)" for r in rows for t in TOOLS
               if "error" not in r[t] and "DIFF" in r[t]["equivalent"].values()]
    lines.append("not equivalent to the original: " + ("; ".join(unsound) if unsound else "none"))
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
