"""Every session_state key of the app, and the cached loaders: models by content key (sha256 of the bytes, never
a hashed ModelProto), runs by model key + feeds key + limits."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import onnx
import streamlit as st

from ..errors import ExecutionError, ExplorerError, FeedError
from ..executor import run
from ..limits import Limits
from ..model import Model, load
from ..optimizer import OptimizationResult, optimize
from ..optimizer.verify import Equivalence, verify
from ..samples import sample_inputs, sample_path
from ..trace import Trace

# ---- app-owned session keys ----------------------------------------------------------------------------------
ACTIVE = "active_model"  # ModelSource of the model every page shows
LOAD_ERROR = "load_error"  # message of the last requested model that failed to load
RUN_REQUEST = "run_request"  # RunRequest: the feeds and limits of the run every page shows
CURSOR = "cursor"  # index of the step-through event
SELECTED = "selected_node"  # static path of the node in the inspector
GRAPH_PATH = "graph_path"  # graph path the Graph page draws (drill-down)
EXPANDED = "expanded_bodies"  # body graph path -> drawn expanded? (the Graph page's overrides of the default)
NO_DOT_NOTICE = "notice_no_dot"  # the missing-graphviz notice was shown (once per session)

# ---- widget keys ---------------------------------------------------------------------------------------------
W_SOURCE = "w_source"
W_SAMPLE = "w_sample"
W_UPLOAD = "w_upload"
W_PATH = "w_path"
W_INPUT_MODE = "w_input_mode"
W_SEED = "w_seed"
W_NPZ = "w_npz"  # uploaded inputs: one .npz or input_<i>.pb files
W_MAX_ITERATIONS = "w_max_iterations"
W_BUDGET_MB = "w_budget_mb"
W_NODE_PICK = "w_node_pick"
W_CURSOR = "w_cursor"
W_GRAPH_CLICK = "w_graph_click"
W_LOOP = "w_loop"  # Loops page: selected Scan/Loop/If/SequenceMap path
W_RNN = "w_rnn"  # Gates page: selected GRU/LSTM/RNN path
W_PATTERNS = "w_patterns"  # Optimizer page: chosen pattern names
W_REWRITES = "w_rewrites"  # Optimizer page: how many rewrites to apply (bisection slider)


def dim_key(model: Model, name: str) -> str:
    """Widget key of a symbolic dimension's size, per model (a new model starts from defaults)."""
    return f"w_dim:{model.sha256[:16]}:{name}"


def table_key(model: Model, name: str) -> str:
    """Widget key of an input's table editor, per model."""
    return f"w_table:{model.sha256[:16]}:{name}"


@dataclass(frozen=True)
class ModelSource:
    """Where a model comes from. `key` is its content key: sha256 of the bytes (plus the folder for a local
    path, whose external data lives there)."""

    kind: str  # "sample" | "upload" | "path"
    label: str
    key: str
    data: bytes | None = field(default=None, repr=False, compare=False)
    path: str | None = None


@dataclass(frozen=True)
class LoadResult:
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


def init() -> None:
    """Defaults of every app-owned key."""
    defaults: dict[str, Any] = {ACTIVE: None, LOAD_ERROR: None, RUN_REQUEST: None, CURSOR: 0, SELECTED: None,
                                GRAPH_PATH: "", EXPANDED: {}}
    for key, value in defaults.items():
        st.session_state.setdefault(key, value)


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


def path_source(text: str) -> ModelSource:
    """A local file (external data is read from its folder). A missing path still makes a source: loading it
    reports the problem."""
    path = Path(os.path.expanduser(text.strip()))
    if not path.is_file():
        return ModelSource("path", str(path), f"missing:{path}", path=str(path))
    resolved = path.resolve()
    return ModelSource("path", str(path), f"sha256:{_file_key(resolved)}@{resolved.parent}", path=str(resolved))


@st.cache_resource(max_entries=8, show_spinner=False)
def _load(key: str, label: str, _source: ModelSource) -> LoadResult:
    try:
        model = load(_source.data if _source.data is not None else _source.path, label=_source.label)
    except ExplorerError as exc:
        uploaded_alone = _source.kind == "upload" and "external file" in str(exc)  # its data files stay behind
        hint = ". Choose **Local path** in the sidebar and give the model's path instead" if uploaded_alone else ""
        return LoadResult(None, f"{exc}{hint}")
    return LoadResult(model, None)


@st.cache_resource(max_entries=64, show_spinner=False)
def _proto_model(key: str, _proto: onnx.ModelProto) -> Model:
    return load(_proto)


def proto_model(proto: onnx.ModelProto) -> Model:
    """A Model of an in-memory proto (an optimizer result, a rewrite's neighbourhood), cached by content."""
    return _proto_model(hashlib.sha256(proto.SerializeToString(deterministic=True)).hexdigest(), proto)


def load_source(source: ModelSource) -> LoadResult:
    """The loaded model of a source (cached by content key), or the loader's error message."""
    return _load(source.key, source.label, source)


