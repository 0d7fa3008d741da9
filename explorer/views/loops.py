"""What the Loops page shows of one Scan/Loop/SequenceMap/If: the values of its body's values, its executions,
an iteration table, loop-carried values across iterations, why a Loop stopped, which If branch ran; of one of
onnxruntime's generation operators, its decode steps: the beams, their tokens and scores."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..cells import RecurrentCell, recurrent_cells
from ..model.model import Model
from ..proto.body_signatures import body_signature
from ..proto.graph import CONTROL_FLOW_OPS, GENERATION_OPS
from ..trace.trace import Event, Iteration, Trace
from .cursor import ITERATING_OPS, ancestors
from .names import short_name, shortened
from .tables import short_text

MAX_SHOWN = 1000  # iterations in the table and plots (a browser draws a 100,000-row loop for many seconds)


@dataclass(frozen=True)
class BodyValues:
    """Body value names by role. `carried` pairs each loop-carried input with the output that feeds it next."""

    counters: list[str]  # Loop: iteration number and incoming cond
    carried: list[tuple[str, str]]  # (body input, body output)
    scan_in: list[str]  # Scan: one slice per iteration; SequenceMap: one element per iteration
    scan_out: list[str]  # Scan/Loop: stacked over iterations; SequenceMap: collected into sequences
    cond_out: str | None = None  # Loop: the body's cond output


@dataclass(frozen=True)
class Execution:
    """One run of a Scan/Loop/SequenceMap: `iteration` is the iteration tuple of its enclosing loops (as on an
    Event), `event` its event, None when the run failed inside its body (the iterations before are recorded)."""

    node: str
    iteration: tuple[int, ...]
    event: Event | None
    failure: str = ""  # why it did not finish, e.g. "failed in iteration 1"


def executions(model: Model, trace: Trace, path: str) -> list[Execution]:
    """Every run of an iterating node, the unfinished one of a failed run included."""
    runs = [Execution(path, e.iteration, e) for e in trace.events_of(path)]
    error = trace.error
    if error is not None and error.node is not None and error.node.startswith(f"{path}/"):
        depth = sum(1 for owner, _ in ancestors(model, path) if owner.op_type in ITERATING_OPS)
        where = error.iteration
        failed_in = f" in iteration {where[depth]}" if len(where) > depth else ""
        runs.append(Execution(path, where[:depth], None, f"{error.kind} at {error.node!r}{failed_in}"))
    return runs


def control_flow_nodes(model: Model) -> dict[str, str]:
    """path -> `Op · path` label of every If/Loop/Scan/SequenceMap, nested ones included; a loop that is a
    recurrent cell says which (`Loop · path · GRU cell`), its path shortened to its last parts."""
    cells = cell_loops(model)
    return {ref.path: f"{ref.op_type} · {short_name(ref.path, 60)}"
            + (f" · {cells[ref.path].kind} cell" if ref.path in cells else "")
            for ref in model.nodes() if ref.op_type in CONTROL_FLOW_OPS | GENERATION_OPS}


def cell_loops(model: Model) -> dict[str, RecurrentCell]:
    """Loop/Scan path -> the recurrent cell it runs (each direction's loop of a bidirectional cell)."""
    return {loop: cell for cell in recurrent_cells(model) for loop in cell.loops}


def cell_sentence(cell: RecurrentCell, loop: str) -> str:
    """What a cell's loop is, e.g. 'a GRU cell, Keras reset_after=True, hidden 3'."""
    what = "a recurrence (a state updated through a learned product of itself)" if cell.kind == "recurrence" \
        else f"{'an' if cell.kind[0] in 'LR' else 'a'} {cell.kind} cell"  # an LSTM, an RNN, a GRU
    framework = f"{cell.framework} " if cell.framework != "unknown" else ""
    details = f", {framework}{', '.join(cell.details())}" if cell.details() or framework else ""
    if cell.num_directions == 2:
        details += f", the {'reverse' if cell.loops.index(loop) else 'forward'} direction of a bidirectional pair"
    return what + details


def body_values(model: Model, path: str) -> BodyValues:
    """Role of each body input/output of a Loop, Scan or SequenceMap (from the node's inputs and attributes)."""
    node = model.node(path)
    if node.op_type not in ITERATING_OPS - GENERATION_OPS:
        raise ValueError(f"node {path!r} ({node.op_type}) has no iterating body")
    body = model.index.graphs[f"{path}/body"].proto
    signature = body_signature(node.proto, model.opsets.get("", 1), "body", body)
    counters = [s.name for s in (signature.counter, signature.cond_in) if s is not None]
    return BodyValues(counters, [(c.input.name, c.output.name) for c in signature.carried],
                      [s.name for s in signature.scan_inputs], [s.name for s in signature.scan_outputs],
                      signature.cond_out.name if signature.cond_out else None)


def iterations_of(trace: Trace, run: Event | Execution) -> list[Iteration]:
    """The iterations of one execution of a Scan/Loop/SequenceMap (it may run once per outer iteration)."""
    depth = len(run.iteration)
    return [it for it in trace.iterations(run.node) if it.index[:depth] == run.iteration
            and len(it.index) == depth + 1]


def iteration_columns(values: BodyValues) -> dict[str, tuple[str, str]]:
    """column label -> (body value, "inputs" or "outputs") of the iteration table: inputs as `→ name`, outputs
    as `name →`, exporter names shortened to the part that differs (the full name is the column's help)."""
    inputs = [*values.counters, *(i for i, _ in values.carried), *values.scan_in]
    outputs = ([values.cond_out] if values.cond_out else []) + [o for _, o in values.carried] + values.scan_out
    short = shortened(inputs + outputs)
    columns = {f"→ {short[name]}": (name, "inputs") for name in inputs}
    columns.update((f"{short[name]} →", (name, "outputs")) for name in outputs)
    return columns


def loop_names(model: Model, path: str) -> list[str]:
    """The names a loop's pseudo-code shows: its node's inputs and outputs and its body's."""
    node = model.node(path)
    body = model.index.graphs[f"{path}/body"].proto
    return [*node.proto.input, *node.proto.output, *(i.name for i in body.input), *(o.name for o in body.output)]


def iteration_rows(values: BodyValues, iterations: list[Iteration]) -> list[dict[str, Any]]:
    """One row per iteration: its index, then every body input and output, shortly described."""
    columns = iteration_columns(values)
    rows = []
    for it in iterations:
        row: dict[str, Any] = {"iteration": it.index[-1]}
        if "batch" in it.info:
            row["batch"], row["t"] = it.info["batch"], it.info.get("t")
        for label, (name, side) in columns.items():
            row[label] = short_text(getattr(it, side).get(name))
        rows.append(row)
    return rows


def step_rows(iterations: list[Iteration]) -> list[dict[str, Any]]:
    """One row per decode step of a generation operator and per row of its batch (batch entry × beam): the
    subgraphs the step ran, the token the row chose, the row it continues and its score (beam search), whether its
    batch entry is finished."""
    rows: list[dict[str, Any]] = []
    for it in iterations:
        info = it.info
        tokens = info.get("tokens", [])
        finished = info.get("finished", [])
        per_entry = max(1, len(tokens) // max(1, len(finished)))
        for r, token in enumerate(tokens):
            row: dict[str, Any] = {"step": it.index[-1], "row": r, "token": token}
            if "beams" in info:
                row["continues row"] = info["beams"][r]
                row["score"] = info.get("scores", [None] * len(tokens))[r]
            if finished:
                row["finished"] = finished[r // per_entry]
            row["subgraphs"] = ", ".join(info.get("subgraphs", []))
            rows.append(row)
    return rows


def carried_series(values: BodyValues, iterations: list[Iteration]) -> dict[str, list[Any]]:
    """Each loop-carried value before the first iteration and after every iteration (length n+1)."""
    series: dict[str, list[Any]] = {}
    if not iterations:
        return series
    for inp, out in values.carried:
        series[inp] = [iterations[0].inputs.get(inp)] + [it.outputs.get(out) for it in iterations]
    return series


def per_iteration(iterations: list[Iteration], name: str, side: str) -> list[Any]:
    """One body value per iteration (`side` is "inputs" for scan slices, "outputs" for scan-output elements)."""
    return [getattr(it, side).get(name) for it in iterations]


def stop_reason(run: Event | Execution) -> str:
    """Why a Loop ended (trip count reached, cond false, a limit), with its iteration count, or why a run did not
    finish; "" for nodes that always run to the end of their input (Scan, SequenceMap)."""
    if isinstance(run, Execution) and run.event is None:
        return run.failure
    event = run.event if isinstance(run, Execution) else run
    assert event is not None
    reason = event.info.get("stop_reason")
    count = event.info.get("iterations")
    if reason is None:
        return ""
    return f"{reason} after {count} iteration{'s' if count != 1 else ''}"


def branch_rows(trace: Trace, path: str) -> list[dict[str, Any]]:
    """Which branch an If took at each of its executions."""
    return [{"event": e.index, "iteration": str(e.iteration or "—"), "branch": e.info.get("branch", "?"),
             "cond": short_text(next(iter(e.inputs.values()), None))} for e in trace.events_of(path)]


def iteration_events(trace: Trace, run: Event | Execution, index: tuple[int, ...]) -> list[Event]:
    """The events of one iteration (full iteration tuple `index`) of a loop execution, nested bodies included, in
    order."""
    event = run.event if isinstance(run, Execution) else run
    depth = len(index)
    if event is not None:
        return [e for e in trace.children(event) if e.iteration[:depth] == index]
    inside = f"{run.node}/"  # an unfinished run has no child range: its events are the partial trace's last ones
    return [e for e in trace.events if e.node.startswith(inside) and e.iteration[:depth] == index]
