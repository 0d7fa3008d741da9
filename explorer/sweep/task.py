"""One input of a sweep where it runs (a Dask worker, or the caller's process): its feeds made there (random
from its dims and seed) or read from its file, explorer's run compared with the reference under the sweep's
Limits, and the row that goes back. Models are read once per worker process; onnxruntime runs in a child
process per worker thread. Whatever goes wrong with one input becomes its row."""
from __future__ import annotations

import atexit
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..compare import compare
from ..compare.sides import ONNXRUNTIME
from ..errors import ExplorerError, FeedError, LimitExceeded, failure_text
from ..hosting.recent import Recent
from ..inputs.input_files import feeds_from_npz_file, feeds_from_test_data, outputs_from_test_data
from ..judge.judge import Judge, using_judge
from ..limits import Limits
from ..model.feeds import validate_feeds
from ..model.model import Model, load
from .plan import Item
from .rows import LIMIT, failed_row, row_of

MODELS_KEPT = 4  # models a worker process keeps loaded (a sweep uses one or two)


@dataclass(frozen=True)
class ModelRef:
    """A model as a worker finds it: a path (read from shared storage), else the bytes passed with each task
    (scattered to the workers once). `key` names its content."""

    key: str
    label: str
    path: str | None = None
    lenient: bool = False


@dataclass(frozen=True)
class Job:
    """What every input of a sweep shares: the model, the reference ("onnxruntime", "model" for `other`, or
    "reference" for values read from each item's reference file), the limits and the tolerances; in a shared
    app, the folders every file an input reads must lie in (symlinks followed: access.open_confined)."""

    model: ModelRef
    against: str = ONNXRUNTIME
    other: ModelRef | None = None
    limits: Limits = Limits()
    rtol: float | None = None  # None: each value at its own precision (compare/precision.py)
    atol: float | None = None
    timeout: float | None = None
    folders: tuple[Path, ...] | None = None  # a shared app's: every input and reference file read lies inside


_models: Recent[str, Model] = Recent(MODELS_KEPT)
_judges = threading.local()


def model_of(ref: ModelRef, data: bytes | None = None) -> Model:
    """The model a reference names, loaded once per process."""
    found = _models.get(ref.key)
    if found is None:
        found = load(data if data is not None else str(ref.path), label=ref.label, lenient=ref.lenient)
        _models.put(ref.key, found)
    return found


def _judge(timeout: float | None) -> Judge:
    """This thread's onnxruntime child process (threads of one worker never wait on each other's)."""
    judge = getattr(_judges, "judge", None)
    if judge is None:
        judge = _judges.judge = Judge() if timeout is None else Judge(timeout=timeout)
        atexit.register(judge.close)
    elif timeout is not None:
        judge.timeout = timeout
    return judge


def feeds_of(model: Model, item: Item, limits: Limits, folders: tuple[Path, ...] | None = None) -> dict[str, Any]:
    """The item's feeds: random from its dims and seed, or read from its .npz or test data set folder (with
    `folders`, a shared app's, only files inside them, symlinks followed: AccessRefused otherwise)."""
    if item.path is None:
        return model.example_inputs(seed=item.seed or 0, dims=item.dims_dict)
    path = Path(item.path)
    if path.is_dir():
        return feeds_from_test_data(model, path, limits, folders)
    if folders is None and not path.is_file():
        raise FeedError(f"input file {item.path!r} does not exist")
    return feeds_from_npz_file(path, limits, folders)


def reference_of(model: Model, item: Item, limits: Limits, folders: tuple[Path, ...] | None = None) -> dict[str, Any]:
    """The item's reference values: a test data set's output_<i>.pb files, or an .npz keyed by value names
    (with `folders`, only files inside them, symlinks followed)."""
    if item.reference is None:
        raise FeedError(f"input {item.label!r} has no reference values")
    path = Path(item.reference)
    if path.is_dir():
        return outputs_from_test_data(model, path, limits, folders)
    if folders is None and not path.is_file():
        raise FeedError(f"no reference values for input {item.label!r}: {item.reference!r} does not exist")
    return feeds_from_npz_file(path, limits, folders)


def dims_of(model: Model, feeds: dict[str, Any]) -> dict[str, int]:
    """The sizes the feeds give the model's symbolic dims (read from the arrays' shapes)."""
    found: dict[str, int] = {}
    for spec in model.inputs:
        shape = getattr(feeds.get(spec.name), "shape", None)
        if spec.shape is None or shape is None or len(shape) != len(spec.shape):
            continue
        for dim, size in zip(spec.shape, shape):
            if isinstance(dim, str):
                found.setdefault(dim, int(size))
    return found


def run_item(item: Item, job: Job, model_data: bytes | None = None, other_data: bytes | None = None) -> dict[str, Any]:
    """The row of one input (never raises: a failure is an "error" row with explorer's message)."""
    start = time.perf_counter()
    dims = item.dims_dict
    try:
        model = model_of(job.model, model_data)
        feeds = validate_feeds(model, feeds_of(model, item, job.limits, job.folders))  # by name: explorer's message if not
        dims = dims or dims_of(model, feeds)
        other: Any = job.against  # "onnxruntime" or "pytorch"
        if job.against == "model" and job.other is not None:
            other = model_of(job.other, other_data)
        elif job.against == "reference":
            other = reference_of(model, item, job.limits, job.folders)
        with using_judge(_judge(job.timeout)):
            result = compare(model, other, feeds, rtol=job.rtol, atol=job.atol, limits=job.limits,
                             timeout=job.timeout)
        row = row_of(item, dims, result)
    except LimitExceeded as exc:
        row = failed_row(item, dims, str(exc), LIMIT)
    except ExplorerError as exc:
        row = failed_row(item, dims, str(exc))
    except OSError as exc:
        row = failed_row(item, dims, f"{exc.strerror or exc}" + (f": {exc.filename!r}" if exc.filename else ""))
    except Exception as exc:  # noqa: BLE001 - a defect on one input is that input's row; the sweep goes on
        row = failed_row(item, dims, failure_text(exc))
    row["seconds"] = time.perf_counter() - start
    row["worker"] = _worker_address()
    return row


def _worker_address() -> str:
    """The address of the Dask worker running this, or "" outside one."""
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return ""
