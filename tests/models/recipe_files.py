"""What the export recipes under tests/models write besides the models, in one place: each folder's feeds.json
(the exact inputs, one line per model, as bench/real_models.py::project_models reads them) and the
reference/<model>.npz files; the closeness check every recipe applies; the summary of what an exporter wrote, for
the READMEs' tables. Needs only NumPy and onnx (the recipes run in the exporters' venvs)."""
from __future__ import annotations

import collections
import json
from pathlib import Path

import numpy as np
import onnx


def shortest(value: np.ndarray) -> object:
    """Nested lists of the shortest decimals that read back to the same values (floats) or of ints."""
    if value.ndim:
        return [shortest(v) for v in value]
    if value.dtype.kind == "f":
        return float(np.format_float_positional(value, unique=True))
    return bool(value) if value.dtype.kind == "b" else int(value)


def update_feeds(folder: Path, entries: dict[str, dict[str, np.ndarray]]) -> None:
    """Writes `entries` (model file -> its inputs) into folder/feeds.json, keeping the other models' entries whose
    files exist, one line per model."""
    listing = folder / "feeds.json"
    old = json.loads(listing.read_text()) if listing.exists() else {}
    new = {file: {k: {"value": shortest(v), "dtype": str(v.dtype)} for k, v in inputs.items()}
           for file, inputs in entries.items()}
    kept = {k: v for k, v in old.items() if k not in new and (folder / k).exists()}
    merged = dict(sorted((kept | new).items()))
    listing.write_text("{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in merged.items())
                       + "\n}\n")


def save_reference(folder: Path, model: str, inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray],
                   arrays: dict[str, np.ndarray]) -> None:
    """reference/<model>.npz: inputs/<name>, outputs/<name> and the other arrays as named."""
    (folder / "reference").mkdir(exist_ok=True)
    stored = {f"inputs/{k}": v for k, v in inputs.items()} | {f"outputs/{k}": v for k, v in outputs.items()}
    np.savez_compressed(folder / "reference" / f"{model}.npz", **stored, **arrays)


def check_close(what: str, got: np.ndarray, expected: np.ndarray, atol: float = 1e-5) -> None:
    """Stops the recipe when `got` is not `expected` (same shape, within atol; NaN where expected is NaN)."""
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    if got.shape != expected.shape:
        raise SystemExit(f"{what}: shape {got.shape}, expected {expected.shape}")
    if not np.array_equal(np.isnan(got), np.isnan(expected)):
        raise SystemExit(f"{what}: NaN in different places")
    error = float(np.nanmax(np.abs(got - expected), initial=0.0))
    if not error <= atol:
        raise SystemExit(f"{what}: max error {error:.3g} > {atol}")


def describe(proto: onnx.ModelProto) -> str:
    """What the exporter wrote: the control-flow and recurrent nodes by path, with node counts."""
    found = []
    for node in proto.graph.node:
        if node.op_type in ("Loop", "Scan"):
            body = next(a.g for a in node.attribute if a.name == "body")
            kinds = collections.Counter(n.op_type for n in body.node if n.op_type in ("LSTM", "GRU", "RNN"))
            inner = "".join(f", a {k} op inside" for k in kinds)
            found.append(f"{node.op_type} `{node.name}` (body {len(body.node)} nodes{inner})")
        elif node.op_type in ("LSTM", "GRU", "RNN"):
            direction_attr = next((a.s.decode() for a in node.attribute if a.name == "direction"), "forward")
            found.append(f"{node.op_type} op `{node.name}` ({direction_attr})")
    if not found:
        kinds = collections.Counter(n.op_type for n in proto.graph.node)
        found.append("unrolled: " + ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items())))
    return f"{'; '.join(found)}; {len(proto.graph.node)} nodes in the main graph"
