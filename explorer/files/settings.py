"""explorer's own settings file: `explorer.toml` in the folder the app or command is started from
(EXPLORER_SETTINGS names another). Each concern reads its table: `[shared]` (access.py: what a shared app may
open), `[docs]` (docs_links.py: where the guide is). Environment variables win over the file."""
from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ExplorerError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SETTINGS_FILE = "explorer.toml"


def settings_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the settings file is looked for."""
    environ = os.environ if environ is None else environ
    return Path(environ.get("EXPLORER_SETTINGS") or SETTINGS_FILE)


def table(name: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The `[name]` table of the settings file (empty when the file or the table is missing); an ExplorerError
    when the file is not valid TOML."""
    path = settings_path(environ)
    if not path.is_file():
        return {}
    try:
        found = tomllib.loads(path.read_text()).get(name, {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ExplorerError(f"explorer's settings file {str(path)!r} is not valid TOML: {exc}") from None
    return found if isinstance(found, dict) else {}
