"""`export-node-data` (Model Explorer's node data), `report` (one self-contained HTML file) and `reduce` (the
smallest model that still parts the same way): what a finding is handed over as."""
from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ..files.atomic_write import write_text
from .common import add_limit_options, limits_from, load_feeds, model_path, seed, tolerance
from .registry import command


def add_side_options(p: argparse.ArgumentParser, against_required: bool = False) -> None:
    """MODEL, the other side (--against onnxruntime|B.onnx|VALUES.npz, or --reference), inputs and tolerances."""
    p.add_argument("model", help="an .onnx file or a bundled sample's name: explorer runs it")
    p.add_argument("--against", metavar="onnxruntime|B.onnx|VALUES.npz",
                   help="the other side: onnxruntime (the same model), another model (an fp16, quantized or "
                        "optimized form) or reference values keyed by ONNX value names"
                        + ("" if against_required else " (default: none, the run alone)"))
    p.add_argument("--reference", metavar="VALUES.npz", help="the same as --against VALUES.npz")
    p.add_argument("--inputs", help=".npz with one array per graph input, or an ONNX test data set folder "
                                    "(default: a sample's own inputs, else random ones from the declared types)")
    p.add_argument("--seed", type=seed, help="random inputs with this seed (default 0)")
    p.add_argument("--rtol", type=tolerance, help="relative tolerance (default: compare's)")
    p.add_argument("--atol", type=tolerance, help="absolute tolerance (default: compare's)")
    add_limit_options(p)


@dataclass
class Sides:
    """What the side options name: A's model, the other side as compare takes it (or None) and the feeds."""

    model: Any
    other: Any
    feeds: dict[str, Any]
    other_path: str | None


def sides_from(args: argparse.Namespace) -> Sides:
    """The model, the other side and the feeds the options of `add_side_options` ask for."""
    from ..inputs.samples import sample_inputs
    from ..model.model import load

    given = [b for b in (args.against, args.reference) if b]
    if len(given) > 1:
        raise ValueError("give one other side: --against or --reference")
    path = model_path(args.model)
    model = load(path, lenient=args.lenient)
    other: Any = None
    other_path = given[0] if given else None
    if other_path is not None:
        is_word = other_path.lower() in ("onnxruntime", "pytorch")
        other = other_path.lower() if is_word else other_path if other_path.endswith(".npz") \
            else load(model_path(other_path), lenient=args.lenient)
    own = sample_inputs(args.model) if path != args.model and args.seed is None else None
    limits = limits_from(args)
    feeds = load_feeds(args.inputs, model, limits) or own or model.example_inputs(seed=args.seed or 0)
    return Sides(model, other, feeds, other_path)


class Tolerances(TypedDict, total=False):
    rtol: float
    atol: float


def tolerances(args: argparse.Namespace) -> Tolerances:
    """The tolerances given on the command line, for compare (those not given are compare's defaults)."""
    given = Tolerances()
    if args.rtol is not None:
        given["rtol"] = args.rtol
    if args.atol is not None:
        given["atol"] = args.atol
    return given


def _configure_node_data(p: argparse.ArgumentParser) -> None:
    from ..views.node_data import METRICS

    add_side_options(p)
    p.add_argument("--metric", choices=[*METRICS, "all"],
                   help="what each node shows: " + "; ".join(f"{k}: {v}" for k, v in METRICS.items())
                        + " (default: max_abs with another side, else time); all writes OUT.METRIC.json each")
    p.add_argument("-o", "--output", required=True, help="the .json file Model Explorer loads as node data")


@command("export-node-data", "write Model Explorer's node data: each node's error, time, runs or NaN count")(
    _configure_node_data)
def _node_data(args: argparse.Namespace) -> int:
    from ..compare import compare
    from ..executor import run
    from ..views.node_data import ERROR_METRICS, METRICS, node_data, node_numbers, write_node_data

    sides = sides_from(args)
    limits = limits_from(args)
    trace = run(sides.model, sides.feeds, limits=limits)
    comparison = None
    if sides.other is not None:
        comparison = compare(trace, sides.other, sides.feeds, limits=limits, model=sides.model,
                             **tolerances(args))
    metric = args.metric or ("max_abs" if comparison is not None else "time")
    metrics = [m for m in METRICS if comparison is not None or m not in ERROR_METRICS] if metric == "all" \
        else [metric]
    out = Path(args.output)
    for name in metrics:
        target = out if len(metrics) == 1 else out.with_name(f"{out.stem}.{name}{out.suffix or '.json'}")
        data = node_data(sides.model, node_numbers(trace, name, comparison))
        write_node_data(target, data)
        count = sum(len(graph["results"]) for graph in data.values())
        print(f"wrote {target} ({name}: {count} nodes in {len(data)} graph(s))")
    if comparison is not None and comparison.first is not None:
        print(f"first divergence: {comparison.first.describe()}")
    return 0


