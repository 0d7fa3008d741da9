"""Reusable pieces of the app: sidebar (model, inputs, limits), status banner, node selector, inspector, value
panels. They read and write session state only through `state`."""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from ..docs_links import more
from ..inputs import input_files as user_inputs
from ..inputs.samples import DEFAULT_SAMPLE, list_samples
from ..limits import Limits
from ..model.feeds import LOOP_BOUND, loop_bounds, symbolic_dims, unnamed_dims
from ..model.model import Model
from ..sweep.task import feeds_of
from ..trace.trace import Event, Trace
from ..views import hints
from ..views import inspector as views_inspector
from ..views.html_blocks import LISTED_ROWS, records_table
from ..views.loops import Execution
from ..views.markup import md, md_code
from ..views.tables import short_text
from ..views.trace_size import limits_text, trace_size_text
from . import reach, state, uploads, url

T = TypeVar("T")
Run = TypeVar("Run", Event, Execution)


def chosen(value: T | None) -> T:
    """The value of a widget that always has one (options given, no placeholder): typed without its None."""
    if value is None:
        raise RuntimeError("a widget with options returned no value")
    return value

SOURCES = ("Sample", "Upload", "Local path")
UPLOAD_INPUTS = "Upload .npz or .pb"
RANDOM_INPUTS = "Random"
INPUT_MODES = (RANDOM_INPUTS, UPLOAD_INPUTS, "Edit values")
SAMPLE_INPUTS = "Sample inputs"  # first mode for samples that come with inputs
SWEPT_INPUTS = "Sweep input"  # last mode once an input read from a file is opened from the Sweep page
NODE_PICK_LIMIT = 2_000  # options of the node selector at most (gtcrn's 1,786 nodes all fit)


# ---- sidebar -------------------------------------------------------------------------------------------------
def sidebar() -> Any:
    """Model choice, inputs and limits; records what is requested in session state. Returns the place under the
    limits for the run's trace size (trace_status, once the page has asked for the run), or None."""
    with st.sidebar:
        st.header("Model")
        st.caption(md(reach.access().describe()))
        candidate = model_picker()
        strictness = st.toggle("Lenient typing", key=state.W_LENIENT,
                               help=more("Run models that break the spec's typing rules (onnxruntime refuses them); "
                                         "each broken rule is shown as a warning.", "lenient"))
        state.request_model(state.lenient(candidate, strictness))
        model = state.active_model()
        if model is None:
            st.info("Choose a model to start.")
            return None
        graphs = len(model.index.graphs)
        st.caption(f"**{md(model.source)}** · {len(model.index.nodes)} nodes"
                   + (f" in {graphs} graphs" if graphs > 1 else "")
                   + " · opsets " + ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in sorted(model.opsets.items())))
        st.header("Inputs")
        limits = limits_picker()
        slot = st.container()
        st.session_state[state.RUN_REQUEST] = feeds_picker(model, limits)
        st.toggle("Learning mode", key=state.W_LEARNING,
                  help=more("Before the trace shows them, predict which branch an If takes (Step through) and what "
                            "a loop carries into its next iteration (Loops), and be told whether you were right.",
                            "learning"))
        st.toggle("Interactive charts", key=state.W_INTERACTIVE_CHARTS,
                  help="The charts drawn by plotly: zoom, values on hover, a slider over a tensor's slices. A new "
                       "browser tab then loads plotly's scripts, a second or more before its first chart shows.")
    return slot


def model_picker() -> state.ModelSource | None:
    """A bundled sample (with its description), an uploaded .onnx file, or a local path."""
    kind = st.radio("Source", SOURCES, key=state.W_SOURCE, horizontal=True, label_visibility="collapsed")
    if kind == "Sample":
        samples = list_samples()
        if not samples:
            st.warning("No samples built yet: run `python sample_models/build.py`.")
            return None
        if st.session_state.get(state.W_SAMPLE) not in samples:
            st.session_state[state.W_SAMPLE] = DEFAULT_SAMPLE if DEFAULT_SAMPLE in samples else next(iter(samples))
        name: str = chosen(st.selectbox("Sample", list(samples), key=state.W_SAMPLE))
        st.caption(samples[name])
        return state.sample_source(name)
    if kind == "Upload":
        upload = uploads.uploader("ONNX model", key=state.W_UPLOAD,
                                  help="A self-contained .onnx file (for external data, give a local path)")
        return None if upload is None else state.upload_source(upload.name, upload.getvalue())
    text = st.text_input("Path to an .onnx file", key=state.W_PATH,
                         help="External data files are read from the model's own folder")
    return state.path_source(text, reach.access()) if text.strip() else None


