"""The app's cached work: models of samples and local paths by content key (sha256 of the bytes, never a hashed
ModelProto), optimizations and their proofs, shared by every session; a session's uploaded models and its runs
(with their folders on disk) by model key + feeds key + limits, owned by the session (ui/owned.py: they go when
it ends); and the records these caches hold (where a model comes from, what to run it on, how a run ended)."""
from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import onnx
import streamlit as st

from ..errors import ExecutionError, ExplorerError, FeedError, failure_text
from ..executor import run
from ..files.access import REFUSED, Access, AccessRefused
from ..hosting.priority import lower_this_thread
from ..hosting.recent import MadeOnce
from ..inputs.samples import sample_inputs, sample_path
from ..limits import Limits
from ..model.model import Model, load
from ..optimizer import OptimizationResult, first_rewrites, optimize
from ..trace.trace import Trace
from ..views.heat import OVERLAYS, NodeValues
from ..views.markup import md
from . import owned, reach


@dataclass(frozen=True)
class ModelSource:
    """Where a model comes from. `key` is its content key: sha256 of the bytes (plus the folder for a local
    path, whose external data lives there; and lenient mode, see `lenient`)."""

    kind: str  # "sample" | "upload" | "path"
    label: str
    key: str
    data: bytes | None = field(default=None, repr=False, compare=False)
    path: str | None = None
    lenient: bool = False  # load it even when it breaks the spec's typing rules (each a warning)
    shared: bool = False  # a local path opened by a shared app: any failure is the one refusal (explorer/files/access.py)


def lenient(source: ModelSource | None, on: bool) -> ModelSource | None:
    """The source loaded in lenient mode (a model of its own, with its own key) when `on`."""
    if source is None or not on:
        return source
    return replace(source, key=f"{source.key}:lenient", lenient=True)


@dataclass(frozen=True)
class LoadResult:
    """The loaded model, or why it did not load (markdown: the loader's message escaped, then a hint)."""

    model: Model | None
    error: str | None


@dataclass(frozen=True)
class RunRequest:
    """What to run the active model on. `make_feeds` builds the feeds only when the run is not cached."""

    feeds_key: str
    label: str
    make_feeds: Callable[[], dict[str, Any]] = field(compare=False, repr=False)
    limits: Limits


@dataclass(frozen=True)
class RunOutcome:
    """A run's trace (partial when the run failed) and, on failure, the error text and kind (and the limit hit)."""

    trace: Trace | None
    error: str | None = None
    kind: str | None = None
    limit: str | None = None  # e.g. "max_iterations" for a LimitExceeded


