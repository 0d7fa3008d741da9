"""What compiling a graph makes (a `Step` per node, a `CompiledGraph` per graph), what kernels that run bodies
ask of the compiler (`Bodies`), and one step evaluated once its guards allow it (`guarded_evaluate`: the engine's
check before a kernel allocates, and the optimizer's folding)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

import onnx

from ..trace.trace import EventSite
from .memo import ComputedOnce


@dataclass(slots=True)
class Step:
    """One node compiled for the engine's loop: everything that can be decided once per node is decided here."""

    path: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    fn: Callable[..., Any]  # PlainKernel, or SpecialKernel when `special`
    special: bool
    guard: Callable[[Sequence[Any]], int] | None  # the output's bytes (or a cheap bound of them) from the inputs
    site: EventSite  # what its events record: path, op type, the distinct names of its values
    required_outputs: int = 0  # declared non-empty outputs the kernel must return
    single_output: str | None = None  # the output's name when the node has exactly one and no gaps
    pick_inputs: Callable[[tuple[Any, ...]], tuple[Any, ...]] | None = None  # args -> recorded inputs, when they
    # differ (an omitted optional, an input read twice)
    fetch: Callable[[dict[str, Any]], tuple[Any, ...]] | None = None  # frame -> args, for two inputs or more
    exact_guard: Callable[[Sequence[Any]], int] | None = None  # when `guard` is a bound: the estimate behind it
    constant: ComputedOnce | None = None  # `fn` when the node's inputs are all constants (memo.py)


Plan = tuple[Step, Callable[..., Any], bool, "Callable[[dict[str, Any]], tuple[Any, ...]] | None", "str | None",
             "Callable[[Sequence[Any]], int] | None", "str | None", EventSite,
             "Callable[[tuple[Any, ...]], tuple[Any, ...]] | None", "ComputedOnce | None"]
"""What the engine's loop unpacks per step: (step, fn, special, fetch, the single input's name, guard, the single
output's name, site, pick_inputs, constant)."""


@dataclass
class CompiledGraph:
    path: str
    input_names: list[str]
    output_names: list[str]
    initializers: dict[str, Any]
    captures: list[str]
    steps: list[Step]
    plan: list[Plan] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.plan = [(s, s.fn, s.special, s.fetch, s.inputs[0] if len(s.inputs) == 1 else None, s.guard,
                      s.single_output, s.site, s.pick_inputs, s.constant) for s in self.steps]


class Bodies(Protocol):
    """What kernels that run bodies (control flow, calls of model-local functions) ask of the compiler of their
    node (executor/program.py's Program is the one): a body compiled when it first runs, and the types the model
    declares for the values a graph reads."""

    def graph(self, path: str) -> CompiledGraph:
        """The compiled graph (a body) at `path`."""
        ...

    def value_type(self, graph_path: str, name: str) -> onnx.TypeProto | None:
        """The declared type of `name` as read in the graph at `graph_path`."""
        ...


def guarded_bytes(step: Step, args: Sequence[Any], max_bytes: int) -> int:
    """What a step's guards say its outputs on `args` would take, when that is beyond `max_bytes` (the cheap bound
    first, the estimate behind it only when the bound is over); 0 when within, or when a guard cannot read
    malformed inputs (the kernel reports them itself)."""
    if step.guard is None:
        return 0
    try:
        size = step.guard(args)
        if size > max_bytes and step.exact_guard is not None:
            size = step.exact_guard(args)
    except Exception:  # noqa: BLE001 - malformed inputs: let the kernel report them itself
        return 0
    return size if size > max_bytes else 0


def guarded_evaluate(step: Step, args: Sequence[Any], max_bytes: int, refuse: Callable[[int], NoReturn]) -> Any:
    """A plain step's outputs on `args`, its kernel run once its guards allow it: `refuse(size)` raises first when
    they say the outputs would take more than `max_bytes`."""
    size = guarded_bytes(step, args, max_bytes)
    if size:
        refuse(size)
    return step.fn(args)
