"""Sweep: the active model compared with its reference over many inputs (a grid of random inputs, or a folder of
.npz files and ONNX test data sets) on Dask, here or on a scheduler; a progress bar while it runs, then the rows
worst first, the error against each swept dim, and any input opened in the Compare page."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer.docs_links import more
from explorer.errors import ExplorerError
from explorer.inputs.samples import list_samples, sample_path
from explorer.limits import available_cores
from explorer.model.feeds import symbolic_dims
from explorer.sweep import plan
from explorer.sweep.plan import parse_numbers
from explorer.ui import charts, reach, state, sweeping, widgets
from explorer.ui.sweeping import key
from explorer.views import sweep as views
from explorer.views.markup import md, md_code

REFERENCES = {"onnxruntime": "onnxruntime", "sample": "A bundled sample", "path": "A model at a local path",
              "folder": "Reference values in a folder"}
REFRESH_S = 0.5  # seconds between two looks at a running sweep


def attempt(choose, *args, **kwargs):
    """`choose(...)`, or None after showing why what was chosen cannot be used."""
    try:
        return choose(*args, **kwargs)
    except (ExplorerError, ValueError) as exc:
        st.error(md(exc))
        return None


def inputs(model):
    """(inputs for explorer.sweep.plan, seeds) as chosen; ValueError or AccessRefused when unusable."""
    kind = st.radio("Inputs", ["grid", "folder"], horizontal=True, key=key("inputs"),
                    format_func={"grid": "A grid of random inputs", "folder": "A folder of inputs"}.__getitem__)
    if kind == "folder":
        text = st.text_input("Folder of .npz files and test_data_set_<n> folders", key=key("folder"))
        if not text.strip():
            return None, None
        return str(reach.access().path(text, folder=True)), None
    dims = symbolic_dims(model)
    if not dims:
        st.caption("The model's inputs have no symbolic dims: the grid is the seeds alone.")
    columns = st.columns(len(dims) + 1)
    sizes = {name: column.text_input(f"Sizes of {md_code(name)}", "2,4,8", key=key("dim", model.sha256, name),
                                     help="Comma-separated sizes, ranges such as 8-16 too")
             for column, name in zip(columns, dims)}
    seeds = columns[-1].text_input("Seeds", "0,1", key=key("seeds"), help="Comma-separated, ranges such as 0-9")
    return {name: parse_numbers(text) for name, text in sizes.items()}, parse_numbers(seeds)


def reference(from_folder: bool):
    """(B for explorer.sweep.plan, B for the Compare page) as chosen, or None while incomplete."""
    choices = [c for c in REFERENCES if c != "folder" or from_folder]
    if st.session_state.get(key("against")) not in choices:
        st.session_state[key("against")] = choices[0]
    choice: str = widgets.chosen(st.radio("Reference", choices, format_func=REFERENCES.__getitem__, horizontal=True,
                                          key=key("against")))
    if choice == "onnxruntime":
        return "onnxruntime", "onnxruntime"
    if choice == "sample":
        name: str = widgets.chosen(st.selectbox("Model B", list(list_samples()), key=key("sample")))
        return str(sample_path(name)), ("sample", name)
    text = st.text_input("Folder of reference values (<name>.npz per input, output_<i>.pb per test data set)"
                         if choice == "folder" else "Path of model B",
                         key=key("references" if choice == "folder" else "path"))
    if not text.strip():
        return None
    found = str(reach.access().path(text, folder=choice == "folder"))
    return found, "sweep" if choice == "folder" else ("path", found)


def cluster():
    """(scheduler address or None, workers) as chosen, or None while incomplete."""
    access = reach.access()
    where = st.radio("Run on", ["local", "scheduler"], horizontal=True, key=key("where"),
                     format_func={"local": "This machine", "scheduler": "A Dask scheduler"}.__getitem__)
    if where == "local":
        cores = min(available_cores(), reach.caps().threads or available_cores())  # the operator's cap
        return None, int(st.number_input("Worker processes", 1, cores, cores, key=key("workers")))
    if access.shared:
        if not access.schedulers:
            st.info("No scheduler is configured for this shared app: sweeps run on this machine.")
            return None, 1
        return widgets.chosen(st.selectbox("Scheduler", access.schedulers, key=key("scheduler"))), None
    text = st.text_input("Scheduler address", placeholder="tcp://host:8786", key=key("scheduler"))
    return (access.scheduler(text), None) if text.strip() else None


def progress(job) -> None:
    """The progress bar fed by the sweep's futures, with a Cancel button; the page reruns when it ends."""
    @st.fragment(run_every=REFRESH_S)
    def poll() -> None:
        if job.state != "running":
            st.rerun()
        left, right = st.columns([5, 1], vertical_alignment="center")
        done = len(job.rows)
        left.progress(done / max(job.total, 1), text=f"{done} of {job.total} inputs done · {job.elapsed:.1f} s")
        if right.button("Cancel", key=key("cancel"), width="stretch"):
            job.cancel()

    poll()


def results(job, model) -> None:
    rows = list(job.rows)
    if job.state == "failed":
        st.error(f"The sweep stopped: {md(job.error)}")
    elif job.state == "cancelled":
        st.warning(f"Cancelled after {len(rows)} of {job.total} inputs.")
    if not rows:
        return
    found = views.counts_line(rows, job.total)
    st.markdown(found)
    st.dataframe(pd.DataFrame(views.table_rows(rows)), hide_index=True, key=key("table"))
    for dim in views.swept_dims(rows):
        charts.show(views.error_chart(rows, dim), key=key("plot", dim))
    choices = views.row_choices(rows)
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    index: int = widgets.chosen(left.selectbox("An input to open in the Compare page, at its first divergence",
                                               list(choices), format_func=choices.__getitem__, key=key("pick")))
    right.button("Open in Compare", key=key("open"), width="stretch", type="primary", on_click=sweeping.open_input,
                 args=(int(index), model.sha256))


st.title("Sweep", help=more("The comparison over many inputs, on Dask, worst first.", "sweep"))
model = state.active_model()
source: state.ModelSource | None = st.session_state.get(state.ACTIVE)
request: state.RunRequest | None = st.session_state.get(state.RUN_REQUEST)
if model is None or source is None:
    st.info("Choose a model in the sidebar: the sweep runs it on every input.")
else:
    given, seeds = attempt(inputs, model) or (None, None)
    against = attempt(reference, isinstance(given, str))
    where = attempt(cluster)
    with st.expander("Tolerance"):
        left, right = st.columns(2)
        rtol = left.number_input("rtol", min_value=0.0, value=None, format="%g", placeholder="by type",
                                 key=key("rtol"))
        atol = right.number_input("atol", min_value=0.0, value=None, format="%g", placeholder="by type",
                                  key=key("atol"))
    ready = None
    if given is not None and against is not None:
        ready = attempt(plan, source.path if source.path else model, against[0], given, seeds=seeds,
                        limits=request.limits if request is not None else None, rtol=rtol, atol=atol,
                        lenient=source.lenient, folders=reach.access().read_folders)
    ready = ready if where is not None else None
    if ready is not None:
        st.caption(f"{len(ready.items)} inputs; each runs under the sidebar's limits.")
    job = sweeping.current()
    running = job is not None and job.state == "running"
    if st.button("Start the sweep", key=key("start"), type="primary", disabled=ready is None or running) \
            and ready is not None and against is not None and where is not None:
        job = sweeping.start(ready, where[0], where[1], against[1])
    if job is not None:
        if job.state == "running":
            progress(job)
        results(job, model)
