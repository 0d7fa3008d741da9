"""Normalizer, Scaler, Binarizer, Imputer, OneHotEncoder, ArrayFeatureExtractor, FeatureVectorizer, LabelEncoder
(1, 2, 4) and CategoryMapper (explorer/executor/ops/ml_features.py, ml_labels.py): every norm, zero rows,
per-feature and shared offsets, NaN replaced, unknown categories, strings and numbers both ways, repeated and NaN
keys, tensor attributes, defaults, every input type. Types onnxruntime has no kernel for are judged on the values
as float32, or by hand."""
from __future__ import annotations

from typing import Any

import numpy as np
from onnx import numpy_helper

from .gen import rng
from .harness import Case, Cast

ML = "ai.onnx.ml"


def strings(*items: str) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = list(items)
    return out


def matrix(r: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    x = r.normal(size=shape) * 2
    return (np.round(x) if np.dtype(dtype).kind in "iu" else x).astype(dtype)


AS_FLOAT = Cast(np.float32, "whole values below 2**24 and halves are exact in float32, and 0 and 1 come back exact")


def _normalizer() -> list[Case]:
    found = []
    for norm in ("MAX", "L1", "L2"):
        for dtype in (np.float32, np.float64, np.int64, np.int32):
            r = rng("Normalizer", norm, np.dtype(dtype).name)
            x = matrix(r, (5, 4), dtype)
            x[2] = 0
            found.append(Case("Normalizer", 1, [x], {"norm": norm}, domain=ML))
        found.append(Case("Normalizer", 1, [matrix(r, (4,))], {"norm": norm}, domain=ML))
        found.append(Case("Normalizer", 1, [matrix(r, (2, 3, 2))], {"norm": norm}, domain=ML,
                          error="X must be [N, C] or [C]"))
    return found


def _scaler() -> list[Case]:
    found = []
    for dtype in (np.float32, np.float64, np.int64, np.int32):
        r = rng("Scaler", np.dtype(dtype).name)
        x = matrix(r, (4, 3), dtype)
        found.append(Case("Scaler", 1, [x], {"scale": [0.5, 2.0, -1.0], "offset": [1.0, 0.0, -0.5]}, domain=ML))
        found.append(Case("Scaler", 1, [x], {"scale": [3.0], "offset": [0.25]}, domain=ML))
    found.append(Case("Scaler", 1, [matrix(r, (3,))], {"scale": [1.0, 2.0, 3.0], "offset": [0.0, 1.0, 2.0]},
                      domain=ML))
    found.append(Case("Scaler", 1, [matrix(r, (4, 3))], {"scale": [1.0, 2.0], "offset": [0.0, 1.0]}, domain=ML,
                      error="need 1 or 3 values"))
    return found


def _binarizer() -> list[Case]:
    found = []
    for dtype in (np.float32, np.float64, np.int64, np.int32):
        r = rng("Binarizer", np.dtype(dtype).name)
        x = matrix(r, (3, 4), dtype)
        cast = {"cast": AS_FLOAT} if dtype != np.float32 else {}  # onnxruntime's Binarizer takes float only
        found.append(Case("Binarizer", 1, [x], {"threshold": 0.5}, domain=ML, **cast))
    found.append(Case("Binarizer", 1, [np.array([[0.5, 0.0, -1.0, 2.0]], np.float32)], {}, domain=ML))
    x = np.array([[np.nan, 1.0, -1.0]], np.float32)
    found.append(Case("Binarizer", 1, [x], {"threshold": 0.5}, domain=ML, expected=[np.array([[0, 1, 0]], np.float32)],
                      reason="onnxruntime refuses NaN; NaN > threshold is false, so 0"))
    return found


def _imputer() -> list[Case]:
    x = np.array([[1, np.nan, 3], [np.nan, 5, 0], [0, 0, np.nan]], np.float32)
    ints = np.array([[1, -1, 3], [-1, 5, 0]], np.int64)
    found = [
        Case("Imputer", 1, [x], {"imputed_value_floats": [10.0, 20.0, 30.0], "replaced_value_float": float("nan")},
             domain=ML),
        Case("Imputer", 1, [x], {"imputed_value_floats": [7.0], "replaced_value_float": 0.0}, domain=ML),
        Case("Imputer", 1, [x], {"imputed_value_floats": [7.0, 8.0], "replaced_value_float": 3.0}, domain=ML),
        Case("Imputer", 1, [ints], {"imputed_value_int64s": [9, 8, 7], "replaced_value_int64": -1}, domain=ML),
        Case("Imputer", 1, [ints], {"imputed_value_int64s": [4], "replaced_value_int64": 0}, domain=ML),
        Case("Imputer", 1, [x[0]], {"imputed_value_floats": [1.0, 2.0, 3.0], "replaced_value_float": 1.0},
             domain=ML),
    ]
    found.append(Case("Imputer", 1, [x.astype(np.float64)], {"imputed_value_floats": [10.0, 20.0, 30.0],
                                                             "replaced_value_float": float("nan")}, domain=ML,
                      expected=[np.array([[1, 20, 3], [10, 5, 0], [0, 0, 30]], np.float64)],
                      reason="onnxruntime's Imputer takes float and int64 only; the spec's value by hand"))
    found.append(Case("Imputer", 1, [ints.astype(np.int32)], {"imputed_value_int64s": [9, 8, 7],
                                                              "replaced_value_int64": -1}, domain=ML,
                      expected=[np.array([[1, 8, 3], [9, 5, 0]], np.int32)],
                      reason="onnxruntime's Imputer takes float and int64 only; the spec's value by hand"))
    found.append(Case("Imputer", 1, [x], {"imputed_value_int64s": [1]}, domain=ML,
                      error="takes imputed_value_floats"))
    return found


def _one_hot() -> list[Case]:
    numbers = {"cats_int64s": [4, 1, 7, 1]}  # a repeated category: its last position wins
    found = [
        Case("OneHotEncoder", 1, [np.array([[1, 4], [7, 9]], np.int64)], numbers, domain=ML),
        Case("OneHotEncoder", 1, [np.array([1.7, 4.2, -7.5, 9], np.float32)], numbers, domain=ML),
        Case("OneHotEncoder", 1, [np.array([[1.0, 7.9]], np.float64)], numbers, domain=ML),
        Case("OneHotEncoder", 1, [strings("b", "z", "a").reshape(3, 1)], {"cats_strings": ["a", "b", "c"]},
             domain=ML),
        Case("OneHotEncoder", 1, [strings("b", "a")], {"cats_strings": ["a", "b"], "zeros": 0}, domain=ML),
        Case("OneHotEncoder", 1, [strings("b", "q")], {"cats_strings": ["a", "b"], "zeros": 0}, domain=ML,
             error="unknown and zeros=0"),
    ]
    found.append(Case("OneHotEncoder", 1, [np.array([1, 7], np.int32)], numbers, domain=ML,
                      expected=[np.array([[0, 0, 0, 1], [0, 0, 1, 0]], np.float32)],
                      reason="onnxruntime's OneHotEncoder has no int32 kernel; the spec's value by hand"))
    return found


def _extractor_and_vectorizer() -> list[Case]:
    r = rng("ArrayFeatureExtractor")
    found = []
    for x in (matrix(r, (3, 5)), matrix(r, (2, 2, 4), np.int64), matrix(r, (6,), np.float64),
              strings("a", "b", "c", "d").reshape(2, 2), matrix(r, (2, 5), np.int32)):
        found.append(Case("ArrayFeatureExtractor", 1, [x, np.array([1, 0, 1], np.int64)], domain=ML))
    found.append(Case("ArrayFeatureExtractor", 1, [matrix(r, (3, 5)), np.array([[4], [2]], np.int64)], domain=ML))
    found.append(Case("ArrayFeatureExtractor", 1, [matrix(r, (3, 5)), np.array([5], np.int64)], domain=ML,
                      error="Y must hold indices in [0, 5)"))
    for dtype in (np.float32, np.int64, np.float64):  # onnxruntime binds every input to one type
        found.append(Case("FeatureVectorizer", 1, [matrix(r, (3, 2), dtype), matrix(r, (3, 4), dtype),
                                                   matrix(r, (3, 1), dtype)], {"inputdimensions": [2, 3, 2]},
                          domain=ML))
    found.append(Case("FeatureVectorizer", 1, [matrix(r, (2, 2, 2), np.int32)], {"inputdimensions": [5]}, domain=ML))
    return found


def _tensor(values: list[Any], dtype: Any, name: str) -> Any:
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def _label_encoders() -> list[Case]:
    words = strings("amy", "sally", "bob", "amy", "zed")
    found = [
        Case("LabelEncoder", 1, [words], {"classes_strings": ["bob", "amy", "sally"]}, domain=ML),
        Case("LabelEncoder", 1, [np.array([2, 0, 5], np.int64)], {"classes_strings": ["bob", "amy", "sally"],
                                                                  "default_string": "?"}, domain=ML),
        Case("LabelEncoder", 1, [words], {"classes_strings": ["bob"], "default_int64": 42}, domain=ML),
    ]
    floats = np.array([1.5, 0.25, 3.0, 7.0, 2.0], np.float32)
    pairs = [("keys_strings", ["amy", "bob"], words), ("keys_int64s", [5, -3], np.array([5, 0, -3], np.int64)),
             ("keys_floats", [1.5, 0.25, 3.0], floats)]
    outs = [("values_strings", ["x", "y", "z"]), ("values_int64s", [10, 20, 30]), ("values_floats", [0.5, -1, 8])]
    defaults = {"default_string": "none", "default_int64": -9, "default_float": 3.25}
    for version in (2, 4):
        for key_name, keys, x in pairs:
            for value_name, values in outs:
                attrs = {key_name: keys, value_name: values[:len(keys)]}
                found.append(Case("LabelEncoder", version, [x], attrs, domain=ML))
                found.append(Case("LabelEncoder", version, [x], {**attrs, **defaults}, domain=ML))
    keys = _tensor([3, -1, 7], np.int32, "keys")
    special = np.array([np.nan, -0.0, 0.0, 1.0], np.float32)
    floats_keys = {"keys_floats": [float("nan"), 0.0], "values_int64s": [1, 2]}
    unkernelled = "onnxruntime has no LabelEncoder-4 kernel for these types; the spec's value by hand"
    found += [
        Case("LabelEncoder", 2, [special], floats_keys, domain=ML, expected=[np.array([1, -1, 2, -1], np.int64)],
             reason="the spec compares float keys bit by bit (NaN matches its own bits, -0.0 is not 0.0); "
                    "onnxruntime matches no NaN and -0.0 to 0.0"),
        Case("LabelEncoder", 4, [special], floats_keys, domain=ML),
        Case("LabelEncoder", 4, [np.array([7, 3, 0], np.int32)],
             {"keys_tensor": keys, "values_tensor": _tensor([0.5, 1.5, 2.5], np.float64, "values"),
              "default_tensor": _tensor([-4.0], np.float64, "default")}, domain=ML,
             expected=[np.array([2.5, 0.5, -4.0])], reason=unkernelled),
        Case("LabelEncoder", 4, [np.array([7, 3, 0], np.int16)],
             {"keys_tensor": _tensor([3, 7], np.int16, "k"), "values_tensor": _tensor(["p", "q"], object, "v"),
              "default_tensor": _tensor(["r"], object, "d")}, domain=ML,
             expected=[strings("q", "p", "r")], reason=unkernelled),
        Case("LabelEncoder", 4, [strings("p", "q")],
             {"keys_tensor": _tensor(["q"], object, "k"), "values_tensor": _tensor([11], np.int16, "v")},
             domain=ML),
        Case("LabelEncoder", 4, [np.array([1.0, 2.0, 3.0], np.float64)],
             {"keys_tensor": _tensor([2.0, 1.0], np.float64, "k"), "values_tensor": _tensor([5, 6], np.int32, "v"),
              "default_tensor": _tensor([0], np.int32, "d")}, domain=ML,
             expected=[np.array([6, 5, 0], np.int32)], reason=unkernelled),
        Case("LabelEncoder", 4, [np.array([1.0, 2.0, 3.0], np.float64)],
             {"keys_tensor": _tensor([2.0, 1.0], np.float64, "k"), "values_tensor": _tensor([0.5, 6], np.float64, "v"),
              "default_tensor": _tensor([-1.0], np.float64, "d")}, domain=ML),
        Case("LabelEncoder", 4, [words], {"keys_strings": ["amy", "amy"], "values_int64s": [1, 2]}, domain=ML,
             expected=[np.array([2, -1, -1, 2, -1], np.int64)],
             reason="the spec: a repeated key's last value wins (onnxruntime keeps the first)"),
        Case("LabelEncoder", 4, [words], {"keys_strings": ["amy"], "keys_tensor": _tensor(["bob"], object, "k"),
                                          "values_int64s": [1]}, domain=ML, error="exactly one of the keys_*"),
    ]
    return found


def _category_mapper() -> list[Case]:
    cats = {"cats_strings": ["cat", "dog", "eel"], "cats_int64s": [1, 2, 3]}
    return [Case("CategoryMapper", 1, [strings("dog", "eel", "yak").reshape(1, 3)], cats, domain=ML),
            Case("CategoryMapper", 1, [np.array([[3, 9], [1, 2]], np.int64)], cats, domain=ML),
            Case("CategoryMapper", 1, [strings("yak")], {**cats, "default_int64": 99}, domain=ML),
            Case("CategoryMapper", 1, [np.array([0], np.int64)], {**cats, "default_string": "none"}, domain=ML)]


def cases() -> list[Case]:
    return [*_normalizer(), *_scaler(), *_binarizer(), *_imputer(), *_one_hot(), *_extractor_and_vectorizer(),
            *_label_encoders(), *_category_mapper()]
