"""Where the gates of a recurrent cell that an exporter wrote as a loop, a scan or an unrolled graph lie in a
recorded run: the layout a Trace keeps for each such cell (and its trace file stores), which cells/cell_gates.py
reads to gather the gates. A loop-form direction names the Loop or Scan node whose iterations are its time
steps and, per gate, the body node and value holding it at each step; an unrolled direction names them step by
step."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Source:
    """One value a step writes: the node's path and the value's name; `perm`, when given, brings the value to the
    layout its cell's other series share (a ConvLSTM's states kept channels-last, its gates channels-first)."""

    node: str
    value: str
    perm: tuple[int, ...] = ()
    gate: str = ""  # a GRU/LSTM/RNN operator's own recorded series of one step (the value is then unused)


@dataclass(frozen=True)
class DirectionSteps:
    """One direction of a cell: its series per step. `loop`: the Loop/Scan whose iterations are the steps, with
    `series` naming the body value of each gate; else (`loop` None) `steps` lists the series of each step in
    processing order. `reverse`: step t reads position seq-1-t of the input."""

    loop: str | None
    reverse: bool
    series: Mapping[str, Source]
    steps: tuple[Mapping[str, Source], ...] = ()
    mask: Source | None = None

    def to_dict(self) -> dict[str, Any]:
        def pairs(series: Mapping[str, Source]) -> dict[str, list[Any]]:
            return {k: [s.node, s.value, list(s.perm), s.gate] for k, s in series.items()}

        return {"loop": self.loop, "reverse": self.reverse, "series": pairs(self.series),
                "steps": [pairs(s) for s in self.steps],
                "mask": None if self.mask is None else [self.mask.node, self.mask.value]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DirectionSteps:
        def series(raw: Mapping[str, Sequence[Any]]) -> dict[str, Source]:
            return {str(k): Source(str(v[0]), str(v[1]), tuple(int(p) for p in (v[2] if len(v) > 2 else ())),
                                   str(v[3]) if len(v) > 3 else "") for k, v in raw.items()}

        mask = data.get("mask")
        return cls(data.get("loop"), bool(data.get("reverse")), series(data.get("series", {})),
                   tuple(series(s) for s in data.get("steps", [])),
                   None if not mask else Source(str(mask[0]), str(mask[1])))


@dataclass(frozen=True)
class CellLayout:
    """How to gather one cell's gates from a trace: its kind (GRU, LSTM, RNN, recurrence), form (loop, scan,
    unrolled) and directions (forward first)."""

    kind: str
    form: str
    directions: tuple[DirectionSteps, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "form": self.form, "directions": [d.to_dict() for d in self.directions]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CellLayout:
        return cls(str(data["kind"]), str(data["form"]),
                   tuple(DirectionSteps.from_dict(d) for d in data.get("directions", [])))
