"""Every page opened in a new session settles: its script run ends, nothing is left stale or unpainted
(app_server.PAGE_PAINTED), and it stays so, with no run after it. The Optimizer page once looked as if it never
did: a table inside its closed "What each pattern does" expander keeps its layout box, yet Chromium never paints
it, so a check that took the layout box for visible waited for the table's canvas for ever."""
from __future__ import annotations

import time

import pytest

from tests.support.app_server import PAGE_PAINTED, RUN_TIMEOUT, VIEWPORT

SETTLED = f"""() => {{
    const script = document.querySelector("[data-test-script-state]")?.dataset?.testScriptState;
    return script === "notRunning" && !!document.querySelector("h1")
        && !document.querySelector("[data-stale='true']") && ({PAGE_PAINTED})();
}}"""
COUNT_RUNS = """() => {
    window.scriptRuns = 0;
    const state = document.querySelector("[data-test-script-state]");
    new MutationObserver(() => { if (state.dataset.testScriptState === "running") window.scriptRuns += 1; })
        .observe(state, {attributes: true, attributeFilter: ["data-test-script-state"]});
}"""
QUIET_MS = 2_000  # a page that polls a job or asks for another run does so within this


def settled_seconds(page, address: str) -> float:
    """Seconds from opening `address` until the page is settled and stays so, with no script run, for QUIET_MS
    (a page still showing a job's progress reruns meanwhile, and is waited for again)."""
    start = time.perf_counter()
    page.goto(address)
    while True:
        left = RUN_TIMEOUT - (time.perf_counter() - start) * 1e3
        assert left > 0, f"{address} did not settle within {RUN_TIMEOUT / 1e3:g} s"
        page.wait_for_function(SETTLED, timeout=left)
        settled = time.perf_counter() - start
        page.evaluate(COUNT_RUNS)
        page.wait_for_timeout(QUIET_MS)
        if page.evaluate("() => window.scriptRuns") == 0 and page.evaluate(SETTLED):
            return settled


@pytest.mark.parametrize(("path", "sample"), [
    ("", "nested_loops"), ("step", "loop_spec"), ("loops", "while_loop"), ("gates", "gru_pytorch_batch_first"),
    ("optimizer", "opt_linear_cleanup"), ("optimizer", "gru_pytorch_batch_first"), ("compare", "loop_spec"),
    ("sweep", "tiny_mlp")])
def test_a_page_opened_in_a_new_session_settles(browser, server, path, sample):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        settled_seconds(page, f"{server}{path}?sample={sample}")
        assert page.get_by_test_id("stException").count() == 0
        if path == "optimizer":  # its proof is done and shown, the whole models drawn (a rewrite once chosen)
            texts = page.get_by_test_id("stMarkdownContainer").all_inner_texts()
            assert any(t.startswith("Fully optimized model: equivalent") for t in texts), texts
            drawn = page.locator('iframe[title="explorer.ui.diagram.explorer_diagram"]')
            assert drawn.count() == (2 if sample == "opt_linear_cleanup" else 0)
    finally:
        context.close()
