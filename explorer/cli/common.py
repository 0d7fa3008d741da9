"""What several commands share: a model named by path or sample, feeds from files, --dim sizes, the limits
options, checked numbers, warnings."""
from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..limits import Limits

if TYPE_CHECKING:
    from ..model.model import Model

MB = 1 << 20


def model_path(text: str) -> str:
    """A path as given, or a bundled sample's path when `text` names one and is not a file."""
    from ..inputs.samples import list_samples, sample_path

    return str(sample_path(text)) if not Path(text).exists() and text in list_samples() else text


def load_model(text: str, lenient: bool) -> Model:
    """The model a command names (a path or a sample), its load warnings printed (lenient mode's among them)."""
    from ..model.model import (
        load,  # onnx and the model's checks, imported when a command runs (not by --help)
    )

    model = load(model_path(text), lenient=lenient)
    for warning in model.warnings:
        print(f"warning: {warning}")
    return model


def load_feeds(path: str | None, model: Any = None, limits: Limits | None = None) -> dict[str, Any] | None:
    """Feeds from an .npz, or from an ONNX test data set folder (input_0.pb, ...) of `model`, each checked
    against `limits` before it is inflated."""
    if not path:
        return None
    from ..inputs.input_files import feeds_from_npz_file, feeds_from_test_data

    if Path(path).is_dir():
        from ..model.model import Model, load

        return feeds_from_test_data(model if isinstance(model, Model) else load(model), path, limits)
    return feeds_from_npz_file(path, limits)


def add_cluster_options(p: argparse.ArgumentParser, when: str = "") -> None:
    """--scheduler and --workers: the Dask cluster a command's tasks run on (`when`: the options that need it)."""
    p.add_argument("--scheduler", metavar="ADDRESS", help=f"{when}run on the Dask cluster of this scheduler "
                   "(tcp://host:port), whose workers have explorer installed (default: a local cluster started "
                   "for the work)")
    p.add_argument("--workers", type=count, metavar="N", help=f"{when}worker processes of the local cluster "
                   "(default: one per core)")


def count(text: str) -> int:
    """An argument that must be a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return value


def positive(text: str) -> int:
    """An argument that must be a whole number >= 1."""
    value = count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def seed(text: str) -> int:
    """A random seed: a whole number from 0 to 2**32 - 1."""
    value = count(text)
    if value >= 1 << 32:
        raise argparse.ArgumentTypeError(f"a seed is below 2**32, got {value}")
    return value


def tolerance(text: str) -> float:
    """A finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text}")
    return value


def seconds(text: str) -> float:
    """A finite duration > 0."""
    value = tolerance(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected a duration > 0 seconds")
    return value


def add_limit_options(p: argparse.ArgumentParser) -> None:
    """The run's bounds (explorer.Limits) as options; each defaults to Limits()'s value."""
    default = Limits()
    p.add_argument("--max-iterations", type=count, default=default.max_iterations, metavar="N",
                   help=f"stop a Loop/Scan after this many iterations (default {default.max_iterations})")
    p.add_argument("--max-tensor-mb", type=count, default=default.max_tensor_bytes // MB, metavar="MB",
                   help="refuse any one value bigger than this, before it is allocated "
                        f"(default {default.max_tensor_bytes // MB})")
    p.add_argument("--trace-mb", type=count, default=default.trace_budget_bytes // MB, metavar="MB",
                   help="values recorded beyond this are written to the run's folder on disk "
                        f"(default {default.trace_budget_bytes // MB})")
    p.add_argument("--trace-disk-mb", type=count, default=default.trace_disk_bytes // MB, metavar="MB",
                   help="values recorded beyond this on disk are kept as summaries (default: half the free disk, "
                        f"at most 16 GiB: here {default.trace_disk_bytes // MB})")
    p.add_argument("--max-events", type=count, default=default.max_events, metavar="N",
                   help=f"stop a run after this many node executions (default {default.max_events})")
    p.add_argument("--max-input-mb", type=count, default=default.max_input_bytes // MB, metavar="MB",
                   help="refuse an inputs or trace file that would inflate past this "
                        f"(default {default.max_input_bytes // MB})")
    p.add_argument("--threads", type=positive, default=default.threads, metavar="N",
                   help="threads of the run's matrix products (default: the cores this process may use; 1 where "
                        "OMP_NUM_THREADS or OPENBLAS_NUM_THREADS is 1)")


def limits_from(args: argparse.Namespace) -> Limits:
    """The Limits the options of `add_limit_options` ask for."""
    return Limits(max_iterations=args.max_iterations, max_tensor_bytes=args.max_tensor_mb * MB,
                  trace_budget_bytes=args.trace_mb * MB, max_events=args.max_events,
                  max_input_bytes=args.max_input_mb * MB, threads=args.threads,
                  trace_disk_bytes=args.trace_disk_mb * MB)


def parse_dim(text: str) -> tuple[str, int]:
    """NAME=SIZE of a --dim argument."""
    name, _, size = text.partition("=")
    if not name or not size.isdigit():
        raise argparse.ArgumentTypeError(f"expected NAME=SIZE, e.g. T=8, got {text!r}")
    return name, int(size)
