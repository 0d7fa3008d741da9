"""The child process behind explorer.judge.judge: runs onnxruntime sessions sent by its parent, one at a time.

Run as a script (`python judge_worker.py`), never imported by explorer: it imports only onnxruntime, numpy and the
standard library, so a model that crashes or exhausts onnxruntime takes down this process, not the caller.
Messages on stdin/stdout are the pickle's size and its count of out-of-band buffers (8 bytes each), each buffer's
size, the pickle (protocol 5), then the buffers: arrays travel as their own bytes, with no copy on either side.
The parent is the only peer.
"""
import contextlib
import os
import sys

if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]  # explorer's own modules (e.g. trace.py) must not shadow the standard library here

import ctypes
import pickle
import resource
import struct
import threading
import time

HEADER = struct.Struct("<QQ")
SIZE = struct.Struct("<Q")


def _exactly(stream, size: int) -> bytearray | None:
    """`size` bytes read into a new buffer; None at the end of the stream."""
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        read = stream.readinto(view[got:])
        if not read:
            return None
        got += read
    return buffer


def _read(stream) -> dict | None:
    header = _exactly(stream, HEADER.size)
    if header is None:
        return None
    size, count = HEADER.unpack(header)
    sizes = _exactly(stream, SIZE.size * count)
    data = _exactly(stream, size)
    if sizes is None or data is None:
        return None
    buffers = [_exactly(stream, n) for (n,) in SIZE.iter_unpack(sizes)]
    if any(buffer is None for buffer in buffers):
        return None
    return pickle.loads(data, buffers=buffers)


def _write(stream, message: dict) -> None:
    """Writes the message, emptying it: each array is freed once its bytes are written (the buffers hold the last
    references), so the values leave this process as they reach the parent."""
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    message.clear()
    sizes = b"".join(SIZE.pack(buffer.raw().nbytes) for buffer in buffers)
    stream.write(HEADER.pack(len(data), len(buffers)) + sizes)
    stream.write(data)
    buffers.reverse()
    while buffers:
        buffer = buffers.pop()
        with buffer.raw() as raw:
            stream.write(raw)
        buffer.release()
        del buffer
    stream.flush()


def _give_back_memory() -> None:
    """Returns the freed heap to the system, so that the values of one request do not stay held until the next."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def _address_space() -> int:
    """Bytes of address space this process uses now (the memory cap is counted on top of it)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _cap_memory(extra: int | None) -> None:
    if extra is None:
        limit = resource.RLIM_INFINITY
    else:
        try:
            limit = _address_space() + extra
        except OSError:
            return  # no /proc: run uncapped, the wall-clock limit still holds
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = hard if limit == resource.RLIM_INFINITY else min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _session(ort, model: str | bytes, as_written: bool = True):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    if as_written:  # a judge runs the graph as written: onnxruntime's own rewrites (e.g. Cast fusion) could hide a
        # difference; a load check (not as_written) loads it as a user does, with onnxruntime's default rewrites
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        # without the arena, each value returned is freed on its own once written to the parent: a comparison's
        # values do not stay held here while the parent receives them
        options.enable_cpu_mem_arena = False
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def _serve(request: dict) -> dict:
    try:
        import onnxruntime as ort
    except ImportError:
        return {"kind": "missing", "message": "onnxruntime is not installed (pip install onnxruntime)"}
    _cap_memory(request.get("memory"))
    load_only = request.get("feeds") is None
    try:
        session = _session(ort, request["model"], as_written=not load_only)
    except MemoryError:
        return {"kind": "memory", "message": "the memory cap was reached while loading the model"}
    except Exception as exc:  # noqa: BLE001 - whatever onnxruntime refuses is the message
        return {"kind": "refused", "message": _message(exc)}
    if load_only:
        return {"kind": "ok", "outputs": {}}
    names = request.get("outputs") or [o.name for o in session.get_outputs()]
    # an initializer that is also a graph input (IR >= 4) is an input with a default: a feed overrides it
    wanted = {i.name for i in [*session.get_inputs(), *session.get_overridable_initializers()]}
    feeds = {k: v for k, v in request["feeds"].items() if k in wanted}
    try:
        results = session.run(names, feeds)
    except MemoryError:
        return {"kind": "memory", "message": "the memory cap was reached while running"}
    except Exception as exc:  # noqa: BLE001
        text = _message(exc)
        kind = "memory" if "allocat" in text.lower() or "bad_alloc" in text else "refused"
        return {"kind": kind, "message": text}
    return {"kind": "ok", "outputs": dict(zip(names, results))}


def _message(exc: BaseException) -> str:
    """The whole message (the parent summarizes it: explorer.errors.summarize)."""
    return str(exc).strip() or type(exc).__name__


# a one-node model (Relu of a float tensor of shape [1]), serialized here: this process never imports onnx
FIRST_SESSION_MODEL = (b'\x08\x07\x12\x00:3\n\x0c\n\x01x\x12\x01y"\x04Relu\x12\x01gZ\x0f\n\x01x\x12\n\n\x08\x08\x01\x12'
                       b'\x04\n\x02\x08\x01b\x0f\n\x01y\x12\n\n\x08\x08\x01\x12\x04\n\x02\x08\x01B\x04\n\x00\x10\r')


def _first_session(ort) -> None:
    """Creates and runs a session of a one-node model: a process's first session sets up what every later one
    shares (its kernel registry, its thread pools), a fifth of a second or more on a busy machine, paid here while
    the process waits for its first request rather than by that request."""
    import numpy as np

    with contextlib.suppress(Exception):  # a warm-up only: a request gets whatever error there is
        _session(ort, FIRST_SESSION_MODEL).run(None, {"x": np.zeros(1, np.float32)})


PARENT_LOOK_S = 1.0  # seconds between two looks at whether the parent is still alive


def _end_with(parent: int) -> None:
    """Ends this process once `parent` has ended (this process is then adopted by another), even in the middle of
    a run: a parent killed outright (SIGKILL, a crash) never stops its children, and a run that never ends would
    hold a core for good. onnxruntime lets go of the GIL while it runs, so this thread gets to look."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_LOOK_S)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main() -> None:
    _end_with(int(sys.argv[1]) if len(sys.argv) > 1 else os.getppid())  # argv: the parent's id, given at its start
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but replies may reach the parent's pipe
    # ahead of the first request, which may be a while coming (the parent starts this process early); when
    # onnxruntime is missing, each request says so
    with contextlib.suppress(ImportError):
        import onnxruntime

        _first_session(onnxruntime)
    while True:
        request = _read(stdin)
        if request is None:
            return
        try:
            reply = _serve(request)
        except MemoryError:
            reply = {"kind": "memory", "message": "the memory cap was reached"}
        _cap_memory(None)
        _write(stdout, reply)
        del request, reply
        _give_back_memory()


if __name__ == "__main__":
    main()
