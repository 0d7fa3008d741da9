"""`python -m explorer run|samples|...`: the command line over the same public API."""
from __future__ import annotations

import argparse
import sys
from typing import Callable

import numpy as np

from .errors import ExplorerError

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


def _load_feeds(path: str | None):
    if not path:
        return None
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _configure_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="path to an .onnx file")
    p.add_argument("--inputs", help=".npz with one array per graph input (default: random from declared types)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE", help="size of a symbolic dimension")
    p.add_argument("--save", help="write the trace to this .npz")
    p.add_argument("--check", action="store_true", help="compare every output with onnxruntime")
    p.add_argument("--max-iterations", type=int, help="Limits.max_iterations")


@command("run", "run a model, print a summary of the recorded trace")(_configure_run)
def _run(args: argparse.Namespace) -> int:
    from .check import compare_with_onnxruntime, first_divergence
    from .limits import Limits
    from .model import load
    from .executor import run

    model = load(args.model)
    for warning in model.warnings:
        print(f"warning: {warning}")
    dims = dict(_parse_dim(d) for d in args.dim)
    feeds = _load_feeds(args.inputs) or model.example_inputs(seed=args.seed, dims=dims)
    limits = Limits(max_iterations=args.max_iterations) if args.max_iterations else None
    trace = run(model, feeds, limits=limits)
    print(f"model: {model.source}")
    print(f"nodes: {len(model.index.nodes)} (in {len(model.index.graphs)} graphs)")
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
        report = compare_with_onnxruntime(model, feeds, trace.outputs)
        for line in report.lines():
            print(line)
        if report.diffs and not report.ok:
            found = first_divergence(model, feeds, trace)
            if found is not None:
                print(f"first divergence: node {found.node!r} ({found.op_type}), output {found.diff.name!r}: "
                      f"max abs diff {found.diff.max_abs:.3g}")
        return 0 if report.ok else 1
    return 0


def _parse_dim(text: str) -> tuple[str, int]:
    name, _, size = text.partition("=")
    if not size.isdigit():
        raise SystemExit(f"--dim expects NAME=SIZE, got {text!r}")
    return name, int(size)


@command("samples", "list the bundled sample models")(lambda p: None)
def _samples(args: argparse.Namespace) -> int:
    from .samples import list_samples, sample_path

    for name, description in list_samples().items():
        print(f"{name:28s} {description}  [{sample_path(name)}]")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m explorer", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (configure, _, help_text) in _COMMANDS.items():
        configure(sub.add_parser(name, help=help_text, description=help_text))
    args = parser.parse_args(argv)
    try:
        return _COMMANDS[args.command][1](args)
    except ExplorerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (OSError, KeyError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
