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
from dataclasses import dataclass
from functools import lru_cache
from operator import is_
from typing import TYPE_CHECKING, Any

import numpy as np

from ...budgets import RNN_STEP_INPUT_BYTES
from ...errors import ExecutionError, where
from ...spec.rnn import RnnConfig, config_from
from ..aligned import aligned_copy, aligned_empty
from ..ops.base import Call, OpNode, SpecialKernel
from . import cells
from .activations import ActivationFn, lane_activations, sigmoid_of_negated
from .lanes import Schedule, TimeOrder, schedule, time_order
from .rnn_inputs import RnnInputs, read_inputs
from .step_rows import StepRows, joined_weights

if TYPE_CHECKING:
    from ...trace.trace import EventInfo


def configured(op: OpNode) -> tuple[RnnConfig, tuple[ActivationFn, ...], int]:
    """A recurrent node's config (checked against its operator version), activations and output count."""
    config = config_from(op.node, op.version, {att.name: op.attr(att.name) for att in op.node.proto.attribute})
    return config, lane_activations(config.activations), len(op.node.proto.output)


def failure(call: Call) -> Callable[[str], ExecutionError]:
    """message -> the ExecutionError naming the execution."""
    def fail(message: str) -> ExecutionError:
        return ExecutionError(f"{where(call.path, call.op_type, call.iteration)}: {message}", node=call.path,
                              op_type=call.op_type, iteration=call.iteration)

    return fail


def rnn_kernel(op: OpNode) -> SpecialKernel:
    config, activations, n_outputs = configured(op)
    kept = KeptWeights()

    def kernel(args: Sequence[Any], call: Call) -> tuple[list[Any], EventInfo]:
        return run_cells(config, activations, read_inputs(args, config, failure(call)), call, n_outputs,
                         kept=kept)

    return kernel




