"""Every session_state and widget key of the app, and the session's view of the cached work in `cache`: the
active model, the run every page shows, the step cursor, the selected node."""
from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import streamlit as st

from ..limits import Limits
from ..model.model import Model
from ..trace.trace import Trace
from ..views.heat import NodeValues
from . import reach
from .cache import (
    ModelSource,
    RunOutcome,
    RunRequest,
    feed_error,
    given_sample_inputs,
    lenient,
    load_source,
    node_values_cached,
    path_source,
    proto_model,
    run_cached,
    run_finished,
    sample_source,
    upload_source,
)

__all__ = ["ModelSource", "RunOutcome", "RunRequest", "feed_error", "lenient", "path_source", "proto_model",
           "sample_source", "upload_source"]

# ---- app-owned session keys ----------------------------------------------------------------------------------
ACTIVE = "active_model"  # ModelSource of the model every page shows
LOAD_ERROR = "load_error"  # message of the last requested model that failed to load
RUN_REQUEST = "run_request"  # RunRequest: the feeds and limits of the run every page shows
CURSOR = "cursor"  # index of the step-through event
SELECTED = "selected_node"  # static path of the node in the inspector
GRAPH_PATH = "graph_path"  # graph path the Graph page draws (drill-down)
EXPANDED = "expanded_bodies"  # body graph path -> drawn expanded? (the Graph page's overrides of the default)

