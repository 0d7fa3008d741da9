"""Generation step by step: explorer's time per generated token (every node of every step recorded) against
onnxruntime driving the same loop on the same files, and the trace's memory for the caches against the final
cache's size, on the optimum exports of tests/models/generation (tiny GPT-2 and Llama). explorer's time is a
whole `explorer.generate` (the loop model built, loaded and compiled, then run); onnxruntime's its steps on
sessions made beforehand."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import explorer
from explorer.generation.onnxruntime_loop import onnxruntime_sessions, onnxruntime_steps

MODELS = Path(__file__).resolve().parent.parent / "tests" / "models" / "generation"
PROMPT = [15, 2, 99, 7]


def seconds_per_token(run: object, repeats: int = 3) -> float:
    """The best of `repeats` runs of `run()` (which returns how many tokens it made), per token."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        tokens = run()  # type: ignore[operator]
        best = min(best, (time.perf_counter() - start) / max(tokens, 1))
    return best


def main(tokens: int = 64) -> None:
    print(f"{'model':<12} {'tokens':>6} {'explorer ms/token':>18} {'onnxruntime ms/token':>21} {'ratio':>6} "
          f"{'cache bytes':>12} {'trace bytes':>12} {'held':>5}")
    for name in ("gpt2", "llama"):
        folder = MODELS / name
        generation = explorer.generate(folder, PROMPT, max_new_tokens=tokens)
        made = generation.tokens.shape[1]
        ours = seconds_per_token(lambda folder=folder: explorer.generate(folder, PROMPT, max_new_tokens=tokens).tokens.shape[1])
        sessions = onnxruntime_sessions(generation.export)  # made once: onnxruntime's time is its steps'
        theirs = seconds_per_token(lambda generation=generation, sessions=sessions: sum(
            1 for _ in onnxruntime_steps(generation.export, generation.feeds, tokens, sessions)))
        print(f"{name:<12} {made:>6} {ours * 1e3:>18.2f} {theirs * 1e3:>21.3f} {ours / theirs:>6.0f} "
              f"{generation.cache_bytes:>12} {generation.trace_bytes:>12} "
              f"{generation.trace_bytes / generation.cache_bytes:>5.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 64)
