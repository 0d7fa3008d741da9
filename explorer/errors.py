"""The error family of explorer. Every error that comes from running a node names where it happened."""
from __future__ import annotations

import re
from typing import Any


class ExplorerError(Exception):
    """Base class of every error explorer raises on purpose."""


class ModelError(ExplorerError):
    """The model cannot be loaded: not a file, not ONNX, no graph, unsupported IR/opset, unknown domain."""


class FeedError(ExplorerError):
    """The feeds given to `run` do not match the model's declared inputs."""


class TraceFileError(ExplorerError):
    """A trace file cannot be read: not a trace, a newer or older format, malformed, or past the input limits."""


class ExecutionError(ExplorerError):
    """A node failed while running. Carries where it happened and the partial trace up to that point; `info`
    is what the failing node's event records besides the message (a loop stopped by a limit: why, and after how
    many iterations)."""

    def __init__(
        self,
        message: str,
        *,
        node: str | None = None,
        op_type: str | None = None,
        iteration: tuple[int, ...] = (),
        trace: Any = None,
        info: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.node = node
        self.op_type = op_type
        self.iteration = tuple(iteration)
        self.trace = trace
        self.info: dict[str, Any] = dict(info or {})


class UnsupportedOperatorError(ExecutionError):
    """No kernel exists for a node's (domain, op_type, opset)."""


class LimitExceeded(ExecutionError):
    """A `Limits` bound was crossed (loop iterations, tensor bytes)."""

    def __init__(self, message: str, *, limit: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.limit = limit


SUMMARY_LENGTH = 400  # characters a summarized cause keeps at most, in whole sentences
_SENTENCE_END = re.compile(r"[.!?;](?=\s)")


def summarize(text: str, limit: int = SUMMARY_LENGTH) -> str:
    """A cause (another library's message, often several lines: a list, a traceback, a dump of the node) as one
    line that never stops mid-sentence: its lines joined, whitespace collapsed; when longer than `limit`, its
    whole sentences up to `limit`, else its first sentence up to `limit` words, followed by how much was left."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    ends = [m.end() for m in _SENTENCE_END.finditer(flat, 0, limit + 1)]
    kept = flat[:ends[-1]] if ends else flat[:flat.rfind(" ", 0, limit)].rstrip(",;:")
    if not kept:
        kept = flat[:limit]
    return f"{kept} (and {len(flat) - len(kept):,} more characters)"


def cause_text(exc: BaseException) -> str:
    """An exception's message summarized (`summarize`); its type's name when it has none."""
    return summarize(str(exc)) or type(exc).__name__


def failure_text(exc: BaseException) -> str:
    """The message of an explorer error; for anything else (a defect in explorer), its type and its message
    summarized, so a caller that must not crash (the app) can still say what happened."""
    if isinstance(exc, ExplorerError):
        return str(exc)
    text = summarize(str(exc))
    return f"unexpected {type(exc).__name__}" + (f": {text}" if text else "")


def where(node: str | None, op_type: str | None, iteration: tuple[int, ...]) -> str:
    """Human-readable location of a node execution, e.g. `node 'Loop_0/body/Add' (Add) at iteration (3,)`."""
    text = f"node {node!r}" if node is not None else "graph"
    if op_type:
        text += f" ({op_type})"
    if iteration:
        text += f" at iteration {tuple(iteration)}"
    return text


class CompareError(ExplorerError):
    """Two sides cannot be compared as given (e.g. onnxruntime on both sides, or no model to run it on)."""


class SweepError(ExplorerError):
    """A sweep cannot run as asked: its inputs or reference are not usable, or no Dask cluster can be had."""
