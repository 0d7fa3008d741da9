"""Whether a value's difference is its node's own or carried from its inputs: the node run again by explorer on
B's values of its inputs (cast to A's types), against B's value, within the rounding its operation can make
(rounding.assess, with the magnitudes it accumulates). In execution order, every difference its inputs' differences
explain is marked so; the first one they do not explain is the first divergence. Indices that differ only among
values equal within the tolerance (TopK, ArgMax, ArgMin, NonMaxSuppression) are a tie-order difference."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..budgets import SPILL_RELEASE_EVERY
from ..executor.engine import Engine
from ..executor.kernels import build_kernel
from ..executor.ops.base import Call
from ..executor.run import program_of
from ..limits import Limits
from ..proto.graph import attribute
from ..spec.random_ops import draws
from ..spec.rnn import CELLS
from ..trace.trace import Event, Trace
from .align import Pair
from .both_gates import layout0
from .framework import check_gates
from .measure import IterationError, ValueComparison
from .precision import Tolerance
from .recording import Produced, Recording, is_summary
from .rounding import ACCUMULATING, assess
from .stats import float_errors

CARRIED = "rounding carried from its inputs"
ACCUMULATED = "an accumulation's rounding (ε · Σ|a|·|b|)"
RECURRENCE = "rounding carried through its recurrence (each side's every step is the equations' from its own state)"
FROM_BODY = "rounding carried from its body"
TIE = "tie order: indices differ only among values equal within the tolerance"
TIE_OPS = frozenset({"TopK", "ArgMax", "ArgMin", "NonMaxSuppression"})
CONTROL = frozenset({"If", "Loop", "Scan", "SequenceMap"})
MAX_SECONDS = 30.0  # past this, what is left unexplained stays a difference (a note says so)
DEPTH = 3  # how far back through A's own nodes (a Cast an fp16 conversion added) B's values are carried

Outputs = dict[str, Any]


class _Rerun:
    """A's nodes run again on B's values of their inputs, each node's kernel built once."""

    def __init__(self, a: Recording, b: Recording, pairs: list[Pair]) -> None:
        assert a.model is not None and a.trace is not None
        self.a, self.model, self.trace = a, a.model, a.trace
        self.program = program_of(a.model)
        self.kernels: dict[str, tuple[Callable[..., Any], bool]] = {}
        self.by_name: dict[str, list[Pair]] = {}
        for pair in pairs:
            self.by_name.setdefault(pair.a.name, []).append(pair)
        paired = {p.a.key for p in pairs}
        self.a_only: dict[str, Produced] = {p.name: p for k, p in a.produced.items() if k not in paired}
        self.cache: dict[tuple[int, bool, bool], Outputs | None] = {}
        self._engine: Engine | None = None

    def outputs(self, event: Event, magnitudes: bool = False, depth: int = 0, own: bool = False) -> Outputs | None:
        """The node's outputs by name on B's values of its inputs (A's own when `own`; their absolute values
        when `magnitudes`). Only the outputs of nodes that make a value B lacks are kept, for the nodes that
        read it (see _b_value): the others are asked once, and keeping them would hold every rerun in memory."""
        key = (event.index, magnitudes, own)
        if key in self.cache:
            return self.cache[key]
        found = self._run(event, magnitudes, depth, own)
        if not magnitudes and not own and any(name in self.a_only for name in event.outputs):
            self.cache[key] = found
        return found

    def inputs(self, event: Event, depth: int = 0, own: bool = False) -> list[Any] | None:
        """The node's arguments (None for an omitted input): B's values, or A's own recorded ones."""
        proto = self.model.node(event.node).proto
        recorded = dict(event.inputs)
        if any(is_summary(v) for v in recorded.values()):
            return None
        if own:
            return [recorded.get(name) if name else None for name in proto.input]
        return [None if not name else self._b_value(name, event.iteration, recorded.get(name), depth)
                for name in proto.input]

    def _run(self, event: Event, magnitudes: bool, depth: int, own: bool) -> Outputs | None:
        args = self.inputs(event, depth, own)
        if args is None:
            return None
        if magnitudes:
            args = [np.abs(v) if isinstance(v, np.ndarray) and v.dtype.kind in "fc" else v for v in args]
        try:
            fn, special = self.kernels.get(event.node) or self._kernel(event.node)
            with np.errstate(all="ignore"):
                if not special:
                    values = fn(args)
                elif event.op_type in CELLS:
                    values, _ = fn(args, Call(self.engine, {}, event.iteration, event.node, event.op_type))
                else:
                    return None
        except Exception:  # noqa: BLE001 - a node that does not run on B's values explains nothing
            return None
        names = [name for name in self.model.node(event.node).proto.output]
        return {name: value for name, value in zip(names, values) if name}

    def _kernel(self, path: str) -> tuple[Callable[..., Any], bool]:
        found = self.kernels[path] = build_kernel(self.model.node(path), self.program)
        return found

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = Engine(self.program, Limits(), Trace(model_source=self.model.source))
        return self._engine

    def _b_value(self, name: str, iteration: tuple[int, ...], ours: Any, depth: int) -> Any:
        """B's value of an input of A's node at `iteration` (an outer value: at the enclosing iteration), cast to
        A's type; a value only A has, made by A's node from B's values; else A's own (a feed, a weight)."""
        for pair in self.by_name.get(name, ()):
            for k in range(len(iteration), -1, -1):
                at = iteration[:k]
                if at in pair.a.values and at in pair.b.values and not is_summary(pair.b.values[at]):
                    return _like(pair.b.values[at], ours)
        own = self.a_only.get(name)
        if own is not None and depth < DEPTH:
            for k in range(len(iteration), -1, -1):
                at = iteration[:k]
                if at in own.order:
                    found = self.outputs(self.trace.events[own.order[at]], depth=depth + 1)
                    if found is not None and name in found:
                        return _like(found[name], ours)
                    break
        return ours