@st.cache_data(max_entries=64, show_spinner=False)
def _file_sha256(path: str, mtime_ns: int, size: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _file_key(path: Path) -> str:
    stat = path.stat()
    return _file_sha256(str(path), stat.st_mtime_ns, stat.st_size)


def sample_source(name: str) -> ModelSource:
    path = sample_path(name)
    return ModelSource("sample", name, "sha256:" + _file_key(path), path=str(path))


def upload_source(name: str, data: bytes) -> ModelSource:
    return ModelSource("upload", name, "sha256:" + hashlib.sha256(data).hexdigest(), data=data)


def path_source(text: str, access: Access | None = None) -> ModelSource:
    """A local file (external data is read from its folder). A missing path still makes a source: loading it
    reports the problem. A shared app (`access`) opens only files inside the folders its operator allowed: any
    other path makes a source whose loading gives the one refusal."""
    access = access or Access()
    try:
        path = access.path(text)
    except AccessRefused:
        return ModelSource("path", text.strip(), "refused", shared=True)
    if not path.is_file():
        return ModelSource("path", str(path), f"missing:{path}", path=str(path), shared=access.shared)
    resolved = path.resolve()
    return ModelSource("path", str(path), f"sha256:{_file_key(resolved)}@{resolved.parent}", path=str(resolved),
                       shared=access.shared)


@st.cache_resource(max_entries=8, show_spinner=False)
def _load_shared(key: str, label: str, max_nodes: int | None, _source: ModelSource) -> LoadResult:
    return _load(_source, max_nodes)


def _load(_source: ModelSource, max_nodes: int | None) -> LoadResult:
    label = _source.label
    if _source.shared:  # nothing of a file that did not load as a model, not even whether it exists
        try:
            return LoadResult(load(str(_source.path), label=label, lenient=_source.lenient, max_nodes=max_nodes), None) \
                if _source.path else LoadResult(None, md(REFUSED))
        except Exception:  # noqa: BLE001 - whatever went wrong, the same refusal
            return LoadResult(None, md(REFUSED))
    try:
        model = load(_source.data if _source.data is not None else str(_source.path), label=label,
                     lenient=_source.lenient, max_nodes=max_nodes)
    except ExplorerError as exc:
        uploaded_alone = _source.kind == "upload" and "external file" in str(exc)  # its data files stay behind
        hint = ". Choose **Local path** in the sidebar and give the model's path instead" if uploaded_alone else ""
        return LoadResult(None, f"{md(exc)}{hint}")
    except Exception as exc:  # noqa: BLE001 - the app keeps the previous model whatever went wrong
        return LoadResult(None, md(failure_text(exc)))
    return LoadResult(model, None)


@st.cache_resource(max_entries=64, show_spinner=False)
def _proto_model(key: str, lenient: bool, _proto: onnx.ModelProto) -> Model:
    return load(_proto, lenient=lenient)


def proto_model(proto: onnx.ModelProto, lenient: bool = False) -> Model:
    """A Model of an in-memory proto (an optimizer result, a rewrite's neighbourhood), cached by content;
    `lenient` as the model it comes from was loaded."""
    return _proto_model(hashlib.sha256(proto.SerializeToString(deterministic=True)).hexdigest(), lenient, proto)


def load_source(source: ModelSource) -> LoadResult:
    """The loaded model of a source, or the loader's error message: an upload's held by the session, a sample's
    or a local file's cached for every session (by content key); a model of more nodes than the operator's cap
    is refused."""
    max_nodes = reach.caps().nodes
    if source.kind == "upload":
        return owned.held("models", (source.key, source.label, max_nodes), lambda: _load(source, max_nodes))
    return _load_shared(source.key, source.label, max_nodes, source)


@st.cache_data(max_entries=32, show_spinner=False)
def given_sample_inputs(name: str) -> dict[str, Any] | None:
    return sample_inputs(name)


def run_finished(model_key: str, feeds_key: str, limits: tuple[int, ...]) -> bool:
    """Whether the session holds this run (so asking for it costs nothing)."""
    return owned.holdings().has("runs", (model_key, feeds_key, limits))


def run_cached(model_key: str, feeds_key: str, limits: tuple[int, ...], model: Model,
               make_feeds: Callable[[], dict[str, Any]]) -> RunOutcome:
    """The run of `model` on the feeds `make_feeds` makes under `limits`, held by the session (its last few)."""
    return owned.held("runs", (model_key, feeds_key, limits), lambda: _run(model, make_feeds, limits))


def _run(model: Model, make_feeds: Callable[[], dict[str, Any]], limits: tuple[int, ...]) -> RunOutcome:
    try:
        feeds = make_feeds()
        return RunOutcome(run(model, feeds, limits=Limits(*limits)))
    except ExecutionError as exc:
        return RunOutcome(exc.trace, str(exc), type(exc).__name__, getattr(exc, "limit", None))
    except ExplorerError as exc:  # FeedError and anything else refused before the run starts
        return RunOutcome(None, str(exc), type(exc).__name__)
    except Exception as exc:  # noqa: BLE001 - shown as the run's error; the model and the inputs stay
        return RunOutcome(None, failure_text(exc), type(exc).__name__)


def feed_error(message: str) -> Callable[[], dict[str, Any]]:
    """A feeds factory that reports a problem with the user's inputs when the run is attempted."""

    def fail() -> dict[str, Any]:
        raise FeedError(message)

    return fail


OptimizationKey = tuple[str, tuple[str, ...], int | None]  # model key, patterns, stop_after
OPTIMIZATIONS_KEPT = 16
_optimizations: MadeOnce[OptimizationKey, OptimizationResult] = MadeOnce(OPTIMIZATIONS_KEPT)


def optimize_cached(model_key: str, patterns: tuple[str, ...], stop_after: int | None,
                    model: Model) -> OptimizationResult:
    """The model optimized with `patterns` (only its first `stop_after` rewrites when given: those of the whole
    optimization, the same rewrites left out), once for every session: a caller asking for one under way (another
    session's, optimize_ahead's) waits for it. Raises ExplorerError (whatever went wrong) for the page to show; a
    failure is not kept."""
    key = (model_key, patterns, stop_after)
    if _optimizations.ready(key):
        return _optimizations.get(key, partial(_optimized, key, model))
    with st.spinner("Optimizing…"):  # only while it optimizes
        return _optimizations.get(key, partial(_optimized, key, model))


def optimize_ahead(model: Model, patterns: tuple[str, ...], prepare: Callable[[OptimizationResult], object]) -> None:
    """Starts optimizing the model with `patterns` on a daemon thread, unless that is kept or under way: a page
    asking for it later (optimize_cached) finds it done, or waits for the rest. What the Optimizer page asks of the
    result is made too (nobody waits yet): the optimized model loaded, both models' node paths, and whatever
    `prepare(result)` makes."""
    key = (model.sha256, patterns, None)
    _optimizations.ahead(key, partial(_optimized_in_background, key, model, prepare), "optimize ahead")


def _optimized_in_background(key: OptimizationKey, model: Model,
                             prepare: Callable[[OptimizationResult], object]) -> OptimizationResult:
    """_optimized at the lowest CPU priority, with what `prepare` starts (hosting/priority)."""
    lower_this_thread()
    return _optimized(key, model, prepare)


def _optimized(key: OptimizationKey, model: Model,
               prepare: Callable[[OptimizationResult], object] | None = None) -> OptimizationResult:
    model_key, patterns, stop_after = key
    try:
        if stop_after is not None:
            return first_rewrites(optimize_cached(model_key, patterns, None, model), stop_after)
        result = optimize(model, patterns=patterns)
    except ExplorerError:
        raise
    except Exception as exc:  # the page shows it; the model stays
        raise ExplorerError(f"the optimizer failed: {failure_text(exc)}") from exc
    if prepare is not None:
        with contextlib.suppress(Exception):  # a page that asks for these gets the error itself
            result.node_counts()
            result.optimized_model()
            prepare(result)
    return result


def node_values_cached(run_key: str, kind: str, trace: Trace) -> NodeValues:
    """A views.heat overlay of a run, held by the session."""
    return owned.held("overlays", (run_key, kind), lambda: OVERLAYS[kind](trace))
