"""Reshape, Shape, Size, Flatten, Squeeze, Unsqueeze, Transpose, Expand at every version."""
from __future__ import annotations

import numpy as np

from .gen import rng, shape, since_versions, values
from .harness import Case
from .tensor_gen import dtype_sweep, i64, sample


def reshape_cases() -> list[Case]:
    found = []
    for version in since_versions("Reshape"):
        r = rng("Reshape", version)
        x = values(r, (2, 3, 4), np.float32)
        if version == 1:
            found += [Case("Reshape", 1, [x], {"shape": [4, 6]}), Case("Reshape", 1, [x], {"shape": [0, -1]}),
                      Case("Reshape", 1, [x], {"shape": [24], "consumed_inputs": [0]})]
            continue
        for dims in [(0, -1), (-1,), (4, 0, 2, 1), (24,), (2, -1, 2), (0, 0, 4), (1, 1, 24)]:
            found.append(Case("Reshape", version, [x, i64(*dims)]))
        found.append(Case("Reshape", version, [values(r, (0, 3), np.float32), i64(3, -1)]))
        found.append(Case("Reshape", version, [x, i64(5, -1)], error="cannot reshape"))
        if version >= 14:
            found += [Case("Reshape", version, [values(r, (0, 3), np.float32), i64(3, 0)], {"allowzero": 1}),
                      Case("Reshape", version, [x, i64(0, 12)], {"allowzero": 0}),
                      Case("Reshape", version, [x, i64(0, -1)], {"allowzero": 1}, error="both 0 and -1")]
        found += dtype_sweep("Reshape", version, lambda r, t, v=version: Case("Reshape", v, [
            sample(r, (2, 3), t), i64(3, -1)]))
    return found


def shape_cases() -> list[Case]:
    found = []
    for version in since_versions("Shape"):
        r = rng("Shape", version)
        found += [Case("Shape", version, [values(r, (2, 3, 4), np.float32)]),
                  Case("Shape", version, [values(r, (), np.float32)]),
                  Case("Shape", version, [values(r, (0, 5), np.float32)])]
        if version >= 15:
            for start, end in [(0, None), (1, None), (-1, None), (0, -1), (-10, 10), (2, 1), (5, 6), (None, 2)]:
                attrs = ({} if start is None else {"start": start}) | ({} if end is None else {"end": end})
                found.append(Case("Shape", version, [values(r, (2, 3, 4), np.float32)], attrs))
        found += dtype_sweep("Shape", version, lambda r, t, v=version: Case("Shape", v, [sample(r, shape(r), t)]))
    for version in since_versions("Size"):
        r = rng("Size", version)
        found += [Case("Size", version, [values(r, (0, 3), np.float32)]),
                  Case("Size", version, [values(r, (), np.float32)])]
        found += dtype_sweep("Size", version, lambda r, t, v=version: Case("Size", v, [sample(r, shape(r), t)]))
    return found


def flatten_cases() -> list[Case]:
    found = []
    for version in since_versions("Flatten"):
        r = rng("Flatten", version)
        x = values(r, (2, 3, 4), np.float32)
        for axis in (0, 1, 2, 3) + ((-1, -3) if version >= 11 else ()):
            found.append(Case("Flatten", version, [x], {"axis": axis}))
        found.append(Case("Flatten", version, [values(r, (2, 0, 3), np.float32)], {"axis": 2}))
        found.append(Case("Flatten", version, [x], {"axis": 4}, error="out of range"))
        found += dtype_sweep("Flatten", version, lambda r, t, v=version: Case("Flatten", v, [
            sample(r, (2, 3, 2), t)], {"axis": 2}))
    return found


