"""Runs and their folders on disk belong to the session that made them (explorer/hosting/holdings.py, ui/owned.py): a
session's runs are not another's, they go when the session ends or stays idle longer than the operator's
`idle_minutes`, their run folders with them; run folders a killed server left behind are removed when the app
starts."""
from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

from explorer.hosting.holdings import Holdings, release_idle
from explorer.model.model import Model
from explorer.ui import owned, state
from tests.support.apptest import PAGES, start, upload
from tests.support.caps_models import chain, state_trace


def test_a_store_keeps_its_latest_entries_and_releases_them_when_its_session_ends_or_idles():
    kept = Holdings("s1", {"runs": 2})
    for key in "abc":
        kept.get("runs", key, lambda key=key: [key])
    assert not kept.has("runs", "a") and kept.has("runs", "b") and kept.has("runs", "c")
    value = kept.get("runs", "c", lambda: ["again"])
    assert value == ["c"]
    idle = Holdings("s2", {"runs": 2})
    idle.get("runs", "x", lambda: ["x"])
    assert release_idle(lambda owner: owner != "gone", 60.0, [kept, idle], now=idle.used + 30) == 0
    assert release_idle(lambda owner: True, 60.0, [kept, idle], now=idle.used + 61) == 2  # both idle a minute
    assert kept.count() == idle.count() == 0
    ended, told = Holdings("gone", {"runs": 2}), []
    ended.get("runs", "y", lambda: ["y"])
    assert release_idle(lambda owner: owner != "gone", None, [ended], ended=told.append) == 1
    assert release_idle(lambda owner: owner != "gone", None, [ended], ended=told.append) == 0
    assert told == ["gone"]  # its session is closed once


def test_a_sessions_run_and_its_folder_go_when_the_session_ends():
    at = start("tiny_mlp")
    at.session_state[state.W_BUDGET_MB] = 0  # every value to the run's folder on disk
    at.run()
    trace = state_trace(at)
    folder, alive = trace.spill.path, weakref.ref(trace)
    assert folder.is_dir()
    del trace
    other = start("tiny_mlp")  # another session: its own run, not the first one's
    assert state_trace(other) is not alive()
    holdings = at.session_state[owned.KEY]
    assert release_idle(lambda owner: False, None, [holdings]) == 1  # the first session ended (AppTest's
    # sessions all have one id: the store is named here)
    gc.collect()
    assert alive() is None and not folder.exists()
    assert state_trace(other) is not None  # the other session keeps its run
    assert owned.KEY not in at.session_state and state.ACTIVE not in at.session_state  # its state is forgotten


def test_a_session_that_ended_lets_its_model_go_while_streamlit_still_holds_the_session():
    """Streamlit's runtime keeps the last session it sent messages to (a variable of its loop) until it sends
    to another, and the session its state: the callbacks and fragments of its pages, whose globals hold the
    page's model. Releasing the session's runs and models was not enough: the last visitor's model stayed."""
    at = upload(start(), "chain.onnx", chain(50))
    for page in ("graph", "step"):  # pages with callbacks and fragments
        at = at.switch_page(PAGES[page]).run()
        assert not at.exception
    [model] = [weakref.ref(m) for m in gc.get_objects() if isinstance(m, Model) and m.source == "chain.onnx"]
    assert release_idle(lambda owner: False, None, [at.session_state[owned.KEY]]) == 1  # `at` holds the session
    gc.collect()
    assert model() is None


def test_an_idle_session_loses_its_runs_after_the_operators_idle_time(monkeypatch):
    monkeypatch.setenv("EXPLORER_IDLE_MINUTES", "0.0001")  # 6 ms
    at = start("tiny_mlp")
    assert at.session_state[owned.KEY].count() > 0
    time.sleep(0.05)
    owned.release_now()  # or the app's watcher (every WATCH_S) did meanwhile: released either way
    assert at.session_state[owned.KEY].count() == 0
    at.run()
    assert not at.exception and state_trace(at) is not None  # back again: the run is made anew


def test_run_folders_of_a_killed_server_are_removed_when_the_app_starts(monkeypatch):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    leftover = Path(tempfile.mkdtemp(prefix=f"explorer-run-{dead}-"))
    (leftover / "values-0000.npy").write_bytes(b"x" * 1000)
    living = Path(tempfile.mkdtemp(prefix=f"explorer-run-{os.getppid()}-"))
    monkeypatch.setattr(owned, "_watcher", [])  # as in a new server
    monkeypatch.setattr(owned, "WATCH_S", 3600.0)
    try:
        start("tiny_mlp")
        assert not leftover.exists() and living.is_dir()
    finally:
        for folder in (leftover, living):
            if folder.exists():
                shutil.rmtree(folder)


def test_a_model_run_and_drawn_goes_once_nothing_holds_it():
    """Its compiled program and its drawing facts are kept with the model, not in a process-wide table whose
    entries, referring to their model, kept every model loaded since the server started."""
    import explorer
    from explorer.executor.run import program_of
    from explorer.inputs.samples import sample_path
    from explorer.views.dot import model_to_dot
    from explorer.views.draw_facts import ModelFacts

    model = explorer.load(sample_path("nested_loops"))
    explorer.run(model, model.example_inputs(seed=0))
    model_to_dot(model)
    assert program_of(model) is program_of(model) and ModelFacts.of(model) is ModelFacts.of(model)
    gone = weakref.ref(model)
    del model
    gc.collect()
    assert gone() is None


def test_closing_a_session_forgets_the_functions_streamlit_tracked():
    """Streamlit's command tracking caches each function it sees (an LRU the garbage collector cannot see into):
    a function made inside a page would keep what it closes over, the page's model, past the session's end."""
    from streamlit.runtime import metrics_util

    held = [object()]

    def made_in_a_page(x=held):
        return x

    metrics_util._get_arg_keywords_cached(made_in_a_page)
    gone = weakref.ref(made_in_a_page)
    del made_in_a_page
    gc.collect()
    assert gone() is not None  # what Streamlit keeps
    owned.close("a session that ended")
    gc.collect()
    assert gone() is None


def test_a_shared_app_hands_the_memory_it_frees_back_to_the_system(monkeypatch):
    """A shared app's visitors' runs keep no freed memory for their next runs (heap.py: hand_back): in a
    server of many visitors it stayed in the heaps of the threads that had run them (the heaps' free ends, which
    malloc_trim does not give back), after the visitors had left."""
    told = []
    monkeypatch.setattr(owned, "hand_back", told.append)
    monkeypatch.setattr(owned, "WATCH_S", 3600.0)
    monkeypatch.setenv("EXPLORER_SETTINGS", "/nonexistent/explorer.toml")
    for shared, expected in (("0", []), ("1", [True])):
        monkeypatch.setattr(owned, "_watcher", [])  # as in a new server
        monkeypatch.setenv("EXPLORER_SHARED", shared)
        told.clear()
        owned.watch()
        assert told == expected