ANSWERS = "learning_answers"  # learning mode: question key -> what the learner was told
LEARN_POSITION = "learn_position"  # learning mode: iterations revealed so far (per loop execution)
TOUR = "tour_positions"  # sample -> index of the tour tip shown (past the end: closed)
URL_READ = "url_read"  # the address's state was read (once per session)
COMPARED = "compared"  # the Compare page's latest comparison (run key, its key, Comparison): Graph page colours
FRAMEWORK_COMPARED = "framework_compared"  # the Compare page's latest framework comparison (model sha256, its key,
# FrameworkComparison): the Graph page's own and carried error colours
URL_PENDING = "url_pending"  # address parameters still to apply (inputs, cursor, node) once the model is active
STEP_FRAMES = "step_frames"  # Step page: (what they depend on, {event: frame}, generation) kept for reuse
JOBS = "judge_jobs"  # {job key: JudgeJob}, oldest first: the session's questions to onnxruntime (ui/jobs.py)
RUN_PUT_OFF = "run_put_off"  # this script run leaves the run to the next one (see put_off_run)
RUN_WAITED = "run_waited"  # run key of the run a page has put off once already
PUT_OFF_NODES = 2_000  # a model this big is drawn before its first run (see put_off_run)
SWEEP_JOB = "sweep_job"  # Sweep page: (SweepJob, its reference as the Compare page's B), see ui/sweeping.py
SWEPT_INPUT = "swept_input"  # (model key, sweep Item): a sweep's input opened as the app's inputs, its reference
AT_DIVERGENCE = "at_divergence"  # the Compare page opens its lockstep cursor at the first divergence (once)
GO_TO_PAGE = "go_to_page"  # a page a callback asked for: the app switches to it before drawing the sidebar
SAVE_WRITER = "save_writer"  # the session's name as the writer of its saves in a shared app (save_owners.py)

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
W_DISK_MB = "w_disk_mb"
W_MAX_TENSOR_MB = "w_max_tensor_mb"
W_MAX_EVENTS = "w_max_events"
W_THREADS = "w_threads"
W_LENIENT = "w_lenient"
W_OPTIMIZED_PATH = "w_optimized_path"  # Optimizer page: where a result with external data is saved
W_OPTIMIZED_SAVE = "w_optimized_save"
W_NODE_PICK = "w_node_pick"
W_GRAPH_CLICK = "w_graph_click"
W_LOOP = "w_loop"  # Loops page: selected Scan/Loop/If/SequenceMap path
W_RNN = "w_rnn"  # Gates page: selected GRU/LSTM/RNN path
W_RNN_PATTERN = "w_rnn_pattern"  # Gates page: pick units by pattern (per node)
W_RNN_RANGE = "w_rnn_range"  # Gates page: the time steps the pattern covers (per node and gate)
W_RNN_THRESHOLD = "w_rnn_threshold"  # Gates page: the level units must stay at or above (per node and gate)
W_PATTERNS = "w_patterns"  # Optimizer page: chosen pattern names
W_REWRITES = "w_rewrites"  # Optimizer page: how many rewrites to apply (bisection slider)
W_BODIES = "w_bodies"  # Graph page: auto / expand / collapse bodies
W_SEARCH = "w_search"  # Graph page: search query
W_SEARCH_PICK = "w_search_pick"  # Graph page: the search match to go to (per query)
W_COLOUR = "w_colour"  # Graph page: colour nodes by time, max |value| or NaN/Inf
W_PART = "w_part"  # Graph page: hierarchy navigator, the part to open (per focus)
W_GOTO_STEP = "w_goto_step"  # Graph page: step through from the selected node's first run
W_LEARNING = "w_learning"  # sidebar: learning mode (predict before the trace reveals)
W_INTERACTIVE_CHARTS = "w_interactive_charts"  # sidebar: plotly charts instead of inline SVG (ui/charts.py)
W_TOUR = "w_tour"  # tour buttons
W_PREDICT = "w_predict"  # learning mode: a prediction (per question)
W_CHECK = "w_check"  # learning mode: check a prediction (per question)
W_STEP_VIEW = "w_step_view"  # Step page: how much of the model to draw
W_STEP_DIAGRAM = "w_step_diagram"
W_STEP_INPUTS_IN_FULL = "w_step_inputs_in_full"  # Step page: the current node's inputs as tables (and plots)
W_STEP_PLOTS = "w_step_plots"  # Step page: plot the current node's values
C_STEP_VIEW = "step_view"  # Step page: the container of the canvas and the values (its CSS class)
W_OPT_WHOLE = "w_opt_whole"  # Optimizer page: draw the whole models
W_OPT_BEFORE = "w_opt_before"
W_OPT_AFTER = "w_opt_after"
W_REWRITE_PICK = "w_rewrite_pick"
W_ALL_ROWS = "w_all_rows"  # a long table's toggle: all its rows listed (widgets.listed_table), keyed by what it lists
W_ALL_REWRITES = "w_all_rewrites"  # Optimizer page: every rewrite listed (views/html_blocks.LISTED_ROWS at first)
W_REWRITE_BEFORE = "w_rewrite_before"
W_REWRITE_AFTER = "w_rewrite_after"
W_STEP_CHECK = "w_step_check"  # Step page: check the outputs against onnxruntime
W_COMPARE_B = "w_compare_b"  # Compare page: what side B is
W_COMPARE_SAMPLE = "w_compare_sample"
W_COMPARE_UPLOAD = "w_compare_upload"
W_COMPARE_PATH = "w_compare_path"
W_COMPARE_NPZ = "w_compare_npz"
W_COMPARE_CAPTURE = "w_compare_capture"  # Compare page: a framework model's capture (.npz)
W_COMPARE_FIXED = "w_compare_fixed"  # Compare page: download of the export with its fixes
W_COMPARE_FRAMEWORK = "w_compare_framework"  # Compare page: the framework model as a capture or as its code
W_COMPARE_CODE = "w_compare_code"  # Compare page: the framework model's code (.py) or saved model (.keras)
W_COMPARE_FACTORY = "w_compare_factory"  # Compare page: the function of the .py that builds the framework model
W_COMPARE_LIBRARY = "w_compare_library"  # Compare page: whether the .py builds a PyTorch or a Keras model
W_COMPARE_RUN_CODE = "w_compare_run_code"  # Compare page: run the framework model's code (never on upload alone)
W_COMPARE_MODULES = "w_compare_modules"  # Compare page: the framework's module tree (its selected row)
COMPARE_MODULE_STEPPED = "compare_module_stepped"  # tree key -> the row whose event the step cursor was moved to
W_COMPARE_MODULE_STEP = "w_compare_module_step"  # Compare page: step through from the picked module's event
W_COMPARE_MODULE_DIAGRAM = "w_compare_module_diagram"  # Compare page: the export beside the module tree
W_COMPARE_DRAW_EXPORT = "w_compare_draw_export"  # Compare page: draw the export beside the module tree
W_COMPARE_DRAW_FIX = "w_compare_draw_fix"  # Compare page: draw the export before and after the framework fix
W_COMPARE_FIX_BEFORE = "w_compare_fix_before"  # Compare page: the export before the framework fix
W_COMPARE_FIX_AFTER = "w_compare_fix_after"  # Compare page: the export after the framework fix
W_COMPARE_RTOL = "w_compare_rtol"
W_REPORT_DOWNLOAD = "w_report_download"  # Compare, Step through and Gates pages: "Download report" (per page)
W_COMPARE_ATOL = "w_compare_atol"
W_COMPARE_CURSOR = "w_compare_cursor"  # Compare page: the event both runs are stepped to
W_COMPARE_SIDE_BY_SIDE = "w_compare_side_by_side"
W_COMPARE_VALUE = "w_compare_value"
W_COMPARE_RNN = "w_compare_rnn"
W_COMPARE_DIAGRAM_A = "w_compare_diagram_a"
W_COMPARE_DIAGRAM_B = "w_compare_diagram_b"
W_COMPARE_GOTO = "w_compare_goto"  # Compare page: go to the first divergence
W_COMPARE_TAB = "w_compare_tab"  # Compare page: the open tab (only it runs)
W_COMPARE_GROWTH = "compare_growth"  # Compare page: the error-over-time plot
W_COMPARE_STEP_DIAGRAM = "w_compare_diagram_a:step"  # Compare page: A's diagram at the lockstep cursor

