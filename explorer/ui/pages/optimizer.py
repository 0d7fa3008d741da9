"""Optimizer: choose patterns and run them; statistics, every rewrite with its before/after diagram, a slider over
the rewrites with the equivalence proof at that point, downloads of the optimized model and the report."""
from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from explorer.docs_links import more
from explorer.errors import ExplorerError, failure_text
from explorer.files.access import NO_SAVES
from explorer.files.atomic_write import check_targets
from explorer.judge.judge_job import JudgeJob
from explorer.model.model_files import external_data_name, needs_external, serialize_model
from explorer.ui import diagram, jobs, reach, save_owners, state, widgets, work
from explorer.views import rewrites
from explorer.views.builder import Drawing
from explorer.views.dot import model_to_dot
from explorer.views.html_blocks import records_table, text_block
from explorer.views.markup import md, md_code
from explorer.views.styles import tinted

STATUS = {"equivalent": tinted("**equivalent**", "good"), "different": tinted("**different**", "bad"),
          "explorer only": tinted("**equivalent by explorer only**", "unsure") + " (onnxruntime gave no verdict)",
          "inconclusive": tinted("**inconclusive**", "unsure")}
LOADS = {"loads": tinted("**loads it**", "good"), "refused": tinted("**refuses it**", "bad"),
         "original refused": tinted("**refuses the original too**", "unsure"),
         "not checked": tinted("**was not asked**", "unsure")}
CHECKING = {"running": "checking in the background…",
            "cancelled": tinted("**not checked**", "unsure") + " (cancelled)",
            "failed": tinted("**the proof failed**", "bad")}


def proof(key: str, job, label: str, shown: str | None = None) -> None:
    """The equivalence verdict with one line per judge and output, once the proof's job has it; until then its
    progress (unless the job is `shown` already, by its key), or why there is none."""
    if job.state == "failed":
        st.error(f"The equivalence proof failed: {md(job.error)}", icon=":material/error:")
    if key != shown:
        jobs.progress(job, key)
    verdict = job.result if job.state == "done" else None
    if verdict is not None:
        st.markdown(f"{label}: {STATUS[verdict.status]}")
        st.html(text_block("\n".join(verdict.lines())))


def save_result(model, result, column) -> None:
    """A download of the optimized model; one with external data (the original had some, or it is over 2 GiB)
    is saved to a local path instead, its weights in `<name>.data` beside it: in a shared app only into the
    folder its operator named for saves, and never over a file that is not this session's (save_owners.py). The
    save is refused when either file is a loaded model's own (any session's: atomic_write.py), and written beside
    its target first, so a failed save loses nothing."""
    name = f"{model.source.rsplit('/', 1)[-1].removesuffix('.onnx')}.optimized.onnx"
    if not (result.external or needs_external(result.optimized)):
        column.download_button("Download the optimized model", lambda: serialize_model(result.optimized),
                               file_name=name, mime="application/octet-stream", width="stretch")
        return
    access = reach.access()
    if access.shared and access.save_folder is None:
        column.info(md(NO_SAVES))
        return
    folder = model.path.parent if model.path is not None else Path.cwd()
    folder = access.save_folder if access.save_folder is not None and access.shared else folder
    target = column.text_input("Save the optimized model (with its external data) to", str(folder / name),
                               key=state.W_OPTIMIZED_PATH)
    if column.button("Save", key=state.W_OPTIMIZED_SAVE, width="stretch"):
        try:
            path = access.target(target)
            weights = access.target(str(path.parent / external_data_name(path)))  # a symlink must not lead out
            if access.shared:  # never over a file another visitor saved, or the operator's
                check_targets((path, weights))  # a loaded model's file: told as such, whoever's it is
                save_owners.claim((path, weights), st.session_state.setdefault(state.SAVE_WRITER, secrets.token_hex(16)))
            written = result.save(path)
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, the page says so and the session goes on
            column.error(f"Not saved: {md(failure_text(exc))}", icon=":material/error:")
        else:
            column.success(md("Saved " + " and ".join(str(path) for path in written)))


def proof_slot(key: str, job: JudgeJob[Any], label: str, shown: str | None) -> Callable[[], None]:
    """The place of a proof's verdict on the page, filled (`proof`) by the function returned: the page calls it at
    its end, once its proofs had their time (jobs.settle) and the rest of it is on its way to the browser."""
    slot = st.container()

    def fill() -> None:
        with slot:
            proof(key, job, label, shown)

    return fill


def before_and_after(drawn: tuple[Drawing, Drawing], titles: tuple[str, str], keys: tuple[str, str],
                 title: Callable[[str], object]) -> None:
    """A before and an after drawing in two columns, each under its title (`title(text)`), laid out at once."""
    diagram.lay_out_ahead(*drawn)
    for column, drawing, text, key in zip(st.columns(2), drawn, titles, keys):
        with column:
            title(text)
            diagram.show(drawing, key=key)


