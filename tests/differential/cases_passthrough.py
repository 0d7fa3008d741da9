"""Identity (optionals are in cases_sequence.py)."""
from __future__ import annotations

import numpy as np

from .gen import rng, schema_types, shape, since_versions, values
from .harness import Case, Seq


def cases() -> list[Case]:
    found = []
    for version in since_versions("Identity"):
        for dtype in schema_types("Identity", version, "V" if version >= 14 else "T"):
            r = rng("Identity", version, str(dtype))
            x = (np.array(["a", "bc"], dtype=object) if dtype.kind == "O" else values(r, shape(r), dtype, special=True))
            found.append(Case("Identity", version, [x], dtype_sweep=True))
        if version >= 14:
            r = rng("Identity", version, "seq")
            found.append(Case("Identity", version, [Seq([values(r, (2,), np.float32), values(r, (3,), np.float32)])]))
    return found