# ---- prefixes of keys made per node, value or iteration: keyed(PREFIX, ...) ---------------------------------
K_EXEC = "w_exec"  # Node inspector: which execution of a node (per node)
K_INSPECT = "inspect"  # Node inspector: a value's plot (per event and value)
K_RNN_EXEC = "w_rnn_exec"  # Gates page: which execution of a recurrent node
K_RNN_DIR = "w_rnn_dir"  # Gates page: direction (per node)
K_RNN_BATCH = "w_rnn_batch"  # Gates page: batch item (per node)
K_GATE_PLOT = "gate"  # Gates page: a gate's heatmap
K_SATURATION_PLOT = "saturation"  # Gates page: saturation plot
K_SIDES_PLOT = "sides"  # Gates page: left/right saturation fractions plot
K_NORM_PLOT = "norm"  # Gates page: hidden state norm plot
K_RNN_GATE = "w_rnn_gate"  # Gates page: gate whose units are picked
K_RNN_UNITS = "w_rnn_units"  # Gates page: units shown
K_UNITS_PLOT = "units"  # Gates page: the picked units' plot
K_COMPARE_GATE = "w_compare_gate"  # Compare page: gate (per node)
K_COMPARE_DIR = "w_compare_dir"  # Compare page: direction (per node)
K_COMPARE_ITEM = "w_compare_item"  # Compare page: batch item (per node)
K_COMPARE_GATE_PLOT = "compare_gate"  # Compare page: a gate heatmap of A, B or |A - B|
K_COMPARE_CACHE_PLOT = "compare_cache"  # Compare page: two generations' cache error per step and layer
K_STEP_VALUE = "step"  # Step page: a value's table and plot (per side and position, kept from step to step)
K_DRILL = "w_drill"  # Graph page: drill into a body
K_FOLD = "w_fold"  # Graph page: expand or collapse a body
K_CRUMB = "w_crumb"  # Graph page: a breadcrumb button
K_IF_EXEC = "w_if_exec"  # Loops page: which execution of an If
K_IF_DIAGRAM = "w_if_diagram"  # Loops page: an If branch's diagram
K_LOOP_EXEC = "w_loop_exec"  # Loops page: which execution of a loop
K_LOOP_ITERATION = "w_loop_it"  # Loops page: the iteration shown
K_LOOP_DIAGRAM = "w_loop_diagram"  # Loops page: the body diagram
K_CARRIED_PLOT = "carried"  # Loops page: a carried value's plot
K_SCAN_SERIES_PLOT = "scan_series"  # Loops page: a scan output's series plot
K_SCAN_PLOT = "scan"  # Loops page: a scan value's plot
K_VALUE_TABLE = "value_table"  # a value's table beside its plot (per plot key)
K_LAYOUT_SENT = "layout_sent"  # a diagram canvas: the layout last sent to it (per canvas key)
K_FRAMES_SENT = "frames_sent"  # a diagram canvas's stepper: (the set of frames, the events sent of it) per canvas key
K_FIRST_SHOWN = "canvas_first_shown"  # diagram canvases sent before their drawing: {(model key, drawing key)}
K_JOB_CANCEL = "w_job_cancel"  # a running onnxruntime job's Cancel button (per job)
K_JOB_AGAIN = "w_job_again"  # a cancelled job's "ask again" button (per job)
K_SWEEP = "w_sweep"  # Sweep page: its widgets, f"{K_SWEEP}_{part}" (inputs, seeds, folder, against, ...)


