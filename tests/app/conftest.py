"""Every test here drives the app (AppTest, or the browser through `streamlit run app.py`)."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fresh_app(fresh_app):
    """Each test starts from tests/support/app_fixtures.py's `fresh_app`."""
