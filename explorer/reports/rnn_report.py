"""The exported-RNN report: for each GRU/LSTM/RNN node, its W/R/B/P blocks split per gate with the spec's ONNX
names and the names they had in PyTorch and Keras, and the warnings a user needs when the exported model gives
other numbers than the framework it came from."""
from __future__ import annotations

import numpy as np

from ..errors import ExecutionError
from ..model.model import Model
from ..proto.graph import NodeRef
from ..proto.weights import tensor_value
from ..spec.rnn import (
    ACTIVATION_DEFAULTS,
    BIAS_HALVES,
    CELLS,
    INPUTS,
    KERAS_GATES,
    PEEPHOLES,
    PYTORCH_GATES,
    RnnConfig,
    cell_kind,
    dequantized_weights,
    rnn_config,
)
from ..trace.trace import Trace
from .rnn_report_types import Finding, RnnReport, WeightBlock, origin_of


def recurrent_nodes(model: Model) -> list[NodeRef]:
    """Every GRU/LSTM/RNN node of the model (onnxruntime's DynamicQuantizeLSTM too), nested bodies included."""
    return [ref for ref in model.nodes() if cell_kind(ref) is not None]


def rnn_reports(model: Model, trace: Trace | None = None) -> list[RnnReport]:
    """The report of every recurrent cell, whatever its form."""
    from ..cells import recurrent_cells

    return [rnn_report(model, cell.path, trace) for cell in recurrent_cells(model)]


def rnn_report(model: Model, path: str, trace: Trace | None = None) -> RnnReport:
    """The report of the GRU/LSTM/RNN node at `path`, or of a cell written as a loop, scan or unrolled graph
    (cell_report.py). Weights computed at run time (PyTorch exports build W, R and B with Concat/Slice) get
    their values from the node's first execution in `trace`, when given."""
    node = model.index.nodes.get(path)
    if node is None or cell_kind(node) is None:
        from .cell_report import cell_report

        return cell_report(model, path, trace)
    origin = origin_of(model.proto.producer_name)
    inputs = list(node.proto.input) + [""] * 12
    constants = {name: _constant(model, node, name) for name in inputs[:12] if name}
    executions = trace.events_of(path) if trace is not None else []
    if executions:
        for name, value in executions[0].inputs.items():
            if constants.get(name) is None and isinstance(value, np.ndarray):
                constants[name] = value
    quantized = cell_kind(node) != node.op_type
    if quantized:
        _dequantize(constants, inputs)
    shapes: dict[str, tuple[int | None, ...] | None] = {}
    for name in filter(None, inputs[:8]):
        value = constants.get(name)
        shapes[name] = value.shape if value is not None else _declared_shape(model, node, name, quantized)
    try:
        config = rnn_config(node, model.opsets.get("", 1))
    except ExecutionError as exc:
        return RnnReport(path, node.op_type, origin, None, None, None, [], [Finding("error", str(exc))])
    r_shape, w_shape = shapes.get(inputs[2]), shapes.get(inputs[1])
    hidden = config.hidden_size or (r_shape[-1] if r_shape and len(r_shape) == 3 else None)
    input_size = w_shape[-1] if w_shape and len(w_shape) == 3 else None
    layer = [ref.path for ref in recurrent_nodes(model)
             if ref.op_type == node.op_type and ref.graph is node.graph].index(path)
    report = RnnReport(path, node.op_type, origin, config, hidden, input_size)
    if hidden:
        report.blocks = _blocks(config, hidden, layer, inputs, constants)
    report.findings = _state_widths(config, hidden, inputs, shapes) + _findings(node, config, origin, inputs,
                                                                                 constants)
    if quantized:
        report.findings.insert(0, Finding("note", f"{node.op_type} (onnxruntime's): W and R are 8-bit integers "
                                          "stored [directions, input or hidden, 4·hidden]; the blocks show them "
                                          "dequantized in LSTM's [directions, 4·hidden, input or hidden] layout"))
    return report


def _dequantize(constants: dict[str, np.ndarray | None], inputs: list[str]) -> None:
    """A quantized LSTM's W and R replaced by LSTM's float ones where they and their quantization are known (and
    left out where not: their positions would not be LSTM's)."""
    for weights, scale, zero in ((1, 8, 9), (2, 10, 11)):
        values = [constants.get(inputs[i]) if inputs[i] else None for i in (weights, scale, zero)]
        if not inputs[weights]:
            continue
        if any(v is None for v in values):
            constants[inputs[weights]] = None
            continue
        q, s, z = values
        assert q is not None and s is not None and z is not None
        try:
            constants[inputs[weights]] = dequantized_weights(q, s, z)
        except ValueError:
            constants[inputs[weights]] = None