def _project_inputs(inp: RnnInputs, config: RnnConfig, orders: list[TimeOrder], gates: np.ndarray,
                    scales: np.ndarray | None, kept: KeptWeights, whole: np.ndarray | None = None) -> None:
    """Writes X·Wᵀ of every step into `gates` ([seq, gate, direction, batch, hidden], processing order), plus the
    biases that need no per-step work (every row times `scales`); each step then adds its recurrent product in
    place. The directions that read X in time order or reversed share one matrix product per chunk of steps (a
    reverse direction with sequence lengths reads X permuted, in a product of its own). `whole`: the right
    operand of that product for every lane (`_input_weights`), kept by the node's Setup.

    The biases enter the product as one more column of X, all ones, against a row of biases under Wᵀ: that costs
    the product almost nothing, where adding them while copying the product into place costs three times the
    copy. Building that Wᵀ pays when the node keeps it (W and B are initializers) or X has more rows than columns;
    otherwise (a step or two of a cell whose weights are computed) the biases are added during the copy."""
    x, hidden = inp.x, inp.hidden
    seq, batch, size = x.shape
    n_gates, nd = len(config.cell.gates), len(orders)
    bias_row = inp.b is not None and (whole is not None or KeptWeights.keeps((inp.w, inp.b)) or seq * batch >= size)
    added = None  # the biases added during the copy, [lanes, gate, 1, hidden]
    if inp.b is not None and not bias_row:
        folded = _folded_biases(inp, config)
        assert folded is not None
        added = (folded if scales is None else folded * scales).reshape(nd, n_gates, 1, hidden)
    plain = [k for k, order in enumerate(orders) if order.index is None]
    groups = [(x, plain)] if plain else []
    groups += [(order.apply(x, 1), [k]) for k, order in enumerate(orders) if order.index is not None]
    step_bytes = max(1, batch * len(plain or [0]) * n_gates * hidden * gates.itemsize)
    chunk = max(1, RNN_STEP_INPUT_BYTES // step_bytes)
    width = size + bias_row
    for source, lanes in groups:
        w = whole if whole is not None and len(lanes) == nd else \
            _input_weights(inp, config, lanes, scales, bias_row, gates.dtype, kept)
        for t0 in range(0, seq, chunk):
            t1 = min(seq, t0 + chunk)
            rows = source[t0:t1].reshape((t1 - t0) * batch, size)
            if bias_row:
                ones = np.empty((len(rows), width), gates.dtype)
                ones[:, :size] = rows
                ones[:, size] = 1
                rows = ones
            products = np.matmul(rows, w).reshape(t1 - t0, batch, len(lanes), n_gates, hidden)
            for j, k in enumerate(lanes):
                projected = products[:, :, j].transpose(0, 2, 1, 3)  # [steps, gate, batch, hidden]
                reversed_steps = orders[k].reverse and orders[k].index is None
                target = gates[seq - t1:seq - t0, :, k][::-1] if reversed_steps else gates[t0:t1, :, k]
                if added is None:
                    target[...] = projected
                else:
                    np.add(projected, added[k], out=target)


def _input_weights(inp: RnnInputs, config: RnnConfig, lanes: list[int], scales: np.ndarray | None, bias_row: bool,
                   dtype: np.dtype, kept: KeptWeights) -> np.ndarray:
    """The right operand of the input projection of `lanes`: Wᵀ ([input (+ 1), lanes * gates * hidden]), the
    biases' row under it when `bias_row` (kept by `kept` while W and B are read-only), times the scales."""
    hidden, size = inp.hidden, inp.w.shape[2]
    n_gates, nd = len(config.cell.gates), inp.w.shape[0]
    weights = inp.w.reshape(nd, n_gates * hidden, size)
    if not bias_row:
        chosen = weights if len(lanes) == nd else weights[lanes]
        if scales is not None:
            chosen = chosen * scales[:, None]
        transposed: np.ndarray = chosen.reshape(len(lanes) * n_gates * hidden, size).T
        return transposed

    def build() -> np.ndarray:
        folded = _folded_biases(inp, config)
        assert folded is not None
        w = aligned_empty((size + 1, len(lanes), n_gates * hidden), dtype)
        w[:size] = weights[lanes].transpose(2, 0, 1)
        w[size] = folded[lanes]
        if scales is not None:
            w *= scales
        return w.reshape(size + 1, len(lanes) * n_gates * hidden)

    return kept.get(("W", tuple(lanes), _scaling(scales), dtype), (inp.w, inp.b), build)


def _folded_biases(inp: RnnInputs, config: RnnConfig) -> np.ndarray | None:
    """Wb + Rb per gate ([directions, gates * hidden]), None without B."""
    if inp.b is None:
        return None
    blocks = len(config.cell.gates) * inp.hidden
    folded: np.ndarray = inp.b[:, :blocks] + inp.b[:, blocks:]
    if config.cell.op_type == "GRU" and config.linear_before_reset:
        wbh = slice(*config.cell.block(2, inp.hidden))
        folded[:, wbh] = inp.b[:, wbh]  # Rbh goes inside r (.) (...)
    return folded


class KeptWeights:
    """A node's weights in the layouts its products read, kept from run to run while their sources are the same
    read-only arrays (initializers):

    - Rᵀ for the recurrent products: [lanes, hidden, gates * hidden], or per gate [lanes, gates, hidden, hidden]
      (cells._recurrent_product). Each step's product is fastest on a contiguous copy, which costs about as much
      as a few steps: a node makes it when its steps or batch make up for it (`worth_copying`).
    - Wᵀ with the biases' row under it, for the input projection (_project_inputs);
    - or, for an LSTM whose steps are one product each, [Wᵀ; Rᵀ; biases] per gate (step_rows.joined_weights).

    The scaling of the sigmoid gates' rows (_gate_scales) is part of each key."""

    def __init__(self) -> None:
        self._kept: dict[tuple[object, ...], tuple[tuple[np.ndarray | None, ...], np.ndarray]] = {}
        self._scales: dict[tuple[object, ...], tuple[np.ndarray | None, bool]] = {}  # of `_config`
        self._config: RnnConfig | None = None
        self._setup: tuple[RnnConfig, tuple[object, ...], tuple[np.ndarray | None, ...], Setup] | None = None

    def gate_scales(self, config: RnnConfig, hidden: int, dtype: np.dtype, peepholes: bool
                    ) -> tuple[np.ndarray | None, bool]:
        """_gate_scales, made once per node (its config) and shape (read-only: every run shares them)."""
        if config is not self._config:
            self._scales.clear()
            self._config = config
        key = (hidden, dtype, peepholes)
        found = self._scales.get(key)
        if found is None:
            scales, halved = _gate_scales(config, hidden, dtype, peepholes)
            if scales is not None:
                scales.flags.writeable = False
            found = self._scales[key] = (scales, halved)
        return found

    def setup(self, config: RnnConfig, inp: RnnInputs, plain_state: bool) -> Setup | None:
        """The Setup kept for a run of this config on inputs of these shapes and these same weights, if any."""
        found = self._setup
        if found is None:
            return None
        kept_config, key, sources, setup = found
        if kept_config is not config or key != _setup_key(inp, plain_state) \
                or not _same(sources, (inp.w, inp.r, inp.b, inp.p)):
            return None
        return setup

    def keep_setup(self, config: RnnConfig, inp: RnnInputs, plain_state: bool, setup: Setup) -> None:
        """Keeps the node's last Setup while its weights are read-only (initializers)."""
        sources = (inp.w, inp.r, inp.b, inp.p)
        if self.keeps(sources):
            self._setup = (config, _setup_key(inp, plain_state), sources, setup)

    def get(self, key: tuple[object, ...], sources: tuple[np.ndarray | None, ...],
            build: Callable[[], np.ndarray]) -> np.ndarray:
        """The kept array under `key` made from `sources`, else `build()` (kept when every source is read-only)."""
        kept = self._kept.get(key)
        if kept is not None and _same(kept[0], sources):
            return kept[1]
        value = build()
        if self.keeps(sources):
            self._kept[key] = (sources, value)
        return value

    @staticmethod
    def keeps(sources: tuple[np.ndarray | None, ...]) -> bool:
        """Whether what is made from `sources` is kept: when every one is read-only (an initializer)."""
        return all(source is None or not source.flags.writeable for source in sources)

    @staticmethod
    def worth_copying(r: np.ndarray, seq: int, batch: int) -> bool:
        return not r.flags.writeable or batch > 1 or seq > 4

    def transposed_r(self, r: np.ndarray, copy: bool, scales: np.ndarray | None, per_gate: int | None
                     ) -> np.ndarray:
        """Rᵀ, split into `per_gate` gates when given, its columns times `scales` (which only a copy applies)."""
        lanes, width, hidden = r.shape
        if per_gate is not None:
            rt: np.ndarray = r.reshape(lanes, per_gate, hidden, hidden).transpose(0, 1, 3, 2)
            column_scales = None if scales is None else scales.reshape(per_gate, 1, hidden)
        else:
            rt = r.transpose(0, 2, 1)
            column_scales = scales
        if not copy:
            return rt

        def build() -> np.ndarray:  # C order: a product of a transposed view keeps its strides
            if column_scales is None:
                return aligned_copy(rt)
            copied = aligned_empty(rt.shape, rt.dtype)
            np.multiply(rt, column_scales, out=copied)
            return copied

        return self.get(("R", per_gate, _scaling(scales), rt.dtype), (r,), build)


def _setup_key(inp: RnnInputs, plain_state: bool) -> tuple[object, ...]:
    """What a Setup depends on besides the config and the weights: X's shape and type, the sequence lengths (their
    orders and steps), and whether the recurrent product reads H as it is."""
    return (inp.x.shape, inp.x.dtype, None if inp.lens is None else inp.lens.tobytes(), plain_state)


def _same(kept: tuple[np.ndarray | None, ...], sources: tuple[np.ndarray | None, ...]) -> bool:
    """Whether the arrays are the same objects, one by one (`map` of `is_`: a generator costs a small cell's run
    more than the comparisons)."""
    return len(kept) == len(sources) and all(map(is_, kept, sources))


def _gate_scales(config: RnnConfig, hidden: int, dtype: np.dtype, peepholes: bool
                 ) -> tuple[np.ndarray | None, bool]:
    """(the factor on every row of W, R and B, or None for none; whether the LSTM loop takes its sigmoids from
    tanh). Scaling by -1 or 1/2 is exact, so every pre-activation is exactly -x or x/2.

    - An LSTM with the default activations everywhere, no clip, no peepholes and no coupled input and forget
      gates: its sigmoid gates (i, o, f) get 1/2, so one tanh over all four gates gives tanh(x/2), from which
      sigmoid(x) = (1 + tanh(x/2)) / 2 in two calls (cells.lstm).
    - Else a GRU or LSTM whose f is Sigmoid in every direction: its sigmoid gates (GRU's z and r, LSTM's i, o and
      f) get -1, and sigmoid(x) = 1 / (1 + exp(-x)) takes three calls instead of four (sigmoid_of_negated)."""
    op_type = config.cell.op_type
    if op_type not in ("GRU", "LSTM") or any(acts[0].name != "Sigmoid" for acts in config.activations):
        return None, False
    halved = (op_type == "LSTM" and config.clip is None and not peepholes and not config.input_forget
              and all(tuple(a.name for a in acts) == config.cell.activations for acts in config.activations))
    n_gates = len(config.cell.gates)
    scales = np.ones(n_gates * hidden, dtype)
    scales[:(n_gates - 1) * hidden] = 0.5 if halved else -1  # every gate but the last, whose activation is g
    return scales, halved


def _scaling(scales: np.ndarray | None) -> float | None:
    """The factor on the sigmoid gates' rows (-1 or 1/2), None for none."""
    return None if scales is None else float(scales[0])


@dataclass(frozen=True)
class Setup:
    """What a run of a node prepares from its config, its weights and its shapes alone (not from X or the initial
    states): the time orders and steps, the gate scaling and activations, the recurrent weights' layout and the
    GRU's Rbh; made at a run and kept (KeptWeights.setup) for the next while they stay the same."""

    orders: list[TimeOrder]
    steps: Schedule
    scales: np.ndarray | None
    halved: bool
    activations: tuple[ActivationFn, ...]
    joined: bool  # an LSTM whose steps are one product each (step_rows.py); `rt` then [Wᵀ; Rᵀ; biases]
    rt: np.ndarray
    rb: np.ndarray | None  # [lanes, batch, hidden], read-only
    projection: np.ndarray | None  # the input projection's right operand for every lane (_input_weights)


def _dims(config: RnnConfig, inp: RnnInputs) -> tuple[bool, int, int, int, int, int, int, np.dtype]:
    """(is an LSTM, hidden size, directions, steps, batch, input size, gates, dtype) of a run."""
    seq, batch, size = inp.x.shape
    return (config.cell.op_type == "LSTM", inp.hidden, config.num_directions, seq, batch, size,
            len(config.cell.gates), inp.x.dtype)


def _prepare(config: RnnConfig, activations: tuple[ActivationFn, ...], inp: RnnInputs, kept: KeptWeights,
             plain_state: bool) -> Setup:
    """The node's Setup for these inputs; `plain_state`: the recurrent product reads H as it is."""
    cell = config.cell
    is_lstm, hidden, nd, seq, batch, size, n_gates, dtype = _dims(config, inp)
    orders = [time_order(config.direction == "reverse" or k == 1, seq, inp.lens) for k in range(nd)]
    copy_r = KeptWeights.worth_copying(inp.r, seq, batch)
    scales, halved = kept.gate_scales(config, hidden, dtype, inp.p is not None) if copy_r else (None, False)
    if scales is not None and not halved:
        activations = (sigmoid_of_negated, *activations[1:])
    joined = is_lstm and copy_r and plain_state and StepRows.pays(size, hidden, batch)
    rb = None
    if cell.op_type == "GRU" and config.linear_before_reset and inp.b is not None:
        rbh = slice(*cell.block(2, hidden, half=1))
        rb = np.empty((nd, batch, hidden), dtype)
        rb[...] = inp.b[:, None, rbh]
        rb.flags.writeable = False
    # per gate for the cells whose step multiplies every gate by H (LSTM, GRU with linear_before_reset)
    per_gate = n_gates if batch >= 4 and (is_lstm or (cell.op_type == "GRU" and config.linear_before_reset)) \
        else None
    if joined:
        rt = kept.get(("WR", _scaling(scales), dtype), (inp.w, inp.r, inp.b),
                      lambda: joined_weights(inp.w, inp.r, _folded_biases(inp, config), scales, n_gates))
    else:
        rt = kept.transposed_r(inp.r, copy_r, scales, per_gate)
    projection = None
    if not joined and inp.lens is None and KeptWeights.keeps((inp.w, inp.b)):  # kept: every lane in one product
        projection = _input_weights(inp, config, list(range(nd)), scales, inp.b is not None, dtype, kept)
    return Setup(orders, schedule(seq, inp.lens), scales, halved, activations, joined, rt, rb, projection)


def run_cells(config: RnnConfig, activations: tuple[ActivationFn, ...], inp: RnnInputs, call: Call,
              n_outputs: int, recurrent_state: Callable[[np.ndarray], np.ndarray] | None = None,
              kept: KeptWeights | None = None) -> tuple[list[Any], EventInfo]:
    """Runs the time loop of every direction and returns the node's outputs and its recorded gates;
    `recurrent_state` (LSTM) maps H before each recurrent product (quantized LSTM); `kept` keeps the
    node's weights in the layouts its products read from run to run."""
    cell = config.cell
    is_lstm, hidden, nd, seq, batch, _, n_gates, dtype = _dims(config, inp)
    step_bytes = seq * nd * batch * hidden * dtype.itemsize
    call.engine.check_bytes((n_gates + 2 + is_lstm) * step_bytes, "recording its gates", call.path,
                            call.op_type, call.iteration)

    kept = kept or KeptWeights()
    setup = kept.setup(config, inp, recurrent_state is None)
    if setup is None:
        setup = _prepare(config, activations, inp, kept, recurrent_state is None)
        kept.keep_setup(config, inp, recurrent_state is None, setup)
    orders, scales = setup.orders, setup.scales
    gates = aligned_empty((seq, n_gates, nd, batch, hidden), dtype)
    y = aligned_empty((seq, nd, batch, hidden), dtype)
    state_shape = (nd, batch, hidden)
    h0 = np.zeros(state_shape, dtype) if inp.h0 is None else inp.h0
    rows = None
    if setup.joined:
        rows = StepRows([order.apply(inp.x, 1) for order in orders], h0, inp.b is not None, RNN_STEP_INPUT_BYTES)
    else:
        _project_inputs(inp, config, orders, gates, scales, kept, setup.projection)
    lanes = cells.Lanes(setup.rt, setup.rb, gates, y, h0, setup.activations, setup.steps, recurrent_state, rows)
    halved = setup.halved
    cell_states = aligned_empty((seq, nd, batch, hidden), dtype) if is_lstm else None
    y_c = None
    # overflow in exp (sigmoid of x << 0) gives the right limit: explorer.run ignores floating-point warnings
    if cell.op_type == "GRU":
        y_h = cells.gru(lanes, config).copy()
    elif cell_states is not None:
        c0 = np.zeros(state_shape, dtype) if inp.c0 is None else inp.c0
        peepholes = inp.p if inp.p is None or scales is None else -inp.p  # P_i, P_o, P_f: negated gates all
        last_h, last_c = cells.lstm(lanes, config, c0, cell_states, peepholes, halved)
        y_h, y_c = last_h.copy(), last_c.copy()
    else:
        y_h = cells.rnn(lanes, config).copy()
    for k, order in enumerate(orders):  # back to time order
        if order.reverse:
            gates[:, :, k] = order.apply(gates[:, :, k], 2).copy()
            for series in (y, cell_states):
                if series is not None:
                    series[:, k] = order.apply(series[:, k], 1).copy()
    return _outputs(config, inp, gates, y, cell_states, y_h, y_c, n_outputs)


def _outputs(config: RnnConfig, inp: RnnInputs, gates: np.ndarray, y: np.ndarray, cell_states: np.ndarray | None,
             y_h: np.ndarray, y_c: np.ndarray | None, n_outputs: int) -> tuple[list[Any], EventInfo]:
    """Y, Y_h[, Y_c] in the node's layout and dtype, and the recorded gates (time order, [seq, dir, batch,
    hidden]) with the padding past each sequence's length masked. `gates` is [seq, gate, dir, batch, hidden],
    the others [seq or -, dir, batch, hidden]."""
    seq, nd, batch, _ = y.shape
    recorded = {name: gates[:, j] for j, name in enumerate(config.cell.recorded)}
    if cell_states is not None:
        recorded["C"] = cell_states
    if inp.lens is None:
        mask = _every_step(seq, nd, batch)
    else:
        mask = np.repeat((np.arange(seq)[:, None] < inp.lens[None, :])[:, None, :], nd, axis=1)
        padded = ~mask[..., None]
        np.copyto(gates, np.nan, where=padded[:, None])
        if cell_states is not None:
            np.copyto(cell_states, np.nan, where=padded)
        np.copyto(y, 0, where=padded)
        empty = inp.lens == 0  # no step at all: onnxruntime gives zeros, not the initial state
        y_h[:, empty] = 0
        if y_c is not None:
            y_c[:, empty] = 0
    recorded["H"] = y if inp.lens is None else np.where(mask[..., None], y, np.nan)
    recorded["mask"] = mask

    def output(value: np.ndarray, perm: tuple[int, ...] | None) -> np.ndarray:
        if perm is not None:
            value = np.ascontiguousarray(value.transpose(perm))
        return value if value.dtype == inp.out_dtype else value.astype(inp.out_dtype)

    # y is [seq, dir, batch, hidden], the states [dir, batch, hidden]: layout 0 already
    produced = [output(y, (2, 0, 1, 3) if config.layout else None),
                output(y_h, (1, 0, 2) if config.layout else None)]
    if y_c is not None:
        produced.append(output(y_c, (1, 0, 2) if config.layout else None))
    return produced[:n_outputs], {"gates": recorded}


@lru_cache(maxsize=256)
def _every_step(seq: int, nd: int, batch: int) -> np.ndarray:
    """The recorded mask of a node without sequence lengths (every step of every item ran): one read-only array per
    shape, shared by every run's trace."""
    mask = np.ones((seq, nd, batch), bool)
    mask.flags.writeable = False
    return mask
