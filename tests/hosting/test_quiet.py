"""The server's quiet moments (explorer/hosting/quiet.py) and the watch's collection, which waits for one
(ui/owned.look): a full garbage collection stops every thread, the one serving the browser's files included."""
from __future__ import annotations

import threading
import time

import pytest

from explorer.hosting.quiet import Quiet
from explorer.ui import owned


def page_running(pages: Quiet) -> threading.Event:
    """A page run under way on another thread until the event returned is set."""
    ended, started = threading.Event(), threading.Event()

    def page_run() -> None:
        with pages.running():
            started.set()
            ended.wait(10)

    threading.Thread(target=page_run, daemon=True).start()
    started.wait(10)
    return ended


def test_quiet_only_once_no_run_is_under_way_and_the_last_ended_long_enough_ago():
    pages = Quiet()
    assert pages.quiet_for(3600.0)  # nothing has run yet
    with pages.running():
        assert not pages.quiet_for(0.0)
        with pages.running():  # two sessions' runs at once
            pass
        assert not pages.quiet_for(0.0)  # the other still runs
    assert pages.quiet_for(0.0) and not pages.quiet_for(60.0)
    time.sleep(0.06)
    assert pages.quiet_for(0.05)


def test_a_run_that_fails_still_ends():
    pages = Quiet()
    with pytest.raises(RuntimeError), pages.running():
        raise RuntimeError("a page's error (or Streamlit's rerun and stop, which are exceptions too)")
    assert pages.quiet_for(0.0)


def test_wait_returns_once_quiet_and_gives_up_after_the_longest():
    pages = Quiet()
    ended = page_running(pages)
    start = time.monotonic()
    assert not pages.wait(0.0, longest=0.2, step=0.01)  # busy all along
    assert 0.2 <= time.monotonic() - start < 2.0
    ended.set()
    start = time.monotonic()
    assert pages.wait(0.1, longest=10.0, step=0.01)
    assert 0.1 <= time.monotonic() - start < 2.0


def test_the_watch_collects_the_released_sessions_garbage_only_between_page_runs(monkeypatch):
    pages, collected = Quiet(), []
    monkeypatch.setattr(owned, "PAGES", pages)
    monkeypatch.setattr(owned, "QUIET_S", 0.05)
    monkeypatch.setattr(owned, "release_now", lambda: 1)  # a session ended
    monkeypatch.setattr(owned, "collect", lambda: collected.append(pages.quiet_for(0.05)))
    monkeypatch.setattr(owned, "hand_back", lambda on: None)
    ended = page_running(pages)
    threading.Timer(0.3, ended.set).start()
    start = time.monotonic()
    assert owned.look(shared=False, closed=False)  # released: it collects, once the page's run is over
    assert collected == [True] and time.monotonic() - start >= 0.3


def test_the_watch_collects_once_per_look_and_not_when_nothing_ended(monkeypatch):
    collected, handed = [], []
    monkeypatch.setattr(owned, "PAGES", Quiet())  # no page has run
    monkeypatch.setattr(owned, "collect", lambda: collected.append(1))
    monkeypatch.setattr(owned, "hand_back", handed.append)
    monkeypatch.setattr(owned, "release_now", lambda: 2)
    assert owned.look(shared=False, closed=True) and collected == [1] and handed == []  # one collection for both
    monkeypatch.setattr(owned, "release_now", lambda: 0)
    assert not owned.look(shared=False, closed=True) and collected == [1, 1] and handed == [False]  # what
    # Streamlit freed as it closed them, then the runs keep their freed memory again
    assert not owned.look(shared=False, closed=False) and collected == [1, 1]  # nothing to collect
