"""Attributes a version of a shape, indexing or sequence operator does not define (most moved to inputs, or came
later) are refused with an error naming the node."""
from __future__ import annotations

import numpy as np

from .harness import Case
from .tensor_gen import i64

X = np.arange(6, dtype=np.float32).reshape(1, 2, 3)


def cases() -> list[Case]:
    refused = [
        ("Reshape", 13, [X, i64(6)], {"allowzero": 1}),
        ("Shape", 13, [X], {"start": 1}),
        ("Squeeze", 13, [X, i64(0)], {"axes": [0]}),
        ("Unsqueeze", 13, [X, i64(0)], {"axes": [0]}),
        ("Split", 13, [X], {"split": [1, 1]}),
        ("Split", 13, [X], {"num_outputs": 2}),
        ("Slice", 10, [X, i64(0), i64(1)], {"starts": [0]}),
        ("Pad", 11, [X, i64(0, 0, 0, 0, 0, 0)], {"pads": [0] * 6}),
        ("TopK", 10, [X, i64(1)], {"k": 1}),
        ("TopK", 10, [X, i64(1)], {"largest": 0}),
        ("ScatterElements", 13, [X, np.zeros((1, 2, 3), np.int64), X], {"reduction": "add"}),
        ("ScatterND", 13, [X, i64(0).reshape(1, 1), X], {"reduction": "add"}),
        ("GatherND", 11, [X, i64(0).reshape(1, 1)], {"batch_dims": 0}),
        ("DepthToSpace", 1, [np.zeros((1, 4, 1, 1), np.float32)], {"mode": "CRD", "blocksize": 2}),
        ("SpaceToDepth", 13, [X.reshape(1, 1, 2, 3)], {"mode": "DCR", "blocksize": 1}),
        ("Range", 11, [np.array(0, np.float32)] * 3, {"stash_type": 1}),
    ]
    found = [Case(op, version, inputs, attrs, error=f"{op}-{version} has no attribute {next(iter(attrs))!r}")
             for op, version, inputs, attrs in refused]
    found.append(Case("ScatterElements", 16, [X, np.zeros((1, 2, 3), np.int64), X], {"reduction": "max"},
                      error="reduction 'max' is not one of"))
    found.append(Case("Pad", 18, [X, i64(0, 0, 0, 0, 0, 0)], {"mode": "wrap"}, error="mode 'wrap' is not one of"))
    return found
