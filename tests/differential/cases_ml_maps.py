"""ZipMap, DictVectorizer and CastMap (explorer/executor/ops/ml_maps.py): int and string labels, one row and
many, vocabularies with absent keys, every value type the schema allows, dense and sparse casts. onnxruntime's
Python API feeds maps only of float32 values, and no empty map: the others are the spec's values by hand."""
from __future__ import annotations

import numpy as np

from .gen import rng
from .harness import Case, Map

ML = "ai.onnx.ml"
UNFED = "onnxruntime's Python API cannot feed a map of {} values; the spec's value by hand"


def strings(*items: str) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = list(items)
    return out


def _zipmap() -> list[Case]:
    r = rng("ZipMap")
    x = r.normal(size=(4, 3)).astype(np.float32)
    return [Case("ZipMap", 1, [x], {"classlabels_int64s": [7, 2, 5]}, domain=ML),
            Case("ZipMap", 1, [x], {"classlabels_strings": ["b", "a", "c"]}, domain=ML),
            Case("ZipMap", 1, [x[0]], {"classlabels_int64s": [0, 1, 2]}, domain=ML),
            Case("ZipMap", 1, [x[:0]], {"classlabels_strings": ["b", "a", "c"]}, domain=ML),
            Case("ZipMap", 1, [x], {"classlabels_int64s": [0, 1]}, domain=ML, error="X must be [N, 2]")]


def _dict_vectorizer() -> list[Case]:
    words, numbers = {"string_vocabulary": ["a", "b", "c", "d"]}, {"int64_vocabulary": [9, 8, 3, 1]}
    found = [
        Case("DictVectorizer", 1, [Map({"b": 1.5, "a": -2.0, "d": 3.0}, np.float32)], words, domain=ML),
        Case("DictVectorizer", 1, [Map({3: 1.5, 1: -2.0, 9: 3.0}, np.float32)], numbers, domain=ML),
    ]
    found.append(Case("DictVectorizer", 1, [Map({"b": 4, "a": -2, "z": 3}, np.int64)], words, domain=ML,
                      expected=[np.array([[-2, 4, 0, 0]], np.int64)], reason=UNFED.format("int64")))
    found.append(Case("DictVectorizer", 1, [Map({}, np.float32)], words, domain=ML,
                      expected=[np.zeros((1, 4), np.float32)],
                      reason="onnxruntime's Python API refuses an empty map; the spec's value by hand"))
    found.append(Case("DictVectorizer", 1, [Map({"b": 1.5, "d": 0.25}, np.float64)], words, domain=ML,
                      expected=[np.array([[0, 1.5, 0, 0.25]], np.float64)], reason=UNFED.format("double")))
    found.append(Case("DictVectorizer", 1, [Map({3: 1.5, 9: 0.25}, np.float64)], numbers, domain=ML,
                      expected=[np.array([[0.25, 0, 1.5, 0]], np.float64)], reason=UNFED.format("double")))
    found.append(Case("DictVectorizer", 1, [Map({3: "x", 9: "y"}, object)], numbers, domain=ML,
                      expected=[strings("y", "", "x", "").reshape(1, 4)], reason=UNFED.format("string")))
    return found


def _cast_map() -> list[Case]:
    found = []
    floats = Map({3: 1.5, 0: -2.25, 5: 7.0}, np.float32)
    for cast_to in ("TO_FLOAT", "TO_INT64", "TO_STRING"):
        found.append(Case("CastMap", 1, [floats], {"cast_to": cast_to}, domain=ML))
        found.append(Case("CastMap", 1, [floats], {"cast_to": cast_to, "map_form": "SPARSE", "max_map": 7},
                          domain=ML))
    texts = Map({3: "1.5", 0: "-2", 5: "7"}, object)
    for attrs, want in (({"cast_to": "TO_FLOAT"}, np.array([[-2, 1.5, 7]], np.float32)),
                        ({"cast_to": "TO_INT64", "map_form": "SPARSE", "max_map": 6},
                         np.array([[-2, 0, 0, 1, 0, 7]], np.int64)),
                        ({"cast_to": "TO_STRING", "map_form": "SPARSE", "max_map": 4},
                         strings("-2", "0.f", "0.f", "1.5").reshape(1, 4))):
        found.append(Case("CastMap", 1, [texts], attrs, domain=ML, expected=[want], reason=UNFED.format("string")))
    return found


def cases() -> list[Case]:
    return [*_zipmap(), *_dict_vectorizer(), *_cast_map()]
