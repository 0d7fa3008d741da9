"""explorer's command line: run an ONNX model and record every node, draw its graph, optimize it, report on its
recurrent nodes. MODEL is a path to an .onnx file or the name of a bundled sample (see `samples`)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .errors import ExplorerError, failure_text
from .judge import DEFAULT_TIMEOUT_S

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Command, str]] = {}


def command(name: str, help: str):
    """Registers a subcommand: decorate `handler(args) -> exit code`; `configure(parser)` adds its arguments."""

    def wrap(configure):
        def register(handler: Command) -> Command:
            _COMMANDS[name] = (configure, handler, help)
            return handler

        return register

    return wrap


def _model_path(text: str) -> str:
    """A path as given, or a bundled sample's path when `text` names one and is not a file."""
    from pathlib import Path

    from .samples import list_samples, sample_path

    return str(sample_path(text)) if not Path(text).exists() and text in list_samples() else text


def _load_feeds(path: str | None, model=None):
    """Feeds from an .npz, or from an ONNX test data set folder (input_0.pb, ...) of `model`."""
    if not path:
        return None
    from pathlib import Path

    from .inputs import feeds_from_npz, feeds_from_test_data

    if Path(path).is_dir():
        from .model import Model, load

        return feeds_from_test_data(model if isinstance(model, Model) else load(model), path)
    return feeds_from_npz(Path(path).read_bytes())


