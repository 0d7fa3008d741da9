"""How onnxruntime's generation operators call their subgraphs, step after step, with beams along the batch axis
(each batch entry's row repeated `beams` times):

- GPT-2 (model_type 0): `decoder` (and `init_decoder` for the first step, when present) takes input_ids,
  position_ids, attention_mask (int32) and past_0..past_{n-1}, each key and value stacked (2, rows, heads, past,
  head size), empty at the first step; it returns logits and present_0... The first step reads the prompt (a pad
  id there is masked out and takes position 0), each later step one token per row at the next position, the mask
  one column longer, each past the present of the beam the row continues.
- T5 (model_type 1): `encoder` runs once on the prompt (encoder_input_ids, encoder_attention_mask: 0 only where
  the prompt starts with pad ids) and returns each layer's cross-attention key and value; `decoder` then takes
  input_ids (one token per row, decoder_start_token_id first), the encoder's mask, the self-attention past (empty
  at first) and the cross-attention values, and returns logits and the self-attention present. In the tool's
  earlier layout the encoder also takes the start tokens and returns the first step's logits, its hidden states
  and the self-attention present: the decoder runs from the second step.
- Whisper (model_type 2): T5's earlier layout on input features (encoder_input_ids: batch × mel bins × frames)
  and the start tokens (decoder_input_ids, or decoder_start_token_id), without attention masks.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import onnx

from ...errors import ExecutionError, where
from ..compiled import Bodies, CompiledGraph
from ..ops.base import Call, OpNode


@dataclass
class Step:
    """One step's decoder run: what it was fed and returned (by its formal names), its outputs in order, each
    row's next-token logits, and the subgraphs that ran (the encoder too at T5's first step)."""

    feeds: dict[str, Any]
    returned: dict[str, Any]
    outputs: list[Any]
    logits: np.ndarray
    subgraphs: list[str]


class DecoderRun(Protocol):
    """One execution's subgraph calls: `prompt` the sequences the search starts from (rows × length), `run` one
    step's subgraphs, `advance` to the next step's feeds once each row's token (and the row it continues) is
    chosen."""

    prompt: np.ndarray
    cache_names: list[tuple[str, str]]  # each self-attention cache's (past input, present output) of the decoder
    batch_axis: int  # the caches' rows axis

    def run(self, index: tuple[int, ...], rows: int, vocab: int | None) -> Step:
        ...

    def advance(self, step: Step, tokens: np.ndarray, parents: np.ndarray | None) -> None:
        ...


def _step(graph: CompiledGraph, inputs: list[Any], outputs: list[Any], rows: int, vocab: int | None,
          subgraphs: list[str]) -> Step:
    return Step(dict(zip(graph.input_names, inputs)), dict(zip(graph.output_names, outputs)), outputs,
                last_logits(outputs[0], rows, vocab), subgraphs)


def _graph_attribute(op: OpNode, name: str) -> onnx.GraphProto | None:
    for att in op.node.proto.attribute:
        if att.name == name and att.type == onnx.AttributeProto.GRAPH:
            graph: onnx.GraphProto = att.g
            return graph
    return None


def _fixed_dims(graph: onnx.GraphProto, name: str) -> list[int]:
    """The declared dims of one of the graph's inputs (0 where symbolic)."""
    value = next(i for i in graph.input if i.name == name)
    return [d.dim_value for d in value.type.tensor_type.shape.dim]


def _elem_dtype(graph: onnx.GraphProto, name: str) -> np.dtype[Any]:
    value = next(i for i in graph.input if i.name == name)
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type or onnx.TensorProto.FLOAT))


@dataclass
class _Bodies:
    """The compiled subgraphs of one execution and their frames (initializers and captures), made once."""

    bodies: Bodies
    call: Call
    path: str
    frames: dict[str, tuple[CompiledGraph, dict[str, Any]]] = field(default_factory=dict)

    def run(self, attribute: str, inputs: list[Any], index: tuple[int, ...]) -> tuple[CompiledGraph, list[Any]]:
        if attribute not in self.frames:
            graph = self.bodies.graph(f"{self.path}/{attribute}")
            engine = self.call.engine
            self.frames[attribute] = graph, engine.body_frame(graph, self.call.env, self.call.path,
                                                              self.call.op_type, self.call.iteration)
        graph, base = self.frames[attribute]
        if len(inputs) != len(graph.input_names):
            raise ExecutionError(f"{where(self.call.path, self.call.op_type, self.call.iteration)}: its {attribute} "
                                 f"subgraph takes {len(graph.input_names)} inputs, onnxruntime's layout feeds "
                                 f"{len(inputs)}", node=self.call.path, op_type=self.call.op_type,
                                 iteration=self.call.iteration)
        return graph, self.call.engine.run_body(graph, base, inputs, index)


