"""`explorer.run`: validate feeds, run the main graph, return the trace (partial on failure)."""
from __future__ import annotations

import time
from contextlib import nullcontext
from typing import Any

import onnx

from ..cells import recurrent_cells
from ..collector import collector_paused
from ..errors import ExecutionError
from ..heap import keep_freed_memory
from ..limits import Limits, default_threads
from ..model.feeds import validate_feeds
from ..model.model import Model, load
from ..trace.cell_layout import CellLayout
from ..trace.trace import RunError, Trace
from .blas import blas_threads
from .engine import Engine
from .float_errors import floating_errors_ignored
from .ops.streams import run_streams
from .program import Program

# the program is kept in the model's own attributes, so it goes with the model (a WeakKeyDictionary would keep
# every model forever: its value, the program, refers to its key)
_PROGRAM = "_explorer_program"
_CELL_LAYOUTS = "_explorer_cell_layouts"
_NO_BLAS = nullcontext()  # a run of a model that never calls BLAS leaves its thread count as it is
_DEFAULT_LIMITS: dict[int, Limits] = {}  # Limits() by its default threads: a dataclass made per run costs µs


def _default_limits(threads: int | None = None) -> Limits:
    """Limits() as the environment gives it now (the default threads read again at every run, unless the run
    names its own: the engine reads every limit but the threads)."""
    if threads is None:
        threads = default_threads()
    limits = _DEFAULT_LIMITS.get(threads)
    if limits is None:
        limits = _DEFAULT_LIMITS[threads] = Limits(threads=threads)
    return limits


def program_of(model: Model) -> Program:
    """The model's compiled program, built once and kept on the model."""
    program: Program | None = vars(model).get(_PROGRAM)
    if program is None:
        program = vars(model)[_PROGRAM] = Program(model)
    return program


def _cell_layouts(model: Model) -> dict[str, CellLayout]:
    """The layouts of the model's cells written as loops, scans or unrolled, by path (found once, kept on the
    model as its program is)."""
    layouts: dict[str, CellLayout] | None = vars(model).get(_CELL_LAYOUTS)
    if layouts is None:
        layouts = vars(model)[_CELL_LAYOUTS] = {
            cell.path: cell.layout for cell in recurrent_cells(model) if cell.layout is not None}
    return layouts


def has_program(model: Model) -> bool:
    """Whether the model's program is compiled already (a run of it happened)."""
    return _PROGRAM in vars(model)


def forget_program(model: Model) -> None:
    """Drops the model's compiled program (with the constants and weight layouts it keeps from run to run): the
    next run compiles it again."""
    vars(model).pop(_PROGRAM, None)


def run(model: Model | str | bytes | onnx.ModelProto, feeds: dict[str, Any] | None = None, *,
        limits: Limits | None = None, threads: int | None = None) -> Trace:
    """Executes the model in NumPy, recording every node execution. `feeds=None` uses `model.example_inputs()`.
    `threads` (else `limits.threads`, by default the available cores) is how many threads BLAS uses.
    The first run in a process asks glibc's malloc to keep freed memory (up to budgets.HEAP_KEPT_FREE_BYTES) for
    the next run instead of returning it to the system (heap.py): runs after the first touch no fresh
    pages. A process that sets MALLOC_TRIM_THRESHOLD_ or MALLOC_MMAP_THRESHOLD_ keeps its own choice.
    Raises FeedError for bad feeds, ExecutionError (with `.trace`, the partial trace) when a node fails."""
    if not isinstance(model, Model):
        model = load(model)
    if threads is not None and threads < 1:
        raise ValueError("Limits.threads must be >= 1")  # as Limits(threads=...) says it
    limits = limits or _default_limits(threads)
    if threads is None:
        threads = limits.threads  # the engine reads every limit but the threads
    feeds = model.example_inputs() if feeds is None else validate_feeds(model, feeds)
    trace = Trace(model_source=model.source, model_sha256=model.sha256, feeds=feeds)
    trace.cells = dict(_cell_layouts(model))
    keep_freed_memory()
    start = time.perf_counter()
    try:
        # NaN/Inf are recorded as data (trace.first_nonfinite), not warned
        with floating_errors_ignored(), collector_paused(), run_streams():
            program = program_of(model)
            with blas_threads(threads) if program.calls_blas else _NO_BLAS:
                main = program.graph("")  # compiling builds several objects per node too
                frame = dict(main.initializers)
                frame.update(feeds)
                frame[""] = None  # what an omitted optional input reads
                Engine(program, limits, trace).run_graph(main, frame, ())
        for name in main.output_names:
            if name not in frame:
                raise ExecutionError(f"graph output {name!r} is never produced", node=None)
            trace.outputs[name] = frame[name]
    except ExecutionError as exc:
        trace.seconds = time.perf_counter() - start
        trace.error = RunError(str(exc), type(exc).__name__, exc.node, exc.op_type, tuple(exc.iteration))
        exc.trace = trace
        raise
    trace.seconds = time.perf_counter() - start
    return trace