LIMIT_HINTS = {  # what to raise under Limits in the sidebar when the run stopped at that limit
    "max_iterations": " To let loops run longer, raise **Max loop iterations** under **Limits** in the sidebar.",
    "max_events": " To let the run go on, raise **Max node executions** under **Limits** in the sidebar.",
    "max_tensor_bytes": " To allow bigger values, raise **Largest value (MB)** under **Limits** in the sidebar.",
}


def limits_picker() -> Limits:
    """The run's limits, none past the operator's caps (the inputs' highest values, and the limits once more)."""
    caps = reach.caps()
    top = Limits(max_iterations=10**9, max_tensor_bytes=1 << 40, trace_budget_bytes=1 << 40, max_events=10**9,
                 threads=1024, trace_disk_bytes=1 << 50)
    high, default = caps.limits(top), caps.limits(Limits())
    capped = " (the most this app allows)" if caps != type(caps)() else ""
    with st.expander("Limits"):
        iterations = st.number_input("Max loop iterations", 1, high.max_iterations, default.max_iterations,
                                     key=state.W_MAX_ITERATIONS,
                                     help=more("Each Loop, Scan or SequenceMap stops after this many iterations.",
                                               "limits"))
        budget = st.number_input("Trace memory (MB)", 0, high.trace_budget_bytes >> 20,
                                 default.trace_budget_bytes >> 20, key=state.W_BUDGET_MB,
                                 help="Values recorded beyond this are written to the run's folder on disk")
        disk = st.number_input("Trace on disk (MB)", 0, high.trace_disk_bytes >> 20, default.trace_disk_bytes >> 20,
                               key=state.W_DISK_MB,
                               help="Values recorded beyond this on disk are kept as summaries (shape, min, max, "
                                    "mean, NaN/Inf counts); the default is half the free disk, at most 16 GiB")
        tensor = st.number_input("Largest value (MB)", 0, high.max_tensor_bytes >> 20, default.max_tensor_bytes >> 20,
                                 key=state.W_MAX_TENSOR_MB,
                                 help="A node whose output would be bigger stops the run before it is allocated")
        events = st.number_input("Max node executions", 1, high.max_events, default.max_events,
                                 key=state.W_MAX_EVENTS, help="The run stops after this many recorded node executions")
        threads = st.number_input("Threads", 1, high.threads, default.threads, key=state.W_THREADS,
                                  help="Threads of the run's matrix products (convolutions, MatMul, Gemm, "
                                       f"recurrent cells); this machine has {Limits().threads} available "
                                       f"cores{capped}")
    return caps.limits(Limits(max_iterations=int(iterations), max_tensor_bytes=int(tensor) << 20,
                              trace_budget_bytes=int(budget) << 20, max_events=int(events), threads=int(threads),
                              trace_disk_bytes=int(disk) << 20))


