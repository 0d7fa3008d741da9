"""The app's reach (explorer/files/access.py) for the server it runs in: not shared, it serves this machine only and
local paths open; shared (EXPLORER_SHARED=1), only inside the folders the operator allowed, and sweeps reach only
the schedulers the operator listed. Listening beyond this machine without being declared shared, it serves
nothing but the message that says how to choose."""
from __future__ import annotations

import os
import sys

import streamlit as st

from ..errors import ExplorerError
from ..files.access import Access, access_for
from ..hosting.caps import Caps, caps_for
from ..views.markup import md

_TOLD: set[str] = set()  # the refusals already written to the server's log


def access() -> Access:
    """The reach of this server (its server.address and the operator's settings)."""
    return access_for(st.get_option("server.address"))


def caps() -> Caps:
    """The operator's caps on what a visitor may ask for (every cap when shared, only those set otherwise)."""
    return caps_for(access().shared)


def refuse_unless_chosen() -> None:
    """Ends the script run with the operator's choice to make (on the page and once in the server's log) when
    the app listens beyond this machine without being declared shared, or a setting or cap is not valid; notes in
    the log a shared app served on Python's own allocator."""
    try:
        shared = access().shared
        caps_for(shared)
        if shared and os.environ.get("PYTHONMALLOC") != "malloc":
            _tell_once("a shared app started on Python's own allocator keeps about a third more memory after its "
                       "visitors leave: start it with `explorer serve --shared` (PYTHONMALLOC=malloc)")
    except ExplorerError as exc:
        _tell_once(str(exc))
        st.error(md(exc), icon=":material/block:")
        st.stop()


def _tell_once(text: str) -> None:
    """Writes `text` to the server's log, once per server."""
    if text not in _TOLD:
        _TOLD.add(text)
        print(f"explorer: {text}", file=sys.stderr, flush=True)
