"""transformers' beam search (BeamSearchScorer, its defaults) as nodes of the generation loop, beams along the
batch axis: rows are batch entries × beams, each entry's prompt repeated for its beams.

Each step: the log-softmax of every row's last logits plus the row's beam score; per entry, the
max(2, 1 + end-of-sequence ids) × beams best (beam, token) candidates over its beams × vocabulary; the first `beams`
candidates whose token is not an end-of-sequence id continue (their rows, `gen.parents`, reorder the caches and
the generated tokens); a candidate with an end-of-sequence id among the first `beams` ends a hypothesis scored
sum of log-probabilities / generated length ** length_penalty (its length counting that token), kept when among
the entry's `beams` best. An entry is done when it holds `beams` hypotheses and (unless early_stopping) the best
candidate's score over the current length cannot beat the worst of them; a done entry's rows go on with the pad
id and a score of 0. The loop stops when every entry is done or after max_new_tokens. After it, each entry's open
beams join its hypotheses (scored over the steps run) and the `num_return_sequences` best are returned.

Hypotheses are held in fixed buffers ([entries, beams, max_new_tokens] tokens, their lengths, their scores in
float64 as transformers computes them in Python; an empty slot scores -inf). Ties between equal scores keep the
earlier hypothesis first."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import onnx
from onnx import TensorProto, helper

from .decoder import CachePair
from .parts import LAST_LOGITS, STEP, TOKEN, TOKENS, const, node
from .strategy import BeamSearch

BEAM_SCORES, GENERATED = "gen.beam_scores", "gen.generated"
HYP_SCORES, HYP_TOKENS, HYP_LENGTHS, DONE = "gen.hyp_scores", "gen.hyp_tokens", "gen.hyp_lengths", "gen.done"
PARENTS = "gen.parents"  # [rows]: the row each new row continues
STATE = {  # carried name -> (the body output feeding it next, element type, rank)
    BEAM_SCORES: ("gen.next_beam_scores", TensorProto.FLOAT, 1),
    GENERATED: ("gen.next_generated", TensorProto.INT64, 2),
    HYP_SCORES: ("gen.next_hyp_scores", TensorProto.DOUBLE, 2),
    HYP_TOKENS: ("gen.next_hyp_tokens", TensorProto.INT64, 3),
    HYP_LENGTHS: ("gen.next_hyp_lengths", TensorProto.INT64, 2),
    DONE: ("gen.next_done", TensorProto.BOOL, 1),
}
BEAM_PARENTS = "beam_parents"  # the loop's scan output of PARENTS: [steps, rows]
SEQUENCES, SEQUENCE_LENGTHS, SEQUENCE_SCORES = "sequences", "sequence_lengths", "sequence_scores"


def start_state(entries: int, search: BeamSearch, max_new_tokens: int, pad: int) -> dict[str, np.ndarray]:
    """The carried beam state before the first step: only each entry's first beam open (the others -1e9, as
    transformers starts them), no hypotheses."""
    beams = search.beams
    scores = np.zeros((entries, beams), np.float32)
    scores[:, 1:] = np.float32(-1e9)
    return {BEAM_SCORES: scores.reshape(-1), GENERATED: np.full((entries * beams, max_new_tokens), pad, np.int64),
            HYP_SCORES: np.full((entries, beams), -np.inf), HYP_TOKENS: np.full((entries, beams, max_new_tokens), pad,
                                                                                np.int64),
            HYP_LENGTHS: np.zeros((entries, beams), np.int64), DONE: np.zeros(entries, bool)}


def _candidates(search: BeamSearch, eos: list[int]) -> list[onnx.NodeProto]:
    """Each entry's best (beam, token) candidates: b.cand_scores, b.cand_token, b.cand_row, b.cand_eos [entries,
    candidates]."""
    beams = search.beams
    kept = max(2, 1 + len(eos)) * beams
    nodes = [node("Cast", [LAST_LOGITS], "b.logits", to=TensorProto.FLOAT),
             node("LogSoftmax", ["b.logits"], "b.scores", axis=-1),
             node("Unsqueeze", [BEAM_SCORES, "b.axis1"], "b.beam_column"),
             node("Add", ["b.scores", "b.beam_column"], "b.total"),
             node("Shape", ["b.total"], "b.shape"),
             node("Gather", ["b.shape", "b.one_scalar"], "b.vocab", axis=0),
             node("Mul", ["b.vocab", "b.beams"], "b.width"),
             node("Unsqueeze", ["b.width", "b.axis0"], "b.width_1d"),
             const("b.minus_one", np.array([-1], np.int64)),
             node("Concat", ["b.minus_one", "b.width_1d"], "b.flat_shape", axis=0),
             node("Reshape", ["b.total", "b.flat_shape"], "b.flat"),
             const("b.kept", np.array([kept], np.int64)),
             helper.make_node("TopK", ["b.flat", "b.kept"], ["b.cand_scores", "b.cand_index"], name="b/candidates",
                              axis=1),
             node("Mod", ["b.cand_index", "b.vocab"], "b.cand_token"),
             node("Div", ["b.cand_index", "b.vocab"], "b.cand_beam"),
             node("Shape", ["b.flat"], "b.flat_dims"),
             node("Gather", ["b.flat_dims", "b.zero_scalar"], "b.entries", axis=0),
             node("Range", ["b.zero_scalar", "b.entries", "b.one_scalar"], "b.entry"),
             node("Mul", ["b.entry", "b.beams"], "b.entry_row"),
             node("Unsqueeze", ["b.entry_row", "b.axis1"], "b.first_row"),
             node("Add", ["b.cand_beam", "b.first_row"], "b.cand_row")]
    ended = "b.is_eos0"
    for k, token in enumerate(eos or [-1]):  # no end-of-sequence id: no candidate ends
        nodes += [const(f"b.eos{k}", np.array(token, np.int64)),
                  node("Equal", ["b.cand_token", f"b.eos{k}"], f"b.is_eos{k}")]
        if k:
            nodes.append(node("Or", [ended, f"b.is_eos{k}"], f"b.ends{k}"))
            ended = f"b.ends{k}"
    nodes.append(node("Identity", [ended], "b.cand_eos"))
    return nodes + [const("b.rank", np.arange(kept, dtype=np.int64)), const("b.kept_scalar", np.array(kept, np.int64))]


def _continued(pad: int) -> list[onnx.NodeProto]:
    """The first `beams` candidates that do not end: TOKEN, PARENTS and the next beam scores (a done entry's
    rows: the pad id, its first row, 0)."""
    return [node("Cast", ["b.cand_eos"], "b.cand_eos_int", to=TensorProto.INT64),
            node("Mul", ["b.cand_eos_int", "b.kept_scalar"], "b.eos_last"),
            node("Add", ["b.eos_last", "b.rank"], "b.order_key"),
            helper.make_node("TopK", ["b.order_key", "b.beams_1d"], ["b.order_kept", "b.pick"], name="b/continued",
                             axis=1, largest=0, sorted=1),
            node("GatherElements", ["b.cand_scores", "b.pick"], "b.pick_scores", axis=1),
            node("GatherElements", ["b.cand_token", "b.pick"], "b.pick_tokens", axis=1),
            node("GatherElements", ["b.cand_row", "b.pick"], "b.pick_rows", axis=1),
            node("Unsqueeze", [DONE, "b.axis1"], "b.done_column"),
            const("b.zero_score", np.array(0.0, np.float32)),
            const("b.pad", np.array(pad, np.int64)),
            node("Where", ["b.done_column", "b.zero_score", "b.pick_scores"], "b.chosen_scores"),
            node("Where", ["b.done_column", "b.pad", "b.pick_tokens"], "b.chosen_tokens"),
            node("Where", ["b.done_column", "b.first_row", "b.pick_rows"], "b.chosen_rows"),
            node("Reshape", ["b.chosen_scores", "b.minus_one"], "gen.next_beam_scores"),
            node("Reshape", ["b.chosen_tokens", "b.minus_one"], TOKEN),
            node("Reshape", ["b.chosen_rows", "b.minus_one"], PARENTS),
            node("Shape", [GENERATED], "b.generated_shape"),
            node("Gather", ["b.generated_shape", "b.one_scalar"], "b.width_new", axis=0),
            node("Range", ["b.zero_scalar", "b.width_new", "b.one_scalar"], "b.columns"),
            node("Equal", ["b.columns", STEP], "b.at_step"),
            node("Gather", [GENERATED, PARENTS], "b.generated_before", axis=0),
            node("Unsqueeze", [TOKEN, "b.axis1"], "b.token_column"),
            node("Where", ["b.at_step", "b.token_column", "b.generated_before"], "gen.next_generated")]


def _hypotheses(search: BeamSearch) -> list[onnx.NodeProto]:
    """Candidates among the first `beams` that end join the entry's hypotheses, the best `beams` kept."""
    first = ["b.zero_1d", "b.beams_1d", "b.axis1_1d"]
    nodes = [const("b.zero_1d", np.array([0], np.int64)), const("b.axis1_1d", np.array([1], np.int64))]
    for name in ("cand_eos", "cand_scores", "cand_row", "cand_token"):
        nodes.append(node("Slice", [f"b.{name}", *first], f"b.top_{name.removeprefix('cand_')}"))
    nodes += [node("Not", ["b.done_column"], "b.open_column"),
              node("And", ["b.top_eos", "b.open_column"], "b.ends_now"),
              node("Add", [STEP, "b.one_scalar"], "b.length"),
              node("Cast", ["b.length"], "b.length_float", to=TensorProto.DOUBLE),
              const("b.length_penalty", np.array(search.length_penalty, np.float64)),
              node("Pow", ["b.length_float", "b.length_penalty"], "b.denominator"),
              node("Cast", ["b.top_scores"], "b.top_scores64", to=TensorProto.DOUBLE),
              node("Div", ["b.top_scores64", "b.denominator"], "b.scored"),
              const("b.no_hypothesis", np.array(-np.inf, np.float64)),
              node("Where", ["b.ends_now", "b.scored", "b.no_hypothesis"], "b.new_scores"),
              node("Gather", [GENERATED, "b.top_row"], "b.new_before", axis=0),
              node("Unsqueeze", ["b.top_token", "b.axis2"], "b.end_column"),
              node("Where", ["b.at_step", "b.end_column", "b.new_before"], "b.new_tokens"),
              node("Shape", ["b.new_scores"], "b.hyp_shape"),
              node("Expand", ["b.length", "b.hyp_shape"], "b.new_lengths"),
              node("Concat", [HYP_SCORES, "b.new_scores"], "b.all_scores", axis=1),
              node("Concat", [HYP_TOKENS, "b.new_tokens"], "b.all_tokens", axis=1),
              node("Concat", [HYP_LENGTHS, "b.new_lengths"], "b.all_lengths", axis=1),
              helper.make_node("TopK", ["b.all_scores", "b.beams_1d"], ["gen.next_hyp_scores", "b.best"],
                               name="b/hypotheses", axis=1),
              node("GatherElements", ["b.all_lengths", "b.best"], "gen.next_hyp_lengths", axis=1),
              node("Unsqueeze", ["b.best", "b.axis2"], "b.best_column"),
              node("Shape", ["b.new_tokens"], "b.tokens_shape"),
              node("Expand", ["b.best_column", "b.tokens_shape"], "b.best_tokens_index"),
              node("GatherElements", ["b.all_tokens", "b.best_tokens_index"], "gen.next_hyp_tokens", axis=1)]
    return nodes


