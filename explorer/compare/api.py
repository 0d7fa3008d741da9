"""`explorer.compare(a, b, feeds)`: two runs of a model (or of two models of the same function) on the same
feeds, every value aligned and measured, the first divergence in execution order, gate-level departures."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..budgets import SPILL_RELEASE_EVERY
from ..errors import CompareError
from ..judge.judge import warm_onnxruntime
from ..limits import Limits
from ..model.model import Model
from ..proto.graph import attribute
from ..spec.random_ops import NONDETERMINISTIC, draws
from ..spec.rnn import CELLS
from ..trace.trace import Trace
from .align import Pair, align
from .both_gates import layout0
from .cell_sides import cell_departures
from .framework import check_gates
from .gate_departures import GateDivergence, first_departure, reverse_directions
from .measure import ValueComparison, measure
from .onnxruntime_side import MAX_EXPOSED, onnxruntime_recording
from .own_error import explain
from .precision import FLOAT32, Tolerance, given, of_dtype, widest
from .recording import Recording, from_trace, from_values
from .report import Comparison
from .rounding import assess
from .saturation import explain as explain_saturation
from .sides import (
    ONNXRUNTIME,
    PYTORCH,
    Side,
    as_model,
    explorer_recording,
    kind_of,
    label_of,
    reference_values,
)
from .stats import OutputDiff
from .value_precision import pair_tolerance, precisions

REFERENCES = (ONNXRUNTIME, PYTORCH, "reference")  # sides that hold values up against explorer's run of the other


def compare(a: Side, b: Side, feeds: dict[str, Any] | None = None, *, rtol: float | None = None,
            atol: float | None = None,
            limits: Limits | None = None, model: Model | None = None, max_exposed: int = MAX_EXPOSED,
            timeout: float | None = None) -> Comparison:
    """Side A against side B. Each side is a Model (or a path, sample name, bytes, proto: run by explorer), a
    Trace, "onnxruntime" (the other side's model run by onnxruntime, every value inside bodies exposed),
    "pytorch" (PyTorch's GRU/LSTM/RNN equations from each recurrent node's weights), or reference values (an
    .npz path or a dict keyed by ONNX value names; PyTorch module parameters in it are used for gates). `feeds`
    default to a trace's own, else random ones from the first model's declared inputs. `model` is the model of
    a Trace side when the other side needs one; `timeout` bounds each onnxruntime call (seconds). Each value is
    judged at its own precision (precision.py) and its operation's rounding (rounding.py) unless `rtol`/`atol`
    are given; a difference its inputs' differences explain is no divergence (own_error.py)."""
    kinds = [kind_of(a), kind_of(b)]
    if kinds[0] in REFERENCES and kinds[1] in REFERENCES:
        raise CompareError("one side must be a model or a trace: explorer's run is what the other is held against")
    if ONNXRUNTIME in kinds:
        warm_onnxruntime()  # its child imports onnxruntime while explorer runs
    sides = [a, b]
    models = [None if kind != "model" else as_model(side) for side, kind in zip(sides, kinds)]
    feeds = _feeds(feeds, sides, [*models, model])
    recordings: list[Recording | None] = [None, None]
    for k in sorted(range(2), key=lambda k: kinds[k] in REFERENCES):  # explorer's side first: the other is like it
        recordings[k] = _recording(sides[k], kinds[k], models[k], recordings[1 - k], feeds, model, limits,
                                   max_exposed, timeout)
    rec_a, rec_b = recordings
    assert rec_a is not None and rec_b is not None
    user = given(rtol, atol)
    base = user or FLOAT32
    result = Comparison(rec_a.label, rec_b.label, base.rtol, base.atol, feeds=feeds, a=rec_a, b=rec_b,
                        by_type=user is None)
    result.errors = {r.label: r.error for r in (rec_a, rec_b) if r.error}
    pairs, result.unaligned = align(rec_a, rec_b)
    ours, theirs = precisions(rec_a), precisions(rec_b)

    def tolerance(pair: Pair) -> Tolerance:
        found = pair_tolerance(pair.a.key, pair.b.key, ours, theirs, next(iter(pair.b.values.values()), None))
        return found if user is None else Tolerance(user.rtol, user.atol, user.precision, found.eps)

    result.values = _measured(pairs, tolerance, rec_a, rec_b)
    result.notes += explain(result.values, pairs, rec_a, rec_b)
    rec_a.release()
    rec_b.release()
    result.outputs = _outputs(rec_a, rec_b, result.values, user)
    result.saturation = explain_saturation(result)  # onnxruntime's u8s8 kernel, where it explains a difference
    result.drawn = {v.node for v in result.values if not v.ok and _draws(rec_a, v.node, v.op_type)}
    result.notes += _drawn_note(sorted(result.drawn))
    if rec_b.kind in ("reference", PYTORCH):  # a reference for some values: those it does not cover are no news
        uncovered = [u for u in result.unaligned if u.side == "A"]
        result.unaligned = [u for u in result.unaligned if u.side != "A"]
        if uncovered:
            result.notes.append(f"{len(uncovered)} value(s) of A have no {rec_b.kind} counterpart")
    result.gates, result.gates_checked = _gates(pairs, rec_a, rec_b, result.values, result.notes)
    cells = widest(v.tolerance for v in result.values) if user is None else user
    cell_gates, cells_checked = cell_departures(rec_a, rec_b, cells.rtol, cells.atol, result.notes)
    result.gates += cell_gates
    result.gates_checked += cells_checked
    rec_a.release()
    rec_b.release()
    return result


def _measured(pairs: list[Pair], tolerance: Callable[[Pair], Tolerance], a: Recording,
              b: Recording) -> list[ValueComparison]:
    """Every pair measured; the pages of values on disk read meanwhile dropped from memory as they add up."""
    found = []
    read = 0
    spilled = a.spill is not None or b.spill is not None
    for pair in pairs:
        found.append(measure(pair, tolerance(pair), _time_axis(pair, a.model)))
        if spilled:
            read += sum(v.nbytes for side in (pair.a, pair.b) for v in side.values.values()
                        if isinstance(v, np.ndarray))
            if read >= SPILL_RELEASE_EVERY:
                a.release()
                b.release()
                read = 0
    return found


def _feeds(feeds: dict[str, Any] | None, sides: list[Side], models: list[Model | None]) -> dict[str, Any]:
    """The feeds given, else a Trace side's own, else random ones from the first model's declared inputs."""
    if feeds is None:
        feeds = next((s.feeds for s in sides if isinstance(s, Trace)), None)
    if feeds is None:
        first_model = next((m for m in models if m is not None), None)
        if first_model is None:
            raise CompareError("no feeds: give feeds, or a Trace (whose feeds are used)")
        feeds = first_model.example_inputs()
    return feeds


def _recording(side: Side, kind: str, side_model: Model | None, like: Recording | None, feeds: dict[str, Any],
               model: Model | None, limits: Limits | None, max_exposed: int, timeout: float | None) -> Recording:
    """One side's values: its trace, explorer's run of its model, or a reference made like the other side's."""
    if isinstance(side, Trace):
        return from_trace(side, label_of(side, None), model)
    if side_model is not None:
        return explorer_recording(side_model, feeds, label_of(side, side_model), limits)
    if like is None:
        raise CompareError("one side must be a model or a trace")
    if kind == ONNXRUNTIME:
        if like.model is None:
            raise CompareError("onnxruntime needs the model: give model= with a Trace")
        return onnxruntime_recording(like.model, feeds, like, max_exposed=max_exposed, timeout=timeout,
                                     limits=limits)
    if kind == PYTORCH:
        return Recording(PYTORCH, PYTORCH, model=like.model)
    return from_values(reference_values(side, limits), label_of(side, None), like)


def _drawn_note(drawn: list[str]) -> list[str]:
    if not drawn:
        return []
    return [f"{len(drawn)} node(s) draw random values ({', '.join(drawn[:3])}"
            f"{', …' if len(drawn) > 3 else ''}): they and what they feed differ by design"]


def _time_axis(pair: Pair, model: Model | None) -> int | None:
    if pair.a.op_type not in CELLS or pair.a.position != 0 or model is None:
        return None
    return 1 if attribute(model.node(pair.a.node).proto, "layout", 0) else 0


def _draws(a: Recording, node: str, op_type: str) -> bool:
    """Whether a node of A drew random values in its first run (a Dropout only in training)."""
    if op_type not in NONDETERMINISTIC:
        return False
    if a.trace is None or a.model is None:
        return op_type != "Dropout"
    events = a.trace.events_of(node)
    return bool(events) and draws(op_type, dict(events[0].inputs), a.model.node(node).proto)


def _outputs(a: Recording, b: Recording, values: list[ValueComparison], user: Tolerance | None) -> list[OutputDiff]:
    """The graph outputs: by name, else by position (a re-export that renamed them); each judged as the value
    that produced it, a difference its producer's inputs explain included."""
    names_b = list(b.outputs)
    producers = {v.name: v for v in values if any(not e.iteration for e in v.errors)}
    found = []
    for position, (name, value) in enumerate(a.outputs.items()):
        if name in b.outputs:
            other = b.outputs[name]
        elif b.kind == "explorer" and position < len(names_b) and names_b[position] not in a.outputs:
            other = b.outputs[names_b[position]]
        else:
            continue
        producer = producers.get(name)
        if producer is not None:
            tolerance = producer.tolerance
        else:
            tolerance = user or widest(of_dtype(getattr(v, "dtype", "float32")) for v in (value, other))
        diff = assess(name, value, other, tolerance, producer.op_type if producer else "")
        within = [e.within for e in producer.errors if not e.iteration] if producer is not None else []
        if not diff.ok and producer is not None and producer.ok and within and within[0]:
            diff.ok, diff.note = True, "; ".join(filter(None, [diff.note, f"within {within[0]}"]))
        found.append(diff)
    return found


def _gates(pairs: list[Pair], a: Recording, b: Recording, values: list[ValueComparison],
           notes: list[str]) -> tuple[list[GateDivergence], list[str]]:
    """The first gate departure of each recurrent node (in execution order of its runs), each at its Y's
    tolerance, and the nodes whose gates were compared; why some could not be is added to `notes`."""
    tolerances = {v.node: v.tolerance for v in reversed(values)}
    found: list[GateDivergence] = []
    checked: list[str] = []
    if a.trace is None or a.model is None:
        return found, checked
    if b.kind in ("reference", PYTORCH):
        for node in dict.fromkeys(e.node for e in a.trace.events if e.op_type in CELLS):
            for event in a.trace.events_of(node):
                if event.summarized:
                    continue
                tolerance = tolerances.get(node, FLOAT32)
                check = check_gates(a.model, a.trace, node, event.iteration, against="PyTorch",
                                    reference=b.given, rtol=tolerance.rtol, atol=tolerance.atol)
                if check.notes:
                    notes.extend(f"gates of {node!r}: {note}" for note in check.notes)
                    break
                checked.append(f"{event.op_type} {node!r} ({check.weights_from})")
                if check.divergence is not None:
                    found.append(check.divergence)
                    break
        return found, list(dict.fromkeys(checked))
    differing = {(v.node, v.name) for v in values if not v.ok}
    for pair in pairs:
        if pair.a.op_type not in CELLS or pair.a.position != 0:
            continue
        if b.kind == "explorer" or pair.a.key in differing:
            checked.append(f"{pair.a.op_type} {pair.a.node!r}")
        for iteration in sorted(pair.a.values, key=lambda it: pair.a.order[it]):
            tolerance = tolerances.get(pair.a.node, FLOAT32)
            departure = _departure(pair, iteration, a, b, tolerance, pair.a.key in differing)
            if departure is not None:
                found.append(departure)
                break
    return found, checked


def _departure(pair: Pair, iteration: tuple[int, ...], a: Recording, b: Recording, tolerance: Tolerance,
               differs: bool) -> GateDivergence | None:
    rtol, atol = tolerance.rtol, tolerance.atol
    assert a.trace is not None and a.model is not None
    event = a.trace.event(pair.a.node, iteration)
    if event.summarized:
        return None
    if b.kind == "explorer" and b.trace is not None:
        if iteration not in pair.b.values:
            return None
        other = b.trace.event(pair.b.node, iteration)
        if other.summarized or "gates" not in other.info:
            return None
        ours = {k: v for k, v in event.info["gates"].items() if k != "mask"}
        theirs = {k: v for k, v in other.info["gates"].items() if k != "mask"}
        direction = attribute(a.model.node(pair.a.node).proto, "direction", "forward")
        return first_departure(pair.a.op_type, pair.a.node, iteration, ours, theirs,
                               reverse_directions(direction, np.shape(ours["H"])[1]), "B", rtol, atol)
    if b.kind == ONNXRUNTIME and differs and iteration in pair.b.values:
        y = layout0(a.model, pair.a.node, np.asarray(pair.b.values[iteration]))
        return check_gates(a.model, a.trace, pair.a.node, iteration, against=ONNXRUNTIME, teacher_h=y,
                           rtol=rtol, atol=atol, rounding=tolerance.eps).divergence
    return None
