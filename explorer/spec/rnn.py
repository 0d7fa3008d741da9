"""The GRU, LSTM and RNN cells as the ONNX spec defines them: gate order in W, R and B, which activation (f, g,
h) computes each gate, activations and their alpha/beta defaults, the weight and bias layout, and a node's
attributes checked against its opset version's schema with every default resolved. onnxruntime's
DynamicQuantizeLSTM (com.microsoft) is an LSTM whose W and R are quantized and stored transposed."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import onnx

from ..errors import ExecutionError, where
from .schema import attribute_problem, schema_at

# canonical name -> (default alpha, default beta); None: the function takes no such value. Defaults are those
# of the ONNX operator of the same name (Affine and ScaledTanh, which have none there, default to identity
# scaling).
ACTIVATION_DEFAULTS: dict[str, tuple[float | None, float | None]] = {
    "Relu": (None, None), "Tanh": (None, None), "Sigmoid": (None, None),
    "Affine": (1.0, 0.0), "LeakyRelu": (0.01, None), "ThresholdedRelu": (1.0, None),
    "ScaledTanh": (1.0, 1.0), "HardSigmoid": (0.2, 0.5), "Elu": (1.0, None),
    "Softsign": (None, None), "Softplus": (None, None),
}


class CellNode(Protocol):
    """What the cell specs read of a node: its proto, where it is, its operator and domain (proto.graph's NodeRef
    has them)."""

    @property
    def proto(self) -> onnx.NodeProto: ...
    @property
    def path(self) -> str: ...
    @property
    def op_type(self) -> str: ...
    @property
    def domain(self) -> str: ...


_CANONICAL = {name.lower(): name for name in ACTIVATION_DEFAULTS}
DIRECTIONS = ("forward", "reverse", "bidirectional")
INPUTS = ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")  # the node's input positions
BIAS_HALVES = ("Wb", "Rb")  # B of one direction is [Wb of every gate, Rb of every gate]
PEEPHOLES = ("i", "o", "f")  # LSTM's P of one direction: one block per gate, in this order


@dataclass(frozen=True)
class Cell:
    """What differs between GRU, LSTM and RNN in their weights and activations."""

    op_type: str
    gates: tuple[str, ...]  # the spec's gate letters, in the order their blocks stack in W, R and each half of B
    recorded: tuple[str, ...]  # the name each gate block is recorded under (RNN: its pre-activation `a`)
    activations: tuple[str, ...]  # default activations of one direction (f, g[, h])
    gate_activation: tuple[int, ...]  # per gate: which activation of the direction (0 f, 1 g) computes it
    computed: tuple[str, ...]  # the recorded series in the order one time step computes them (states C, H last)

    def block(self, gate: int, hidden: int, half: int = 0) -> tuple[int, int]:
        """[start, stop) of one gate's rows in W or R (half 0), or of its entries in B's Wb (0) or Rb (1) half."""
        start = (half * len(self.gates) + gate) * hidden
        return start, start + hidden


CELLS = {
    "GRU": Cell("GRU", ("z", "r", "h"), ("z", "r", "h"), ("Sigmoid", "Tanh"), (0, 0, 1), ("z", "r", "h", "H")),
    "LSTM": Cell("LSTM", ("i", "o", "f", "c"), ("i", "o", "f", "c"), ("Sigmoid", "Tanh", "Tanh"), (0, 0, 0, 1),
                 ("i", "f", "c", "o", "C", "H")),
    "RNN": Cell("RNN", ("i",), ("a",), ("Tanh",), (0,), ("a", "H")),
}


# (domain, op_type) -> the cell the operator computes
RECURRENT_OPERATORS: dict[tuple[str, str], str] = {
    ("", "GRU"): "GRU", ("", "LSTM"): "LSTM", ("", "RNN"): "RNN",
    ("com.microsoft", "DynamicQuantizeLSTM"): "LSTM",
}
# DynamicQuantizeLSTM's inputs after LSTM's eight: the quantization of W and R
QUANTIZED_INPUTS = ("W_scale", "W_zero_point", "R_scale", "R_zero_point")


def cell_kind(node: CellNode) -> str | None:
    """"GRU", "LSTM" or "RNN" for a recurrent operator (DynamicQuantizeLSTM is an LSTM), else None."""
    domain = "" if node.domain == "ai.onnx" else node.domain
    return RECURRENT_OPERATORS.get((domain, node.op_type))


def dequantized_weights(q: np.ndarray, scale: np.ndarray, zero: np.ndarray) -> np.ndarray:
    """DynamicQuantizeLSTM's W or R ([directions, input or hidden, 4 hidden], uint8/int8, scale and zero point per
    direction or per direction and column) as LSTM's float32 W or R ([directions, 4 hidden, input or hidden])."""
    if q.ndim != 3 or scale.shape not in ((q.shape[0],), (q.shape[0], q.shape[2])) or zero.shape != scale.shape:
        raise ValueError(f"quantized weights {q.shape} need a scale and zero point of shape ({q.shape[0]},) or "
                         f"({q.shape[0]}, {q.shape[2]}), got {scale.shape} and {zero.shape}")
    columns = (slice(None), None, slice(None)) if scale.ndim == 2 else (slice(None), None, None)
    values = (q.astype(np.float32) - zero.astype(np.float32)[columns]) * scale.astype(np.float32)[columns]
    return np.ascontiguousarray(values.transpose(0, 2, 1))


