"""A shared app's saves in Chromium, on a real server: saving the optimized model over the model it came from (the
review's attack: `/optimizer?model=<allowed>/m.onnx`, saved to that same path) is refused, m.onnx and
m.onnx.data stay byte for byte, and another visitor then opens and runs the model with the server still up
(before, m.onnx.data was emptied under the mapping and the next visitor's session ended the server with SIGBUS);
a save named explorer.toml is refused and never written."""
from __future__ import annotations

import os

import pytest

from tests.support.app_server import CHROMIUM, free_port, settle, start_server, stop_server
from tests.support.saves_models import weighted_model

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

SAVE_LABEL = "Save the optimized model (with its external data) to"


def environment(**given: str) -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if not k.startswith("EXPLORER_")}
    return {**found, "EXPLORER_SETTINGS": "/nonexistent/explorer.toml", **given}


def save_as(page, target) -> str:
    """Types `target` into the Optimizer page's save path, presses Save; the page's error text afterwards, as a
    reader sees it."""
    field = page.get_by_label(SAVE_LABEL)
    field.fill(str(target))
    field.press("Enter")
    settle(page)
    page.get_by_role("button", name="Save", exact=True).click()
    settle(page)
    said = "\n".join(page.get_by_test_id("stAlertContentError").all_inner_texts())
    return said.replace("\u200b", "")  # the zero-width spaces the app's escaping puts after colons


def test_saving_over_the_open_model_is_refused_and_the_server_stays_up(chromium, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    weighted_model(folder / "m.onnx", 1 << 16)  # 256 KiB of weights
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    port = free_port()
    server = start_server(port, env=environment(EXPLORER_SHARED="1", EXPLORER_ALLOWED_DIRS=str(folder),
                                                EXPLORER_SAVE_DIR=str(folder)))
    try:
        page = chromium.new_context(viewport={"width": 1400, "height": 1400}).new_page()
        page.goto(f"http://127.0.0.1:{port}/optimizer?model={folder / 'm.onnx'}")
        settle(page)
        page.get_by_label(SAVE_LABEL).wait_for(timeout=240_000)
        said = save_as(page, folder / "m.onnx")
        assert "Not saved" in said and "is not written: it is the file a loaded model was read from" in said
        said = save_as(page, folder / "explorer.toml")
        assert "saves only files whose names end in .onnx, .data, .npz or .html" in said
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing written, nothing emptied
        other = chromium.new_context(viewport={"width": 1400, "height": 1400}).new_page()  # another visitor
        other.goto(f"http://127.0.0.1:{port}/step?model={folder / 'm.onnx'}")
        settle(other)
        other.get_by_test_id("stSidebar").get_by_text("m.onnx").first.wait_for(timeout=240_000)
        assert other.get_by_test_id("stException").count() == 0
        assert other.get_by_test_id("stAlertContentError").count() == 0
        assert server.poll() is None  # the server is still up
    finally:
        stop_server(server)
