"""onnxruntime as a judge, run in a child process under a wall-clock limit and a memory cap.

A hostile or broken model can make onnxruntime loop forever, exhaust memory or crash (SIGFPE, abort): none of
that may reach the caller. `Judge.run` returns onnxruntime's outputs or raises `NoVerdict` saying why there is
none (timeout, crash, memory cap, onnxruntime refused the model, not installed, skipped). The child stays alive
between calls (its start costs the import of onnxruntime) and is replaced after a timeout or a crash.
"""
from __future__ import annotations

import atexit
import importlib.util
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from ..errors import ExplorerError, summarize
from ..heap import give_back
from ..hosting.priority import this_thread_lowered

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_BYTES = 4 << 30  # on top of the child's own footprint and of the model's size
# A message: its pickle's size and the count of its out-of-band buffers, each buffer's size, the pickle, the
# buffers. Arrays travel as their own bytes (pickle protocol 5), read straight into the arrays they become: no
# copy of a large value is ever made on either side of the pipe.
_HEADER = struct.Struct("<QQ")
_SIZE = struct.Struct("<Q")
Keep = Callable[[memoryview], Any]  # an array's bytes as received -> what holds them from then on (a buffer)
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "judge_worker.py")


class NoVerdict(ExplorerError):
    """onnxruntime gave no verdict. `kind` is one of: missing (not installed), timeout, crash, memory, refused
    (onnxruntime rejects the model or the feeds), skipped (not run on purpose), cancelled."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def skipped_because_of_limit(exc: BaseException) -> NoVerdict:
    """The stated reason for not asking onnxruntime when explorer's own run of the model hit one of its limits:
    onnxruntime has no such limit and could run unbounded."""
    return NoVerdict("skipped", f"not run: explorer's own run stopped at a limit ({exc}); onnxruntime has no "
                                "such bound")


class Judge:
    """One onnxruntime child process. Thread-safe: calls are serialized; `cancel()` from another thread ends
    the call under way (it raises NoVerdict('cancelled'))."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT_S, memory_bytes: int | None = DEFAULT_MEMORY_BYTES):
        self.timeout = timeout
        self.memory_bytes = memory_bytes
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._cancelled = False
        self._shut = False  # after shutdown(): every call is refused, no process started

    def run(self, model: Any, feeds: dict[str, Any], outputs: Sequence[str] | None = None, *,
            timeout: float | None = None, keep: Keep | None = None) -> dict[str, Any]:
        """onnxruntime's outputs (by name; `outputs` picks them) for a Model, ModelProto or serialized bytes,
        given to onnxruntime as a path (model_files.runtime_copy: its weights read from where they lie). `keep`
        is given each array's bytes as they arrive and returns what holds them from then on (a copy on disk)."""
        return self._ask(model, dict(feeds), outputs, timeout, keep)

    def load(self, model: Any, *, timeout: float | None = None) -> None:
        """Loads the model as a user does (an InferenceSession with onnxruntime's default options: its own type
        and shape inference in every body, its graph rewrites); NoVerdict when it cannot."""
        self._ask(model, None, None, timeout)

    def _ask(self, model: Any, feeds: dict[str, Any] | None, outputs: Sequence[str] | None,
             timeout: float | None, keep: Keep | None = None) -> dict[str, Any]:
        if importlib.util.find_spec("onnxruntime") is None:
            raise NoVerdict("missing", "onnxruntime is not installed (pip install onnxruntime)")
        from ..model.model_files import runtime_copy  # onnx, imported when a model is judged (not by --help)
        from ..model.model_inference import model_bytes

        limit = self.timeout if timeout is None else timeout
        size = len(model) if isinstance(model, (bytes, bytearray)) else model_bytes(getattr(model, "proto", model))
        memory = None if self.memory_bytes is None else self.memory_bytes + 3 * size
        with runtime_copy(model) as path, self._lock:
            give_back()  # what writing the copy freed, not held while the child runs the model
            request = {"model": str(path), "feeds": feeds, "outputs": list(outputs) if outputs else None,
                       "memory": memory}
            self._cancelled = False
            reply = self._exchange(request, limit, keep)
        if reply["kind"] == "ok":
            return dict(reply["outputs"])
        prefix = {"refused": "onnxruntime refused: ", "memory": "onnxruntime reached its memory cap: "}
        raise NoVerdict(reply["kind"], prefix.get(reply["kind"], "") + summarize(reply["message"]))

    def warm(self) -> None:
        """Starts the child process ahead of a call (it imports onnxruntime meanwhile), unless shut down."""
        with self._lock:
            if not self._shut and importlib.util.find_spec("onnxruntime") is not None:
                self._start()

    @property
    def process_id(self) -> int | None:
        """The child process's id while it lives (None before the first call, after close)."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def cancel(self) -> None:
        """Ends the call under way, if any (its caller gets NoVerdict('cancelled'))."""
        self._cancelled = True
        self._kill()

    def close(self) -> None:
        """Stops the child process (a later call starts a new one)."""
        self._kill()

    def shutdown(self) -> None:
        """Ends the call under way and refuses every later one (NoVerdict('cancelled')), for good."""
        self._shut = True
        self.cancel()

    def _exchange(self, request: dict, limit: float, keep: Keep | None = None) -> dict:
        process = self._start()
        if self._shut:  # shut down while this call waited: no onnxruntime may outlive that
            self._kill()
            raise NoVerdict("cancelled", "onnxruntime was stopped on request")
        deadline = time.monotonic() + limit
        try:
            assert process.stdin is not None and process.stdout is not None
            for frame in _frames(request):
                _write_all(process.stdin.fileno(), frame)
            size, count = _HEADER.unpack(self._receive(process, _HEADER.size, deadline, limit))
            sizes = self._receive(process, _SIZE.size * count, deadline, limit)
            data = self._receive(process, size, deadline, limit)
            buffers = [self._receive(process, n, deadline, limit) for (n,) in _SIZE.iter_unpack(sizes)] if keep is None \
                else [keep(self._receive(process, n, deadline, limit)) for (n,) in _SIZE.iter_unpack(sizes)]
            return pickle.loads(data, buffers=buffers)
        except (BrokenPipeError, ConnectionError, EOFError):
            raise self._ended(process) from None

    def _receive(self, process: subprocess.Popen[bytes], size: int, deadline: float, limit: float) -> memoryview:
        """`size` bytes from the child, read straight into one new buffer."""
        import numpy as np  # not imported by the command line's --help

        assert process.stdout is not None
        fd, got = process.stdout.fileno(), 0
        buffer = np.empty(size, np.uint8).data
        while got < size:
            left = deadline - time.monotonic()
            if left <= 0:
                self._kill()
                raise NoVerdict("timeout", f"onnxruntime did not finish within {limit:g} s (stopped)")
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if not ready:
                continue
            read = os.readv(fd, [buffer[got:]])
            if not read:
                raise self._ended(process)
            got += read
        return buffer

    def _ended(self, process: subprocess.Popen[bytes]) -> NoVerdict:
        code = process.wait()
        self._process = None
        if self._cancelled:
            return NoVerdict("cancelled", "onnxruntime was stopped on request")
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return NoVerdict("crash", f"onnxruntime crashed ({name})")
        return NoVerdict("crash", f"onnxruntime's process ended unexpectedly (exit code {code})")

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = _spawn()
        return self._process

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()


def _worker() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, _WORKER, str(os.getpid())], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, bufsize=0)


_spare: subprocess.Popen[bytes] | None = None  # a child started ahead of need (see keep_spare)
_keeping = False
_spare_lock = threading.Lock()


def keep_spare() -> None:
    """From now on one child process is kept started ahead of need, importing onnxruntime while it waits: the next
    judge to start a child takes it (each judge still has a child of its own) and another is started for the one
    after. For a server that gives each question a judge of its own (the app's background jobs): none of them
    then waits for onnxruntime's import, a quarter to half a second, most of a small model's proof. The shared
    judge's child (the optimizer's load check asks it) is started now too: taken on that check's first call, the
    spare would not be ready again for the proof the app asks right after it."""
    global _keeping
    with _spare_lock:
        if _keeping:
            return
        _keeping = True
    atexit.register(stop_spare)
    _refill()
    shared_judge().warm()


def stop_spare() -> None:
    """Stops keeping a child ahead of need and ends the one waiting."""
    global _keeping, _spare
    with _spare_lock:
        _keeping, process, _spare = False, _spare, None
    if process is not None and process.poll() is None:
        process.kill()
        process.wait()


def spare_process_id() -> int | None:
    """The id of the child waiting to be taken (None when none is kept or it has ended)."""
    process = _spare
    return process.pid if process is not None and process.poll() is None else None


def _spawn() -> subprocess.Popen[bytes]:
    """A new child: the spare when one is waiting (another is started in its place), else one started now. Work
    in the background (a lowered thread, hosting/priority) starts a child of its own, at its priority: the
    spare, and the one started in its place, are the pages'."""
    global _spare
    if this_thread_lowered():
        return _worker()
    with _spare_lock:
        taken, _spare = _spare, None
    _refill()
    return taken if taken is not None and taken.poll() is None else _worker()


