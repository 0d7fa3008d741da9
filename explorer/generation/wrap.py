"""The generation loop as an ONNX model: a Loop node `generate` whose body is the decoder (its nodes, or an If
between the first step's decoder and the decoder with past) followed by the choice of the next token, so that one
run records every decode step as an iteration, every node of the decoder at every step.

Each iteration: the decoder on the carried ids, mask, positions and caches; the last position's logits; the
greedy or drawn token (the pad id once a sequence has ended; sampling.py); the next step's ids (the token), mask
(one more position of ones), positions (the mask's cumulative sum less one, 1 where masked, the last one: what
transformers and optimum feed) and caches (the `present.*` outputs); the loop goes on while a sequence has not
ended. Main graph inputs are the first step's values (`start.<name>`), `max_new_tokens` and `start.finished`
(and `sample.draws` when sampling); outputs `tokens` [steps, batch] and `step_logits` [steps, batch, vocab].
With beams (beams.py) the rows are batch entries × beams, the carried state is the beam search's, the caches are
reordered by the beams each step, and the main graph also returns `beam_parents` and the returned sequences."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import beams as beam_search
from .decoder import ENCODER_MASK, ENCODER_STATES, MERGED_FLAG, DecoderExport
from .parts import (
    COND,
    ENCODER_IDS,
    FINISHED,
    LAST_LOGITS,
    LOOP,
    START,
    STEP,
    STEP_LOGITS,
    TOKEN,
    TOKENS,
    const,
)
from .strategy import GREEDY, BeamSearch, Sampling, Strategy
from .token_sampling import DRAWN, DRAWS, sampling_nodes

__all__ = ["ENCODER_IDS", "FINISHED", "LOOP", "START", "STEP_LOGITS", "TOKEN", "TOKENS", "generation_model"]


def _rename(graph: onnx.GraphProto, mapping: dict[str, str]) -> None:
    """Renames values in `graph` and in the bodies nested in it (their references to outer values included)."""
    for node in graph.node:
        node.input[:] = [mapping.get(n, n) for n in node.input]
        node.output[:] = [mapping.get(n, n) for n in node.output]
        for attribute in node.attribute:
            for body in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                _rename(body, mapping)
    for value in (*graph.input, *graph.output, *graph.value_info):
        value.name = mapping.get(value.name, value.name)
    for tensor in graph.initializer:
        tensor.name = mapping.get(tensor.name, tensor.name)


def _hoist(graph: onnx.GraphProto, kept: dict[str, onnx.TensorProto], prefix: str) -> None:
    """Moves `graph`'s initializers into `kept` (the main graph's): one of the same name and bytes is shared,
    one of the same name and other bytes renamed with `prefix`."""
    mapping = {}
    for tensor in graph.initializer:
        other = kept.get(tensor.name)
        if other is not None and other.SerializeToString() != tensor.SerializeToString():
            mapping[tensor.name] = prefix + tensor.name
    _rename(graph, mapping)
    for tensor in graph.initializer:
        kept.setdefault(tensor.name, tensor)
    del graph.initializer[:]


def _branch(model: onnx.ModelProto, name: str, prefix: str, kept: dict[str, onnx.TensorProto]) -> onnx.GraphProto:
    """A decoder graph as an If branch: no inputs (it reads the body's), its outputs renamed with `prefix`."""
    graph = onnx.GraphProto()
    graph.CopyFrom(model.graph)
    graph.name = name
    _hoist(graph, kept, prefix)
    _rename(graph, {o.name: prefix + o.name for o in graph.output})
    del graph.input[:]
    return graph


def _elem_type(value: onnx.ValueInfoProto) -> int:
    return value.type.tensor_type.elem_type or TensorProto.FLOAT


def _int_type(export: DecoderExport, name: str) -> int:
    """The element type the decoder declares for an integer input (int64 unless it says int32)."""
    declared = next((i for i in export.later.graph.input if i.name == name), None)
    return (declared.type.tensor_type.elem_type if declared is not None else 0) or TensorProto.INT64


def _token(strategy: Strategy, pad: int, eos: Iterable[int]) -> list[onnx.NodeProto]:
    """Nodes from the last logits to each row's token, `gen.next_finished` and `gen.cond`: the greedy or drawn
    token (the pad id once a row ended), or the beam search's step (beams.py)."""
    node = helper.make_node
    if isinstance(strategy, BeamSearch):
        return beam_search.beam_step_nodes(strategy, pad, eos)
    if isinstance(strategy, Sampling):
        nodes, chosen = sampling_nodes(strategy), DRAWN
    else:
        nodes, chosen = [node("ArgMax", [LAST_LOGITS], ["gen.argmax"], name="gen/argmax", axis=-1, keepdims=0)], \
            "gen.argmax"
    nodes += [const("gen.pad", np.array(pad, np.int64)),
              node("Where", [FINISHED, "gen.pad", chosen], [TOKEN], name="gen/token")]
    ended = FINISHED
    for k, token in enumerate(eos):
        nodes += [const(f"gen.eos{k}", np.array(token, np.int64)),
                  node("Equal", ["gen.token", f"gen.eos{k}"], [f"gen.is_eos{k}"], name=f"gen/is_eos{k}"),
                  node("Or", [ended, f"gen.is_eos{k}"], [f"gen.ended{k}"], name=f"gen/ended{k}")]
        ended = f"gen.ended{k}"
    nodes += [node("Identity", [ended], ["gen.next_finished"], name="gen/next_finished"),
              node("Not", ["gen.next_finished"], ["gen.running"], name="gen/running"),
              node("Cast", ["gen.running"], ["gen.running_int"], name="gen/running_int", to=TensorProto.INT64),
              node("ReduceMax", ["gen.running_int"], ["gen.any_running"], name="gen/any_running", keepdims=0),
              node("Cast", ["gen.any_running"], ["gen.cond_out"], name="gen/cond_out", to=TensorProto.BOOL)]
    return nodes


def _choice(export: DecoderExport, pad: int, eos: Iterable[int], strategy: Strategy) -> list[onnx.NodeProto]:
    """Nodes after the decoder: the last logits, each row's token (`_token`), the next ids, mask and positions
    (in int64, cast to the types the decoder declares); with beams, the caches reordered by the beams."""
    node = helper.make_node
    nodes = [
        const("gen.minus_one", np.array(-1, np.int64)),
        const("gen.one", np.array(1, np.int64)),
        const("gen.axis1", np.array([1], np.int64)),
        node("Gather", [export.logits_name(), "gen.minus_one"], [LAST_LOGITS], name="gen/last_logits", axis=1),
        *_token(strategy, pad, eos),
        node("Unsqueeze", [TOKEN, "gen.axis1"], ["gen.token_column"], name="gen/token_column"),
        node("Cast", ["gen.token_column"], ["gen.next_ids"], name="gen/next_ids", to=_int_type(export, "input_ids")),
    ]
    if isinstance(strategy, BeamSearch):
        nodes += beam_search.reorder_nodes(export.caches)
    positions = _int_type(export, "position_ids")
    if export.has_input("attention_mask"):
        nodes += [node("Cast", ["attention_mask"], ["gen.mask"], name="gen/mask", to=TensorProto.INT64),
                  node("Shape", ["gen.token_column"], ["gen.ids_shape"], name="gen/ids_shape"),
                  node("ConstantOfShape", ["gen.ids_shape"], ["gen.ones"], name="gen/ones",
                       value=numpy_helper.from_array(np.array([1], np.int64))),
                  node("Concat", ["gen.mask", "gen.ones"], ["gen.longer_mask"], name="gen/longer_mask", axis=1),
                  node("Cast", ["gen.longer_mask"], ["gen.next_mask"], name="gen/next_mask",
                       to=_int_type(export, "attention_mask"))]
        if export.has_input("position_ids"):
            nodes += [const("gen.zero", np.array(0, np.int64)),
                      node("CumSum", ["gen.longer_mask", "gen.one"], ["gen.cumsum"], name="gen/cumsum"),
                      node("Sub", ["gen.cumsum", "gen.one"], ["gen.counted"], name="gen/counted"),
                      node("Equal", ["gen.longer_mask", "gen.zero"], ["gen.masked"], name="gen/masked"),
                      node("Where", ["gen.masked", "gen.one", "gen.counted"], ["gen.positions"],
                           name="gen/positions"),
                      const("gen.last_start", np.array([-1], np.int64)),
                      const("gen.last_end", np.array([np.iinfo(np.int64).max], np.int64)),
                      node("Slice", ["gen.positions", "gen.last_start", "gen.last_end", "gen.axis1"],
                           ["gen.last_positions"], name="gen/last_positions"),
                      node("Cast", ["gen.last_positions"], ["gen.next_positions"], name="gen/next_positions",
                           to=positions)]
    elif export.has_input("position_ids"):
        nodes += [node("Cast", ["position_ids"], ["gen.positions"], name="gen/positions", to=TensorProto.INT64),
                  node("Gather", ["gen.positions", "gen.minus_one"], ["gen.last_position"], name="gen/last_position",
                       axis=1),
                  node("Add", ["gen.last_position", "gen.one"], ["gen.next_position"], name="gen/next_position"),
                  node("Unsqueeze", ["gen.next_position", "gen.axis1"], ["gen.last_positions"],
                       name="gen/last_positions"),
                  node("Cast", ["gen.last_positions"], ["gen.next_positions"], name="gen/next_positions",
                       to=positions)]
    return nodes


def _open_shape(value: onnx.ValueInfoProto) -> onnx.ValueInfoProto:
    """`value` with every named dim but the batch's left open: a carried value grows from step to step, and
    onnxruntime holds values of one dim name to one size."""
    opened = onnx.ValueInfoProto()
    opened.CopyFrom(value)
    for axis, dim in enumerate(opened.type.tensor_type.shape.dim):
        if axis and dim.HasField("dim_param"):
            dim.Clear()
    return opened


def carried_names(export: DecoderExport, strategy: Strategy = GREEDY) -> list[str]:
    """The body's loop-carried inputs, in order: the decoder's inputs, then `gen.finished` (the beam state with
    beams)."""
    state = list(beam_search.STATE) if isinstance(strategy, BeamSearch) else [FINISHED]
    return [*export.input_names(), *state]


def next_of(export: DecoderExport, name: str, strategy: Strategy = GREEDY) -> str:
    """The body output that feeds carried input `name` at the next step (with beams, a cache reordered by the
    beams: `beam.<present>`)."""
    beams = isinstance(strategy, BeamSearch)
    presents = {pair.past: f"beam.{pair.present}" if beams and not pair.static else pair.present
                for pair in export.caches}
    fixed = {"input_ids": "gen.next_ids", "attention_mask": "gen.next_mask", "position_ids": "gen.next_positions",
             FINISHED: "gen.next_finished", **{k: v[0] for k, v in beam_search.STATE.items()}}
    if name in presents:
        return presents[name]
    if name in fixed:
        return fixed[name]
    raise onnx.checker.ValidationError(f"the generation loop does not know how to feed input {name!r} next")


def _state_info(name: str) -> onnx.ValueInfoProto:
    """A carried value the loop adds: `gen.finished`, or one of the beam state."""
    if name == FINISHED:
        return helper.make_tensor_value_info(FINISHED, TensorProto.BOOL, ["batch_size"])
    _, elem_type, rank = beam_search.STATE[name]
    return helper.make_tensor_value_info(name, elem_type, [None] * rank)


def _with_static_outputs(first: onnx.ModelProto, later: onnx.ModelProto,
                         static: list[tuple[str, str]]) -> onnx.ModelProto:
    """`later` returning what `first` returns, in `first`'s order: each static cache it does not return passed
    through from its past input (an If's branches return the same values)."""
    model = onnx.ModelProto()
    model.CopyFrom(later)
    graph = model.graph
    returned = {o.name for o in graph.output}
    for past, present in static:
        if present not in returned:
            graph.node.append(helper.make_node("Identity", [past], [present], name=f"keep/{present}"))
    declared = {o.name: o for o in (*first.graph.output, *graph.output)}
    outputs = [declared[o.name] for o in first.graph.output]
    del graph.output[:]
    graph.output.extend(outputs)
    return model


def _kept_caches(static: list[tuple[str, str]], prefix: str) -> onnx.NodeProto:
    """An If that gives each static cache: the first step's (renamed `prefix` + present), later its past."""
    def branch(name: str, sources: list[str]) -> onnx.GraphProto:
        nodes = [helper.make_node("Identity", [source], [f"{name}.{present}"], name=f"{name}/{present}")
                 for source, (_, present) in zip(sources, static)]
        return helper.make_graph(nodes, name, [], [helper.make_empty_tensor_value_info(f"{name}.{present}")
                                                   for _, present in static])

    return helper.make_node("If", ["gen.is_first"], [present for _, present in static], name="gen/cross_caches",
                            then_branch=branch("made", [prefix + present for _, present in static]),
                            else_branch=branch("kept", [past for past, _ in static]))


def _decoder_nodes(export: DecoderExport, kept: dict[str, onnx.TensorProto]
                   ) -> tuple[list[onnx.NodeProto], list[onnx.ValueInfoProto], list[onnx.ValueInfoProto]]:
    """The body's nodes that run the decoder (and keep the static caches), their value infos, and the values
    the decoder returns (the first step's when it returns more)."""
    later = export.later
    static = [(pair.past, pair.present) for pair in export.caches if pair.static]
    nodes = [const("gen.zero_step", np.array(0, np.int64)),
             helper.make_node("Equal", [STEP, "gen.zero_step"], ["gen.is_first"], name="gen/is_first")]
    if export.first is not None:
        later = _with_static_outputs(export.first, later, static)
        outputs = list(export.first.graph.output)
        then_graph = _branch(export.first, "first_step", "first.", kept)
        else_graph = _branch(later, "with_past", "later.", kept)
        nodes.append(helper.make_node("If", ["gen.is_first"], [o.name for o in outputs], name="decoder",
                                      then_branch=then_graph, else_branch=else_graph))
        return nodes, [], outputs
    graph = onnx.GraphProto()
    graph.CopyFrom(later.graph)
    _hoist(graph, kept, "")
    if static:  # a merged decoder's branch with past returns placeholders for them
        _rename(graph, {present: "decoder." + present for _, present in static})
    if export.merged:
        nodes += [const("gen.axis0", np.array([0], np.int64)),
                  helper.make_node("Not", ["gen.is_first"], ["gen.has_past"], name="gen/has_past"),
                  helper.make_node("Unsqueeze", ["gen.has_past", "gen.axis0"], [MERGED_FLAG],
                                   name="gen/use_cache_branch")]
    nodes += list(graph.node)
    if static:
        nodes.append(_kept_caches(static, "decoder."))
    return nodes, list(graph.value_info), list(later.graph.output)


def _encoder_nodes(export: DecoderExport, kept: dict[str, onnx.TensorProto]
                   ) -> tuple[list[onnx.NodeProto], list[onnx.ValueInfoProto]]:
    """The main graph's nodes that run the encoder once (its first output named encoder_hidden_states, its ids
    encoder_input_ids, its mask encoder_attention_mask, its other values prefixed `encoder/`), and its inputs."""
    if export.encoder is None:
        return [], []
    graph = onnx.GraphProto()
    graph.CopyFrom(export.encoder.graph)
    _hoist(graph, kept, "encoder/")
    mapping = {name: "encoder/" + name for node in graph.node for name in node.output if name}
    mapping.update({"input_ids": ENCODER_IDS, "attention_mask": ENCODER_MASK, graph.output[0].name: ENCODER_STATES})
    _rename(graph, mapping)
    return list(graph.node), list(graph.input)


def generation_model(export: DecoderExport, pad: int = 0, eos: Iterable[int] = (),
                     strategy: Strategy = GREEDY) -> onnx.ModelProto:
    """The generation loop around `export` (see the module docstring), choosing tokens by `strategy`."""
    kept: dict[str, onnx.TensorProto] = {}
    later = export.later
    encoder_nodes, encoder_inputs = _encoder_nodes(export, kept)
    body_nodes, value_info, returned = _decoder_nodes(export, kept)
    body_nodes += _choice(export, pad, eos, strategy)
    declared = {i.name: _open_shape(i) for i in later.graph.input}
    carried = [declared[name] if name in declared else _state_info(name) for name in carried_names(export, strategy)]
    body_inputs = [helper.make_tensor_value_info(STEP, TensorProto.INT64, []),
                   helper.make_tensor_value_info(COND, TensorProto.BOOL, []), *carried]
    declared_out = {o.name: o for o in returned}
    logits_type = _elem_type(declared_out[export.logits_name()])
    body_outputs = [helper.make_tensor_value_info("gen.cond_out", TensorProto.BOOL, [])]
    for value in carried:
        out = next_of(export, value.name, strategy)
        body_outputs.append(_open_shape(declared_out[out]) if out in declared_out else
                            helper.make_value_info(out, value.type))
    body_outputs += [helper.make_tensor_value_info(TOKEN, TensorProto.INT64, ["batch_size"]),
                     helper.make_tensor_value_info(LAST_LOGITS, logits_type, ["batch_size", "vocab"])]
    scans = [TOKENS, STEP_LOGITS]
    main_outputs = [helper.make_tensor_value_info(TOKENS, TensorProto.INT64, ["steps", "batch_size"]),
                    helper.make_tensor_value_info(STEP_LOGITS, logits_type, ["steps", "batch_size", "vocab"])]
    main_inputs = [*encoder_inputs, helper.make_tensor_value_info("max_new_tokens", TensorProto.INT64, [])]
    after: list[onnx.NodeProto] = []
    if isinstance(strategy, BeamSearch):
        body_outputs.append(helper.make_tensor_value_info(beam_search.PARENTS, TensorProto.INT64, ["batch_size"]))
        scans.append(beam_search.BEAM_PARENTS)
        main_outputs.append(helper.make_tensor_value_info(beam_search.BEAM_PARENTS, TensorProto.INT64,
                                                          ["steps", "batch_size"]))
        after, finals = beam_search.final_nodes(strategy)
        main_outputs += finals
    if isinstance(strategy, Sampling):
        main_inputs.append(helper.make_tensor_value_info(DRAWS, TensorProto.DOUBLE, ["steps", "batch_size"]))
    body = helper.make_graph(body_nodes, "generation_step", body_inputs, body_outputs, value_info=value_info)
    starts = [START + value.name for value in carried]
    loop = helper.make_node("Loop", ["max_new_tokens", "", *starts],
                            [f"final.{value.name}" for value in carried] + scans, name=LOOP, body=body)
    main_inputs += [helper.make_value_info(START + value.name, value.type) for value in carried]
    graph = helper.make_graph([*encoder_nodes, loop, *after], "generation", main_inputs, main_outputs,
                              initializer=list(kept.values()))
    opsets = {o.domain: o.version for o in later.opset_import}
    for model in (m for m in (export.first, export.encoder) if m is not None):
        for o in model.opset_import:
            opsets[o.domain] = max(opsets.get(o.domain, 0), o.version)
    opsets[""] = max(opsets.get("", 0), 13)
    wrapped = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()],
                                producer_name="explorer generate")
    wrapped.ir_version = later.ir_version
    wrapped.functions.extend(later.functions)
    return wrapped
