"""A shared app in Chromium: a server listening beyond this machine without EXPLORER_SHARED=1 serves only the
message saying how to choose; a shared one under the operator's memory cap writes a visitor's run to a folder on
disk, names neither that folder nor its process id in the sidebar, and removes the folder once the visitor has
left (the browser context closed)."""
from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.support.app_server import CHROMIUM, free_port, settle, start_server, stop_server

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")


def environment(**given: str) -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if not k.startswith("EXPLORER_")}
    return {**found, "EXPLORER_SETTINGS": "/nonexistent/explorer.toml", **given}


def big_values() -> bytes:
    """x[512, 1024] (2 MB of float32) through Relu, Neg and Abs: 6 MB of values, past a 4 MB memory cap."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["n"]),
                               helper.make_node("Abs", ["n"], ["y"])], "big",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [512, 1024])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [512, 1024])])
    assert np.prod([512, 1024]) * 4 == 2 << 20
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_listening_beyond_without_being_declared_shared_serves_only_how_to_choose(chromium):
    port = free_port()
    server = start_server(port, address="0.0.0.0", env=environment())
    try:
        page = chromium.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        alert = page.get_by_test_id("stAlertContentError").first
        alert.wait_for()
        text = alert.inner_text()
        assert "EXPLORER_SHARED=1" in text and "--server.address 127.0.0.1" in text
        assert page.get_by_test_id("stSidebar").count() == 0 or not page.get_by_text("Upload", exact=True).count()
    finally:
        stop_server(server)


def test_a_visitors_run_folder_is_not_shown_and_goes_when_the_visitor_leaves(chromium):
    port = free_port()
    server = start_server(port, env=environment(EXPLORER_SHARED="1", EXPLORER_MAX_MEMORY_MB="4"))
    try:
        context = chromium.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        settle(page)
        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_text("Upload", exact=True).click()
        settle(page)
        page.locator("input[type=file]").first.set_input_files(
            files=[{"name": "big.onnx", "mimeType": "application/octet-stream", "buffer": big_values()}])
        sidebar.get_by_text(re.compile(r"B on disk \(from event")).first.wait_for(timeout=240_000)
        settle(page)
        said = sidebar.inner_text()
        folders = list(Path(tempfile.gettempdir()).glob(f"explorer-run-{server.pid}-*"))
        assert folders and all(f.is_dir() for f in folders)
        assert str(server.pid) not in said and tempfile.gettempdir() not in said and "explorer-run" not in said
        context.close()  # the visitor leaves
        deadline = time.monotonic() + 60
        while any(f.exists() for f in folders) and time.monotonic() < deadline:
            time.sleep(1)
        assert not any(f.exists() for f in folders)
    finally:
        stop_server(server)


def test_explorer_serve_starts_a_shared_app_on_the_c_allocator_from_any_folder(chromium, tmp_path):
    port = free_port()
    server = start_server(port, env=environment(), cwd=tmp_path,
                          argv=[sys.executable, "-m", "explorer", "serve", "--shared", "--port", str(port)])
    try:
        environ = dict(item.split("=", 1) for item in
                       Path(f"/proc/{server.pid}/environ").read_text().split("\0") if "=" in item)
        assert environ["PYTHONMALLOC"] == "malloc" and environ["EXPLORER_SHARED"] == "1"
        assert "explorer.ui.server_process" in Path(f"/proc/{server.pid}/cmdline").read_text()  # serve became it
        page = chromium.new_page()
        page.goto(f"http://127.0.0.1:{port}/loops")
        settle(page)
        page.screenshot(path=str(tmp_path / "serve.png"))
        assert "sample=nested_loops" in page.url  # the app ran: it chose the default sample
        assert page.get_by_test_id("stHeading").get_by_text("Loops").count()
        assert page.get_by_test_id("stException").count() == 0 and page.get_by_test_id("stAlertContentError").count() == 0
    finally:
        stop_server(server)