def _refill() -> None:
    global _spare
    with _spare_lock:
        if _keeping and (_spare is None or _spare.poll() is not None):
            _spare = _worker()


def _frames(message: object) -> list[memoryview | bytes]:
    """A message as the frames written one after the other (see _HEADER)."""
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    raws = [buffer.raw() for buffer in buffers]
    sizes = b"".join(_SIZE.pack(raw.nbytes) for raw in raws)
    return [_HEADER.pack(len(data), len(raws)) + sizes, data, *raws]


def _write_all(fd: int, frame: memoryview | bytes) -> None:
    view = memoryview(frame).cast("B")
    while view.nbytes:
        view = view[os.write(fd, view):]


_shared: Judge | None = None
_shared_lock = threading.Lock()


def shared_judge() -> Judge:
    """The process-wide judge used by `run_onnxruntime` (its child is stopped at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Judge()
            atexit.register(_shared.close)
        return _shared


class Runs(Protocol):
    """What `run_onnxruntime` and `load_in_onnxruntime` ask of a judge."""

    def run(self, model: Any, feeds: dict[str, Any], outputs: Sequence[str] | None = None, *,
            timeout: float | None = None, keep: Keep | None = None) -> dict[str, Any]: ...

    def load(self, model: Any, *, timeout: float | None = None) -> None: ...

    def warm(self) -> None: ...


_current: ContextVar[Runs | None] = ContextVar("explorer_judge", default=None)


@contextmanager
def using_judge(judge: Runs) -> Iterator[None]:
    """Within the block (in this thread), `run_onnxruntime` asks `judge` instead of the shared one."""
    token = _current.set(judge)
    try:
        yield
    finally:
        _current.reset(token)


def run_onnxruntime(model: Any, feeds: dict[str, Any], outputs: Sequence[str] | None = None, *,
                    timeout: float | None = None, keep: Keep | None = None) -> dict[str, Any]:
    """onnxruntime's outputs from the judge in use (see using_judge; by default the shared child process);
    NoVerdict when it gives none. `keep`: see Judge.run."""
    judge = _current.get() or shared_judge()
    if keep is None:
        return judge.run(model, feeds, outputs, timeout=timeout)
    return judge.run(model, feeds, outputs, timeout=timeout, keep=keep)


def warm_onnxruntime() -> None:
    """Starts the judge in use (see using_judge) ahead of a call: its child imports onnxruntime meanwhile."""
    (_current.get() or shared_judge()).warm()


def load_in_onnxruntime(model: Any, *, timeout: float | None = None) -> None:
    """Loads the model in onnxruntime as a user does (see Judge.load), with the judge in use; NoVerdict when it
    cannot (kind 'refused' when onnxruntime rejects it)."""
    judge = _current.get() or shared_judge()
    judge.load(model, timeout=timeout)
