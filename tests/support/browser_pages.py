"""What the browser tests do on a page: open one of the app's pages, choose a sample or a local model, check that no
exception shows, and save a screenshot (artifacts/e2e_*.png) once the page is painted."""
from __future__ import annotations

from tests.support.app_server import ROOT, painted, settle

ARTIFACTS = ROOT / "artifacts"


def shot(page, name: str) -> None:
    """Saves a screenshot once tables, charts and diagrams (drawn after the script finishes) are on screen."""
    painted(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"e2e_{name}.png"))


def no_exception(page) -> None:
    assert page.get_by_test_id("stException").count() == 0


def choose_sample(page, name: str, attempts: int = 5) -> None:
    """Picks the sample `name` in the sidebar's list. A rerun that lands while the list is open (the one a new
    session's canvas asks for once it has loaded, to be sent its drawing) draws the sidebar again and closes the
    list: the list is opened again then."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    option = page.get_by_role("option", name=name, exact=True)
    for attempt in range(attempts):
        settle(page)
        page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first.click()
        try:
            option.wait_for(timeout=10_000)
            break
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
    option.click()
    settle(page)


def open_page(page, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()
    settle(page)


def open_path(page, path) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Local path", exact=True).click()
    settle(page)
    field = page.get_by_label("Path to an .onnx file", exact=True)
    field.fill(str(path))
    field.press("Enter")
    settle(page)