def _configure_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="an .onnx file or a bundled sample's name")
    p.add_argument("--inputs", help=".npz with one array per graph input, or an ONNX test data set folder "
                                    "(input_0.pb, ...) (default: a sample's own inputs, else "
                                    "random ones from the declared types)")
    p.add_argument("--seed", type=int, help="random inputs with this seed (default 0)")
    p.add_argument("--dim", action="append", default=[], type=_parse_dim, metavar="NAME=SIZE",
                   help="random inputs with this size of a symbolic dimension, or of an unnamed one as "
                        "INPUT[AXIS]=SIZE (repeatable)")
    p.add_argument("--save", help="write the trace to this .npz (also the partial trace of a failed run)")
    p.add_argument("--check", action="store_true", help="compare every output with onnxruntime")
    p.add_argument("--judge-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"wall-clock limit of each onnxruntime call (default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("--max-iterations", type=int, help="stop a loop after this many iterations (default 100000)")


@command("run", "run a model, print a summary of the recorded trace")(_configure_run)
def _run(args: argparse.Namespace) -> int:
    from .compare import compare
    from .compare.outputs import compare_with_onnxruntime
    from .errors import ExecutionError
    from .executor import run
    from .feeds import symbolic_dims, unnamed_dims
    from .limits import Limits
    from .model import load
    from .samples import sample_inputs

    path = _model_path(args.model)
    model = load(path, lenient=args.lenient)
    for warning in model.warnings:
        print(f"warning: {warning}")
    dims, known = dict(args.dim), [*symbolic_dims(model), *unnamed_dims(model)]
    for name in sorted(set(dims) - set(known)):
        print(f"warning: the inputs have no dimension {name!r} (theirs: {', '.join(known) or 'none'})")
    own = sample_inputs(args.model) if path != args.model and args.seed is None and not dims else None
    feeds = _load_feeds(args.inputs, model) or own or model.example_inputs(seed=args.seed or 0, dims=dims)
    limits = Limits(max_iterations=args.max_iterations) if args.max_iterations else None
    try:
        trace = run(model, feeds, limits=limits)
    except ExecutionError as exc:
        if args.check:
            print("onnxruntime: not run, explorer's own run did not finish")
        if exc.trace is not None:
            print(f"the partial trace holds {len(exc.trace.events)} events, up to the node that failed")
            if args.save:
                exc.trace.save(args.save)
                print(f"partial trace saved to {args.save}")
        raise
    print(f"model: {model.source}")
    print(f"nodes: {len(model.index.nodes)} (in {len(model.index.graphs)} graphs)")
    if not args.inputs:
        print("inputs: the sample's own" if own is not None else f"inputs: random (seed {args.seed or 0})")
    print(f"events: {len(trace.events)}  iterations: {len(trace.iteration_records)}  seconds: {trace.seconds:.4f}")
    from .values import describe

    for name, value in trace.outputs.items():
        print(f"output {name}: {describe(value)}")
    bad = trace.first_nonfinite()
    if bad is not None:
        print(f"first NaN/Inf: node {bad.node!r} at iteration {bad.iteration}")
    if args.save:
        trace.save(args.save)
        print(f"trace saved to {args.save}")
    if args.check:
        report = compare_with_onnxruntime(model, feeds, trace.outputs, timeout=args.judge_timeout)
        for line in report.lines():
            print(line)
        if report.diffs and not report.ok:
            result = compare(trace, "onnxruntime", model=model, timeout=args.judge_timeout)
            if result.errors:
                print(f"first divergence: no verdict ({'; '.join(result.errors.values())})")
            elif result.first is not None:
                print(f"first divergence: {result.first.describe()}")
        return 0 if report.ok else 1
    return 0


def _configure_compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="A", help="an .onnx file or a bundled sample's name: explorer runs it")
    p.add_argument("b", metavar="B", nargs="?",
                   help="another .onnx (a re-export, an fp16 variant, the optimized model), 'onnxruntime', "
                        "'pytorch' (PyTorch's GRU/LSTM/RNN equations) or reference values (.npz)")
    p.add_argument("--ort", action="store_true", help="B is A run by onnxruntime (values inside bodies too)")
    p.add_argument("--reference", metavar="VALUES.npz",
                   help="B is reference values keyed by ONNX value names (e.g. dumped from PyTorch)")
    p.add_argument("--inputs", help=".npz with one array per graph input, or an ONNX test data set folder "
                                    "(default: a sample's own inputs, else random ones from A's declared types)")
    p.add_argument("--seed", type=int, help="random inputs with this seed (default 0)")
    p.add_argument("--dim", action="append", default=[], type=_parse_dim, metavar="NAME=SIZE",
                   help="random inputs with this size of a symbolic dimension (repeatable)")
    p.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance (default 1e-4)")
    p.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance (default 1e-5)")
    p.add_argument("--top", type=int, default=10, help="rows of the table of the worst values (default 10)")


@command("compare", "compare two runs: the first divergence (inside loops and gates too) and the worst values; "
                    "exit code 1 when they differ")(_configure_compare)
def _compare(args: argparse.Namespace) -> int:
    from .compare import compare
    from .model import load
    from .samples import sample_inputs

    chosen = [b for b in (args.b, "onnxruntime" if args.ort else None, args.reference) if b]
    if len(chosen) != 1:
        raise ValueError("give exactly one B: a second model, --ort or --reference VALUES.npz")
    path = _model_path(args.a)
    model = load(path, lenient=args.lenient)
    other = chosen[0] if chosen[0] in ("onnxruntime", "pytorch") or chosen[0].endswith(".npz") \
        else load(_model_path(chosen[0]), lenient=args.lenient)
    own = sample_inputs(args.a) if path != args.a and args.seed is None and not args.dim else None
    feeds = _load_feeds(args.inputs, model) or own or model.example_inputs(seed=args.seed or 0, dims=dict(args.dim))
    result = compare(model, other, feeds, rtol=args.rtol, atol=args.atol)
    for line in result.lines(args.top):
        print(line)
    return 1 if result.differs else 0


def _parse_dim(text: str) -> tuple[str, int]:
    name, _, size = text.partition("=")
    if not name or not size.isdigit():
        raise argparse.ArgumentTypeError(f"expected NAME=SIZE, e.g. T=8, got {text!r}")
    return name, int(size)


@command("samples", "list the bundled sample models")(lambda p: None)
def _samples(args: argparse.Namespace) -> int:
    from .samples import list_samples, sample_path

    for name, description in list_samples().items():
        print(f"{name:28s} {description}  [{sample_path(name)}]")
    return 0


def _configure_optimize(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="?", help="an .onnx file or a bundled sample's name")
    p.add_argument("-o", "--output", help="write the optimized model to this .onnx file")
    p.add_argument("--patterns", help="comma-separated patterns to run (default: all; see --list)")
    p.add_argument("--exclude", help="comma-separated patterns not to run")
    p.add_argument("--stop-after", type=int, metavar="N", help="apply only the first N rewrites (bisection)")
    p.add_argument("--report", help="write statistics, rewrites and the equivalence proof to this JSON file")
    p.add_argument("--inputs", help=".npz feeds for the equivalence proof (default: random from declared types)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random feeds")
    p.add_argument("--no-verify", action="store_true", help="skip the equivalence proof")
    p.add_argument("--list", action="store_true", help="list the patterns with their rules, then exit")


def _pattern_list(text: str | None) -> list[str] | None:
    return None if text is None else [name.strip() for name in text.split(",") if name.strip()]


@command("optimize", "rewrite a model with the pattern optimizer; statistics and equivalence proof")(
    _configure_optimize)
def _optimize(args: argparse.Namespace) -> int:
    import json

    from .optimizer import default_patterns, optimize
    from .optimizer.pattern import description
    from .optimizer.verify import verify

    if args.list:
        for pattern in default_patterns():
            print(f"{pattern.name:24s} [{pattern.priority}] {description(pattern)}")
        return 0
    if not args.model:
        raise ValueError("give a model to optimize (or --list)")
    from .model import load

    result = optimize(load(_model_path(args.model), lenient=args.lenient), patterns=_pattern_list(args.patterns), exclude=_pattern_list(args.exclude) or (),
                      stop_after=args.stop_after)
    print(result.stats_table())
    if args.output:
        with open(args.output, "wb") as f:
            f.write(result.optimized.SerializeToString())
        print(f"optimized model written to {args.output}")
    verdict = None
    if not args.no_verify:
        verdict = verify(result, _load_feeds(args.inputs, result.original), seed=args.seed, bisect=args.stop_after is None)
        for line in verdict.lines():
            print(line)
    if args.report:
        report = {"model": args.model, **result.to_dict(),
                  "equivalence": None if verdict is None else verdict.to_dict()}
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1, default=str)
        print(f"report written to {args.report}")
    return 1 if verdict is not None and verdict.status == "different" else 0



