"""The app's reach (explorer/access.py) for the server it runs in: served on this machine only, local paths open;
shared, only inside the folders the operator allowed, and sweeps reach only the schedulers the operator listed."""
from __future__ import annotations

import streamlit as st

from ..access import Access, access_for


def access() -> Access:
    """The reach of this server (its server.address and the operator's settings)."""
    return access_for(st.get_option("server.address"))