def _configure_report(p: argparse.ArgumentParser) -> None:
    add_side_options(p)
    p.add_argument("--event", type=int, help="without another side: the step shown (default: the first NaN or Inf)")
    p.add_argument("--reduce", action="store_true",
                   help="with another side: embed the reduced model and its test data (as `reduce` writes them) "
                        "as a .zip download in the page")
    p.add_argument("-o", "--output", required=True, help="the .html file to write")


@command("report", "write one self-contained HTML file: the drawing, the first divergence, values, gates",
         {0: "written (also when the two sides agree: the report says so)"})(_configure_report)
def _report(args: argparse.Namespace) -> int:
    from ..compare import compare
    from ..environment import command_line
    from ..errors import ExecutionError
    from ..executor import run
    from ..views.report_html import report_html

    sides = sides_from(args)
    limits = limits_from(args)
    try:
        trace = run(sides.model, sides.feeds, limits=limits)
    except ExecutionError as exc:
        if exc.trace is None:
            raise
        trace = exc.trace
        print(f"note: the run failed ({exc}); the report shows its partial trace, up to the node that failed")
    comparison = None
    if sides.other is not None:
        comparison = compare(trace, sides.other, sides.feeds, limits=limits, model=sides.model,
                             **tolerances(args))
    attachments = {}
    if args.reduce:
        if sides.other is None or sides.other_path is None:
            raise ValueError("--reduce needs another side: --against or --reference")
        from ..reduce.reduce import reduce
        from ..reduce.reduce_files import reduction_zip

        reduction = reduce(sides.model, sides.other, sides.feeds, rtol=args.rtol, atol=args.atol, limits=limits)
        attachments["reduced.zip"] = reduction_zip(reduction, reduced_from=sides.model.source,
                                                   against=sides.other_path, command=_reduce_command(args, "reduced"))
        print(f"reduced from {reduction.nodes_before} nodes to {len(reduction.nodes)}: {', '.join(reduction.nodes)}")
    page = report_html(sides.model, trace, comparison, event_index=args.event, command=command_line(),
                       attachments=attachments)
    write_text(args.output, page)
    print(f"wrote {args.output} ({len(page.encode('utf-8')) / 1e6:.2f} MB)")
    if comparison is not None:
        first = comparison.first
        print("first divergence: " + (first.describe() if first is not None else "none"))
    return 0


def _reduce_command(args: argparse.Namespace, output: str | None = None) -> str:
    """The command that makes this reduction again (into `output`, default the command's own)."""
    words = ["explorer", "reduce", args.model, "--against", args.against or args.reference]
    for option in ("inputs", "seed", "rtol", "atol"):
        if getattr(args, option) is not None:
            words += [f"--{option}", str(getattr(args, option))]
    return shlex.join([*words, "-o", output or args.output])


def _configure_reduce(p: argparse.ArgumentParser) -> None:
    add_side_options(p, against_required=True)
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the folder written: model.onnx (or model_a.onnx and model_b.onnx), test_data_set_0/ "
                        "(inputs, and the other side's value as the expected output) and README.md")


@command("reduce", "cut a model down to the smallest part that still parts from the other side the same way",
         {0: "reduced: the folder is written", 2: "the sides agree, no part parts the same way, or an error"})(
    _configure_reduce)
def _reduce(args: argparse.Namespace) -> int:
    from ..reduce.reduce import reduce
    from ..reduce.reduce_files import write_reduction

    sides = sides_from(args)
    if sides.other is None or sides.other_path is None:
        raise ValueError("give the other side: --against onnxruntime|B.onnx|VALUES.npz or --reference VALUES.npz")
    reduction = reduce(sides.model, sides.other, sides.feeds, rtol=args.rtol, atol=args.atol,
                       limits=limits_from(args))
    written = write_reduction(reduction, args.output, reduced_from=sides.model.source, against=sides.other_path,
                              command=_reduce_command(args))
    print(f"first divergence: {reduction.first.describe()}")
    print(f"reduced from {reduction.nodes_before} nodes to {len(reduction.nodes)} of "
          f"{reduction.graph or 'the main graph'!r}: {', '.join(reduction.nodes)}")
    for path in written:
        print(f"wrote {path}")
    return 0
