"""NaN and Inf are data in a run (trace.first_nonfinite), never warnings: NumPy's floating-point errors are ignored
while it runs. `np.errstate(all="ignore")` builds its state at every entry (0.7 µs, a tenth of a small model's
fixed cost); this sets NumPy's own context variable to that state, made once. Where NumPy keeps its state
elsewhere (another version), np.errstate itself."""
from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import numpy as np

try:
    from numpy._core import _ufunc_config

    _private = vars(_ufunc_config)  # not typed: NumPy's own names, read as NumPy 2 keeps them
    _STATE: ContextVar[Any] | None = _private["_extobj_contextvar"]
    _IGNORED: Any = _private["_make_extobj"](all="ignore")
except (ImportError, KeyError, TypeError):  # pragma: no cover - a NumPy that keeps them otherwise
    _STATE = None


class floating_errors_ignored:  # noqa: N801 - used as a function: `with floating_errors_ignored():`
    """NumPy's floating-point errors ignored for the duration (restored on exit), in this thread's context."""

    __slots__ = ("_token", "_fallback")

    def __enter__(self) -> None:
        if _STATE is None:
            self._fallback = np.errstate(all="ignore")
            self._fallback.__enter__()
        else:
            self._token = _STATE.set(_IGNORED)

    def __exit__(self, *exc_info: object) -> None:
        if _STATE is None:
            self._fallback.__exit__(None, None, None)
        else:
            _STATE.reset(self._token)