def keyed(prefix: str, *parts: object) -> str:
    """A widget or element key for something named by the model (node paths, value names, iterations): the
    names are hashed, so any name works, whatever its characters or length."""
    digest = hashlib.sha1("\x1f".join(map(str, parts)).encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return f"{prefix}:{digest}"


def dim_key(model: Model, name: str) -> str:
    """Widget key of a symbolic dimension's size, per model (a new model starts from defaults)."""
    return keyed("w_dim", model.sha256[:16], name)


def table_key(model: Model, name: str) -> str:
    """Widget key of an input's table editor, per model."""
    return keyed("w_table", model.sha256[:16], name)


def init() -> None:
    """Defaults of every app-owned key."""
    defaults: dict[str, Any] = {ACTIVE: None, LOAD_ERROR: None, RUN_REQUEST: None, CURSOR: 0, SELECTED: None,
                                GRAPH_PATH: "", EXPANDED: {}}
    for key, value in defaults.items():
        st.session_state.setdefault(key, value)
    st.session_state[RUN_PUT_OFF] = False


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


def active_source() -> ModelSource | None:
    """Where the model every page shows comes from."""
    return st.session_state.get(ACTIVE)


def active_model() -> Model | None:
    source = active_source()
    return None if source is None else load_source(source).model


def given_inputs() -> dict[str, Any] | None:
    """The inputs the active model is first run on when it is a sample that has them (see explorer.inputs.samples)."""
    source: ModelSource | None = st.session_state.get(ACTIVE)
    return given_sample_inputs(source.label) if source is not None and source.kind == "sample" else None


def load_error() -> str | None:
    """Why the requested model failed to load, if it did (markdown)."""
    return st.session_state.get(LOAD_ERROR)


def current_run() -> RunOutcome | None:
    """The run of the active model on the requested feeds (cached: redone only when model, feeds or limits
    change). None when there is no model or no feeds yet, or when this script run put the run off."""
    model = active_model()
    request: RunRequest | None = st.session_state.get(RUN_REQUEST)
    if model is None or request is None or st.session_state.get(RUN_PUT_OFF):
        return None
    limits = _limits_key(request)
    if run_finished(model.sha256, request.feeds_key, limits):  # no spinner: each starts a thread, which on a busy
        # machine waits a while to be scheduled, and a page asks for the run several times
        return run_cached(model.sha256, request.feeds_key, limits, model, request.make_feeds)
    with st.spinner(f"Running {model.source} on {request.label}…"):
        return run_cached(model.sha256, request.feeds_key, limits, model, request.make_feeds)


def _limits_key(request: RunRequest) -> tuple[int, ...]:
    return dataclasses.astuple(request.limits)


def run_ready() -> bool:
    """Whether asking for the current run costs nothing (done already, or nothing to run): a page draws what
    needs no trace before it waits for a run that is not."""
    model = active_model()
    request: RunRequest | None = st.session_state.get(RUN_REQUEST)
    return model is None or request is None or run_finished(model.sha256, request.feeds_key, _limits_key(request))


def put_off_run(model: Model) -> bool:
    """Whether this script run leaves the current run to the next one, once per run: a page showing a model of
    over PUT_OFF_NODES nodes puts its first run (a second of the server's time at 20,000 nodes) after its
    drawing, so that the browser gets the drawing without waiting, nor waits for the canvas's files. The next
    rerun runs it (the canvas reports its drawing: see ui/diagram.py's `report`; or any click does), unless the
    page's canvas went ahead of its drawing (`put_off_again`): then the rerun it asks for shows the drawing first."""
    key = run_key()
    if len(model.index.nodes) <= PUT_OFF_NODES or key is None or run_ready() or st.session_state.get(RUN_WAITED) == key:
        return False
    st.session_state[RUN_WAITED] = key
    st.session_state[RUN_PUT_OFF] = True
    return True


def put_off_again() -> None:
    """The next script run puts the model's run off too (see put_off_run): for a page whose canvas went ahead of
    its drawing (ui/diagram.py's `show_ahead`) and asks for the rerun that shows it."""
    st.session_state.pop(RUN_WAITED, None)


def current_trace() -> Trace | None:
    outcome = current_run()
    return None if outcome is None else outcome.trace


def node_values(kind: str) -> NodeValues | None:
    """A views.heat overlay ("time", "magnitude", "nonfinite") of the current run; None without a run."""
    key, trace = run_key(), current_trace()
    return None if key is None or trace is None else node_values_cached(key, kind, trace)


def run_key() -> str | None:
    """A key naming the current run (model, feeds, limits); None when there is nothing to run."""
    request: RunRequest | None = st.session_state.get(RUN_REQUEST)
    model = active_model()
    return None if request is None or model is None else f"{model.sha256}:{request.feeds_key}:{request.limits}"


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


def session_limits() -> Limits:
    """The limits of the session's run (the sidebar's, never past the operator's caps): the files a visitor gives
    besides the model (reference values, captures, a sweep's references) are read under them too."""
    request = st.session_state.get(RUN_REQUEST)
    return request.limits if request is not None else reach.caps().limits(Limits())
