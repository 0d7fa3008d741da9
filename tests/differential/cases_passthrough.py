"""Identity and Optional."""
from __future__ import annotations

import numpy as np
from onnx import helper

from .gen import rng, schema_types, shape, since_versions, values
from .harness import Case, Seq


def cases() -> list[Case]:
    found = []
    for version in since_versions("Identity"):
        for dtype in schema_types("Identity", version, "V" if version >= 14 else "T"):
            r = rng("Identity", version, str(dtype))
            x = (np.array(["a", "bc"], dtype=object) if dtype == object else values(r, shape(r), dtype, special=True))
            found.append(Case("Identity", version, [x], dtype_sweep=True))
        if version >= 14:
            r = rng("Identity", version, "seq")
            found.append(Case("Identity", version, [Seq([values(r, (2,), np.float32), values(r, (3,), np.float32)])]))
    for version in since_versions("Optional"):
        x = values(rng("Optional", version), (2, 3), np.float32)
        newer = {"reason": "onnxruntime implements Optional up to 15; 28 only allows more types",
                 "judge_version": 15} if version > 15 else {}
        found.append(Case("Optional", version, [x], **newer))
        found.append(Case("Optional", version, [], attrs={"type": helper.make_tensor_type_proto(1, [2])},
                          reason="explorer holds an empty optional as None", expected=[None]))
    return found
