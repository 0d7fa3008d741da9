"""A cause made of several lines (another library's list, dump or traceback) is summarized into one line that
ends where a sentence ends, never cut after its first line."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from explorer.errors import failure_text, summarize
from explorer.executor import ops

ONNX_REFERENCE_LIST = ("No registered implementation for operator 'Frob' and domain 'ai.onnx.ml' in\n"
                       "ArrayFeatureExtractor, Binarizer, DictVectorizer, FeatureVectorizer,\n"
                       "Imputer, LabelEncoder, LinearClassifier, LinearRegressor")


def test_lines_are_joined_into_one_sentence():
    assert summarize(ONNX_REFERENCE_LIST) == (
        "No registered implementation for operator 'Frob' and domain 'ai.onnx.ml' in ArrayFeatureExtractor, "
        "Binarizer, DictVectorizer, FeatureVectorizer, Imputer, LabelEncoder, LinearClassifier, LinearRegressor")


def test_a_long_cause_keeps_its_whole_sentences_and_says_what_it_left():
    text = "The first sentence is short.\n" + "Then a list follows: " + ", ".join(f"item{i}" for i in range(200))
    got = summarize(text, limit=100)
    assert got.startswith("The first sentence is short. (and ")
    assert got.endswith(f"{len(' '.join(text.split())) - len('The first sentence is short.'):,} more characters)")


def test_a_long_first_sentence_stops_between_words_and_says_so():
    text = "values " + " ".join(f"v{i}," for i in range(300))
    got = summarize(text, limit=80)
    kept = got.split(" (and ")[0]
    assert len(kept) <= 80 and not kept.endswith(",") and kept.split()[-1].startswith("v")
    assert got.endswith("more characters)")


def test_an_unexpected_failure_is_summarized_not_cut():
    assert failure_text(ValueError("a\nb.")) == "unexpected ValueError: a b."


def test_an_operator_onnx_reference_lacks_is_named_with_the_whole_list(monkeypatch):
    monkeypatch.setattr(ops, "REFERENCE_FALLBACK", ops.REFERENCE_FALLBACK | {("ai.onnx.ml", "Frob")})
    node = h.make_node("Frob", ["x"], ["y"], name="n", domain="ai.onnx.ml")
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 3)])
    with pytest.raises(explorer.UnsupportedOperatorError) as info:
        explorer.run(model, {"x": np.zeros(2, np.float32)})
    message = str(info.value)
    assert "\n" not in message and message.rstrip().endswith("TreeEnsembleRegressor")


def test_a_kernel_failing_with_several_lines_is_reported_on_one(monkeypatch):
    def broken(op):
        def run(args):
            raise ValueError("first line\nsecond line.")
        return run

    monkeypatch.setattr(ops, "KERNELS", {**ops.KERNELS, ("", "Relu"): broken})
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="n")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    with pytest.raises(explorer.ExecutionError) as info:
        explorer.run(model, {"x": np.zeros(2, np.float32)})
    assert "ValueError: first line second line. (inputs:" in str(info.value)
