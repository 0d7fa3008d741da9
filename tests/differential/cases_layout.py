"""DepthToSpace, SpaceToDepth (both modes) and ReverseSequence at every version."""
from __future__ import annotations

import numpy as np

from .gen import rng, since_versions, values
from .harness import Case
from .tensor_gen import dtype_sweep, i64, same_values, sample


def depth_space_cases() -> list[Case]:
    found = []
    for op in ("DepthToSpace", "SpaceToDepth"):
        for version in since_versions(op):
            r = rng(op, version)
            to_space = op == "DepthToSpace"
            has_mode = version >= (11 if to_space else 28)
            shapes = [(2, 8, 2, 3), (1, 9, 1, 2), (1, 4, 0, 2)] if to_space else [(2, 3, 4, 6), (1, 2, 3, 6),
                                                                                 (1, 1, 0, 2)]
            for dims in shapes:
                block = 3 if 9 in dims or 6 in dims[2:] and dims[2] % 2 else 2
                for mode in (None, "DCR", "CRD") if has_mode else (None,):  # None: the default mode
                    attrs = {"blocksize": block} | ({} if mode is None else {"mode": mode})
                    found.append(Case(op, version, [values(r, dims, np.float32)], attrs))
            found.append(Case(op, version, [values(r, (1, 3, 3, 3), np.float32)], {"blocksize": 2},
                              error="divide by"))
            found += dtype_sweep(op, version, lambda r, t, o=op, v=version: Case(o, v, [
                sample(r, (1, 4, 2, 2), t)], {"blocksize": 2}), cast=same_values("moves", np.float64))
    return found


def reverse_sequence_cases() -> list[Case]:
    found = []
    for version in since_versions("ReverseSequence"):
        r = rng("ReverseSequence", version)
        found += [Case("ReverseSequence", version, [values(r, (4, 3, 2), np.float32), i64(4, 2, 0)],
                       {"time_axis": 0, "batch_axis": 1}),
                  Case("ReverseSequence", version, [values(r, (3, 4), np.float32), i64(1, 4, 3)],
                       {"time_axis": 1, "batch_axis": 0}),
                  Case("ReverseSequence", version, [values(r, (4, 3), np.float32), i64(1, 4, 3)]),
                  Case("ReverseSequence", version, [values(r, (4, 3), np.float32), i64(1, 5, 3)],
                       error="must lie in"),
                  Case("ReverseSequence", version, [values(r, (4, 3), np.float32), i64(1, 2, 3)],
                       {"time_axis": 1, "batch_axis": 1}, error="must be 0 and 1")]
        found += dtype_sweep("ReverseSequence", version, lambda r, t, v=version: Case("ReverseSequence", v, [
            sample(r, (3, 2), t), i64(3, 2)]))
    return found


def cases() -> list[Case]:
    return depth_space_cases() + reverse_sequence_cases()
