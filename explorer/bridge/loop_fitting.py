"""A recurrent cell the exporter wrote as a Loop or Scan (found by explorer/cells), departing on its own: the
exporter's mistakes are fitted on the weights its body reads (per direction: the kernel, the recurrent kernel,
their biases, a GRU's candidate kernel, as cells/cell_weights.py finds them): the gate blocks in another order
(every tensor together, or one alone), the input and recurrent biases swapped, the two directions' weights
swapped (a bidirectional pair of loops). Each variant is written into a copy of the model (weight_writes.py) and the
point is rerun there from exact inputs (forcing.py); the first that gives the framework's value is the fix,
written as new values of those weights. A GRU whose body applies its reset gate on the other side of the recurrent
product than the framework does has its body's nodes rewritten instead (reset_placement.py), tried first."""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from ..cells.cell import RecurrentCell
from ..cells.find import recurrent_cells
from ..compare.stats import compare_values
from ..errors import ExplorerError
from ..executor import run
from ..model.model import Model, load
from ..trace.trace import Trace
from .align import Point, Recorded
from .forcing import force
from .report import Finding
from .reset_placement import ResetMove, reset_moves
from .weight_writes import WeightKey, replace_initializers, rewrite_weights

ROLES = ("kernel", "recurrent", "kernel_bias", "recurrent_bias", "candidate")
LETTERS = {("PyTorch", "GRU"): "rzn", ("PyTorch", "LSTM"): "ifgo", ("Keras", "GRU"): "zrh",
           ("Keras", "LSTM"): "ifco"}  # the framework's gate order in its stored weights
Changes = dict[WeightKey, np.ndarray]


@dataclass
class Tensor:
    """One weight a direction's body reads: which node reads it, its value in the run, the axis its gate blocks
    stack on and how many blocks it holds."""

    role: str
    direction: int
    key: WeightKey
    value: np.ndarray
    axis: int
    blocks: int


@dataclass
class LoopFit:
    """The finding, and the model with its fix written in (to tell which other departing points it mends)."""

    finding: Finding
    fixed: Model
    cell: RecurrentCell


def departing_gate(trace: Trace, fixed: Model, feeds: dict[str, Any], cell: RecurrentCell, step: int,
                   rtol: float, atol: float) -> str | None:
    """The first of the cell's series (its gates in the cell's order, then its states) that parts at `step` (in
    processing order) between the export's run and the fixed model's, which gives the framework's values: where
    the export's equations leave the framework's. None when the gates cannot be gathered."""
    try:
        ours = trace.gates(cell.path)
        theirs = run(fixed, feeds).gates(cell.path)
    except (KeyError, ExplorerError):
        return None
    reverse = [d.reverse for d in cell.layout.directions] if cell.layout is not None else []
    for name, value in ours.items():
        other = theirs.get(name)
        if name == "mask" or other is None or other.shape != value.shape or step >= value.shape[0]:
            continue
        for d in range(value.shape[1]):
            t = value.shape[0] - 1 - step if d < len(reverse) and reverse[d] else step
            if not np.allclose(value[t, d], other[t, d], rtol=rtol, atol=atol, equal_nan=True):
                return name
    return None


def cell_for(model: Model, point: Point, before: list[Point]) -> RecurrentCell | None:
    """The loop-form cell whose body computes `point`, or whose loop the point's value is computed from (the
    nodes between them in the point's graph, back to the values of the earlier points `before`)."""
    cells = [c for c in recurrent_cells(model) if c.form in ("loop", "scan") and c.weights]
    if point.onnx_node is None or not cells:
        return None
    for cell in cells:
        if any(point.onnx_node.startswith(f"{loop}/") for loop in cell.loops):
            return cell
    graph = model.node(point.onnx_node).graph
    known = {p.onnx_value for p in before if p.onnx_value is not None}
    producer = {name: ref for ref in model.nodes() if ref.graph.path == graph.path for name in ref.proto.output
                if name not in known}
    seen: set[str] = set()
    stack = [point.onnx_node]
    while stack and len(seen) < 64:
        path = stack.pop()
        if path in seen:
            continue
        seen.add(path)
        for cell in cells:
            if path in cell.loops:
                return cell
        stack.extend(producer[name].path for name in model.node(path).proto.input if name in producer)
    return None


