"""The app's questions to onnxruntime (equivalence proofs, comparisons, output checks) as background jobs of the
session (explorer/judge/judge_job.py): the page shows their progress with a Cancel button and stays usable; the answer
appears when it is ready. A job that ends within WAIT_S of its start is shown at once, without a progress line.
A job whose key names all it depends on by content (`shared`) is answered once for every session: a new session
asking what another asked already gets the answer at once."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from ..hosting.recent import Recent
from ..judge.judge import keep_spare
from ..judge.judge_job import JudgeJob
from .state import JOBS, K_JOB_AGAIN, K_JOB_CANCEL, keyed

T = TypeVar("T")
WAIT_S = 1.0  # seconds a page waits for a new job before showing its progress instead
REFRESH_S = 0.5  # seconds between two looks at a running job
KEEP = 16  # finished jobs kept per session (their answers are what the pages show)
SHARED_KEEP = 64  # shared jobs kept for every session (their answers once done), the least recently asked going first
_answers: Recent[str, JudgeJob[Any]] = Recent(SHARED_KEEP)
_ahead: Recent[str, JudgeJob[Any]] = Recent(SHARED_KEEP)  # shared jobs started ahead of any session's asking


def job(key: str, label: str, work: Callable[[], T], *, shared: bool = False, wait: bool = True) -> JudgeJob[T]:
    """The session's job for `key`, started (and waited for up to WAIT_S unless not `wait`: a page that lays
    itself out first and waits at its end, `settle`) when there is none yet. A `shared` job's key must name
    everything its answer depends on: its answer, once done, is given to every session that asks (only a done
    one: a session's cancel or a failure stays that session's)."""
    jobs: dict[str, JudgeJob[Any]] = st.session_state.setdefault(JOBS, {})
    found = jobs.get(key)
    if found is not None:
        return found
    found = _shared_answer(key) if shared else None
    if found is None:
        found = JudgeJob(work, label).start()
        if shared:  # other sessions take it once it is done, whether or not this session looks at it again
            _answers.put(key, found)
    jobs[key] = found
    for old in [k for k, j in jobs.items() if j.state != "running"][:-KEEP]:
        del jobs[old]
    if wait:
        found.wait(max(0.0, WAIT_S - found.elapsed))
    return found


def _shared_answer(key: str) -> JudgeJob[Any] | None:
    """Another session's done job for `key`, or the job started ahead for it (start_ahead), running or done,
    now the asking session's (its answer then shared as any)."""
    answered = _answers.get(key)
    if answered is not None and answered.state == "done":
        return answered
    ahead = _ahead.take(key)
    if ahead is None or ahead.state not in ("running", "done"):
        return None
    _answers.put(key, ahead)
    return ahead


def start_ahead(key: str, label: str, work: Callable[[], T]) -> None:
    """Starts the shared job `key` (as `job(key, label, work, shared=True)` would) before any session asks for it,
    unless it is started or answered already: the first session that asks takes it, running or done. Not a
    session's until then, so callable from any thread."""
    if _answers.get(key) is None:
        _ahead.get_or_put(key, lambda: JudgeJob(work, label).start())


def keep_ready() -> None:
    """onnxruntime kept started ahead of the jobs the pages ask, from the app's first run on (judge.keep_spare):
    a page's first proof or check then never waits for onnxruntime's import."""
    keep_spare()


def settle(*found: JudgeJob[Any]) -> None:
    """Waits for jobs a page started with `wait=False`, each until WAIT_S after its start (as `job` would have),
    at the page's end: its verdicts are then shown while the browser has drawn the rest meanwhile."""
    for one in found:
        one.wait(max(0.0, WAIT_S - one.elapsed))


def forget(key: str) -> None:
    """Drops the session's job for `key` (the next `job` call starts it again)."""
    st.session_state.setdefault(JOBS, {}).pop(key, None)


def progress(found: JudgeJob[Any], key: str) -> None:
    """A running job's label, elapsed time and Cancel button, refreshed every REFRESH_S; when the job ends the
    page runs again to show its answer. A cancelled job says so, with a button to ask again."""
    if found.state == "cancelled":
        st.warning(f"{found.label}: cancelled after {found.elapsed:.1f} s; onnxruntime was stopped.")
        if st.button("Ask onnxruntime again", key=keyed(K_JOB_AGAIN, key)):
            forget(key)
            st.rerun()
        return
    if found.state != "running":
        return

    @st.fragment(run_every=REFRESH_S)
    def poll() -> None:
        if found.state != "running":
            st.rerun()  # the whole page, now with the answer
        left, right = st.columns([5, 1], vertical_alignment="center")
        left.info(f"{found.label}: running… {found.elapsed:.1f} s", icon=":material/hourglass_top:")
        if right.button("Cancel", key=keyed(K_JOB_CANCEL, key), width="stretch"):
            found.cancel()
            st.rerun()

    poll()