def _done(search: BeamSearch) -> list[onnx.NodeProto]:
    """An entry is done once it holds `beams` hypotheses and (unless early_stopping) none of its open beams can
    beat the worst; the loop goes on while an entry is not done."""
    beams = search.beams
    nodes = [node("IsInf", ["gen.next_hyp_scores"], "b.empty_slot", detect_positive=0),
             node("Not", ["b.empty_slot"], "b.held"),
             node("Cast", ["b.held"], "b.held_int", to=TensorProto.INT64),
             node("ReduceSum", ["b.held_int", "b.axis1_1d"], "b.held_count", keepdims=1),
             node("Equal", ["b.held_count", "b.beams"], "b.full")]
    stop = "b.full"
    if not search.early_stopping:
        nodes += [const("b.worst_start", np.array([beams - 1], np.int64)),
                  node("Slice", ["gen.next_hyp_scores", "b.worst_start", "b.beams_1d", "b.axis1_1d"], "b.worst"),
                  node("Slice", ["b.cand_scores", "b.zero_1d", "b.axis1_1d", "b.axis1_1d"], "b.best_score"),
                  node("Cast", ["b.best_score"], "b.best_score64", to=TensorProto.DOUBLE),
                  node("Div", ["b.best_score64", "b.denominator"], "b.highest"),
                  node("GreaterOrEqual", ["b.worst", "b.highest"], "b.beaten"),
                  node("And", ["b.full", "b.beaten"], "b.stop")]
        stop = "b.stop"
    return nodes + [node("Reshape", [stop, "b.minus_one"], "b.stops"),
                    node("Or", [DONE, "b.stops"], "gen.next_done"),
                    node("Not", ["gen.next_done"], "b.open"),
                    node("Cast", ["b.open"], "b.open_int", to=TensorProto.INT64),
                    node("ReduceMax", ["b.open_int"], "b.any_open", keepdims=0),
                    node("Cast", ["b.any_open"], "gen.cond_out", to=TensorProto.BOOL)]