# Where each of the spec's gates (CELLS[op].gates) sits in PyTorch's and Keras's stacking of the same weights:
# PyTorch GRU is [r, z, n], LSTM [i, f, g, o]; Keras GRU is [z, r, h], LSTM [i, f, c, o].
PYTORCH_GATES = {"GRU": {"z": (1, "z"), "r": (0, "r"), "h": (2, "n")},
                 "LSTM": {"i": (0, "i"), "o": (3, "o"), "f": (1, "f"), "c": (2, "g")},
                 "RNN": {"i": (0, "")}}
KERAS_GATES = {"GRU": {"z": 0, "r": 1, "h": 2}, "LSTM": {"i": 0, "o": 3, "f": 1, "c": 2}, "RNN": {"i": 0}}

@dataclass(frozen=True)
class Activation:
    """One activation of a direction with its resolved alpha/beta (None where the function takes none)."""

    name: str
    alpha: float | None
    beta: float | None

    def __str__(self) -> str:
        args = [f"{k}={v:g}" for k, v in (("alpha", self.alpha), ("beta", self.beta)) if v is not None]
        return f"{self.name}({', '.join(args)})" if args else self.name


@dataclass(frozen=True)
class RnnConfig:
    """A GRU/LSTM/RNN node's attributes, checked against its opset version's schema, defaults resolved."""

    cell: Cell
    version: int  # since_version of the schema the node follows
    hidden_size: int | None  # None when the attribute is absent (taken from R's shape)
    direction: str
    layout: int
    clip: float | None
    activations: tuple[tuple[Activation, ...], ...]  # one tuple (f, g[, h]) per direction
    linear_before_reset: bool
    input_forget: bool

    @property
    def num_directions(self) -> int:
        return 2 if self.direction == "bidirectional" else 1


def rnn_config(node: CellNode, opset: int) -> RnnConfig:
    """Reads and checks the attributes of a GRU/LSTM/RNN node at the model's opset; ExecutionError naming the node
    when invalid."""
    schema = schema_at(node.op_type, opset, "" if node.domain == "ai.onnx" else node.domain)
    if schema is None:
        raise _error(node, f"{node.op_type} does not exist in opset {opset}")
    problem = attribute_problem(node.proto, schema, opset)
    if problem is not None:
        raise _error(node, problem)
    values = {att.name: onnx.helper.get_attribute_value(att) for att in node.proto.attribute}
    return config_from(node, schema.since_version, values)


def config_from(node: CellNode, version: int, values: Mapping[str, Any]) -> RnnConfig:
    """The config of a GRU/LSTM/RNN node whose attributes (`values`, by name; strings as str or bytes) already
    fit the schema of `version`: checks what the schema cannot say, resolves every default."""
    kind = cell_kind(node)
    if kind is None:
        raise _error(node, f"{node.op_type} is no recurrent operator")
    cell = CELLS[kind]

    def fail(message: str) -> ExecutionError:
        return _error(node, message)

    direction = _text(values.get("direction", "forward"))
    if direction not in DIRECTIONS:
        raise fail(f"direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
    num_directions = 2 if direction == "bidirectional" else 1
    hidden_size = values.get("hidden_size")
    if hidden_size is not None and hidden_size <= 0:
        raise fail(f"hidden_size must be positive, got {hidden_size}")
    layout = values.get("layout", 0)
    if layout not in (0, 1):
        raise fail(f"layout must be 0 or 1, got {layout}")
    clip = values.get("clip")
    if clip is not None and not clip > 0:
        raise fail(f"clip must be positive, got {clip:g}: it bounds pre-activations to [-clip, clip] (an "
                   "exporter writing 0 for 'no clip' should leave the attribute out)")
    activations = _activations(cell, num_directions, values, fail)
    return RnnConfig(cell, version, hidden_size, direction, layout, clip, activations,
                     bool(values.get("linear_before_reset", 0)), bool(values.get("input_forget", 0)))


def _error(node: CellNode, message: str) -> ExecutionError:
    return ExecutionError(f"{where(node.path, node.op_type, ())}: {message}", node=node.path, op_type=node.op_type)


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _activations(cell: Cell, num_directions: int, values: Mapping[str, Any],
                 fail: Callable[[str], ExecutionError]) -> tuple[tuple[Activation, ...], ...]:
    per_direction = len(cell.activations)
    if "activations" in values:
        names = [_text(n) for n in values["activations"]]
        if cell.op_type == "RNN" and num_directions == 1 and len(names) == 2:
            names = names[:1]  # RNN's schema default lists two (Tanh, Tanh) even for one direction
    else:
        names = list(cell.activations) * num_directions
    if len(names) != per_direction * num_directions:
        raise fail(f"activations lists {len(names)} functions ({', '.join(names)}); {cell.op_type} takes "
                   f"{per_direction} per direction, {per_direction * num_directions} here")
    alphas = [float(a) for a in values.get("activation_alpha", [])]
    betas = [float(b) for b in values.get("activation_beta", [])]
    resolved = []
    for raw in names:
        name = _CANONICAL.get(raw.lower())
        if name is None:
            raise fail(f"unknown activation {raw!r} (known: {', '.join(ACTIVATION_DEFAULTS)})")
        default_alpha, default_beta = ACTIVATION_DEFAULTS[name]
        alpha = (alphas.pop(0) if alphas else default_alpha) if default_alpha is not None else None
        beta = (betas.pop(0) if betas else default_beta) if default_beta is not None else None
        resolved.append(Activation(name, alpha, beta))
    return tuple(tuple(resolved[d * per_direction:(d + 1) * per_direction]) for d in range(num_directions))
