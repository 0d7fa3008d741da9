"""Gather, GatherElements, GatherND, Compress, OneHot, NonZero at every version."""
from __future__ import annotations

import numpy as np

from .gen import rng, since_versions, values
from .harness import Case
from .tensor_gen import dtype_sweep, i64, same_values, sample


def gather_cases() -> list[Case]:
    found = []
    for version in since_versions("Gather"):
        r = rng("Gather", version)
        x = values(r, (5, 4, 3), np.float32)
        for axis in (0, 1, 2, -1, -3):
            for idx in (np.array([0, 2, -1]), np.array(1), np.array([[1, 0], [2, -2]]), np.zeros((0,), np.int64)):
                for itype in (np.int32, np.int64):
                    found.append(Case("Gather", version, [x, idx.astype(itype)], {"axis": axis}))
        found.append(Case("Gather", version, [x, i64(7)], {"axis": 1}, error="out of range"))
        found.append(Case("Gather", version, [x, i64(0)], {"axis": 3}, error="out of range"))
        found += [case for case in dtype_sweep("Gather", version, lambda r, t, v=version: Case("Gather", v, [
            sample(r, (4, 2), t), i64(3, -4)])) if case.inputs[0].dtype != object]
        strings = sample(r, (4, 2), object)
        found.append(Case("Gather", version, [strings, i64(3, -4)], reason="onnxruntime leaves all but the first "
                          "string of each gathered row empty", expected=[strings[[3, 0]]]))
        found.append(Case("Gather", version, [strings[:, 0].copy(), i64(3, -4)]))
    return found


def gather_elements_cases() -> list[Case]:
    found = []
    for version in since_versions("GatherElements"):
        r = rng("GatherElements", version)
        for axis in (0, 1, -1):
            found.append(Case("GatherElements", version, [values(r, (4, 3), np.float32),
                                                          r.integers(-3, 3, (2, 3)).astype(np.int64)], {"axis": axis}))
            found.append(Case("GatherElements", version, [values(r, (3, 4, 2), np.float32),
                                                          r.integers(-2, 2, (2, 2, 2)).astype(np.int32)], {"axis": axis}))
        found.append(Case("GatherElements", version, [values(r, (3, 3), np.float32), np.zeros((0, 3), np.int64)]))
        found.append(Case("GatherElements", version, [values(r, (3, 3), np.float32), i64(5).reshape(1, 1)],
                          error="out of range"))
        found += dtype_sweep("GatherElements", version, lambda r, t, v=version: Case("GatherElements", v, [
            sample(r, (3, 2), t), i64(0, 2, 1, -1).reshape(2, 2)]))
    return found


def gather_nd_cases() -> list[Case]:
    found = []
    for version in since_versions("GatherND"):
        r = rng("GatherND", version)
        found += [Case("GatherND", version, [values(r, (3, 4, 2), np.float32), i64(0, 1, 2, -1).reshape(2, 2)]),
                  Case("GatherND", version, [values(r, (3, 4, 2), np.float32), i64(0, 1, 2).reshape(3, 1)]),
                  Case("GatherND", version, [values(r, (3, 4, 2), np.float32), i64(0, 1, 1, 2, 3, 1).reshape(2, 1, 3)]),
                  Case("GatherND", version, [values(r, (3, 4), np.float32), np.zeros((0, 2), np.int64)]),
                  Case("GatherND", version, [values(r, (3, 4), np.float32), i64(3, 0).reshape(1, 2)],
                       error="out of range")]
        if version >= 12:
            found += [Case("GatherND", version, [values(r, (2, 4, 3), np.float32), i64(1, 2, 3, 0).reshape(2, 2, 1)],
                           {"batch_dims": 1}),
                      Case("GatherND", version, [values(r, (2, 3, 4, 5), np.float32),
                                                 r.integers(0, 4, (2, 3, 2, 1)).astype(np.int64)], {"batch_dims": 2}),
                      Case("GatherND", version, [values(r, (2, 3, 4), np.float32), i64(1, 2, 0, 3).reshape(2, 1, 2)],
                           {"batch_dims": 1}),
                      Case("GatherND", version, [values(r, (2, 3), np.float32), i64(1, 0).reshape(2, 1)],
                           {"batch_dims": 0})]
        found += dtype_sweep("GatherND", version, lambda r, t, v=version: Case("GatherND", v, [
            sample(r, (2, 2), t), i64(1, 0).reshape(1, 2)]))
    return found


