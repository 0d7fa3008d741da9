"""Mutation check of explorer's kernels: one line of a kernel changed the way a slip would change it (an axis, a
sign, a rounding, a default attribute value, an off-by-one), then that family's differential tests run; the suite
must go red. A default passed to OpNode.get_* is used only where the schema has none (the schema's own comes
first): a mutant of such a default changes nothing, so the defaults mutated here are the ones the kernels own. Each mutant runs in a copy of the tree (explorer/, tests/, pyproject.toml), so the checkout is never
modified.

    python tools/mutate_kernels.py                 # every mutant: killed or survived, per family
    python tools/mutate_kernels.py --family pool   # one family's

Exit code 0 when every mutant is killed, 1 when one survives, 2 when one cannot be applied or run.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPS = "explorer/executor/ops"
DIFFERENTIAL = "tests/differential/test_differential.py"


@dataclass(frozen=True)
class Mutant:
    """`old` (once in `path`) replaced by `new`; `tests` selects the differential batches that must fail (-k)."""

    family: str
    what: str
    path: str
    old: str
    new: str
    tests: str


MUTANTS = (
    Mutant("reduction", "keepdims read negated", f"{OPS}/reduction.py",
           'keep = bool(op.get_int("keepdims"))\n    axes_from_input', 'keep = not op.get_int("keepdims")\n    axes_from_input',
           "ReduceSum"),
    Mutant("reduction", "select_last_index off by one", f"{OPS}/reduction.py",
           "index = x.shape[k] - 1 - pick(", "index = x.shape[k] - pick(", "ArgMax"),
    Mutant("reduction", "integer mean floored instead of truncated toward 0", f"{OPS}/reduction.py",
           "np.where(total < 0, -(-total // count), total // count)", "(total // count)", "ReduceMean"),
    Mutant("activation", "Clip-6's default min 0 instead of float's lowest", f"{OPS}/activation.py",
           'op.get_float("min", float(np.finfo(np.float32).min))', 'op.get_float("min", 0.0)', "Clip"),
    Mutant("softmax", "coerced to 2-D up to version 11 only", f"{OPS}/softmax.py",
           "coerce_2d = op.version < 13", "coerce_2d = op.version < 11", "Softmax"),
    Mutant("binary", "fmod and floor modulo swapped", f"{OPS}/binary.py",
           "np.fmod(a, b) if fmod else np.mod(a, b)", "np.mod(a, b) if fmod else np.fmod(a, b)", "Mod"),
    Mutant("layout", "version 1's implied mode CRD", f"{OPS}/layout.py",
           'if has_mode else "DCR"', 'if has_mode else "CRD"', "DepthToSpace"),
    Mutant("sorting", "TopK's largest read inverted", f"{OPS}/sorting.py",
           'op.get_int("largest") == 1', 'op.get_int("largest") == 0', "TopK"),
    Mutant("pad", "reflect padding as symmetric", f"{OPS}/pad.py",
           '{"reflect": "reflect",', '{"reflect": "symmetric",', "Pad"),
    Mutant("conv", "ConvTranspose's begin and end pads swapped", f"{OPS}/conv.py",
           "(window.pads[i], window.pads[i + rank])", "(window.pads[i + rank], window.pads[i])", "ConvTranspose"),
    Mutant("pool", "count_include_pad read negated", f"{OPS}/pool.py",
           'include_pad = bool(attrs.get("count_include_pad") or 0)', 'include_pad = not attrs.get("count_include_pad")',
           "AveragePool"),
    Mutant("unary", "Round half up instead of half to even", f"{OPS}/unary.py",
           "return np.round(x)  # numpy", "return np.floor(x + 0.5)  # numpy", "Round"),
    Mutant("cast", "saturate read negated", f"{OPS}/cast.py",
           'return bool(op.get_int("saturate", 1))', 'return not op.get_int("saturate", 1)', "Cast"),
    Mutant("normalization", "InstanceNormalization's variance with ddof=1", f"{OPS}/normalization.py",
           "var = xw.var(axis=axes, keepdims=True)\n        shape = _channel_shape(x)\n        y = (xw - mean)",
           "var = xw.var(axis=axes, keepdims=True, ddof=1)\n        shape = _channel_shape(x)\n        y = (xw - mean)",
           "InstanceNormalization"),
    Mutant("indexing", "OneHot's negative indices one short", f"{OPS}/indexing.py",
           "idx = np.where(idx < 0, idx + depth, idx)", "idx = np.where(idx < 0, idx + depth - 1, idx)", "OneHot"),
    Mutant("losses", "the mean divided by the count of all targets", f"{OPS}/losses.py",
           "loss = loss.sum(dtype=work) / weights.sum(dtype=work)", "loss = loss.sum(dtype=work) / work.type(loss.size)",
           "NegativeLogLikelihoodLoss"),
    Mutant("draws", "Bernoulli's 1 with probability 1 - p", f"{OPS}/draws.py",
           "random_sample(p.shape) < p.astype", "random_sample(p.shape) > p.astype", "Bernoulli"),
)


def apply(mutant: Mutant, tree: Path) -> None:
    """Writes the mutant into `tree` (a copy); fails unless its line is there exactly once."""
    path = tree / mutant.path
    text = path.read_text()
    if text.count(mutant.old) != 1:
        raise ValueError(f"{mutant.family}: {mutant.what}: {mutant.old!r} is in {mutant.path} "
                         f"{text.count(mutant.old)} times, not once")
    path.write_text(text.replace(mutant.old, mutant.new))


def copy_tree(into: Path) -> Path:
    """The parts of the checkout the differential tests read, copied under `into`."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for name in ("explorer", "tests"):
        shutil.copytree(ROOT / name, into / name, ignore=skip)
    shutil.copy2(ROOT / "pyproject.toml", into / "pyproject.toml")
    return into


def run(mutant: Mutant) -> tuple[str, float]:
    """('killed' | 'survived' | 'error: ...', seconds) for one mutant, in a fresh copy of the tree."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutant-") as folder:
        tree = copy_tree(Path(folder))
        try:
            apply(mutant, tree)
        except ValueError as exc:
            return f"error: {exc}", 0.0
        found = subprocess.run([sys.executable, "-c", "import explorer; print(explorer.__file__)"], cwd=tree,
                               capture_output=True, text=True)
        if not found.stdout.startswith(str(tree)):
            return f"error: the copy's explorer is not the one imported ({found.stdout.strip()})", 0.0
        result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-x", "-p", "no:cacheprovider",
                                 DIFFERENTIAL, "-k", mutant.tests], cwd=tree, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if result.returncode == 1:
        return "killed", seconds
    if result.returncode == 0:
        return "survived", seconds
    return f"error: pytest exit code {result.returncode}: {result.stdout[-500:]}", seconds


def check(mutants: Iterable[Mutant]) -> dict[Mutant, str]:
    """Each mutant's outcome, printed as it comes."""
    outcomes = {}
    for mutant in mutants:
        outcome, seconds = run(mutant)
        outcomes[mutant] = outcome
        print(f"{mutant.family:14} {outcome:9} {seconds:6.0f} s  {mutant.what}", flush=True)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", help="only this kernel family's mutants")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if args.family in (None, m.family)]
    if not chosen:
        parser.error(f"no mutant of family {args.family!r}; families: {sorted({m.family for m in MUTANTS})}")
    outcomes = check(chosen)
    killed = sum(outcome == "killed" for outcome in outcomes.values())
    print(f"{killed} of {len(outcomes)} mutants killed")
    if any(outcome.startswith("error") for outcome in outcomes.values()):
        return 2
    return 0 if killed == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
