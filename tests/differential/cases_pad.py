"""Pad (every mode, negative pads, axes) and CenterCropPad at every version."""
from __future__ import annotations

import numpy as np

from .gen import rng, since_versions, values
from .harness import Case
from .tensor_gen import dtype_sweep, i64, same_values, sample

PADS = same_values("moves or pads with zeros ('' for strings)")


def pad_cases() -> list[Case]:
    found = []
    for version in since_versions("Pad"):
        r = rng("Pad", version)
        x = values(r, (3, 4), np.float32)
        modes = ("constant", "reflect", "edge") + (("wrap",) if version >= 19 else ())
        if version == 1:
            found += pad_1_cases(x)
            continue
        if version < 11:
            for mode in modes:
                for pads in [(1, 2, 0, 1), (0, 0, 0, 0), (2, 0, 1, 3)]:
                    found.append(Case("Pad", version, [x], {"pads": list(pads), "mode": mode}))
            found.append(Case("Pad", version, [x], {"pads": [1, 1, 1, 1], "value": 1.5}))
            found.append(Case("Pad", version, [x], {"pads": [-1, 0, 1, -2]}))
            found.append(Case("Pad", version, [x], {"pads": [1, 1]}, error="should have 4 values"))
            continue
        for mode in modes:
            for pads in [(1, 2, 0, 1), (0, 0, 0, 0), (2, 3, 2, 3), (-1, 1, 1, -1), (0, -2, 0, 0)]:
                found.append(Case("Pad", version, [x, i64(*pads)], {"mode": mode}))
            found.append(Case("Pad", version, [x, i64(1, 1, 1, 1), np.array(2.5, np.float32)], {"mode": mode}))
        found.append(Case("Pad", version, [values(r, (0, 2), np.float32), i64(1, 0, 1, 1)], {"mode": "constant"}))
        found.append(Case("Pad", version, [x, i64(1, 1)], error="should have 4 values"))
        if version >= 18:
            y = values(r, (2, 3, 4), np.float32)
            found += [Case("Pad", version, [y, i64(1, 2), None, i64(-1)], {"mode": "constant"}),
                      Case("Pad", version, [y, i64(1, 0, 2, 1), np.array(3, np.float32), i64(0, 2)], {"mode": "edge"}),
                      Case("Pad", version, [y, i64(1, 0, 2, 1), None, np.array([2, 0], np.int32)],
                           {"mode": "reflect"})]
        found += dtype_sweep("Pad", version, lambda r, t, v=version: Case("Pad", v, [
            sample(r, (3, 3), t), i64(1, 0, 0, 2)], {"mode": "reflect"}), cast=PADS)
        found += dtype_sweep("Pad", version, lambda r, t, v=version: Case("Pad", v, [
            sample(r, (2, 2), t), i64(1, 0, 0, 1)]), cast=PADS)
    return found


def pad_1_cases(x: np.ndarray) -> list[Case]:
    """onnxruntime has no Pad-1: numpy.pad, which the spec follows, gives the values."""
    found = []
    for mode in ("constant", "reflect", "edge"):
        for pads, value in [((1, 2, 0, 1), 0.0), ((2, 0, 1, 2), 1.5)]:
            widths = [(pads[0], pads[2]), (pads[1], pads[3])]
            kwargs = {"constant_values": value} if mode == "constant" else {}
            found.append(Case("Pad", 1, [x], {"paddings": list(pads), "mode": mode, "value": value},
                              reason="onnxruntime has no Pad-1; numpy.pad gives the spec's values",
                              expected=[np.pad(x, widths, mode=mode, **kwargs)]))
    return found


def center_crop_pad_cases() -> list[Case]:
    found = []
    r = rng("CenterCropPad", 18)
    x = values(r, (4, 5), np.float32)
    for dims, axes in [((2, 6), None), ((5, 3), None), ((3, 3), None), ((7,), [-1]), ((6,), [0]), ((4, 5), None)]:
        found.append(Case("CenterCropPad", 18, [x, i64(*dims)], {} if axes is None else {"axes": axes}))
    found.append(Case("CenterCropPad", 18, [x, i64(2)], error="has 1 values for 2 axes"))
    found += dtype_sweep("CenterCropPad", 18, lambda r, t: Case("CenterCropPad", 18, [
        sample(r, (3, 2), t), i64(2, 3)]), cast=PADS)
    return found


def cases() -> list[Case]:
    return pad_cases() + center_crop_pad_cases()
