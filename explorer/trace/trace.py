"""The record of one run: events in execution order, loop iterations, outputs; queries; save/load. `gates` of a
cell written as a loop and `save`/`load` import cells/cell_gates.py and trace_file.py when called: both build on
this module, and the methods are the API's doors to them."""
from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypedDict, cast

import numpy as np

from .cell_layout import CellLayout
from .values import NamedValues, has_nonfinite

if TYPE_CHECKING:
    from ..limits import Limits
    from .spill import RunFolder

FORMAT_VERSION = 1


class EventInfo(TypedDict, total=False):
    """What a node execution records besides its values: what special kernels report, and why a node failed."""

    branch: str  # If: "then_branch" or "else_branch"
    stop_reason: str  # Loop: "trip count reached", "cond false"; a loop stopped by Limits: "limit"
    iterations: int  # Loop/Scan/SequenceMap: how many iterations ran
    children: tuple[int, int]  # control flow and function calls: [start, stop) of the events of their bodies
    gates: dict[str, Any]  # GRU/LSTM/RNN: series name -> [seq, num_directions, batch, hidden], plus "mask"
    function: str  # a call of a model-local function: the function's (domain.)name
    error: str  # the node failed (it is then a partial trace's last event): the message


class IterationInfo(TypedDict, total=False):
    """What one iteration records besides its values: where a Scan-8 iteration is in its batch; a decode step of
    onnxruntime's generation operators (rows: batch entries × beams)."""

    batch: int
    t: int
    subgraphs: list[str]  # the subgraph attributes the step ran: "decoder", "encoder" and "decoder", ...
    tokens: list[int]  # each row's chosen token (GreedySearch, Sampling: before an end-of-sequence id becomes pad)
    beams: list[int]  # BeamSearch: the row each new row continues
    scores: list[float]  # BeamSearch: each row's summed log-probability after the step
    finished: list[bool]  # per batch entry: its sequence ended (GreedySearch, Sampling), its search done (BeamSearch)


@dataclass(frozen=True)
class RunError:
    """Why a run failed (its trace is then partial): the message and kind of the explorer error, and the node,
    op type and iteration tuple where it happened (node None when no node is to blame)."""

    message: str
    kind: str
    node: str | None = None
    op_type: str | None = None
    iteration: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"message": self.message, "node": self.node, "op_type": self.op_type,
                "iteration": self.iteration, "kind": self.kind}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunError:
        """The error as `to_dict` wrote it (missing or mistyped entries read as absent)."""
        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        iteration = data.get("iteration")
        steps = tuple(int(i) for i in iteration) if isinstance(iteration, (list, tuple)) else ()
        return cls(text("message") or "", text("kind") or "ExecutionError", text("node"), text("op_type"), steps)


@dataclass(frozen=True, slots=True)
class EventSite:
    """A node as its events record it: its path, its op type and the names its recorded inputs and outputs go by
    (distinct and named: an omitted optional is not recorded, an input read twice is recorded once). Made once
    per node; every execution of the node shares it."""

    node: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


NO_INFO: EventInfo = cast(EventInfo, MappingProxyType({}))
"""The info of an event that reports nothing besides its values (read-only, shared)."""


class Event:
    """One node execution. `iteration` has one index per enclosing Scan/Loop/SequenceMap, outermost first.
    `inputs` and `outputs` map the site's names to the values recorded (`input_values`, `output_values`: one
    record object per execution, no dict). `info` holds what special kernels report (If branch, Loop stop reason,
    RNN gates, child event range)."""

    __slots__ = ("index", "site", "iteration", "input_values", "output_values", "seconds", "info", "summarized")

    def __init__(self, index: int, site: EventSite, iteration: tuple[int, ...], input_values: tuple[Any, ...],
                 output_values: tuple[Any, ...], seconds: float, info: EventInfo = NO_INFO,
                 summarized: bool = False) -> None:
        self.index = index
        self.site = site
        self.iteration = iteration
        self.input_values = input_values
        self.output_values = output_values
        self.seconds = seconds
        self.info = info
        self.summarized = summarized

    @classmethod
    def of(cls, index: int, node: str, op_type: str, iteration: tuple[int, ...], inputs: Mapping[str, Any],
           outputs: Mapping[str, Any], seconds: float, info: EventInfo | None = None,
           summarized: bool = False) -> Event:
        """An event from its values by name (a trace file's, a failed node's)."""
        site = EventSite(node, op_type, tuple(inputs), tuple(outputs))
        return cls(index, site, iteration, tuple(inputs.values()), tuple(outputs.values()), seconds,
                   info or NO_INFO, summarized)

    @property
    def node(self) -> str:
        return self.site.node

    @property
    def op_type(self) -> str:
        return self.site.op_type

    @property
    def inputs(self) -> NamedValues:
        return NamedValues(self.site.inputs, self.input_values)

    @property
    def outputs(self) -> NamedValues:
        return NamedValues(self.site.outputs, self.output_values)

    def __repr__(self) -> str:
        return (f"Event({self.index}, {self.node!r}, {self.op_type}, iteration={self.iteration}, "
                f"inputs={list(self.site.inputs)}, outputs={list(self.site.outputs)}"
                + (", summarized" if self.summarized else "") + ")")


@dataclass(slots=True)
class Iteration:
    """One iteration of a Scan/Loop/SequenceMap: `index` is the full iteration tuple, its own index last.
    `inputs`/`outputs` are keyed by the body's formal input/output names."""

    node: str
    index: tuple[int, ...]
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    info: IterationInfo = field(default_factory=lambda: IterationInfo())


