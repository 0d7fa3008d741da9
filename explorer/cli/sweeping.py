"""`sweep`: a model compared with its reference over many inputs on Dask, one row per input, worst first."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..judge.judge import DEFAULT_TIMEOUT_S
from .common import add_cluster_options, add_limit_options, count, limits_from, model_path, seconds, tolerance
from .registry import command

INTERRUPTED = 130  # the shell's code for a command ended by Ctrl-C


def numbers(text: str) -> list[int]:
    """Whole numbers >= 0 as `0,1,2`, with inclusive ranges `8-12` among them."""
    from ..sweep.plan import parse_numbers

    try:
        return parse_numbers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def dim_values(text: str) -> tuple[str, list[int]]:
    """NAME=v1,v2,... (ranges low-high allowed) of a --dim argument."""
    name, equals, values = text.partition("=")
    if not name or not equals:
        raise argparse.ArgumentTypeError(f"expected NAME=v1,v2,..., e.g. T=8,16,32, got {text!r}")
    return name, numbers(values)


def _configure_sweep(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="an .onnx file or a bundled sample's name: explorer runs it on every input")
    p.add_argument("--against", default="onnxruntime", metavar="onnxruntime|MODEL_B|DIR",
                   help="the reference: onnxruntime (default), another model (a re-export, an fp16 variant, the "
                        "optimized model), 'pytorch' (PyTorch's GRU/LSTM/RNN equations), or a folder of reference "
                        "values: <DIR>/<name>.npz for an input <name>.npz, <DIR>/<set>/output_<i>.pb for a test data "
                        "set (the inputs folder itself for test data sets with their outputs)")
    p.add_argument("--dim", action="append", default=[], type=dim_values, metavar="NAME=v1,v2,...",
                   help="random inputs with each of these sizes of a symbolic dimension (repeatable: every "
                        "combination; ranges such as 8-12 allowed)")
    p.add_argument("--seeds", type=numbers, metavar="0,1,...", help="random inputs with each of these seeds "
                   "(default 0)")
    p.add_argument("--inputs", metavar="DIR", help="a folder of inputs instead of random ones: .npz files and ONNX "
                   "test_data_set_<n> folders (read by the workers from that path)")
    add_cluster_options(p)
    p.add_argument("--out", metavar="ROWS.json", help="write each row as it completes to this JSON file, and to a CSV "
                   "beside it (ROWS.csv)")
    p.add_argument("--rtol", type=tolerance, help="relative tolerance for every value (default: each value's own "
                                                   "precision: 1e-4 for float32, 2e-3 for float16, ...)")
    p.add_argument("--atol", type=tolerance, help="absolute tolerance for every value (default: each value's own "
                                                   "precision: 1e-5 for float32, 1e-3 for float16, ...)")
    p.add_argument("--top", type=count, default=20, help="rows of the printed summary, worst first (default 20)")
    p.add_argument("--judge-timeout", type=seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"wall-clock limit of each onnxruntime call (default {DEFAULT_TIMEOUT_S:g})")
    add_limit_options(p)  # but --threads: each input runs on one BLAS thread, the cluster has a worker per core


@command("sweep", "compare a model with its reference over many inputs (a grid of dims and seeds, or a folder) on "
                  "Dask; rows worst first",
         {0: "every input agrees with the reference", 1: "some input differs or could not be compared",
          2: "the sweep could not run (a model that does not load, no inputs, no cluster)",
          INTERRUPTED: "interrupted by Ctrl-C (the rows written so far are kept)"})(_configure_sweep)
def _sweep(args: argparse.Namespace) -> int:
    from ..sweep import SweepResult, plan
    from ..sweep.rows import counts
    from ..sweep.writer import csv_path

    if args.inputs and (args.dim or args.seeds is not None):
        raise ValueError("give either --inputs DIR or random inputs (--dim, --seeds), not both")
    if args.workers == 0:
        raise ValueError("--workers must be at least 1")
    against = args.against if args.against.lower() in ("onnxruntime", "pytorch") else model_path(args.against)
    ready = plan(model_path(args.model), against, args.inputs or dict(args.dim), seeds=args.seeds,
                 limits=limits_from(args), rtol=args.rtol, atol=args.atol, timeout=args.judge_timeout,
                 lenient=args.lenient)
    result = SweepResult()

    def progress(row: dict[str, Any]) -> None:
        if sys.stderr.isatty():
            found = counts(result.rows)
            print(f"\r{len(result.rows)}/{result.total} inputs, {found['differs']} differ, "
                  f"{found['error'] + found['limit']} without a verdict", end="", file=sys.stderr, flush=True)

    interrupted = False
    try:
        ready.run(args.scheduler, args.workers, args.out, progress, result)
    except KeyboardInterrupt:
        interrupted = True
    if sys.stderr.isatty():
        print(file=sys.stderr)
    for line in result.lines(args.top):
        print(line)
    if args.out:
        print(f"rows written to {args.out} and {csv_path(args.out)}")
    if interrupted:
        print(f"interrupted: {len(result.rows)} of {result.total} inputs done"
              + (f"; their rows are kept in {args.out}" if args.out else ""))
        return INTERRUPTED
    return result.exit_code