def whole_models(model, chosen: tuple[str, ...], result, shown: str) -> tuple[Callable[[], None], JudgeJob[Any]]:
    """Slider over the rewrites: the model after the first k of them beside the original, and the proof at k
    (its slot's filler and its job)."""
    count = len(result.steps)
    k = st.slider("Rewrites applied (bisection: move until the models stop being equivalent)", 0, count, count,
                  key=state.W_REWRITES) if count > 1 else count
    partial = result if k == count else work.optimization(model, chosen, k)
    key, job = work.equivalence(model, chosen, None if k == count else k, partial, wait=False)
    fill = proof_slot(key, job, f"After {k} of {count} rewrite{'s' if count != 1 else ''}", shown)
    if st.toggle("Draw the whole models", value=len(model.index.nodes) <= rewrites.WHOLE_MODEL_LIMIT,
                 key=state.W_OPT_WHOLE, help=f"Drawn at first for models of up to {rewrites.WHOLE_MODEL_LIMIT:,} nodes: a "
                                             "bigger one takes graphviz and the browser a second or more, twice"):
        original = partial.model or state.proto_model(partial.original, partial.lenient)  # the loaded one
        before_and_after(rewrites.whole_models(partial, original), ("##### Original (removed nodes marked)",
                                 f"##### After {k} rewrite{'s' if k != 1 else ''} (added nodes marked)"),
                         (state.W_OPT_BEFORE, state.W_OPT_AFTER), st.markdown)
    return fill, job


def rewrite_list(result) -> None:
    """The applied rewrites in a table (the first html_blocks.LISTED_ROWS unless all are asked for); the one
    chosen, if any, drawn with its neighbourhood before and after."""
    widgets.listed_table(rewrites.step_rows(result), state.W_ALL_REWRITES, "rewrites",
                         more_note="The report (JSON) has them all.")
    steps = result.steps
    # none drawn at first: its two canvases cost a page's first render a tenth of a second, and the first
    # rewrite is no likelier than any other to be the one a user wants to see
    pick = st.selectbox("Rewrite to draw", range(len(steps)), key=state.W_REWRITE_PICK, index=None,
                        format_func=lambda i: steps[i].describe(),
                        placeholder="Choose a rewrite to draw it before and after, with the facts it rested on")
    if pick is None:
        return
    step = steps[pick]
    if step.facts:
        st.markdown("**Why it fired:** " + "; ".join(md_code(fact) for fact in step.facts))
    removed, added = rewrites.step_overlays(step)
    drawn = (model_to_dot(state.proto_model(step.neighbourhood(), result.lenient), overlay=removed),
             model_to_dot(state.proto_model(step.neighbourhood(after=True), result.lenient), overlay=added))
    before_and_after(drawn, ("before (removed nodes marked)", "after (added nodes marked)"),
                     (state.W_REWRITE_BEFORE, state.W_REWRITE_AFTER), st.caption)


st.title("Optimizer", help=more("Pattern rewrites, each before and after, with the proof that the outputs did not change.", "optimizer"))
model = state.active_model()
if model is None:
    st.info("Choose a model in the sidebar.")
else:
    rules = rewrites.pattern_rules()
    # pills, not a multiselect: their script is small, a multiselect's costs a page's first render 0.1 s more
    chosen = tuple(st.pills("Patterns", list(rules), selection_mode="multi", default=list(rules), key=state.W_PATTERNS,
                            help="Click a pattern to leave it out or take it back; each pattern's rule is listed below")
                   or ())
    with st.expander("What each pattern does"):
        st.html(records_table([{"pattern": name, "rule": rule} for name, rule in rules.items()]))
    try:
        result = work.optimization(model, chosen)
    except ExplorerError as exc:
        st.error(md(exc), icon=":material/error:")
        st.stop()
    before_count, after_count = result.node_counts()
    st.markdown(f"**{len(result.steps)} rewrites** in {result.rounds} rounds · nodes {before_count} → "
                f"{after_count} · {result.seconds * 1e3:.0f} ms" + (" · stopped early" if result.stopped else ""))
    if result.onnxruntime is not None:
        st.markdown(f"Optimized model in onnxruntime: {LOADS[result.onnxruntime.status]}")
        if result.onnxruntime.status != "loads" or len(result.onnxruntime.lines()) > 1:
            st.html(text_block("\n".join(result.onnxruntime.lines())))
    key, job = work.equivalence(model, chosen, None, result, wait=False)
    # the verdict's line and its progress are filled in at the end: the rest of the page goes to the browser (which
    # draws it) while the proof has its WAIT_S
    verdict_line, progress_line = st.empty(), st.container()
    rows = rewrites.stats_rows(result)
    if rows:
        st.html(records_table(rows))
    declined = rewrites.decline_rows(result)
    if declined:
        with st.expander(f"Why patterns declined ({sum({r['pattern']: r['nodes declined'] for r in declined}.values())}"
                         " nodes left alone)"):
            st.html(records_table(declined))

    source = model.source

    def report() -> str:  # read when downloaded: with the verdict once there is one
        verdict = job.result if job.state == "done" else None
        return json.dumps({"model": source, **result.to_dict(),
                           "equivalence": None if verdict is None else verdict.to_dict()}, indent=1, default=str)

    left, right = st.columns(2)
    save_result(model, result, left)
    right.download_button("Download the report (JSON)", report, file_name="optimization_report.json",
                          mime="application/json", width="stretch")
    if not result.steps:
        fill, shown_job = proof_slot(key, job, "Equivalence", key), job
        st.info("No pattern applies to this model.")
    else:
        fill, shown_job = whole_models(model, chosen, result, key)
        st.markdown("##### Rewrites")
        rewrite_list(result)
    jobs.settle(job, shown_job)
    verdict = job.result if job.state == "done" else None
    verdict_line.markdown(f"Fully optimized model: {STATUS[verdict.status] if verdict is not None else CHECKING[job.state]}")
    with progress_line:
        jobs.progress(job, key)
    fill()
