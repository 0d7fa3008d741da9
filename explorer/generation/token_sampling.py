"""explorer's seeded sampling, as nodes of the generation loop's body. Each step, each row's last logits go
through transformers' warpers in its order: divided by the temperature (when not 1), top-k (scores below the k-th
largest set to -inf; k capped at the vocabulary), top-p (sorted ascending, the tokens whose cumulative
probability is at most 1 - top_p set to -inf, the most probable one always kept). Then the draw: with
`u = numpy.random.default_rng(seed).random((max_new_tokens, rows))` (float64, given to the loop model as
`sample.draws`), row r at step t takes the first token, in id order, whose cumulative probability (softmax of the
filtered scores, summed in float64) exceeds u[t, r] × the total. transformers draws with torch's generator, which
NumPy cannot reproduce: the same seed gives other tokens there, by design; the filters are the same."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto

from .parts import LAST_LOGITS, STEP, const, node
from .strategy import Sampling

DRAWS = "sample.draws"  # [max_new_tokens, rows] float64: the loop model's input
DRAWN = "gen.drawn"  # [rows]: each row's drawn token


def draws(seed: int, steps: int, rows: int) -> np.ndarray:
    """The uniform numbers of a generation: [steps, rows] from NumPy's default_rng(seed)."""
    return np.random.default_rng(seed).random((steps, rows))


def _top_k(scores: str, top_k: int) -> tuple[list[onnx.NodeProto], str]:
    nodes = [const("sample.k_wanted", np.array([top_k], np.int64)),
             node("Min", ["sample.k_wanted", "sample.vocab"], "sample.k"),
             onnx.helper.make_node("TopK", [scores, "sample.k"], ["sample.top_values", "sample.top_indices"],
                                   name="sample/top_k", axis=-1),
             node("Sub", ["sample.k", "sample.one"], "sample.k_last"),
             node("Gather", ["sample.top_values", "sample.k_last"], "sample.kth", axis=1),
             node("Less", [scores, "sample.kth"], "sample.below_k"),
             node("Where", ["sample.below_k", "sample.minus_inf", scores], "sample.top_k_scores")]
    return nodes, "sample.top_k_scores"


def _top_p(scores: str, top_p: float) -> tuple[list[onnx.NodeProto], str]:
    nodes = [onnx.helper.make_node("TopK", [scores, "sample.vocab"], ["sample.ascending", "sample.order"],
                                   name="sample/sort", axis=-1, largest=0, sorted=1),
             node("Softmax", ["sample.ascending"], "sample.sorted_probs", axis=-1),
             node("CumSum", ["sample.sorted_probs", "sample.axis1"], "sample.sorted_cumulative"),
             const("sample.mass_out", np.array(1.0 - top_p, np.float32)),
             node("LessOrEqual", ["sample.sorted_cumulative", "sample.mass_out"], "sample.sorted_out"),
             node("Sub", ["sample.vocab", "sample.one"], "sample.last"),
             node("Range", ["sample.zero_scalar", "sample.vocab_scalar", "sample.one_scalar"], "sample.positions"),
             node("Less", ["sample.positions", "sample.last"], "sample.not_last"),
             node("And", ["sample.sorted_out", "sample.not_last"], "sample.sorted_removed"),
             node("ScatterElements", ["sample.sorted_removed", "sample.order", "sample.sorted_removed"],
                  "sample.removed", axis=1),
             node("Where", ["sample.removed", "sample.minus_inf", scores], "sample.top_p_scores")]
    return nodes, "sample.top_p_scores"


def sampling_nodes(sampling: Sampling) -> list[onnx.NodeProto]:
    """The body's nodes from LAST_LOGITS to DRAWN (see the module docstring)."""
    nodes = [node("Cast", [LAST_LOGITS], "sample.logits", to=TensorProto.FLOAT),
             const("sample.one", np.array([1], np.int64)),
             const("sample.axis1", np.array(1, np.int64)),
             const("sample.minus_inf", np.array(-np.inf, np.float32)),
             node("Shape", ["sample.logits"], "sample.shape"),
             node("Gather", ["sample.shape", "sample.one"], "sample.vocab", axis=0),
             const("sample.zero_scalar", np.array(0, np.int64)),
             const("sample.one_scalar", np.array(1, np.int64)),
             node("Squeeze", ["sample.vocab"], "sample.vocab_scalar")]
    scores = "sample.logits"
    if sampling.temperature != 1.0:
        nodes += [const("sample.temperature", np.array(sampling.temperature, np.float32)),
                  node("Div", [scores, "sample.temperature"], "sample.tempered")]
        scores = "sample.tempered"
    if sampling.top_k > 0:
        more, scores = _top_k(scores, sampling.top_k)
        nodes += more
    if sampling.top_p < 1.0:
        more, scores = _top_p(scores, sampling.top_p)
        nodes += more
    nodes += [node("Softmax", [scores], "sample.probs", axis=-1),
              node("Cast", ["sample.probs"], "sample.probs64", to=TensorProto.DOUBLE),
              node("CumSum", ["sample.probs64", "sample.axis1"], "sample.cumulative"),
              const("sample.last_start", np.array([-1], np.int64)),
              const("sample.last_end", np.array([np.iinfo(np.int64).max], np.int64)),
              node("Slice", ["sample.cumulative", "sample.last_start", "sample.last_end", "sample.one"],
                   "sample.total"),
              node("Gather", [DRAWS, STEP], "sample.u", axis=0),
              node("Unsqueeze", ["sample.u", "sample.one"], "sample.u_column"),
              node("Mul", ["sample.u_column", "sample.total"], "sample.threshold"),
              node("LessOrEqual", ["sample.cumulative", "sample.threshold"], "sample.passed"),
              node("Cast", ["sample.passed"], "sample.passed_count", to=TensorProto.INT64),
              node("ReduceSum", ["sample.passed_count", "sample.one"], "sample.index", keepdims=0),
              node("Sub", ["sample.vocab_scalar", "sample.one_scalar"], "sample.last_token"),
              node("Min", ["sample.index", "sample.last_token"], DRAWN)]
    return nodes
