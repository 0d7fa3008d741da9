"""The random streams of one run: every node that draws random values (RandomNormal, RandomUniform, their Like
forms, Bernoulli, Multinomial, a training Dropout) draws from its own stream, made the first time it draws
in a run and kept until the run ends.

- A node with a `seed` seeds its stream from the seed's value: every run of the model draws the same values,
  as each first run of a new onnxruntime session does. Two nodes with the same seed draw the same values. The
  stream is numpy's legacy generator (MT19937): a whole-number seed s in [0, 2**32) seeds it as
  `np.random.seed(s)` does, so a run's first draw is numpy's after `np.random.seed(s)` (the ONNX backend's
  reference values for a training Dropout are made so); other seeds (negative, fractional, larger) seed it
  from their bits.
- A node without one draws from fresh entropy: each run draws other values.
- Inside a Loop or Scan body the stream goes on from one iteration to the next (each draws new values, as
  onnxruntime's kernel, which keeps its generator, does), and starts over in the next run: a seeded body draws
  the same values at the same iteration of every run."""
from __future__ import annotations

import struct
from contextvars import ContextVar, Token
from types import TracebackType

import numpy as np

_STREAMS: ContextVar[dict[str, np.random.RandomState] | None] = ContextVar("explorer_random_streams",
                                                                           default=None)


class run_streams:  # noqa: N801 - used as the function it was: `with run_streams():`
    """The scope of one run: the streams its nodes draw from (a run inside it gets its own). A class, not a
    generator: a generator's context costs a small model's run microseconds."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token: Token[dict[str, np.random.RandomState] | None] = _STREAMS.set({})

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        _STREAMS.reset(self._token)


def _new_stream(seed: float | None) -> np.random.RandomState:
    if seed is None:
        return np.random.RandomState()
    if float(seed).is_integer() and 0 <= seed < 2**32:
        return np.random.RandomState(int(seed))
    bits = struct.unpack("<Q", struct.pack("<d", float(seed)))[0]  # every other float apart
    return np.random.RandomState([bits >> 32, bits & 0xFFFFFFFF])


def stream(path: str, seed: float | None) -> np.random.RandomState:
    """The generator the node at `path` draws from in the current run (outside a run: a new one each call)."""
    streams = _STREAMS.get()
    if streams is None:
        return _new_stream(seed)
    found = streams.get(path)
    if found is None:
        found = streams[path] = _new_stream(seed)
    return found