def _constant(model: Model, node: NodeRef, name: str) -> np.ndarray | None:
    """The value of `name` when an initializer or a Constant node in scope defines it."""
    found = model.index.resolve(name, node.graph.path)
    if found is None:
        return None
    if found.tensor is not None:
        return tensor_value(found.tensor)
    producer = model.index.nodes[found.node].proto if found.node is not None else None
    if producer is not None and producer.op_type == "Constant":
        return next((tensor_value(a.t) for a in producer.attribute if a.name == "value"), None)
    return None


def _state_widths(config: RnnConfig, hidden: int | None, inputs: list[str],
                  shapes: dict[str, tuple[int | None, ...] | None]) -> list[Finding]:
    """An export whose recurrent state is not hidden_size wide (R's last axis, initial_h's, initial_c's): a
    projection dropped (PyTorch's LSTM proj_size) or a state wider than the hidden size. No ONNX cell computes
    that, at any input size: onnxruntime refuses the node too."""
    if not hidden:
        return []
    op = config.cell.op_type
    for position, name in ((2, "R"), (5, "initial_h"), (6, "initial_c")):
        shape = shapes.get(inputs[position]) if inputs[position] else None
        width = shape[-1] if shape else None
        if width is None or width == hidden or (position == 6 and op != "LSTM"):
            continue
        what = (f"a projected state: PyTorch's LSTM with proj_size={width} projects h from {hidden} to {width} "
                f"units, and ONNX's {op} has no projection (the exporter dropped it)" if width < hidden
                else f"a state wider than the hidden size, which ONNX's {op} cannot carry")
        return [Finding("error", f"{name}'s last axis, the state it holds, has {width} units but hidden_size is "
                                 f"{hidden}: {what}. This node cannot compute what the framework computes, at any "
                                 "input size (onnxruntime refuses it too): the export must change, not the inputs")]
    return []


def _declared_shape(model: Model, node: NodeRef, name: str, quantized: bool = False) -> tuple[int | None, ...] | None:
    """The shape the model declares (or shape inference found) for `name`; None for unknown dimensions (a quantized
    LSTM's W and R given in LSTM's layout: their last two axes swapped)."""
    declared = model.index.value_type(name, node.graph.path)
    if declared is None or not declared.HasField("tensor_type"):
        return None
    dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in declared.tensor_type.shape.dim)
    if quantized and name in node.proto.input[1:3] and len(dims) == 3:
        dims = (dims[0], dims[2], dims[1])
    return dims


def _blocks(config: RnnConfig, hidden: int, layer: int, inputs: list[str],
            constants: dict[str, np.ndarray | None]) -> list[WeightBlock]:
    cell = config.cell
    op = cell.op_type
    blocks = []
    for d in range(config.num_directions):
        suffix = "_reverse" if d else ""
        side = ("backward_layer." if d else "forward_layer.") if config.num_directions == 2 else ""
        for tensor in ("W", "R", "B", "P"):
            position = INPUTS.index(tensor)
            if not inputs[position] or (tensor == "P" and op != "LSTM"):
                continue
            value = constants.get(inputs[position])
            halves = tuple(enumerate(BIAS_HALVES)) if tensor == "B" else ((0, tensor),)
            letters = PEEPHOLES if tensor == "P" else cell.gates
            for offset, half in halves:
                for j, gate in enumerate(letters):
                    index = cell.block(j, hidden, offset)
                    block = None
                    if value is not None and value.ndim >= 2 and value.shape[0] > d and value.shape[1] >= index[1]:
                        block = value[d, index[0]:index[1]]
                    blocks.append(WeightBlock(
                        d, tensor, gate, _onnx_name(half, gate, d), index,
                        _pytorch_name(op, half, gate, hidden, layer, suffix),
                        _keras_name(config, half, gate, hidden, side), block))
    return blocks


def _onnx_name(half: str, gate: str, direction: int) -> str:
    """The spec's notation: Wz, Rbh, WBz, RBbh, Pi, PBf."""
    if not direction:
        return f"{half}{gate}"
    return {"W": "WB", "R": "RB", "Wb": "WBb", "Rb": "RBb", "P": "PB"}[half] + gate


def _pytorch_name(op: str, half: str, gate: str, hidden: int, layer: int, suffix: str) -> str:
    if half == "P":
        return ""  # PyTorch's LSTM has no peepholes
    position, letter = PYTORCH_GATES[op][gate]
    param = {"W": "weight_ih", "R": "weight_hh", "Wb": "bias_ih", "Rb": "bias_hh"}[half]
    symbol = param[0].upper() if half in "WR" else "b"
    symbol += "_" + param.split("_")[1][0] + (letter or param.split("_")[1][1])  # W_iz, b_hn; RNN: W_ih, b_hh
    return f"{param}_l{layer}{suffix}[{position * hidden}:{(position + 1) * hidden}] ({symbol})"


