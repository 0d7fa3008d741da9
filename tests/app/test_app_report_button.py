"""The "Download report" button on the Compare, Step through and Gates pages: one per page, its file made when
clicked (a deferred download), under the page's own key."""
from __future__ import annotations

import pytest

from explorer.ui import state
from tests.support.apptest import PAGES, assert_clean, start

PAGE_FILES = {**PAGES, "compare": "explorer/ui/pages/compare.py"}


@pytest.mark.parametrize(("page", "sample"), [("step", "nested_loops"), ("gates", "gru_pytorch_batch_first"),
                                              ("compare", None)])
def test_each_page_offers_its_report(page, sample):
    at = start(sample, timeout=120)
    at.switch_page(PAGE_FILES[page]).run()
    assert_clean(at)
    buttons = [b for b in at.get("download_button") if b.proto.label == "Download report"]
    assert len(buttons) == 1
    assert buttons[0].proto.id.endswith(state.keyed(state.W_REPORT_DOWNLOAD, page))
    assert buttons[0].proto.deferred_file_id  # made when clicked, not at each run of the page
