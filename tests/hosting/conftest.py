"""The operator's caps and the sessions' holdings are checked through the app they govern (AppTest)."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fresh_app(fresh_app):
    """Each test starts from tests/support/app_fixtures.py's `fresh_app`."""