def _tensors(cell: RecurrentCell, recorded: Recorded) -> list[Tensor]:
    found = []
    hidden = cell.hidden_size or 0
    for d, weights in enumerate(cell.weights):
        for role in ROLES:
            source = getattr(weights, role)
            if source is None:
                continue
            seen = [values[source.value] for values in recorded.values() if source.value in values]
            if not seen or not hidden or any(not np.array_equal(v, seen[0]) for v in seen[1:]):
                continue  # a weight is the same at every step
            value = seen[0]
            value = np.asarray(value)
            transposed = weights.transposed if role in ("kernel", "kernel_bias") else weights.recurrent_transposed
            axis = 0 if (transposed and value.ndim == 2 and role in ("kernel", "recurrent")) else value.ndim - 1
            blocks = value.shape[axis] // hidden if value.ndim and value.shape[axis] % hidden == 0 else 1
            found.append(Tensor(role, d, (source.node, source.value), value, axis, blocks))
    return found


def _reorder(t: Tensor, order: tuple[int, ...]) -> np.ndarray:
    parts = np.split(t.value, t.blocks, axis=t.axis)
    return np.concatenate([parts[k] for k in order], axis=t.axis)


def variants(cell: RecurrentCell, tensors: list[Tensor]) -> Iterator[tuple[str, str, Changes]]:
    """(what the export got wrong, the fix, the weights' new values), simplest first."""
    by_role = {(t.role, t.direction): t for t in tensors}
    for d in range(cell.num_directions):
        a, b = by_role.get(("kernel_bias", d)), by_role.get(("recurrent_bias", d))
        if a is not None and b is not None and a.value.shape == b.value.shape:
            where = f" of direction {d}" if cell.num_directions > 1 else ""
            yield (f"the input and recurrent biases{where} are swapped",
                   f"swap {a.key[1]} and {b.key[1]}", {a.key: b.value, b.key: a.value})
    if cell.num_directions == 2:
        pairs = [(t, by_role.get((t.role, 1))) for t in tensors if t.direction == 0]
        swapped: Changes = {}
        for a, b in pairs:
            if b is not None and a.value.shape == b.value.shape:
                swapped |= {a.key: b.value, b.key: a.value}
        if swapped:
            yield ("the forward and reverse directions' weights are swapped",
                   "swap the two directions' weights", swapped)
    letters = LETTERS.get((cell.framework, cell.kind), "")
    for blocks in sorted({t.blocks for t in tensors if t.blocks > 1}, reverse=True):
        fused = [t for t in tensors if t.blocks == blocks]
        names = letters if len(letters) == blocks else "".join(chr(ord("a") + k) for k in range(blocks))
        for order in itertools.permutations(range(blocks)):
            if order == tuple(range(blocks)):
                continue
            shown = "".join(names[k] for k in order)
            for d in range(cell.num_directions):
                mine = [t for t in fused if t.direction == d]
                where = f" of direction {d}" if cell.num_directions > 1 else ""
                yield (f"the gate blocks of its weights{where} are in the wrong order (the framework's {names} holds "
                       f"{shown})", f"reorder the gate blocks of {_names(mine)} as {shown}",
                       {t.key: _reorder(t, order) for t in mine})
                for t in mine:
                    yield (f"the gate blocks of its {t.role.replace('_', ' ')}{where} are in the wrong order",
                           f"reorder the gate blocks of {t.key[1]} as {shown}", {t.key: _reorder(t, order)})


def _names(tensors: list[Tensor]) -> str:
    return ", ".join(dict.fromkeys(t.key[1] for t in tensors))


def _variant_model(model: Model, changes: Changes) -> Model | None:
    proto = onnx.ModelProto()
    proto.CopyFrom(model.as_given())
    if rewrite_weights(proto, model, changes):
        return None
    try:
        return load(proto.SerializeToString())
    except ExplorerError:
        return None


def mends(fixed: Model, point: Point, before: list[Point], recorded: Recorded, errors: dict[int, float],
          rtol: float, atol: float) -> bool:
    """Whether `point`, rerun from exact inputs in the fixed model, gives the framework's value."""
    forced = force(fixed, point, before, recorded, errors)
    return forced.value is not None and compare_values(point.label, forced.value, point.framework, rtol, atol).ok


