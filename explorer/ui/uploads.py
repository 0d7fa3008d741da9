"""File uploads under the operator's cap (caps.py `upload_mb`): the browser is told the cap, and every file that
arrives is measured again on the server, since a client need not listen."""
from __future__ import annotations

from typing import Any

import streamlit as st

from ..errors import ExplorerError
from ..views.markup import md
from . import reach


def uploader(label: str, **options: Any) -> Any:
    """st.file_uploader(label, **options) under the cap: None (after saying why) when a file is bigger."""
    caps = reach.caps()
    found = st.file_uploader(label, max_upload_size=caps.upload_mb, **options)
    for upload in found if isinstance(found, list) else [found] if found is not None else []:
        try:
            caps.upload(upload.name, upload.size)
        except ExplorerError as exc:
            st.error(md(exc), icon=":material/block:")
            return None
    return found
