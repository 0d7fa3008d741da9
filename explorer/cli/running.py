"""`run` (a model's recorded run, optionally checked by onnxruntime) and `compare` (two runs side by side)."""
from __future__ import annotations

import argparse

from ..judge.judge import DEFAULT_TIMEOUT_S
from .common import (
    add_limit_options,
    count,
    limits_from,
    load_feeds,
    load_model,
    model_path,
    parse_dim,
    seconds,
    seed,
    tolerance,
)
from .registry import command


def _configure_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="an .onnx file or a bundled sample's name")
    p.add_argument("--inputs", help=".npz with one array per graph input, or an ONNX test data set folder "
                                    "(input_0.pb, ...) (default: a sample's own inputs, else "
                                    "random ones from the declared types)")
    p.add_argument("--seed", type=seed, help="random inputs with this seed (default 0)")
    p.add_argument("--dim", action="append", default=[], type=parse_dim, metavar="NAME=SIZE",
                   help="random inputs with this size of a symbolic dimension, or of an unnamed one as "
                        "INPUT[AXIS]=SIZE (repeatable)")
    p.add_argument("--save", help="write the trace to this .npz (also the partial trace of a failed run)")
    p.add_argument("--check", action="store_true", help="compare every output with onnxruntime")
    p.add_argument("--judge-timeout", type=seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"wall-clock limit of each onnxruntime call (default {DEFAULT_TIMEOUT_S:g})")
    add_limit_options(p)


@command("run", "run a model, print a summary of the recorded trace",
         {1: "with --check: an output differs from onnxruntime's, or onnxruntime gave no verdict"})(_configure_run)
def _run(args: argparse.Namespace) -> int:
    from ..compare import compare
    from ..compare.outputs import compare_with_onnxruntime
    from ..errors import ExecutionError
    from ..executor import run
    from ..inputs.samples import sample_inputs
    from ..model.feeds import symbolic_dims, unnamed_dims
    from ..trace.values import describe
    from ..views.trace_size import trace_size_text

    path = model_path(args.model)
    model = load_model(args.model, args.lenient)
    dims, known = dict(args.dim), [*symbolic_dims(model), *unnamed_dims(model)]
    for name in sorted(set(dims) - set(known)):
        print(f"warning: the inputs have no dimension {name!r} (theirs: {', '.join(known) or 'none'})")
    own = sample_inputs(args.model) if path != args.model and args.seed is None and not dims else None
    limits = limits_from(args)
    feeds = load_feeds(args.inputs, model, limits) or own or model.example_inputs(seed=args.seed or 0, dims=dims)
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
    print(trace_size_text(trace))
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
    p.add_argument("--seed", type=seed, help="random inputs with this seed (default 0)")
    p.add_argument("--dim", action="append", default=[], type=parse_dim, metavar="NAME=SIZE",
                   help="random inputs with this size of a symbolic dimension (repeatable)")
    p.add_argument("--rtol", type=tolerance, help="relative tolerance for every value (default: each value's own "
                                                   "precision: 1e-4 for float32, 2e-3 for float16, ...)")
    p.add_argument("--atol", type=tolerance, help="absolute tolerance for every value (default: each value's own "
                                                   "precision: 1e-5 for float32, 1e-3 for float16, ...)")
    p.add_argument("--top", type=count, default=10, help="rows of the table of the worst values (default 10)")
    p.add_argument("--json", metavar="OUT.json",
                   help="also write the verdict as JSON: agree, first (null or where the sides part), aligned, "
                        "diagnosis")
    add_limit_options(p)


@command("compare", "compare two runs: the first divergence (inside loops and gates too) and the worst values",
         {0: "the two sides agree within the tolerances", 1: "they differ",
          2: "a side did not finish (an error or a limit), or an error before the comparison"})(_configure_compare)
def _compare(args: argparse.Namespace) -> int:
    from ..compare import compare
    from ..inputs.samples import sample_inputs
    from ..model.model import load
    from ..views.verdict import full_verdict

    chosen = [b for b in (args.b, "onnxruntime" if args.ort else None, args.reference) if b]
    if len(chosen) != 1:
        raise ValueError("give exactly one B: a second model, --ort or --reference VALUES.npz")
    path = model_path(args.a)
    model = load(path, lenient=args.lenient)
    other = chosen[0] if chosen[0] in ("onnxruntime", "pytorch") or chosen[0].endswith(".npz") \
        else load(model_path(chosen[0]), lenient=args.lenient)
    own = sample_inputs(args.a) if path != args.a and args.seed is None and not args.dim else None
    limits = limits_from(args)
    feeds = load_feeds(args.inputs, model, limits) or own or model.example_inputs(seed=args.seed or 0,
                                                                                   dims=dict(args.dim))
    result = compare(model, other, feeds, rtol=args.rtol, atol=args.atol, limits=limits)
    judged = full_verdict(result)
    print(judged.sentence)
    for line in result.lines(args.top):
        print(line)
    if args.json:
        judged.write_json(args.json)
    return 1 if result.differs else 2 if result.errors else 0
