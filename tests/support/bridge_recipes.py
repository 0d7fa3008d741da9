"""What the live framework tests share: the bridge test models' folder and their recipes imported as modules."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BRIDGE = Path(__file__).resolve().parents[1] / "models" / "bridge"


def load_recipe(file_name: str) -> ModuleType:
    """tests/models/bridge/<file_name> imported (its factories build the framework models as stored)."""
    path = BRIDGE / file_name
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module
