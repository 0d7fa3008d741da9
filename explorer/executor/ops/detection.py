"""detection kernels (work in progress)."""
from __future__ import annotations

KERNELS: dict = {}
