"""The GRU/LSTM/RNN kernel: checks the node once (OpNode, then the cell's own rules in spec/rnn.py), and per
execution projects the inputs, runs the time loop of every direction together (cells.py, lanes.py) and records
every gate at every time step.

`info["gates"]` holds arrays [seq_length, num_directions, batch_size, hidden_size] indexed by position in the
input sequence (as Y is), whatever `layout` is; steps past a batch item's sequence length are NaN and
`info["gates"]["mask"]` ([seq_length, num_directions, batch_size]) marks the valid ones.

Where the spec is silent, onnxruntime's behaviour is followed: activation_alpha/beta are consumed in order by
the activations that take them; `clip` bounds every gate's pre-activation (LSTM's cell state is not clipped
before h); a batch item of sequence length 0 gives zeros in Y_h and Y_c."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import ExecutionError, where
from ...spec.rnn import RnnConfig, config_from
from ..ops.base import Call, SpecialKernel
from . import cells
from .activations import ActivationFn, lane_activations
from .inputs import RnnInputs, read_inputs
from .lanes import TimeOrder, schedule, time_order

if TYPE_CHECKING:
    from ...graph import NodeRef
    from ...trace import EventInfo
    from ..program import Program


def configured(node: NodeRef, program: Program) -> tuple[RnnConfig, tuple[ActivationFn, ...], int]:
    """A recurrent node's config (checked against its operator version), activations and output count."""
    op = program.op_node(node)  # refuses what the operator version does not allow
    config = config_from(node, op.version, {att.name: op.attr(att.name) for att in node.proto.attribute})
    return config, lane_activations(config.activations), len(node.proto.output)


def failure(call: Call) -> Callable[[str], ExecutionError]:
    """message -> the ExecutionError naming the execution."""
    def fail(message: str) -> ExecutionError:
        return ExecutionError(f"{where(call.path, call.op_type, call.iteration)}: {message}", node=call.path,
                              op_type=call.op_type, iteration=call.iteration)

    return fail


def rnn_kernel(node: NodeRef, program: Program) -> SpecialKernel:
    config, activations, n_outputs = configured(node, program)

    def kernel(args: Sequence[Any], call: Call) -> tuple[list[Any], EventInfo]:
        return run_cells(config, activations, read_inputs(args, config, failure(call)), call, n_outputs)

    return kernel


def _project_inputs(inp: RnnInputs, config: RnnConfig, orders: list[TimeOrder], gates: np.ndarray) -> None:
    """Writes X·Wᵀ of every step into `gates` ([seq, gate, direction, hidden, batch], processing order) as one
    matrix product per direction, plus the biases that need no per-step work; each step then adds its recurrent
    product in place."""
    x, hidden = inp.x, inp.hidden
    n_gates = len(config.cell.gates)
    for k, order in enumerate(orders):
        w = inp.w[k].reshape(n_gates, hidden, -1)
        np.matmul(w, order.apply(x, 1).transpose(0, 2, 1)[:, None], out=gates[:, :, k])
    if inp.b is not None:
        folded = inp.b[:, :n_gates * hidden] + inp.b[:, n_gates * hidden:]
        if config.cell.op_type == "GRU" and config.linear_before_reset:
            wbh = slice(*config.cell.block(2, hidden))
            folded[:, wbh] = inp.b[:, wbh]  # Rbh goes inside r (.) (...)
        gates += folded.reshape(len(orders), n_gates, hidden).transpose(1, 0, 2)[..., None]


def _state(initial: np.ndarray | None, shape: tuple[int, int, int], dtype: np.dtype) -> np.ndarray:
    """An initial state [direction, batch, hidden] as the loops hold it ([direction, hidden, batch])."""
    return np.zeros(shape, dtype) if initial is None else np.ascontiguousarray(initial.transpose(0, 2, 1))


