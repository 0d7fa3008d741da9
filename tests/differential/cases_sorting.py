"""TopK (ties ordered as onnxruntime orders them) and Unique at every version."""
from __future__ import annotations

import numpy as np

from .gen import rng, since_versions, values
from .harness import Case
from .tensor_gen import dtype_sweep, i64, same_values, sample


def top_k_cases() -> list[Case]:
    found = []
    ties = np.array([[1, 3, 3, 1, 2, 3], [0, 0, 0, 0, 0, 0]], np.float32)
    for version in since_versions("TopK"):
        r = rng("TopK", version)
        x = values(r, (3, 6), np.float32)
        if version == 1:
            found += [Case("TopK", 1, [x], {"k": 2}, outputs=2), Case("TopK", 1, [x], {"k": 2, "axis": 0}, outputs=2),
                      Case("TopK", 1, [ties], {"k": 4}, outputs=2), Case("TopK", 1, [x], {"k": 7}, outputs=2,
                                                                          error="must lie in")]
            continue
        for k in (0, 1, 3, 6):
            found.append(Case("TopK", version, [x, i64(k)], outputs=2))
        found += [Case("TopK", version, [x, i64(2)], {"axis": 0}, outputs=2),
                  Case("TopK", version, [values(r, (2, 0), np.float32), i64(0)], outputs=2),
                  Case("TopK", version, [ties, i64(4)], outputs=2),
                  Case("TopK", version, [x, i64(7)], outputs=2, error="must lie in")]
        if version >= 11:
            for largest in (0, 1):
                found += [Case("TopK", version, [ties, i64(4)], {"largest": largest, "sorted": 1}, outputs=2),
                          Case("TopK", version, [ties.T.copy(), i64(2)], {"largest": largest, "axis": 0}, outputs=2),
                          Case("TopK", version, [values(r, (2, 3, 4), np.float32), i64(2)],
                               {"largest": largest, "axis": 1}, outputs=2)]
            # sorted=0 leaves the order open: one value, where any order is the same
            found.append(Case("TopK", version, [x, i64(1)], {"sorted": 0}, outputs=2))
        found += dtype_sweep("TopK", version, lambda r, t, v=version: Case("TopK", v, [
            sample(r, (4, 5), t), i64(3)], {"largest": 0} if v >= 11 else {}, outputs=2),
            cast=same_values("sorts (their order and ties kept)"))
    return found


def unique_cases() -> list[Case]:
    found = []
    for version in since_versions("Unique"):
        r = rng("Unique", version)
        x = r.integers(0, 3, (4, 3)).astype(np.float32)
        x[2] = x[0]
        for is_sorted in (0, 1):
            for axis in (None, 0, 1, -1):
                attrs = {"sorted": is_sorted} | ({} if axis is None else {"axis": axis})
                found.append(Case("Unique", version, [x], attrs, outputs=4))
            found.append(Case("Unique", version, [values(r, (0,), np.float32)], {"sorted": is_sorted}, outputs=4))
            found.append(Case("Unique", version, [np.array(["b", "a", "b", "c"], dtype=object)],
                              {"sorted": is_sorted}, outputs=4))
        found.append(Case("Unique", version, [x], {"axis": 2}, outputs=4, error="out of range"))
        found += dtype_sweep("Unique", version, lambda r, t, v=version: Case("Unique", v, [sample(r, (6,), t)],
                                                                               outputs=4),
                             cast=same_values("sorts and compares (their order and ties kept)"))
    return found


def cases() -> list[Case]:
    return top_k_cases() + unique_cases()