def _like(theirs: Any, ours: Any) -> Any:
    if isinstance(theirs, np.ndarray) and isinstance(ours, np.ndarray) and theirs.dtype != ours.dtype \
            and theirs.shape == ours.shape:
        with np.errstate(all="ignore"):
            return theirs.astype(ours.dtype)
    return theirs


def explain(values: list[ValueComparison], pairs: list[Pair], a: Recording, b: Recording) -> list[str]:
    """Marks, in A's execution order, each difference beyond its tolerance that its inputs' differences explain
    (IterationError.within, own_error), up to the first one they do not; returns notes on what was not
    examined."""
    if a.model is None or a.trace is None:
        return []
    of_pair = {(p.a.node, p.a.name): p for p in pairs}
    pending = sorted(((e.order, v, e) for v in values for e in v.errors if not e.ok), key=lambda item: item[0])
    if not pending:
        return []
    rerun = _Rerun(a, b, pairs)
    explained: list[int] = []
    start = time.perf_counter()
    read = 0
    for order, v, e in pending:
        if time.perf_counter() - start > MAX_SECONDS:
            return [f"rounding: {len(pending) - len(explained)} difference(s) left unexamined after "
                    f"{MAX_SECONDS:g} s"]
        read += getattr(of_pair[(v.node, v.name)].b.values.get(e.iteration), "nbytes", 0)
        if read >= SPILL_RELEASE_EVERY:  # the pages of values on disk read so far leave memory
            a.release()
            b.release()
            read = 0
        reason = _why(rerun, of_pair[(v.node, v.name)], v, e, explained)
        if reason is None:
            break
        e.ok, e.within = True, reason
        explained.append(order)
    _tie_effects(values, rerun)
    return []


def _tie_effects(values: list[ValueComparison], rerun: _Rerun) -> None:
    """Says, for each tie order, what it changes downstream: the later values that differ only as carried."""
    carried = {v.node for v in values for e in v.errors if e.within in (CARRIED, FROM_BODY)}
    for v in values:
        for e in v.errors:
            if e.within != TIE:
                continue
            reached = _downstream(rerun, v.node, v.name) & carried
            e.within = TIE + ("; downstream it changes " + ", ".join(sorted(reached)[:5])
                              + (", ..." if len(reached) > 5 else "") if reached else "; nothing downstream differs")


def _downstream(rerun: _Rerun, node: str, name: str) -> set[str]:
    """The nodes of the same graph that read `name`, directly or through other nodes."""
    index = rerun.model.index
    consumers = index.consumers(rerun.model.node(node).graph.path)
    found: set[str] = set()
    pending = [name]
    while pending:
        for path in consumers.get(pending.pop(), ()):
            if path not in found:
                found.add(path)
                pending.extend(n for n in rerun.model.node(path).proto.output if n)
    return found