def feeds_picker(model: Model, limits: Limits) -> state.RunRequest | None:
    """The sample's own inputs (for samples that have them), random inputs (seed + symbolic dims), an uploaded
    .npz or test data set input_<i>.pb files, or small tensors edited in tables (starting from the sample's
    inputs, else from random ones)."""
    if not model.inputs:
        st.caption("The model takes no inputs.")
        return state.RunRequest("none", "no inputs", dict, limits)
    url.restore_inputs(model)
    given = state.given_inputs()
    if given is not None:  # in the model's input order
        given = {s.name: given[s.name] for s in model.inputs if s.name in given}
    modes = (SAMPLE_INPUTS, *INPUT_MODES) if given is not None else INPUT_MODES
    swept = st.session_state.get(state.SWEPT_INPUT)
    swept = swept[1] if swept is not None and swept[0] == model.sha256 else None
    modes = (*modes, SWEPT_INPUTS) if swept is not None else modes
    if st.session_state.get(state.W_INPUT_MODE) not in modes:
        st.session_state[state.W_INPUT_MODE] = modes[0]
    mode = st.radio("Inputs", modes, key=state.W_INPUT_MODE, horizontal=True, label_visibility="collapsed")
    if mode == SWEPT_INPUTS:
        st.caption(f"The sweep's input {md_code(swept.label)}, read from {md_code(swept.path)}")
        folders = reach.access().read_folders  # a shared app reads only files inside its allowed folders
        return state.RunRequest(f"swept:{swept.path}", swept.label, lambda: feeds_of(model, swept, limits, folders),
                                limits)
    if mode == SAMPLE_INPUTS:
        st.caption("The inputs this sample was built to be run on: "
                   + ", ".join(f"{md_code(name)} = {md(short_text(value))}" for name, value in given.items()))
        return state.RunRequest("sample:" + user_inputs.feeds_key(given), "the sample's inputs", lambda: given,
                                limits)
    if mode == UPLOAD_INPUTS:
        st.caption("One .npz with an array per input, or the `input_<i>.pb` files of an ONNX test data set "
                   "(file i is input i): " + ", ".join(f"{md_code(s.name)} {md(s.describe())}" for s in model.inputs))
        given_files = uploads.uploader("Inputs (.npz or .pb)", type=["npz", "pb"], accept_multiple_files=True,
                                       key=state.W_NPZ)
        if not given_files:
            return None
        files = {upload.name: upload.getvalue() for upload in given_files}
        key = "upload:" + user_inputs.feeds_key({name: np.frombuffer(data, np.uint8) for name, data in files.items()})
        label = given_files[0].name if len(given_files) == 1 else f"{len(given_files)} uploaded files"
        return state.RunRequest(key, label, lambda: user_inputs.feeds_from_upload(model, files), limits)
    if mode == "Edit values" and given is not None:
        st.caption("Starting from the sample's inputs.")
        return edited_inputs(model, dict(given), limits, "given")
    seed = int(st.number_input("Seed", 0, 2**31 - 1, 0, key=state.W_SEED))
    dims = {name: int(st.number_input(dim_label(name), 1, 1 << 20, 2, key=state.dim_key(model, name)))
            for name in [*symbolic_dims(model), *unnamed_dims(model)]}
    bounds = sorted(loop_bounds(model))
    if bounds:
        low, high = LOOP_BOUND
        st.caption(", ".join(md_code(name) for name in bounds) + f" bound{'s' if len(bounds) == 1 else ''} a loop: "
                   f"random values for {'it' if len(bounds) == 1 else 'them'} are drawn from {low} to {high - 1}, so "
                   "the loop runs at least twice")
    if mode == "Random":
        key = f"random:{seed}:{sorted(dims.items())}"
        return state.RunRequest(key, f"random inputs (seed {seed})",
                                lambda: model.example_inputs(seed=seed, dims=dims), limits)
    try:
        feeds = model.example_inputs(seed=seed, dims=dims)
    except Exception as exc:  # noqa: BLE001 - shown as the run's error
        return state.RunRequest(f"error:{exc}", "edited inputs", state.feed_error(str(exc)), limits)
    return edited_inputs(model, feeds, limits, "random")


def dim_label(name: str) -> str:
    """"Size of `T`", or for an unnamed axis (key "input[1]") "Size of `input` axis 1"."""
    if name.endswith("]") and "[" in name:
        tensor, axis = name[:-1].rsplit("[", 1)
        return f"Size of {md_code(tensor)} axis {md(axis)}"
    return f"Size of {md_code(name)}"


def edited_inputs(model: Model, feeds: dict[str, Any], limits: Limits, origin: str) -> state.RunRequest:
    """A table editor per small numeric input, starting from `feeds` (whose other inputs stay as they are:
    `origin` says where they come from)."""
    specs = {s.name: s for s in model.inputs}
    for name, value in feeds.items():
        if not user_inputs.editable(specs[name], value):
            st.caption(f"{md_code(name)}: {md(specs[name].describe())} — {origin} (too big or not a numeric tensor to edit)")
            continue
        st.caption(f"{md_code(name)}: {md(specs[name].describe())}")
        grid = st.data_editor(pd.DataFrame(user_inputs.to_grid(value)), key=state.table_key(model, name))
        try:
            feeds[name] = user_inputs.from_grid(grid.to_numpy(), value, name)
        except Exception as exc:  # noqa: BLE001 - FeedError: reported as the run's error
            return state.RunRequest(f"error:{exc}", "edited inputs", state.feed_error(str(exc)), limits)
    return state.RunRequest("edited:" + user_inputs.feeds_key(feeds), "edited inputs", lambda: feeds, limits)


# ---- status --------------------------------------------------------------------------------------------------
def trace_status() -> None:
    """The current run's trace: its size in memory and on disk, where the run folder is, and the limits."""
    request = st.session_state.get(state.RUN_REQUEST)
    outcome = state.current_run() if state.run_ready() else None
    if outcome is not None and outcome.trace is not None:
        st.caption(md(trace_size_text(outcome.trace, folder=not reach.access().shared)))
    if request is not None:
        st.caption(md(limits_text(request.limits)))