def _configure_render(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="an .onnx file or a bundled sample's name")
    p.add_argument("-o", "--output", required=True, help="out.svg, out.png, out.pdf (through graphviz) or out.dot")
    p.add_argument("--expand", nargs="+", metavar="all|none|PATH", help="bodies drawn as clusters (default: small ones)")
    p.add_argument("--focus", help="draw only this body graph path or scope key, under a breadcrumb")
    p.add_argument("--search", help="highlight the nodes matching this query (name, op:Conv, value:x)")
    p.add_argument("--trace", help="a trace .npz saved by `run --save`: show a position in it")
    p.add_argument("--event", type=int, help="with --trace: the event index shown (default: the end)")
    p.add_argument("--no-edge-labels", action="store_true", help="leave value names and types off the edges")


@command("render", "draw a model's graph as SVG, PNG, PDF or DOT")(_configure_render)
def _render(args: argparse.Namespace) -> int:
    from .model import load
    from .trace import Trace
    from .views import GraphvizError, GraphvizMissing, TraceOverlay, model_to_dot, search_nodes
    from .views.render import write_diagram

    model = load(_model_path(args.model), lenient=args.lenient)
    expand = None
    if args.expand:
        expand = args.expand[0] if args.expand in (["all"], ["none"]) else args.expand
    cursor = TraceOverlay.from_trace(Trace.load(args.trace), args.event) if args.trace else None
    highlight = search_nodes(model, args.search) if args.search else []
    dot_text = model_to_dot(model, expand=expand, focus=args.focus, cursor=cursor, highlight=highlight,
                            edge_labels=not args.no_edge_labels).dot
    try:
        fmt = write_diagram(dot_text, args.output)
    except (GraphvizMissing, GraphvizError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.output} ({fmt}, {len(model.index.nodes)} nodes" +
          (f", {len(highlight)} matching {args.search!r}" if args.search else "") + ")")
    return 0


def _configure_rnn(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="an .onnx file or a bundled sample's name")
    p.add_argument("--node", help="path of one GRU/LSTM/RNN node (default: every one)")
    p.add_argument("--inputs", help=".npz of graph inputs for the run that gives weights computed inside the "
                                    "model their values (default: a sample's own inputs, else random ones)")


@command("rnn", "GRU/LSTM/RNN report: weights per gate with ONNX, PyTorch, Keras names; exporter warnings")(
    _configure_rnn)
def _rnn(args: argparse.Namespace) -> int:
    from .executor import run
    from .model import load
    from .rnn_report import rnn_report, rnn_reports
    from .samples import sample_inputs

    path = _model_path(args.model)
    model = load(path, lenient=args.lenient)
    for warning in model.warnings:
        print(f"warning: {warning}")
    feeds = _load_feeds(args.inputs, model) or (sample_inputs(args.model) if path != args.model else None)
    try:
        trace = run(model, feeds if feeds is not None else model.example_inputs())
    except ExplorerError as exc:
        if args.inputs:
            raise
        trace = None  # the weights are still reported; those computed at run time show where they come from
        print(f"note: no run to read computed weights from ({exc}); give --inputs")
    reports = [rnn_report(model, args.node, trace)] if args.node else rnn_reports(model, trace)
    if not reports:
        print("no GRU, LSTM or RNN node")
    for report in reports:
        print("\n".join(report.lines()))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m explorer", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (configure, _, help_text) in _COMMANDS.items():
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        configure(command_parser)
        command_parser.add_argument("--lenient", action="store_true",
                                    help="load a model that breaks the spec's typing rules anyway (each broken "
                                         "rule printed as a warning)")
    args = parser.parse_args(argv)
    try:
        return _COMMANDS[args.command][1](args)
    except ExplorerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that cannot be read or written
        print(f"error: {exc.strerror or exc}" + (f": {exc.filename!r}" if exc.filename else ""), file=sys.stderr)
        return 2
    except (KeyError, ValueError, IndexError) as exc:  # e.g. no such node, pattern or event
        print(f"error: {exc.args[0] if isinstance(exc, KeyError) and exc.args else exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a defect still ends in one line, never a traceback
        print(f"error: {failure_text(exc)}", file=sys.stderr)
        return 2