def beam_step_nodes(search: BeamSearch, pad: int, eos: Iterable[int]) -> list[onnx.NodeProto]:
    """The body's nodes from LAST_LOGITS to TOKEN, PARENTS, the next beam state and `gen.cond_out`."""
    nodes = [const("b.beams", np.array(search.beams, np.int64)), const("b.beams_1d", np.array([search.beams], np.int64)),
             const("b.zero_scalar", np.array(0, np.int64)), const("b.one_scalar", np.array(1, np.int64)),
             const("b.axis0", np.array([0], np.int64)), const("b.axis1", np.array([1], np.int64)),
             const("b.axis2", np.array([2], np.int64))]
    return nodes + _candidates(search, list(eos)) + _continued(pad) + _hypotheses(search) + _done(search)


def reorder_nodes(caches: list[CachePair]) -> list[onnx.NodeProto]:
    """Each cache the next step reads, its rows reordered by PARENTS (`beam.<present>`); a cross-attention cache,
    the same for every beam of an entry, is kept."""
    return [node("Gather", [pair.present, PARENTS], f"beam.{pair.present}", axis=0)
            for pair in caches if not pair.static]


def final_nodes(search: BeamSearch) -> tuple[list[onnx.NodeProto], list[onnx.ValueInfoProto]]:
    """The main graph's nodes after the loop: each entry's open beams (unless done) join its hypotheses, scored
    over the steps run, and the `num_return_sequences` best are returned: SEQUENCES [entries, returned,
    max_new_tokens] (the pad id past each one's length), SEQUENCE_LENGTHS, SEQUENCE_SCORES (float32)."""
    final = {name: f"final.{name}" for name in STATE}
    nodes = [const("f.zero", np.array([0], np.int64)), const("f.axis1", np.array([1], np.int64)),
             const("f.axis2", np.array([2], np.int64)),
             const("f.returned", np.array([search.num_return_sequences], np.int64)),
             const("f.length_penalty", np.array(search.length_penalty, np.float64)),
             const("f.no_hypothesis", np.array(-np.inf, np.float64)),
             node("Shape", [TOKENS], "f.tokens_shape"),
             node("Gather", ["f.tokens_shape", "f.zero"], "f.steps", axis=0),
             node("Cast", ["f.steps"], "f.steps_float", to=TensorProto.DOUBLE),
             node("Pow", ["f.steps_float", "f.length_penalty"], "f.denominator"),
             node("Shape", [final[HYP_SCORES]], "f.hyp_shape"),
             node("Reshape", [final[BEAM_SCORES], "f.hyp_shape"], "f.beam_scores"),
             node("Cast", ["f.beam_scores"], "f.beam_scores64", to=TensorProto.DOUBLE),
             node("Div", ["f.beam_scores64", "f.denominator"], "f.open_scored"),
             node("Unsqueeze", [final[DONE], "f.axis1"], "f.done_column"),
             node("Where", ["f.done_column", "f.no_hypothesis", "f.open_scored"], "f.open_scores"),
             node("Shape", [final[HYP_TOKENS]], "f.tokens_dims"),
             node("Reshape", [final[GENERATED], "f.tokens_dims"], "f.open_tokens"),
             node("Expand", ["f.steps", "f.hyp_shape"], "f.open_lengths"),
             node("Concat", [final[HYP_SCORES], "f.open_scores"], "f.all_scores", axis=1),
             node("Concat", [final[HYP_TOKENS], "f.open_tokens"], "f.all_tokens", axis=1),
             node("Concat", [final[HYP_LENGTHS], "f.open_lengths"], "f.all_lengths", axis=1),
             helper.make_node("TopK", ["f.all_scores", "f.returned"], ["f.best_scores", "f.best"], name="f/best",
                              axis=1),
             node("Cast", ["f.best_scores"], SEQUENCE_SCORES, to=TensorProto.FLOAT),
             node("GatherElements", ["f.all_lengths", "f.best"], SEQUENCE_LENGTHS, axis=1),
             node("Unsqueeze", ["f.best", "f.axis2"], "f.best_column"),
             node("Shape", ["f.best_column"], "f.best_dims"),
             const("f.axis2_end", np.array([3], np.int64)),
             node("Slice", ["f.tokens_dims", "f.axis2", "f.axis2_end", "f.zero"], "f.width"),
             node("Slice", ["f.best_dims", "f.zero", "f.axis2", "f.zero"], "f.best_lead"),
             node("Concat", ["f.best_lead", "f.width"], "f.sequence_dims", axis=0),
             node("Expand", ["f.best_column", "f.sequence_dims"], "f.best_index"),
             node("GatherElements", ["f.all_tokens", "f.best_index"], SEQUENCES, axis=1)]
    outputs = [helper.make_tensor_value_info(SEQUENCES, TensorProto.INT64, ["batch_size", "returned", "max_new"]),
               helper.make_tensor_value_info(SEQUENCE_LENGTHS, TensorProto.INT64, ["batch_size", "returned"]),
               helper.make_tensor_value_info(SEQUENCE_SCORES, TensorProto.FLOAT, ["batch_size", "returned"])]
    return nodes, outputs
