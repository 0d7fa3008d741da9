"""What a session owns (explorer/hosting/holdings.py): its runs with their folders on disk, the models it uploaded and
their drawings live in its session state, not in a cache of the whole server, so they go when the session ends
(the browser closed or lost) or has been idle longer than the operator's `idle_minutes` (caps.py); a session
that ended has its whole state cleared too. A thread of the server's, started with the app, looks every WATCH_S
seconds, and gives the memory freed back to the system (then once more a look later, for what Streamlit frees
as it closes the ended sessions) once no page has run for a second; it first removes the run folders a killed
server left behind."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import ScriptRunContext, get_script_run_ctx

from ..files.scratch import remove_orphans
from ..heap import hand_back
from ..hosting.holdings import Holdings, collect, release_idle
from ..hosting.quiet import PAGES
from ..trace.spill import PREFIX as RUN_PREFIX
from . import reach

T = TypeVar("T")
KEY = "session_holdings"  # session_state: the session's Holdings
SIZES = {"runs": 2, "models": 2, "drawings": 16, "svgs": 16, "overlays": 8}  # entries of each kind a session keeps
WATCH_S = 5.0
QUIET_S = 1.0  # no page run for this long before a collection: the browser has fetched the last one's files
LONGEST_WAIT_S = 30.0  # a server never quiet collects after this long all the same
_WATCHING = threading.Lock()
_watcher: list[threading.Thread] = []


def holdings() -> Holdings:
    """This session's holdings (made on first use)."""
    found: Holdings | None = st.session_state.get(KEY)
    if found is None:
        context = get_script_run_ctx()
        found = st.session_state[KEY] = Holdings(context.session_id if context else "", SIZES,
                                                 _forgetting(context) if context else None)
    return found


def _forgetting(context: ScriptRunContext) -> Callable[[], None]:
    """What clears a session's state once it has ended. Streamlit keeps an ended session's state as long as it
    keeps the session, and its runtime keeps the last session it sent messages to (a variable of its loop) until
    it sends to another: with that state, the session's model, its upload and its pages' functions (callbacks and
    fragments, whose globals hold the model) would stay after the last visitor left."""
    state, fragments = context.session_state._state, context.fragment_storage  # the session's own, not one run's

    def forget() -> None:
        state.clear()
        state._new_widget_state.widget_metadata.clear()  # which its clear() leaves: the widgets' callbacks
        fragments.clear()

    return forget


def held(kind: str, key: Any, make: Callable[[], T]) -> T:
    """The session's entry `key` of `kind`, made by `make()` when it has none."""
    return holdings().get(kind, key, make)


def alive(session_id: str) -> bool:
    """Whether the session is connected (without a server, as under AppTest, every session is)."""
    return not Runtime.exists() or Runtime.instance().is_active_session(session_id)


def close(session_id: str) -> None:
    """Ends a disconnected session for good: Streamlit keeps one for server.disconnectedSessionTTL (2 minutes)
    for the browser to come back, with its session state and uploaded files (a browser that comes back gets a
    new session, restored from its address)."""
    if Runtime.exists():
        Runtime.instance().clear_user_info_for_session(session_id)  # thread-safe: closes a stored session
    _forget_tracked_functions()


def _forget_tracked_functions() -> None:
    """Streamlit's command tracking keeps the signature of every function it is handed (up to 256, by the
    function, in an LRU cache whose entries the garbage collector cannot see): a function made inside a page, a
    fragment or a callback, keeps that page's model alive after its session has ended."""
    from streamlit.runtime import metrics_util

    cached = getattr(metrics_util, "_get_arg_keywords_cached", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()


def release_now() -> int:
    """Releases what ended and idle sessions hold (see holdings.release_idle) and closes the ended ones, the
    memory they free going back to the system once collected (heap.py: hand_back, which the watch turns off
    again); how many were released."""
    return release_idle(alive, reach.caps().idle_seconds, ended=close, freeing=lambda: hand_back(True))


def watch() -> None:
    """Once per server: removes the run folders of servers that died, then starts the thread that releases
    what ended and idle sessions hold. A shared app gives the memory it frees back to the system at once, always
    (heap.py: hand_back): its visitors' runs then do not keep freed memory for their next runs, which a
    server of many visitors would keep in each of its threads' heaps."""
    with _WATCHING:
        if _watcher:
            return
        remove_orphans(RUN_PREFIX)
        shared = reach.access().shared
        if shared:
            hand_back(True)
        thread = threading.Thread(target=_watch, args=(shared,), name="explorer session holdings", daemon=True)
        _watcher.append(thread)
        thread.start()


def _watch(shared: bool) -> None:
    closed = False
    while True:
        time.sleep(WATCH_S)
        closed = look(shared, closed)


def look(shared: bool, closed: bool) -> bool:
    """One look of the watch: releases what ended and idle sessions hold; then, when any were released now or
    closed at the look before (what Streamlit freed since, their uploads), collects the garbage once no page has
    run for QUIET_S (hosting/quiet.py), giving the memory back to the system. Whether any were released now."""
    try:
        released = release_now()
    except Exception:  # noqa: BLE001 - a bad setting the page reports; the watch goes on
        released = 0
    if released or closed:
        PAGES.wait(QUIET_S, LONGEST_WAIT_S)
        collect()
    if closed and not released:
        hand_back(shared)  # runs keep their freed memory again, but in a shared app
    return released > 0