def request_model(candidate: ModelSource | None) -> None:
    """Makes `candidate` the active model when it loads; when it does not, records the error and keeps the
    previous model active. None (nothing chosen yet) clears the error."""
    active: ModelSource | None = st.session_state[ACTIVE]
    if candidate is None or (active is not None and candidate.key == active.key):
        st.session_state[LOAD_ERROR] = None
        return
    result = load_source(candidate)
    if result.model is None:
        st.session_state[LOAD_ERROR] = result.error
        return
    st.session_state[ACTIVE] = candidate
    st.session_state[LOAD_ERROR] = None
    for key, value in ((CURSOR, 0), (SELECTED, None), (GRAPH_PATH, ""), (EXPANDED, {})):
        st.session_state[key] = value
    st.session_state.pop(W_INPUT_MODE, None)  # each model starts from its own default inputs


def active_model() -> Model | None:
    source: ModelSource | None = st.session_state.get(ACTIVE)
    return None if source is None else load_source(source).model


@st.cache_data(max_entries=32, show_spinner=False)
def _sample_inputs(name: str) -> dict[str, Any] | None:
    return sample_inputs(name)


def given_inputs() -> dict[str, Any] | None:
    """The inputs the active model is first run on when it is a sample that has them (see explorer.samples)."""
    source: ModelSource | None = st.session_state.get(ACTIVE)
    return _sample_inputs(source.label) if source is not None and source.kind == "sample" else None


def load_error() -> str | None:
    """Why the requested model failed to load, if it did."""
    return st.session_state.get(LOAD_ERROR)


@st.cache_resource(max_entries=8, show_spinner=False)
def _run(model_key: str, feeds_key: str, limits: tuple[int, int, int], _model: Model,
         _make_feeds: Callable[[], dict[str, Any]]) -> RunOutcome:
    try:
        feeds = _make_feeds()
        return RunOutcome(run(_model, feeds, limits=Limits(*limits)))
    except ExecutionError as exc:
        return RunOutcome(exc.trace, str(exc), type(exc).__name__, getattr(exc, "limit", None))
    except ExplorerError as exc:  # FeedError and anything else refused before the run starts
        return RunOutcome(None, str(exc), type(exc).__name__)


def current_run() -> RunOutcome | None:
    """The run of the active model on the requested feeds (cached: redone only when model, feeds or limits
    change). None when there is no model or no feeds yet."""
    model = active_model()
    request: RunRequest | None = st.session_state.get(RUN_REQUEST)
    if model is None or request is None:
        return None
    limits = request.limits
    with st.spinner(f"Running {model.source} on {request.label}…"):
        return _run(model.sha256, request.feeds_key,
                    (limits.max_iterations, limits.max_tensor_bytes, limits.trace_budget_bytes),
                    model, request.make_feeds)


def current_trace() -> Trace | None:
    outcome = current_run()
    return None if outcome is None else outcome.trace


def feed_error(message: str) -> Callable[[], dict[str, Any]]:
    """A feeds factory that reports a problem with the user's inputs when the run is attempted."""

    def fail() -> dict[str, Any]:
        raise FeedError(message)

    return fail


def cursor(trace: Trace) -> int:
    """The step cursor, clamped to the trace."""
    index = min(max(int(st.session_state.get(CURSOR, 0)), 0), max(len(trace.events) - 1, 0))
    st.session_state[CURSOR] = index
    return index


def set_cursor(index: int) -> None:
    st.session_state[CURSOR] = index


def select_node(path: str | None) -> None:
    st.session_state[SELECTED] = path


def selected_node() -> str | None:
    return st.session_state.get(SELECTED)


@st.cache_resource(max_entries=16, show_spinner=False)
def _optimize(model_key: str, patterns: tuple[str, ...], stop_after: int | None,
              _model: Model) -> OptimizationResult:
    return optimize(_model, patterns=patterns, stop_after=stop_after)


def optimization(model: Model, patterns: tuple[str, ...], stop_after: int | None = None) -> OptimizationResult:
    """The model optimized with these patterns (only the first `stop_after` rewrites when given); cached."""
    with st.spinner("Optimizing…"):
        return _optimize(model.sha256, patterns, stop_after, model)


@st.cache_resource(max_entries=32, show_spinner=False)
def _equivalence(model_key: str, patterns: tuple[str, ...], stop_after: int | None, feeds_key: str,
                 _result: OptimizationResult, _feeds: dict[str, Any] | None) -> Equivalence:
    return verify(_result, _feeds, bisect=stop_after is None)


def equivalence(model: Model, patterns: tuple[str, ...], stop_after: int | None,
                result: OptimizationResult) -> Equivalence:
    """The original and (partially) optimized models run on the current run's feeds (random ones when there
    are none) by explorer and onnxruntime; for the full optimization, bisection names the first failing rewrite."""
    request: RunRequest | None = st.session_state.get(RUN_REQUEST)
    trace = current_trace()
    feeds = trace.feeds if trace is not None and request is not None else None
    feeds_key = request.feeds_key if feeds is not None else "random:0"
    with st.spinner("Checking equivalence…"):
        return _equivalence(model.sha256, patterns, stop_after, feeds_key, result, feeds)