def last_logits(logits: np.ndarray, rows: int, vocab: int | None) -> np.ndarray:
    """Each row's scores for its next token (rows, vocab), float32: the last position, a batch entry's row repeated
    for its beams when the subgraph ran once per entry."""
    last = np.asarray(logits)[:, -1, :vocab].astype(np.float32)
    return np.repeat(last, rows // last.shape[0], axis=0) if last.shape[0] != rows else last.copy()


class GptDecoder:
    """The GPT-2 layout (model_type 0)."""

    def __init__(self, op: OpNode, bodies: Bodies) -> None:
        decoder = _graph_attribute(op, "decoder")
        if decoder is None:
            raise op.error("the decoder subgraph is missing")
        names = [i.name for i in decoder.input]
        if names[:4] != ["input_ids", "position_ids", "attention_mask", "past_0"] or len(names) != len(
                decoder.output) + 2:
            raise op.error(f"its decoder's inputs {names} are not GPT-2's (input_ids, position_ids, attention_mask, "
                           "past_0...; a past shared with present is not supported)")
        dims = _fixed_dims(decoder, "past_0")
        if len(dims) != 5 or not dims[2] or not dims[4]:
            raise op.error(f"its decoder's past_0 is declared {dims}: (2, batch, heads, past, head size) expected")
        self.heads, self.head_size = dims[2], dims[4]
        self.layers = len(names) - 3
        self.cache_names = list(zip(names[3:], [o.name for o in decoder.output][1:]))
        self.dtype = _elem_dtype(decoder, "past_0")
        self.bodies, self.first = bodies, "init_decoder" if _graph_attribute(op, "init_decoder") else "decoder"
        self.path = op.path

    def start(self, call: Call, input_ids: np.ndarray, mask: np.ndarray | None, beams: int,
              pad: int) -> _GptRun:
        return _GptRun(self, _Bodies(self.bodies, call, self.path), input_ids, mask, beams, pad)


class _GptRun:
    def __init__(self, layout: GptDecoder, bodies: _Bodies, input_ids: np.ndarray, mask: np.ndarray | None,
                 beams: int, pad: int) -> None:
        self.layout, self.bodies, self.beams = layout, bodies, beams
        self.cache_names, self.batch_axis = layout.cache_names, 1  # (2, rows, heads, positions, head size)
        real = input_ids != pad
        positions = np.where(real, np.cumsum(real, axis=1) - 1, 0).astype(np.int32)
        given = np.asarray(mask, dtype=np.int32) if mask is not None else real.astype(np.int32)
        self.prompt = np.repeat(input_ids.astype(np.int32), beams, axis=0)
        self.positions = np.repeat(real.sum(axis=1).astype(np.int32), beams)
        rows = self.prompt.shape[0]
        empty = np.zeros((2, rows, layout.heads, 0, layout.head_size), dtype=layout.dtype)
        self.inputs: list[Any] = [self.prompt, np.repeat(positions, beams, axis=0), np.repeat(given, beams, axis=0),
                                  *([empty] * layout.layers)]
        self.runs = 0

    def run(self, index: tuple[int, ...], rows: int, vocab: int | None) -> Step:
        attribute = self.layout.first if self.runs == 0 else "decoder"
        graph, outputs = self.bodies.run(attribute, self.inputs, index)
        self.runs += 1
        return _step(graph, self.inputs, outputs, rows, vocab, [attribute])

    def advance(self, step: Step, tokens: np.ndarray, parents: np.ndarray | None) -> None:
        if self.runs > 1:
            self.positions = self.positions + 1
        mask = self.inputs[2]
        presents = step.outputs[1:]
        self.inputs = [tokens.reshape(-1, 1).astype(np.int32), self.positions.reshape(-1, 1),
                       np.concatenate([mask, np.ones((mask.shape[0], 1), dtype=mask.dtype)], axis=1),
                       *(p if parents is None else np.asarray(p)[:, parents] for p in presents)]


class EncoderDecoder:
    """The encoder-decoder layouts: T5's (model_type 1) in either form onnxruntime's tool writes, an encoder that
    returns each layer's cross-attention values, or (its earlier form, --encoder_decoder_init) one that also takes
    the start tokens and runs the decoder's first step (logits, the hidden states, the self-attention present too);
    Whisper's (model_type 2, WhisperBeamSearch), the earlier form on input features, without attention masks."""

    def __init__(self, op: OpNode, bodies: Bodies, start_token: int, whisper: bool) -> None:
        encoder, decoder = _graph_attribute(op, "encoder"), _graph_attribute(op, "decoder")
        if encoder is None or decoder is None:
            raise op.error("an encoder-decoder search needs both its encoder and decoder subgraphs")
        inputs = [i.name for i in encoder.input]
        self.whisper = whisper
        self.legacy = whisper or (bool(encoder.output) and encoder.output[0].name == "logits")
        wanted = (["encoder_input_ids", "decoder_input_ids"] if whisper else
                  ["encoder_input_ids", "encoder_attention_mask"] + (["decoder_input_ids"] if self.legacy else []))
        if inputs != wanted:
            raise op.error(f"its encoder's inputs {inputs} are not {wanted}")
        names = [i.name for i in decoder.input]
        fixed = ["input_ids"] if whisper else ["input_ids", "encoder_attention_mask"]
        self.hidden = len(names) > len(fixed) and names[len(fixed)] == "encoder_hidden_states"
        self.first_past = len(fixed) + self.hidden
        if names[:len(fixed)] != fixed or (len(names) - self.first_past) % 4:
            raise op.error(f"its decoder's inputs {names} are not {', '.join(fixed)}, then each layer's self- and "
                           "cross-attention key and value")
        if self.hidden and not self.legacy:
            raise op.error("its decoder reads encoder_hidden_states, which its encoder does not return")
        if start_token < 0:
            raise op.error("decoder_start_token_id is not set")
        self.layers = (len(names) - self.first_past) // 4
        selves = names[self.first_past:self.first_past + 2 * self.layers]
        self.cache_names = list(zip(selves, [o.name for o in decoder.output][1:1 + 2 * self.layers]))
        self.bodies, self.path, self.start_token = bodies, op.path, start_token

    def start(self, call: Call, input_ids: np.ndarray, mask: np.ndarray | None, beams: int, pad: int,
              decoder_input_ids: np.ndarray | None = None) -> _EncoderDecoderRun:
        return _EncoderDecoderRun(self, _Bodies(self.bodies, call, self.path), input_ids, mask, beams, pad,
                                  decoder_input_ids)


class _EncoderDecoderRun:
    def __init__(self, layout: EncoderDecoder, bodies: _Bodies, input_ids: np.ndarray, mask: np.ndarray | None,
                 beams: int, pad: int, decoder_input_ids: np.ndarray | None) -> None:
        self.layout, self.bodies, self.beams = layout, bodies, beams
        self.cache_names, self.batch_axis = layout.cache_names, 0
        batch = input_ids.shape[0]
        starts = (np.full((batch, 1), layout.start_token, dtype=np.int32) if decoder_input_ids is None
                  else np.asarray(decoder_input_ids, dtype=np.int32))
        if layout.whisper:
            self.encoder_inputs = [input_ids, starts]
            self.fixed: list[Any] = []  # the decoder's inputs between input_ids and the past
        else:
            if mask is None:
                started = np.cumsum(input_ids != pad, axis=1) > 0  # only a leading run of pad ids is masked out
                mask = started.astype(np.int32)
            self.encoder_inputs = [input_ids.astype(np.int32), np.asarray(mask, dtype=np.int32)]
            if layout.legacy:
                self.encoder_inputs.append(starts)
            self.fixed = self._expanded(self.encoder_inputs[1:2])
        self.prompt = np.repeat(starts, beams, axis=0)
        self.inputs: list[Any] = []
        self.encoded: list[Any] = []

    def _expanded(self, values: Sequence[Any]) -> list[np.ndarray]:
        return [np.repeat(np.asarray(v), self.beams, axis=0) for v in values]

    def run(self, index: tuple[int, ...], rows: int, vocab: int | None) -> Step:
        layers = self.layout.layers
        if not self.encoded:
            graph, self.encoded = self.bodies.run("encoder", self.encoder_inputs, index)
            if self.layout.legacy:  # its logits choose the first tokens; the decoder runs from the next step
                return _step(graph, self.encoder_inputs, self.encoded, rows, vocab, ["encoder"])
            cross = self.encoded
            heads, head_size = np.shape(cross[0])[1], np.shape(cross[0])[3]
            empty = np.zeros((rows, heads, 0, head_size), dtype=np.asarray(cross[0]).dtype)
            self.inputs = [self.prompt, *self.fixed, *([empty] * (2 * layers)), *self._expanded(cross)]
            ran = ["encoder", "decoder"]
        else:
            ran = ["decoder"]
        graph, outputs = self.bodies.run("decoder", self.inputs, index)
        return _step(graph, self.inputs, outputs, rows, vocab, ran)

    def advance(self, step: Step, tokens: np.ndarray, parents: np.ndarray | None) -> None:
        layers, first_past = self.layout.layers, self.layout.first_past
        tokens = tokens.reshape(-1, 1).astype(np.int32)
        if not self.inputs:  # after the earlier layout's encoder: its hidden states, self and cross values
            hidden = self._expanded(self.encoded[1:2]) if self.layout.hidden else []
            self.inputs = [tokens, *self.fixed, *hidden, *self._expanded(self.encoded[2:2 + 4 * layers])]
            return
        selves = step.outputs[1:1 + 2 * layers]
        self.inputs = [tokens, *self.inputs[1:first_past],
                       *(s if parents is None else np.asarray(s)[parents] for s in selves),
                       *self.inputs[first_past + 2 * layers:]]
