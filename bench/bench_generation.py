"""Generation step by step: explorer's time per generated token (every node of every step recorded) against
onnxruntime, and the trace's memory for the caches against the final cache's size.

1. `explorer generate` on the optimum exports of tests/models/generation (tiny GPT-2 and Llama), greedy and with 4
   beams, against onnxruntime driving the same greedy loop on the same files. explorer's time is a whole
   `explorer.generate` (the loop model built, loaded and compiled, then run); onnxruntime's its steps on sessions
   made beforehand. A beam step makes one token per beam: its time per token is per step.
2. onnxruntime's generation operators (tests/models/generation_ops: GreedySearch, BeamSearch, Sampling,
   WhisperBeamSearch with their decoder subgraphs) run by explorer.run and by onnxruntime on the recipe's cases,
   per decode step. Their caches: the final cache (the last step's present outputs and the cross-attention
   caches it read) against every step's past and present values the trace holds (each buffer once)."""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

import explorer
from explorer.generation.onnxruntime_loop import onnxruntime_sessions, onnxruntime_steps
from explorer.trace.shared_caches import held_bytes

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models" / "generation"
OPS = ROOT / "tests" / "models" / "generation_ops"
PROMPT = [15, 2, 99, 7]
OP_CASES = {"greedy_long": "gpt2_greedy.onnx", "sampling": "gpt2_sampling.onnx", "beam_long": "gpt2_beam.onnx",
            "t5_beam_long": "t5_beam.onnx", "whisper_beam": "whisper_beam.onnx"}


def seconds_per_token(run: Callable[[], int], repeats: int = 3) -> float:
    """The best of `repeats` runs of `run()` (which returns how many tokens, or steps, it made), per token."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        tokens = run()
        best = min(best, (time.perf_counter() - start) / max(tokens, 1))
    return best


def _generated(folder: Path, tokens: int, beams: int) -> Callable[[], int]:
    return lambda: len(explorer.generate(folder, PROMPT, max_new_tokens=tokens, beams=beams).steps)


def decoders(tokens: int) -> None:
    print(f"{'model':<12} {'search':<8} {'steps':>5} {'explorer ms/step':>17} {'onnxruntime ms/step':>20} "
          f"{'ratio':>6} {'cache bytes':>12} {'trace bytes':>12} {'held':>5}")
    for name in ("gpt2", "llama"):
        folder = MODELS / name
        greedy = explorer.generate(folder, PROMPT, max_new_tokens=tokens)
        sessions = onnxruntime_sessions(greedy.export)  # made once: onnxruntime's time is its steps'
        theirs = seconds_per_token(lambda g=greedy, s=sessions: sum(  # type: ignore[misc]
            1 for _ in onnxruntime_steps(g.export, g.feeds, tokens, s)))
        for search, beams in (("greedy", 1), ("4 beams", 4)):
            generation = explorer.generate(folder, PROMPT, max_new_tokens=tokens, beams=beams)
            ours = seconds_per_token(_generated(folder, tokens, beams))
            print(f"{name:<12} {search:<8} {len(generation.steps):>5} {ours * 1e3:>17.2f} {theirs * 1e3:>20.3f} "
                  f"{ours / theirs:>6.0f} {generation.cache_bytes:>12} {generation.trace_bytes:>12} "
                  f"{generation.trace_bytes / generation.cache_bytes:>5.2f}")


def _feeds(case: str) -> dict[str, np.ndarray]:
    expected = np.load(OPS / "expected.npz")
    return {key.split("/", 1)[1]: expected[key] for key in expected.files if key.startswith(f"{case}/")}


def _caches(trace: Any) -> tuple[int, int]:
    """(the final cache's bytes: the last step's present outputs and the cross-attention caches it read; the bytes
    the trace holds for every step's past and present values, each buffer once), read as held (not made whole)."""
    records = trace.iteration_records
    last = records[-1]
    final = sum(int(v.nbytes) for k, v in dict.items(last.outputs) if "present" in k) + \
        sum(int(v.nbytes) for k, v in dict.items(last.inputs) if "cross" in k)
    held = [v for record in records for side in (record.inputs, record.outputs) for k, v in dict.items(side)
            if "past" in k or "present" in k]
    return final, held_bytes(held)


def operators() -> None:
    print(f"\n{'operator model':<18} {'case':<14} {'steps':>5} {'explorer ms/step':>17} {'onnxruntime ms/step':>20} "
          f"{'ratio':>6} {'cache bytes':>12} {'trace bytes':>12} {'held':>5}")
    for case, file in OP_CASES.items():
        feeds = _feeds(case)
        model = explorer.load(OPS / file)
        trace = explorer.run(model, feeds)
        steps = len(trace.iteration_records)
        ours = seconds_per_token(lambda m=model, f=feeds, n=steps: explorer.run(m, f) and n)  # type: ignore[misc, arg-type]
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(str(OPS / file), options, providers=["CPUExecutionProvider"])
        theirs = seconds_per_token(lambda s=session, f=feeds, n=steps: s.run(None, f) and n)  # type: ignore[misc]
        cache, held = _caches(trace)
        print(f"{file:<18} {case:<14} {steps:>5} {ours * 1e3:>17.2f} {theirs * 1e3:>20.3f} {ours / theirs:>6.0f} "
              f"{cache:>12} {held:>12} {held / max(cache, 1):>5.1f}")


def main(tokens: int = 56) -> None:  # GPT-2 here has 64 positions: a 4-token prompt and 56 new ones fit
    print(f"load average {os.getloadavg()[0]:.1f}")
    decoders(tokens)
    operators()
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 56)
