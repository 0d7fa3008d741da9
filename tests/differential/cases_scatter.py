"""Scatter, ScatterElements, ScatterND (every reduction) and TensorScatter at every version."""
from __future__ import annotations

import numpy as np

from .gen import rng, since_versions, values
from .harness import Case
from .tensor_gen import dtype_sweep, i64, same_values, sample


def _reductions(version: int) -> tuple[str, ...]:
    return ("none", "add", "mul") + (("max", "min") if version >= 18 else ()) if version >= 16 else ()


def scatter_elements_cases() -> list[Case]:
    found = []
    for op in ("Scatter", "ScatterElements"):
        for version in since_versions(op):
            r = rng(op, version)
            for axis in (0, 1, -1):
                # distinct indices along the axis: the result does not depend on the order of the writes
                if axis == 0:
                    idx = np.stack([r.permutation(4)[:2] for _ in range(3)], 1)
                else:
                    idx = np.stack([r.permutation(3)[:2] - (axis == -1) for _ in range(4)], 0)
                for itype in (np.int32, np.int64):
                    found.append(Case(op, version, [values(r, (4, 3), np.float32), idx.astype(itype),
                                                    values(r, idx.shape, np.float32)], {"axis": axis}))
            found.append(Case(op, version, [values(r, (4, 3), np.float32), i64(1, 1, 1, 1, 2, 1).reshape(2, 3),
                                            values(r, (2, 3), np.float32)]))  # repeated: the last one stays
            found.append(Case(op, version, [values(r, (3, 3), np.float32), np.zeros((0, 3), np.int64),
                                            values(r, (0, 3), np.float32)]))
            found.append(Case(op, version, [values(r, (3, 3), np.float32), i64(3).reshape(1, 1),
                                            values(r, (1, 1), np.float32)], error="out of range"))
            for reduction in _reductions(version):
                for dtype in (np.float32, np.int32, np.float64, np.int64):
                    found.append(Case(op, version, [values(r, (4, 3), dtype), i64(0, 1, 0, 1, 0, 2).reshape(2, 3),
                                                    values(r, (2, 3), dtype)], {"axis": 0, "reduction": reduction}))
            found += dtype_sweep(op, version, lambda r, t, o=op, v=version: Case(o, v, [
                sample(r, (3, 2), t), i64(2, 0).reshape(1, 2), sample(r, (1, 2), t)]))
    for case in found:
        if case.op == "Scatter" and case.version == 11 and case.error is None:
            data, indices, updates = case.inputs
            expected = data.copy()
            np.put_along_axis(expected, np.where(indices < 0, indices + data.shape[case.attrs.get("axis", 0)],
                                                 indices), updates, axis=case.attrs.get("axis", 0))
            case.reason = "onnxruntime refuses the deprecated Scatter-11; it is ScatterElements-11"
            case.expected, case.dtype_sweep = [expected], False
    return found


def scatter_nd_cases() -> list[Case]:
    found = []
    for version in since_versions("ScatterND"):
        r = rng("ScatterND", version)
        found += [Case("ScatterND", version, [values(r, (4, 3), np.float32), i64(1, 3).reshape(2, 1),
                                              values(r, (2, 3), np.float32)]),
                  Case("ScatterND", version, [values(r, (4, 3), np.float32), i64(1, 2, 3, 0, -1, -2).reshape(3, 2),
                                              values(r, (3,), np.float32)]),
                  Case("ScatterND", version, [values(r, (2, 3, 4), np.float32), i64(0, 2, 1, 0).reshape(2, 1, 2),
                                              values(r, (2, 1, 4), np.float32)]),
                  Case("ScatterND", version, [values(r, (2, 3), np.float32), np.zeros((0, 1), np.int64),
                                              values(r, (0, 3), np.float32)]),
                  Case("ScatterND", version, [values(r, (2, 3), np.float32), i64(2).reshape(1, 1),
                                              values(r, (1, 3), np.float32)], error="out of range"),
                  Case("ScatterND", version, [values(r, (2, 3), np.float32), i64(1).reshape(1, 1),
                                              values(r, (1, 2), np.float32)], error="updates have shape")]
        found.append(Case("ScatterND", version, [values(r, (4, 3), np.float32), i64(1, 1, 2, 1).reshape(4, 1),
                                                 values(r, (4, 3), np.float32)]))  # repeated: the last one stays
        # more index entries than ScatterND writes row by row: distinct pairs, some negative
        pairs = i64(*[v for a, b in zip(range(-6, 4), (4, -5, 3, 0, -1, 2, 1, -2, -3, 0)) for v in (a, b)])
        found.append(Case("ScatterND", version, [values(r, (6, 5, 4), np.float32), pairs.reshape(10, 2),
                                                 values(r, (10, 4), np.float32)]))
        for reduction in _reductions(version):
            for dtype in (np.float32, np.int64, np.float64, np.int32):
                found.append(Case("ScatterND", version, [values(r, (4, 3), dtype), i64(1, 1, 2, 1).reshape(4, 1),
                                                         values(r, (4, 3), dtype)], {"reduction": reduction}))
            many = i64(*[k % 3 - 1 for k in range(18)]).reshape(18, 1)  # each row of 3 written six times
            found.append(Case("ScatterND", version, [values(r, (4, 3), np.float32), many,
                                                     values(r, (18, 3), np.float32)], {"reduction": reduction}))
        found += dtype_sweep("ScatterND", version, lambda r, t, v=version: Case("ScatterND", v, [
            sample(r, (3, 2), t), i64(2, 0).reshape(2, 1), sample(r, (2, 2), t)]))
    return found


def tensor_scatter_cases() -> list[Case]:
    found = []
    r = rng("TensorScatter", 24)
    cache, update = values(r, (2, 3, 5, 4), np.float32), values(r, (2, 3, 2, 4), np.float32)
    for mode in ("linear", "circular"):
        for starts in (None, i64(1, 3)):
            found.append(Case("TensorScatter", 24, [cache, update] + ([] if starts is None else [starts]),
                              {"mode": mode}))
    found += [Case("TensorScatter", 24, [cache, update, i64(4, 0)], {"mode": "circular", "axis": -2}),
              Case("TensorScatter", 24, [cache, values(r, (2, 1, 5, 4), np.float32)], {"axis": 1}),
              Case("TensorScatter", 24, [cache, update, i64(4, 0)], {"mode": "linear"}, error="reach outside"),
              Case("TensorScatter", 24, [cache, update], {"axis": 0}, error="batch axis")]
    found += dtype_sweep("TensorScatter", 24, lambda r, t: Case("TensorScatter", 24, [
        sample(r, (1, 3, 2), t), sample(r, (1, 1, 2), t), i64(1)], {"axis": 1}), cast=same_values("moves"))
    return found


def cases() -> list[Case]:
    return scatter_elements_cases() + scatter_nd_cases() + tensor_scatter_cases()
