"""Runs one adversarial case in a forked child under a memory cap (RLIMIT_AS) and a wall-clock limit, and reports
its outcome class: what the case returned ("ok", "equivalent", ...), the explorer error class it raised, a
foreign exception ("foreign ValueError"), "timeout" or the signal that killed it."""
from __future__ import annotations

import json
import os
import resource
import select
import signal
import time
from collections.abc import Callable

import explorer.judge
from explorer.errors import ExplorerError

MEMORY_BYTES = 2 << 30  # on top of what the child already maps when it starts
TIMEOUT_S = 40.0


def _address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _outcome(case: Callable[[], str]) -> dict[str, str]:
    try:
        return {"class": case(), "message": ""}
    except ExplorerError as exc:
        return {"class": type(exc).__name__, "message": str(exc)[:2000]}
    except MemoryError:
        return {"class": "foreign MemoryError", "message": "the memory cap was reached"}
    except BaseException as exc:  # noqa: BLE001 - any foreign exception is what the corpus exists to catch
        return {"class": f"foreign {type(exc).__name__}", "message": str(exc)[:2000]}


def run_isolated(case: Callable[[], str], timeout: float = TIMEOUT_S,
                 memory: int = MEMORY_BYTES) -> dict[str, str]:
    """The outcome of `case()` run in a forked child with at most `memory` more bytes of address space."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_end)
        code = 0
        try:
            explorer.judge._shared = None  # the parent's onnxruntime child is not ours to talk to
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            resource.setrlimit(resource.RLIMIT_AS, (_address_space() + memory, hard))
            result = _outcome(case)
            os.write(write_end, json.dumps(result).encode()[:60_000])
        except BaseException:  # noqa: BLE001
            code = 3
        finally:
            os._exit(code)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"class": "timeout", "message": f"no outcome within {timeout:g} s"}
            ready, _, _ = select.select([read_end], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(read_end, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"class": f"signal {signal.Signals(os.WTERMSIG(status)).name}", "message": ""}
    if not chunks:
        return {"class": "no outcome", "message": f"exit status {status}"}
    return json.loads(b"".join(chunks))