def _keras_name(config: RnnConfig, half: str, gate: str, hidden: int, side: str) -> str:
    op = config.cell.op_type
    if half == "P":
        return ""  # Keras's LSTM has no peepholes
    position = KERAS_GATES[op][gate]
    cols = f"{position * hidden}:{(position + 1) * hidden}"
    if half == "W":
        return f"{side}kernel[:, {cols}]"
    if half == "R":
        return f"{side}recurrent_kernel[:, {cols}]"
    if op == "GRU" and config.linear_before_reset:  # reset_after=True keeps both biases, shape (2, 3H)
        return f"{side}bias[{0 if half == 'Wb' else 1}, {cols}]"
    return f"{side}bias[{cols}]" if half == "Wb" else ""  # one bias: exporters write Rb = 0


def _findings(node: NodeRef, config: RnnConfig, origin: str, inputs: list[str],
              constants: dict[str, np.ndarray | None]) -> list[Finding]:
    op = config.cell.op_type
    found = []

    def add(level: str, *parts: str) -> None:
        found.append(Finding(level, "".join(parts)))

    if op == "GRU" and not config.linear_before_reset:
        if origin == "PyTorch":
            add("warning", "linear_before_reset=0 in a GRU exported from PyTorch: PyTorch computes ",
                "n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), which is linear_before_reset=1; with 0 ONNX ",
                "computes tanh(W_in x + b_in + W_hn (r * h) + b_hn) and the results differ silently ",
                "(a known exporter bug)")
        else:
            add("note", "linear_before_reset=0 applies the reset gate before the recurrent product, like ",
                "Keras reset_after=False; PyTorch and Keras reset_after=True (TensorFlow 2's default) need 1")
    if inputs[4]:
        add("warning", "sequence_lens is given: Y is zero at padded steps, Y_h",
            "/Y_c" if op == "LSTM" else "", " hold each sequence's last valid step (position 0 for the ",
            "reverse direction, which starts at each sequence's own end), and a length-0 sequence gives ",
            "zeros; a framework run over the padding (PyTorch without pack_padded_sequence, Keras without ",
            "masking) gives other numbers")
    if config.layout == 1:
        add("warning", "layout=1 (batch first): onnxruntime's CPU kernels refuse it; exporters keep ",
            "layout=0 and put Transposes around the node (PyTorch batch_first=True does so)")
    if config.clip is not None:
        add("warning", f"clip={config.clip:g} bounds every gate's pre-activation to ",
            f"[-{config.clip:g}, {config.clip:g}]; PyTorch never clips",
            ", and TensorFlow's cell_clip bounds the cell state C instead" if op == "LSTM" else "",
            ", so results differ once values reach the bound")
    if op == "LSTM" and inputs[7]:
        add("note", "peepholes P: neither PyTorch's nor Keras's LSTM has them")
    if op == "LSTM" and config.input_forget:
        add("note", "input_forget=1 couples the gates (f = 1 - i); PyTorch and Keras do not")
    if not inputs[3]:
        add("note", "no B: every bias is zero (PyTorch bias=False)")
    if config.hidden_size is None:
        add("note", "hidden_size is missing: taken from R's shape (onnxruntime requires it)")
    activations = [a for d in config.activations for a in d]
    if any(a.name not in CELLS[op].activations for a in activations):
        add("note", "activations: ", " | ".join(", ".join(str(a) for a in d) for d in config.activations))
    defaulted = _defaulted(node, activations)
    if defaulted:
        add("warning", f"{', '.join(defaulted)} take default alpha/beta: the spec's defaults are the ONNX ",
            "operators' (explorer uses them), onnxruntime uses 0 for some, so the two differ")
    for position, name in ((1, "W"), (2, "R")):
        if inputs[position] and constants.get(inputs[position]) is None:
            add("note", f"{name} is computed at run time: blocks show positions (a trace gives values)")
    return found


def _defaulted(node: NodeRef, activations: list) -> list[str]:
    """Activations left with a default alpha or beta where onnxruntime's fallback differs from the spec's
    (it takes 0 for Affine, ThresholdedRelu and ScaledTanh, and for everything in RNN)."""
    given = {att.name: len(att.floats) for att in node.proto.attribute}
    alphas, betas = given.get("activation_alpha", 0), given.get("activation_beta", 0)
    found = []
    for a in activations:
        default_alpha, default_beta = ACTIVATION_DEFAULTS[a.name]
        missing = False
        if default_alpha is not None:
            missing |= alphas == 0
            alphas = max(alphas - 1, 0)
        if default_beta is not None:
            missing |= betas == 0 and default_beta != 0.0
            betas = max(betas - 1, 0)
        differs = node.op_type == "RNN" or a.name in ("Affine", "ThresholdedRelu", "ScaledTanh")
        if missing and differs and a.name not in found:
            found.append(a.name)
    return found
