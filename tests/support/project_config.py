"""The project's own settings as the tests read them: pyproject.toml's tables."""
from __future__ import annotations

from pathlib import Path
from typing import Any

try:
    import tomllib
except ImportError:  # Python 3.10: import-linter's own dependency
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def importlinter_config() -> dict[str, Any]:
    """pyproject.toml's [tool.importlinter] table: the import contracts."""
    config: dict[str, Any] = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    return config
