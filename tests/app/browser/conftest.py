"""Real-browser tests: `streamlit run app.py` on a free loopback port, driven by Playwright through Debian's
Chromium. Skipped (with the reason) only when /usr/bin/chromium is not installed. One server and one browser
serve every test of a worker (each test gets a fresh browser context, i.e. a new app session)."""
from __future__ import annotations

import pytest

from tests.support.app_server import (
    CHROMIUM,
    RUN_TIMEOUT,
    VIEWPORT,
    free_port,
    launch,
    settle,
    start_server,
    stop_server,
)


@pytest.fixture(scope="session")
def server():
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
    port = free_port()
    proc = start_server(port)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        stop_server(proc)


@pytest.fixture(scope="session")
def playwright():
    """One Playwright per worker: its sync API runs an event loop of its own, and a second one started while the
    first is open is refused ("using Playwright Sync API inside the asyncio loop")."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as running:
        yield running


@pytest.fixture(scope="session")
def chromium(playwright):
    """Debian's Chromium without the app's server, for pages opened from files and for servers a test starts."""
    browser = launch(playwright)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="session")
def browser(server, playwright):
    browser = launch(playwright)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(RUN_TIMEOUT)  # waits end when what they wait for is there
    page.goto(server)
    settle(page)
    try:
        yield page
    finally:
        context.close()