def fit_loop_cell(model: Model, point: Point, before: list[Point], recorded: Recorded, errors: dict[int, float],
                  rtol: float, atol: float) -> LoopFit | None:
    """The variant of the weights of the loop-form cell computing `point` that gives the framework's value there,
    as a finding with its fix; None when no such cell computes it or no variant fits."""
    cell = cell_for(model, point, before)
    if cell is None:
        return None
    for which, moves in reset_moves(model, cell):
        fixed = _moved_model(model, moves)
        diff = _fits(fixed, point, before, recorded, errors, rtol, atol)
        if fixed is not None and diff is not None:
            text, fix = _reset_words(cell, which, moves)
            text += f". Fixed ({fix}), {point.label} matches the framework to {diff:.1g}"
            return LoopFit(Finding(point.module, point.onnx_node, text, fix, point=point.label, body=moves), fixed,
                           cell)
    tensors = _tensors(cell, recorded)
    for wrong, fix, changes in variants(cell, tensors):
        fixed = _variant_model(model, changes)
        diff = _fits(fixed, point, before, recorded, errors, rtol, atol)
        if fixed is not None and diff is not None:
            text = (f"{cell.kind} written as a {cell.form} ({cell.loops[0]!r}): {wrong}. Fixed ({fix}), "
                    f"{point.label} matches the framework to {diff:.1g}")
            return LoopFit(Finding(point.module, point.onnx_node, text, fix, point=point.label, weights=changes),
                           fixed, cell)
    return None


def _reset_words(cell: RecurrentCell, which: str, moves: tuple[ResetMove, ...]) -> tuple[str, str]:
    """(what the export got wrong, the fix) for a move of the reset gate."""
    before, after = "(W x + b) + R (r * h) + Rb", "(W x + b) + r * (R h + Rb)"
    where = f" ({which})" if which else ""
    head = f"{cell.kind} written as a {cell.form} ({cell.loops[0]!r}): "
    if moves[0].after:
        return (head + f"the body applies the reset gate to the state before the recurrent product, {before} "
                f"(linear_before_reset=0 written out); the framework applies it after, {after} "
                "(linear_before_reset=1)",
                f"move the reset gate after the candidate's recurrent product{where}: "
                + "; ".join(f"{m.reset} applies r to the output of {m.chain[-1]}" for m in moves))
    return (head + f"the body applies the reset gate after the recurrent product, {after} (linear_before_reset=1 "
            f"written out); the framework applies it to the state before, {before} (linear_before_reset=0)",
            f"move the reset gate before the candidate's recurrent product{where}: "
            + "; ".join(f"{m.reset} applies r to {m.state}, read by "
                        + (f"a copy of {', '.join(m.chain)} whose cut it takes" if m.copied else m.chain[0])
                        for m in moves))


def _fits(fixed: Model | None, point: Point, before: list[Point], recorded: Recorded, errors: dict[int, float],
          rtol: float, atol: float) -> float | None:
    """The point's largest error rerun from exact inputs in `fixed` when within tolerance, else None."""
    if fixed is None:
        return None
    forced = force(fixed, point, before, recorded, errors)
    if forced.value is None:
        return None
    diff = compare_values(point.label, forced.value, point.framework, rtol, atol)
    return diff.max_abs if diff.ok else None


def replaced_model(model: Model, replace: dict[str, np.ndarray]) -> Model | None:
    """The model with some of its main graph's initializers given other values (a fitted cell's weights)."""
    proto = onnx.ModelProto()
    proto.CopyFrom(model.as_given())
    if replace_initializers(proto, replace):
        return None
    try:
        return load(proto.SerializeToString())
    except ExplorerError:
        return None


def _moved_model(model: Model, moves: tuple[ResetMove, ...]) -> Model | None:
    proto = onnx.ModelProto()
    proto.CopyFrom(model.as_given())
    if any(move.apply(proto, model) for move in moves):
        return None
    try:
        return load(proto.SerializeToString())
    except ExplorerError:
        return None
