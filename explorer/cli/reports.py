"""`render` (a model's graph drawn to a file), `rnn` (the GRU/LSTM/RNN report) and `samples` (the bundled ones)."""
from __future__ import annotations

import argparse
import sys

from ..errors import ExplorerError
from .common import add_limit_options, limits_from, load_feeds, load_model, model_path
from .registry import command


def _configure_render(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="an .onnx file or a bundled sample's name")
    p.add_argument("-o", "--output", required=True, help="out.svg, out.png, out.pdf (through graphviz) or out.dot")
    p.add_argument("--expand", nargs="+", metavar="all|none|PATH|LAYER",
                   help="bodies drawn as clusters (default: small ones), or layers opened by module path (h.0, "
                        "transformer/h.0: exactly those open). A model of more than 300 nodes is drawn by default "
                        "as an overview of its layers (about 40 boxes)")
    p.add_argument("--focus", help="draw only this body graph path or scope key, under a breadcrumb")
    p.add_argument("--search", help="highlight the nodes matching this query (name, op:Conv, value:x)")
    p.add_argument("--trace", help="a trace .npz saved by `run --save`: show a position in it")
    p.add_argument("--event", type=int, help="with --trace: the event index shown (default: the end)")
    p.add_argument("--no-edge-labels", action="store_true", help="leave value names and types off the edges")
    add_limit_options(p)


@command("render", "draw a model's graph as SVG, PNG, PDF or DOT")(_configure_render)
def _render(args: argparse.Namespace) -> int:
    from ..model.model import load
    from ..trace.trace import Trace
    from ..views.dot import model_to_dot
    from ..views.draw_plan import default_max_boxes
    from ..views.navigation import expansion
    from ..views.overlays import TraceOverlay
    from ..views.render import GraphvizError, GraphvizMissing, write_diagram
    from ..views.search import search_nodes

    model = load(model_path(args.model), lenient=args.lenient)
    expand, scopes = expansion(model, args.expand) if args.expand else (None, None)
    cursor = TraceOverlay.from_trace(Trace.load(args.trace, limits_from(args)), args.event) if args.trace else None
    highlight = search_nodes(model, args.search) if args.search else []
    dot_text = model_to_dot(model, expand=expand, scopes=scopes, focus=args.focus, cursor=cursor,
                            highlight=highlight, edge_labels=not args.no_edge_labels,
                            max_boxes=default_max_boxes(len(model.index.nodes))).dot
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
    add_limit_options(p)


@command("rnn", "GRU/LSTM/RNN report: weights per gate with ONNX, PyTorch, Keras names; exporter warnings")(
    _configure_rnn)
def _rnn(args: argparse.Namespace) -> int:
    from ..executor import run
    from ..inputs.samples import sample_inputs
    from ..reports.rnn_report import rnn_report, rnn_reports

    path = model_path(args.model)
    model = load_model(args.model, args.lenient)
    limits = limits_from(args)
    feeds = load_feeds(args.inputs, model, limits) or (sample_inputs(args.model) if path != args.model else None)
    try:
        trace = run(model, feeds if feeds is not None else model.example_inputs(), limits=limits)
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


@command("samples", "list the bundled sample models")(lambda p: None)
def _samples(args: argparse.Namespace) -> int:
    from ..inputs.samples import list_samples, sample_path

    for name, description in list_samples().items():
        print(f"{name:28s} {description}  [{sample_path(name)}]")
    return 0
