"""Real-browser tests: `streamlit run app.py` on a free loopback port, driven by Playwright through Debian's
Chromium. Skipped (with the reason) only when /usr/bin/chromium is not installed."""
from __future__ import annotations

import pytest
from app_server import CHROMIUM, VIEWPORT, free_port, launch, settle, start_server, stop_server


@pytest.fixture(scope="module")
def server():
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
    port = free_port()
    proc = start_server(port)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(server)
    settle(page)
    try:
        yield page
    finally:
        context.close()