def status_banner() -> None:
    """Load failures (the previous model stays), run failures (the trace is partial), model warnings."""
    failure = state.load_error()
    model = state.active_model()
    if failure is not None:
        keep = f" Still showing **{md(model.source)}**." if model is not None else ""
        st.error(f"Could not load the model: {failure}.{keep}", icon=":material/block:")
    if model is not None and model.warnings:
        with st.expander(f"{len(model.warnings)} warning(s) about this model"):
            for warning in model.warnings:
                st.caption(md(warning))
    outcome = state.current_run()
    if outcome is not None and outcome.error:
        events = len(outcome.trace.events) if outcome.trace is not None else 0
        partial = (f" The partial trace holds {events} events, up to the node that failed." if outcome.trace
                   else "")
        raise_it = LIMIT_HINTS.get(outcome.limit or "", "")
        st.error(f"**{md(outcome.kind)}**: {md(outcome.error)}.{partial}{raise_it}", icon=":material/error:")
    if model is not None and outcome is not None and outcome.trace is not None:
        error = outcome.trace.error
        hint = hints.failure_hint(model, error.node) if error is not None and error.node else None
        for text in [hint] if hint else hints.idle_loops(model, outcome.trace):
            st.info(text, icon=":material/lightbulb:")


# ---- nodes ---------------------------------------------------------------------------------------------------
def page_subject(choices_of: Callable[[Model], dict[str, str]], kind: str, key: str, label: str,
                 ran: Callable[[Model, Trace, str], bool] | None = None) -> tuple[Model, Trace, str] | None:
    """The model, its trace and the node a per-node page (Loops, Gates) shows, chosen among `choices_of(model)`;
    None (after saying why) when there is nothing to show."""
    model, trace = state.active_model(), state.current_trace()
    choices = choices_of(model) if model is not None else {}
    if model is None:
        st.info("Choose a model in the sidebar.")
    elif not choices:
        st.info(f"This model has no {kind}.")
    elif trace is None:
        st.info("No recorded run: see the messages above." if state.current_run() is not None
                else "No run yet: give the model's inputs in the sidebar.")
    else:
        failed_in = trace.error.node or "" if trace.error else ""
        idle = {path for path in choices if not (ran(model, trace, path) if ran else trace.events_of(path))
                and not failed_in.startswith(f"{path}/")}
        if st.session_state.get(key) not in choices:  # start on one that ran (e.g. the If branch taken)
            st.session_state[key] = next((path for path in choices if path not in idle), next(iter(choices)))
        return model, trace, chosen(st.selectbox(
            label, list(choices), key=key,
            format_func=lambda path: choices[path] + (" · did not run" if path in idle else "")))
    return None


def pick_execution(runs: Sequence[Run], key: str) -> Run:
    """One of a node's executions (a node inside a loop runs once per iteration); a loop's unfinished run (the
    run failed inside it) is listed too."""
    if len(runs) == 1:
        return runs[0]

    def label(i: int) -> str:
        run = runs[i]
        event = run.event if isinstance(run, Execution) else run
        return f"at iteration {run.iteration or '—'} " + (f"(event {event.index})" if event else "(unfinished)")

    return runs[chosen(st.selectbox("Execution", range(len(runs)), key=key, format_func=label))]


def listed_table(rows: Sequence[dict[str, Any]], key: str, noun: str, titles: dict[str, str] | None = None,
                 more_note: str = "") -> None:
    """Rows as a static table (no data grid to load): the first LISTED_ROWS until the toggle at `key` lists all
    of them (`noun`: what a row is, plural; `more_note`: where else the rest is to be had)."""
    if len(rows) > LISTED_ROWS and not st.toggle(
            f"List all {len(rows)} {noun}", key=key,
            help=f"The first {LISTED_ROWS} are listed at first: a table of hundreds of rows costs the page's first "
                 f"render a quarter of a second or more.{' ' + more_note if more_note else ''}"):
        rows = rows[:LISTED_ROWS]
    st.html(records_table(rows, titles=titles))


def node_selector(model: Model, label: str = "Find a node", drawn: Iterable[str] = ()) -> str | None:
    """A searchable selector synced with the selected node, over every node (nested bodies included); for a
    model of more than NODE_PICK_LIMIT nodes, over the nodes `drawn` with a box of their own (the browser stalls
    on tens of thousands of options; the search box finds the others)."""
    choices = views_inspector.node_choices(model)
    selected = state.selected_node()
    if selected not in choices:
        selected = None
    if len(choices) > NODE_PICK_LIMIT:
        keep = set(itertools.islice(drawn, NODE_PICK_LIMIT)) | {selected}
        choices = {path: text for path, text in choices.items() if path in keep}
        label = f"{label}: the nodes drawn (search finds the others)"
    # set even when None: a selectbox without a value in session state would show its first option
    if state.W_NODE_PICK not in st.session_state or st.session_state[state.W_NODE_PICK] != selected:
        st.session_state[state.W_NODE_PICK] = selected
    st.selectbox(label, list(choices), key=state.W_NODE_PICK, format_func=choices.__getitem__,
                 placeholder="Type to search node paths and op types",
                 on_change=lambda: state.select_node(st.session_state[state.W_NODE_PICK]))
    return selected