class Trace:
    """Everything one run recorded. Built by the executor; read by views, the app and scripts."""

    def __init__(self, *, model_source: str = "", model_sha256: str = "", feeds: dict[str, Any] | None = None):
        self.model_source = model_source
        self.model_sha256 = model_sha256
        self.feeds: dict[str, Any] = dict(feeds or {})
        self.outputs: dict[str, Any] = {}
        self.events: list[Event] = []
        self.iteration_records: list[Iteration] = []
        self.seconds: float = 0.0
        self.recorded_bytes: int = 0  # values held in memory
        self.disk_bytes: int = 0  # values written to the run folder (past the in-memory budget)
        self.spilled_at: int | None = None  # index of the first event whose values are on disk
        self.budget_exceeded_at: int | None = None  # index of the first event whose values are summaries
        self.spill: RunFolder | None = None  # the run folder, while the trace holds values there
        self.error: RunError | None = None  # set when the run failed; the trace is then partial
        self.cells: dict[str, CellLayout] = {}  # recurrent cells written as loops, scans or unrolled, by path
        self._by_node: dict[str, list[int]] | None = None
        self._by_node_len = -1

    # ---- queries -------------------------------------------------------------------------------------------
    @property
    def complete(self) -> bool:
        return self.error is None

    def _node_index(self) -> dict[str, list[int]]:
        if self._by_node is None or self._by_node_len != len(self.events):
            index: dict[str, list[int]] = {}
            for i, event in enumerate(self.events):
                index.setdefault(event.node, []).append(i)
            self._by_node, self._by_node_len = index, len(self.events)
        return self._by_node

    def events_of(self, node_path: str) -> list[Event]:
        """Every execution of one node, in order (all iterations)."""
        return [self.events[i] for i in self._node_index().get(node_path, [])]

    def event(self, node_path: str, iteration: tuple[int, ...] = ()) -> Event:
        """The execution of a node at one iteration tuple (the last one if it ran several times there)."""
        iteration = tuple(iteration)
        found = [e for e in self.events_of(node_path) if e.iteration == iteration]
        if not found:
            runs = sorted({e.iteration for e in self.events_of(node_path)})[:5]
            raise KeyError(f"node {node_path!r} did not run at iteration {iteration}; it ran at {runs}...")
        return found[-1]

    def value(self, name: str, node_path: str | None = None, iteration: tuple[int, ...] = ()) -> Any:
        """A value's recorded content: produced by `node_path` (or any node) at `iteration`, else a feed or a
        value some node read at that iteration (initializers, captures)."""
        iteration = tuple(iteration)
        candidates = self.events_of(node_path) if node_path is not None else self.events
        for event in reversed(candidates):
            if event.iteration == iteration and name in event.outputs:
                return event.outputs[name]
        if node_path is None and not iteration and name in self.feeds:
            return self.feeds[name]
        for event in candidates:
            if event.iteration == iteration and name in event.inputs:
                return event.inputs[name]
        raise KeyError(f"no recorded value {name!r}" + (f" from node {node_path!r}" if node_path else "")
                       + (f" at iteration {iteration}" if iteration else ""))

    def first_nonfinite(self) -> Event | None:
        """The first event whose outputs hold NaN or Inf, or None."""
        for event in self.events:
            if any(has_nonfinite(v) for v in event.outputs.values()):
                return event
        return None

    def iterations(self, node_path: str) -> list[Iteration]:
        """Every iteration of a Scan/Loop/SequenceMap across all its executions, in order."""
        return [it for it in self.iteration_records if it.node == node_path]

    def branch(self, node_path: str, iteration: tuple[int, ...] = ()) -> str:
        """'then_branch' or 'else_branch': which branch an If took at that iteration."""
        event = self.event(node_path, iteration)
        if "branch" not in event.info:
            raise KeyError(f"node {node_path!r} ({event.op_type}) is not an If")
        return event.info["branch"]

    def gates(self, node_path: str, iteration: tuple[int, ...] = ()) -> dict[str, np.ndarray]:
        """Gate activations of a GRU/LSTM/RNN execution, or of a recurrent cell written as a loop, a scan or an
        unrolled graph (`node_path`: the cell's path, see `explorer.recurrent_cells`): arrays
        [seq_length, num_directions, batch, hidden], plus `mask` [seq_length, num_directions, batch] marking
        valid steps."""
        layout = self.cells.get(node_path)
        if layout is not None:
            from ..cells.cell_gates import gather_gates

            return gather_gates(self, layout, tuple(iteration))
        event = self.event(node_path, iteration)
        if "gates" not in event.info:
            raise KeyError(f"node {node_path!r} ({event.op_type}) records no gates")
        return event.info["gates"]

    def children(self, event: Event) -> list[Event]:
        """Events that ran inside a control-flow event (its bodies), in order."""
        start, stop = event.info.get("children", (event.index, event.index))
        return self.events[start:stop]

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def __repr__(self) -> str:
        state = "complete" if self.error is None else f"partial ({self.error.message[:60]})"
        return f"Trace({len(self.events)} events, {len(self.outputs)} outputs, {state})"

    # ---- save / load ---------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the trace to one .npz: arrays as npy members, everything else as JSON (no pickle)."""
        from .trace_file import save_trace

        save_trace(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str], limits: Limits | None = None) -> Trace:
        """Reads a trace written by `save`, every size checked against `limits.max_input_bytes` before it is
        inflated. TraceFileError when the file is not a trace this version reads, is malformed or too big."""
        from .trace_file import load_trace

        return load_trace(path, limits)