def _why(rerun: _Rerun, pair: Pair, v: ValueComparison, e: IterationError, explained: list[int]) -> str | None:
    if e.iteration not in pair.b.values or e.order >= len(rerun.trace.events):
        return None
    event = rerun.trace.events[e.order]
    if event.node != v.node or event.summarized:
        return None
    theirs = pair.b.values[e.iteration]
    if is_summary(theirs):
        return None
    if v.op_type in CONTROL or "function" in event.info:
        children = event.info.get("children")
        return FROM_BODY if children and any(children[0] <= k < children[1] for k in explained) else None
    if draws(v.op_type, dict(event.inputs), rerun.model.node(v.node).proto):
        return None
    found = rerun.outputs(event)
    if found is None or v.name not in found:
        return None
    magnitude = None
    if v.op_type in ACCUMULATING:
        magnitudes = rerun.outputs(event, magnitudes=True)
        magnitude = None if magnitudes is None else magnitudes.get(v.name)
        ours = event.outputs[v.name]
        if magnitude is not None and assess(v.name, ours, theirs, v.tolerance, v.op_type, magnitude).ok:
            return ACCUMULATED
    own = assess(v.name, found[v.name], theirs, v.tolerance, v.op_type, magnitude)
    again = rerun.outputs(event, own=True)  # a recorded value its kernel does not give is the node's own error
    if again is None or v.name not in again or \
            not assess(v.name, event.outputs[v.name], again[v.name], v.tolerance, v.op_type, magnitude).ok:
        return None
    if own.ok:
        e.own_error = own.max_abs
        return CARRIED
    if v.op_type in CELLS and _steps_agree(rerun, event, v):
        e.own_error = own.max_abs
        return RECURRENCE
    if v.op_type in TIE_OPS:
        args = rerun.inputs(event)
        if args is not None and _ties(v.op_type, rerun.model.node(v.node).proto, args, found[v.name], theirs,
                                      v.tolerance):
            e.own_error = own.max_abs
            return TIE
    return None


def _steps_agree(rerun: _Rerun, event: Event, v: ValueComparison) -> bool:
    """Whether each side's every step of a recurrent node is, within the rounding of its sums, the spec's
    equations started from that side's own previous H (A: its gates; B: its Y): then what differs at the
    outputs is rounding the recurrence carried, step after step."""
    y = rerun.model.node(event.node).proto.output[0]
    pair = next((p for p in rerun.by_name.get(y, ()) if p.a.node == event.node), None)
    theirs, ours = (None, None) if pair is None else (pair.b.values.get(event.iteration),
                                                      pair.a.values.get(event.iteration))
    if not isinstance(theirs, np.ndarray) or not isinstance(ours, np.ndarray) or "gates" not in event.info:
        return False
    tolerance = v.tolerance
    try:
        checks = [check_gates(rerun.model, rerun.trace, event.node, event.iteration, against="B",
                              teacher_h=layout0(rerun.model, event.node, y_of).astype(np.float64),
                              rtol=tolerance.rtol, atol=tolerance.atol, rounding=tolerance.eps)
                  for y_of in (ours, theirs)]
    except (KeyError, ValueError, IndexError):
        return False
    own, other = checks
    if own.notes or own.divergence is not None or other.slack is None or "H" not in other.theirs:
        return False
    _, _, beyond = float_errors(np.nan_to_num(other.theirs["H"]), layout0(rerun.model, event.node, theirs),
                                tolerance.rtol, tolerance.atol, other.slack["H"])
    return not beyond.any()


def _ties(op_type: str, proto: Any, args: list[Any], ours: Any, theirs: Any, tolerance: Tolerance) -> bool:
    """Whether two index results pick values equal within the tolerance at every position."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    if ours.shape != theirs.shape or ours.dtype.kind not in "iu" or theirs.dtype.kind not in "iu":
        return False
    data = np.asarray(args[1] if op_type == "NonMaxSuppression" else args[0])
    try:
        if op_type == "NonMaxSuppression":
            picked = [data[ix[:, 0], ix[:, 1], ix[:, 2]] for ix in (ours, theirs)]
        else:
            axis = int(attribute(proto, "axis", -1 if op_type == "TopK" else 0))
            if op_type != "TopK" and not attribute(proto, "keepdims", 1):
                ours, theirs = np.expand_dims(ours, axis), np.expand_dims(theirs, axis)
            picked = [np.take_along_axis(data, ix.astype(np.int64), axis) for ix in (ours, theirs)]
    except (IndexError, ValueError):
        return False
    return assess("", picked[0], picked[1], tolerance).ok