def run_cells(config: RnnConfig, activations: tuple[ActivationFn, ...], inp: RnnInputs, call: Call,
              n_outputs: int, recurrent_state: Callable[[np.ndarray], np.ndarray] | None = None
              ) -> tuple[list[Any], EventInfo]:
    """Runs the time loop of every direction and returns the node's outputs and its recorded gates;
    `recurrent_state` (LSTM) maps H before each recurrent product (quantized LSTM)."""
    cell = config.cell
    is_lstm = cell.op_type == "LSTM"
    hidden, nd = inp.hidden, config.num_directions
    seq, batch, _ = inp.x.shape
    n_gates = len(cell.gates)
    dtype = inp.x.dtype
    step_bytes = seq * nd * batch * hidden * dtype.itemsize
    call.engine.check_bytes((n_gates + 2 + is_lstm) * step_bytes, "recording its gates", call.path,
                            call.op_type, call.iteration)

    orders = [time_order(config.direction == "reverse" or k == 1, seq, inp.lens) for k in range(nd)]
    gates = np.empty((seq, n_gates, nd, hidden, batch), dtype)
    _project_inputs(inp, config, orders, gates)
    y = np.empty((seq, nd, hidden, batch), dtype)
    state_shape = (nd, hidden, batch)
    rb = None
    if cell.op_type == "GRU" and config.linear_before_reset and inp.b is not None:
        rbh = slice(*cell.block(2, hidden, half=1))
        rb = np.ascontiguousarray(np.broadcast_to(inp.b[:, rbh, None], state_shape))
    r = inp.r  # [lanes, gates * hidden, hidden]: contiguous (read_inputs)
    lanes = cells.Lanes(r, rb, gates, y,
                        _state(inp.h0, state_shape, dtype), activations, schedule(seq, inp.lens), recurrent_state)
    cell_states = np.empty((seq, nd, hidden, batch), dtype) if is_lstm else None
    y_c = None
    # overflow in exp (sigmoid of x << 0) gives the right limit: explorer.run ignores floating-point warnings
    if cell.op_type == "GRU":
        y_h = cells.gru(lanes, config).copy()
    elif cell_states is not None:
        last_h, last_c = cells.lstm(lanes, config, _state(inp.c0, state_shape, dtype), cell_states, inp.p)
        y_h, y_c = last_h.copy(), last_c.copy()
    else:
        y_h = cells.rnn(lanes, config).copy()
    for k, order in enumerate(orders):  # back to time order
        if order.reverse:
            gates[:, :, k] = order.apply(gates[:, :, k], 3).copy()
            for series in (y, cell_states):
                if series is not None:
                    series[:, k] = order.apply(series[:, k], 2).copy()
    return _outputs(config, inp, gates, y, cell_states, y_h, y_c, n_outputs)


def _outputs(config: RnnConfig, inp: RnnInputs, gates: np.ndarray, y: np.ndarray, cell_states: np.ndarray | None,
             y_h: np.ndarray, y_c: np.ndarray | None, n_outputs: int) -> tuple[list[Any], EventInfo]:
    """Y, Y_h[, Y_c] in the node's layout and dtype, and the recorded gates (time order, [seq, dir, batch,
    hidden]) with the padding past each sequence's length masked. `gates` is [seq, gate, dir, hidden, batch],
    the others [seq or -, dir, hidden, batch]."""
    seq, nd = y.shape[:2]
    batch = y.shape[-1]
    batch_major = (0, 1, 3, 2)  # [seq, dir, hidden, batch] -> [seq, dir, batch, hidden]
    recorded = {name: gates[:, j].transpose(batch_major) for j, name in enumerate(config.cell.recorded)}
    if cell_states is not None:
        recorded["C"] = cell_states.transpose(batch_major)
    if inp.lens is None:
        mask = np.ones((seq, nd, batch), bool)
    else:
        mask = np.repeat((np.arange(seq)[:, None] < inp.lens[None, :])[:, None, :], nd, axis=1)
        padded = ~mask[:, :, None, :]
        np.copyto(gates, np.nan, where=padded[:, None])
        if cell_states is not None:
            np.copyto(cell_states, np.nan, where=padded)
        np.copyto(y, 0, where=padded)
        empty = inp.lens == 0  # no step at all: onnxruntime gives zeros, not the initial state
        y_h[:, :, empty] = 0
        if y_c is not None:
            y_c[:, :, empty] = 0
    y_out = np.ascontiguousarray(y.transpose(batch_major))
    recorded["H"] = y_out if inp.lens is None else np.where(mask[..., None], y_out, np.nan)
    recorded["mask"] = mask

    def output(value: np.ndarray, perm: tuple[int, ...]) -> np.ndarray:
        value = np.ascontiguousarray(value.transpose(perm))
        return value if value.dtype == inp.out_dtype else value.astype(inp.out_dtype)

    # y_out is [seq, dir, batch, hidden]; states are [dir, hidden, batch]
    produced = [output(y_out, (2, 0, 1, 3) if config.layout else (0, 1, 2, 3)),
                output(y_h, (2, 0, 1) if config.layout else (0, 2, 1))]
    if y_c is not None:
        produced.append(output(y_c, (2, 0, 1) if config.layout else (0, 2, 1)))
    return produced[:n_outputs], {"gates": recorded}