def squeeze_cases() -> list[Case]:
    found = []
    for version in since_versions("Squeeze"):
        r = rng("Squeeze", version)
        x = values(r, (1, 3, 1, 2), np.float32)
        found.append(Case("Squeeze", version, [x]))
        found.append(Case("Squeeze", version, [values(r, (1, 1), np.float32)]))
        scalar = np.array(3.5, np.float32)
        found.append(Case("Squeeze", version, [scalar] + ([i64(0)] if version >= 13 else []),
                          {} if version >= 13 else {"axes": [0]}, reason="onnxruntime refuses axis 0 of a scalar; "
                          "explorer, as numpy, squeezes nothing (Loop bodies declaring their iteration number [1])",
                          expected=[scalar]))
        if version < 13:
            found += [Case("Squeeze", version, [x], {"axes": [0]}), Case("Squeeze", version, [x], {"axes": [0, 2]}),
                      Case("Squeeze", version, [x], {"axes": [1]}, error="size is not 1")]
            if version >= 11:
                found.append(Case("Squeeze", version, [x], {"axes": [-2, 0]}))
        else:
            found += [Case("Squeeze", version, [x, i64(0, -2)]),
                      Case("Squeeze", version, [x, None], reason="onnxruntime fails on an omitted axes input named ''",
                           expected=[x.reshape(3, 2)]),
                      Case("Squeeze", version, [x, i64(2)]), Case("Squeeze", version, [x, i64(1)],
                                                                  error="size is not 1")]
        axes_input = version >= 13
        found += dtype_sweep("Squeeze", version, lambda r, t, v=version, a=axes_input: Case(
            "Squeeze", v, [sample(r, (1, 2), t)] + ([i64(0)] if a else []), {} if a else {"axes": [0]}))
    for version in since_versions("Unsqueeze"):
        r = rng("Unsqueeze", version)
        x = values(r, (3, 2), np.float32)
        if version < 13:
            found += [Case("Unsqueeze", version, [x], {"axes": [0, 3]}), Case("Unsqueeze", version, [x], {"axes": [1]}),
                      Case("Unsqueeze", version, [values(r, (), np.float32)], {"axes": [0]}),
                      Case("Unsqueeze", version, [x], {"axes": [0, 0]}, error="name an axis twice")]
            if version >= 11:
                found.append(Case("Unsqueeze", version, [x], {"axes": [-1, 0]}))
        else:
            found += [Case("Unsqueeze", version, [x, i64(0, -1)]), Case("Unsqueeze", version, [x, i64(2, 1)]),
                      Case("Unsqueeze", version, [values(r, (), np.float32), i64(0)]),
                      Case("Unsqueeze", version, [x, i64(4)], error="out of range")]
        axes_input = version >= 13
        found += dtype_sweep("Unsqueeze", version, lambda r, t, v=version, a=axes_input: Case(
            "Unsqueeze", v, [sample(r, (2,), t)] + ([i64(1)] if a else []), {} if a else {"axes": [1]}))
    return found


def transpose_cases() -> list[Case]:
    found = []
    for version in since_versions("Transpose"):
        r = rng("Transpose", version)
        x = values(r, (2, 3, 4), np.float32)
        found += [Case("Transpose", version, [x]), Case("Transpose", version, [x], {"perm": [1, 0, 2]}),
                  Case("Transpose", version, [x], {"perm": [2, 0, 1]}),
                  Case("Transpose", version, [values(r, (2, 0, 3), np.float32)], {"perm": [2, 0, 1]}),
                  Case("Transpose", version, [x], {"perm": [0, 0, 1]}, error="not a permutation")]
        found += dtype_sweep("Transpose", version, lambda r, t, v=version: Case("Transpose", v, [
            sample(r, (2, 3), t)]))
    return found


def expand_cases() -> list[Case]:
    found = []
    for version in since_versions("Expand"):
        r = rng("Expand", version)
        for x_shape, dims in [((3, 1), (2, 3, 4)), ((3, 1), (1,)), ((1,), (2, 3)),
                              ((3, 1), (3, 1)), ((2, 1, 3), (1, 4, 1)), ((), (2, 2)), ((1, 3), (0, 3))]:
            found.append(Case("Expand", version, [values(r, x_shape, np.float32), i64(*dims)]))
        found.append(Case("Expand", version, [values(r, (3, 2), np.float32), i64(4)], error="do not broadcast"))
        found += dtype_sweep("Expand", version, lambda r, t, v=version: Case("Expand", v, [
            sample(r, (3, 1), t), i64(2, 3, 2)]))
    return found


def cases() -> list[Case]:
    return reshape_cases() + shape_cases() + flatten_cases() + squeeze_cases() + transpose_cases() + expand_cases()
