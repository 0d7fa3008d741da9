"""Runs one adversarial case in a forked child under a memory cap (RLIMIT_AS) and a CPU-time limit (RLIMIT_CPU: a
busy machine slows a case down but does not make it spend more CPU), and reports its outcome class: what the case
returned ("ok", "equivalent", ...), the explorer error class it raised, a foreign exception ("foreign
ValueError"), "timeout" (the CPU time spent, or a child waiting on nothing for the backstop's wall-clock time) or
the signal that killed it."""
from __future__ import annotations

import json
import os
import resource
import select
import signal
from collections.abc import Callable

import explorer.judge.judge
from explorer.errors import ExplorerError

MEMORY_BYTES = 2 << 30  # on top of what the child already maps when it starts
CPU_SECONDS = 40  # a case runs in milliseconds to seconds; one looping without end spends this and is stopped
BACKSTOP_S = 600.0  # a child that neither ends nor spends CPU (blocked on something) is stopped after this


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


def run_isolated(case: Callable[[], str], cpu_seconds: int = CPU_SECONDS,
                 memory: int = MEMORY_BYTES) -> dict[str, str]:
    """The outcome of `case()` run in a forked child with at most `memory` more bytes of address space."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_end)
        code = 0
        try:
            explorer.judge.judge._shared = None  # the parent's onnxruntime child is not ours to talk to
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            resource.setrlimit(resource.RLIMIT_AS, (_address_space() + memory, hard))
            _, hard = resource.getrlimit(resource.RLIMIT_CPU)
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, hard))  # a forked child starts at 0 s
            result = _outcome(case)
            os.write(write_end, json.dumps(result).encode()[:60_000])
        except BaseException:  # noqa: BLE001
            code = 3
        finally:
            os._exit(code)
    os.close(write_end)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([read_end], [], [], BACKSTOP_S)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"class": "timeout", "message": f"no outcome, and no output, for {BACKSTOP_S:g} s"}
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
        return {"class": "timeout", "message": f"no outcome within {cpu_seconds} s of CPU time"}
    if os.WIFSIGNALED(status):
        return {"class": f"signal {signal.Signals(os.WTERMSIG(status)).name}", "message": ""}
    if not chunks:
        return {"class": "no outcome", "message": f"exit status {status}"}
    return json.loads(b"".join(chunks))