def compress_cases() -> list[Case]:
    found = []
    for version in since_versions("Compress"):
        r = rng("Compress", version)
        x = values(r, (3, 4), np.float32)
        for axis in (None, 0, 1) + ((-1,) if version >= 11 else ()):
            found.append(Case("Compress", version, [x, np.array([True, False, True])],
                              {} if axis is None else {"axis": axis}))
        found += [Case("Compress", version, [x, np.array([False] * 3)], {"axis": 0}),
                  Case("Compress", version, [x, np.array([True, False, True, True, False])], {"axis": 1}),
                  Case("Compress", version, [x, np.array([True] * 5)], {"axis": 0}),
                  Case("Compress", version, [x, np.array([True] * 13)])]
        found += dtype_sweep("Compress", version, lambda r, t, v=version: Case("Compress", v, [
            sample(r, (3,), t), np.array([True, False, True])], {"axis": 0}))
    return found


def one_hot_cases() -> list[Case]:
    found = []
    for version in since_versions("OneHot"):
        if version == 9:
            found.append(Case("OneHot", 9, [i64(-1, 2), np.array(3, np.int64), np.array([0, 1], np.int64)],
                              reason="onnxruntime counts negative indices from depth at version 9 too; OneHot-9 "
                              "gives them a row of off_value", expected=[np.array([[0, 0, 0], [0, 0, 1]], np.int64)]))
            found.append(Case("OneHot", 9, [i64(0, 2, 3, 1), np.array(3, np.int64), np.array([0, 1], np.float32)],
                              {"axis": 0}))
            continue
        for axis in (-1, 0, 1, -2):
            found.append(Case("OneHot", version, [i64(0, 2, 4, 1).reshape(2, 2), np.array(3, np.int64),
                                                  np.array([0, 1], np.float32)], {"axis": axis}))
        found += [Case("OneHot", version, [np.array([0.0, 1.7, -1.0, 2.2], np.float32), np.array([4.0], np.float32),
                                           np.array([2, 5], np.int64)], reason="onnxruntime lacks float indices "
                       "with int64 values; indices cast to int64 (-1 counts from depth)",
                       expected=[np.array([[5, 2, 2, 2], [2, 5, 2, 2], [2, 2, 2, 5], [2, 2, 5, 2]], np.int64)]),
                  Case("OneHot", version, [i64(-1, -3, 3, -4), np.array(3, np.int64), np.array([2, 5], np.int64)]),
                  Case("OneHot", version, [i64(1, 0), np.array(2, np.int64),
                                           np.array(["off", "on"], dtype=object)]),
                  Case("OneHot", version, [np.array([1, 0], np.int32), np.array(2, np.float32),
                                           np.array([1, 3], np.float32)]),
                  Case("OneHot", version, [i64(1), np.array(0, np.int64), np.array([0, 1], np.float32)],
                       error="depth")]
    return found


def non_zero_cases() -> list[Case]:
    found = []
    for version in since_versions("NonZero"):
        r = rng("NonZero", version)
        found += [Case("NonZero", version, [values(r, (0, 3), np.float32)]),
                  Case("NonZero", version, [np.array(2, np.int64)]), Case("NonZero", version, [np.array(0, np.int64)]),
                  Case("NonZero", version, [values(r, (2, 3, 4), np.int32, -1, 1)])]
        found += dtype_sweep("NonZero", version, lambda r, t, v=version: Case("NonZero", v, [sample(r, (3, 2), t)]),
                             cast=same_values("compares with 0 (float64 keeps its zeros in float32)"))
    return found


def cases() -> list[Case]:
    return (gather_cases() + gather_elements_cases() + gather_nd_cases() + compress_cases() + one_hot_cases()
            + non_zero_cases())
