"""A reduction written as a folder others can open: the cut model(s), ONNX test data (inputs and the other side's
value as the expected output: `onnx`'s backend test layout, which onnxruntime alone can check), and a README of
one screen: what was reduced from what, the first divergence, the tolerance, the versions, the commands."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import numpy_helper

from ..environment import versions
from ..files.atomic_write import write_bytes, write_text
from .reduce import Reduction

RECHECK = """import glob, numpy as np, onnx, onnxruntime
from onnx import numpy_helper
folder = "{folder}"
paths = sorted(glob.glob(folder + "/{data}/input_*.pb"), key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
inputs = [numpy_helper.to_array(onnx.load_tensor(p)) for p in paths]
expected = numpy_helper.to_array(onnx.load_tensor(folder + "/{data}/output_0.pb"))
session = onnxruntime.InferenceSession(folder + "/{model}.onnx", providers=["CPUExecutionProvider"])
got = session.run(None, dict(zip([i.name for i in session.get_inputs()], inputs)))[0]
print("max abs difference from the expected output:", np.abs(got.astype(np.float64) - expected).max())"""


def _signature(inputs: dict[str, np.ndarray]) -> list[tuple[str, str, tuple[int, ...]]]:
    return [(name, str(np.asarray(v).dtype), np.shape(v)) for name, v in inputs.items()]


def _write_set(folder: Path, inputs: dict[str, np.ndarray], output: str, expected: np.ndarray) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for k, (name, value) in enumerate(inputs.items()):
        write_bytes(folder / f"input_{k}.pb", numpy_helper.from_array(np.asarray(value), name).SerializeToString())
    write_bytes(folder / "output_0.pb", numpy_helper.from_array(np.asarray(expected), output).SerializeToString())


def write_reduction(reduction: Reduction, folder: str | Path, *, reduced_from: str, against: str,
                    command: str) -> list[Path]:
    """Writes the folder; returns the files written."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    first_stem = next(iter(reduction.models))
    for stem, proto in reduction.models.items():
        path = out / f"{stem}.onnx"
        write_bytes(path, proto.SerializeToString())
        written.append(path)
        data = "test_data_set_0" if stem == first_stem else f"{stem}_test_data_set_0"
        if stem == first_stem or _signature(reduction.inputs[stem]) != _signature(reduction.inputs[first_stem]):
            expected = reduction.expected if stem == first_stem else reduction.actual
            _write_set(out / data, reduction.inputs[stem], reduction.output, expected)
    readme = out / "README.md"
    write_text(readme, readme_text(reduction, out, reduced_from, against, command))
    written.append(readme)
    return written


def readme_text(reduction: Reduction, folder: Path, reduced_from: str, against: str, command: str) -> str:
    """One screen: the reduction, the divergence, the tolerance, the versions and how to reproduce it."""
    stems = list(reduction.models)
    kept = len(reduction.nodes)
    where = f"the body graph `{reduction.graph}`, made standalone" if reduction.graph else "the main graph"
    tolerance = ", ".join(f"{k} {v:g}" for k, v in reduction.tolerance.items()) or "compare's defaults"
    lines = [f"# Reduced: {reduced_from} against {against}", "",
             f"- **Reduced from** `{reduced_from}` ({reduction.nodes_before} nodes) to {kept} node(s) of {where}: "
             + ", ".join(f"`{n}`" for n in reduction.nodes) + ".",
             f"- **First divergence** (full model): {reduction.first.describe()}",
             f"- **In the reduced model**: {reduction.reduced_first.describe()}",
             f"- **Inputs**: {', '.join(f'`{n}`' for n in reduction.inputs[stems[0]])}: the values the full run "
             f"read there" + (f" at iteration {reduction.first.iteration}" if reduction.first.iteration else "")
             + "; constants as initializers, each side's own.",
             f"- **Expected output** (`test_data_set_0/output_0.pb`, `{reduction.output}`): {against}'s value; "
             f"explorer's differs by {np.abs(reduction.actual.astype(np.float64) - reduction.expected).max():.3g} "
             "at most.",
             f"- **Tolerance**: {tolerance}.", *[f"- {note}" for note in reduction.notes], "",
             "## Versions", "", *[f"- {name} {version}" for name, version in versions().items()], "",
             "## Reproduce", "", "```bash", command, "```", "",
             f"With onnxruntime alone, {stems[0]}.onnx against the expected output:", "", "```python",
             RECHECK.format(folder=folder.as_posix(), data="test_data_set_0", model=stems[0]), "```", ""]
    if len(stems) == 2:
        own = f"{stems[1]}_test_data_set_0"
        data = own if (folder / own).exists() else "test_data_set_0"
        lines += [f"`explorer compare {folder.as_posix()}/{stems[0]}.onnx {folder.as_posix()}/{stems[1]}.onnx "
                  f"--inputs {folder.as_posix()}/test_data_set_0` shows both cuts part the same way "
                  f"({stems[1]}'s inputs: `{data}`).", ""]
    return "\n".join(lines)


def reduction_zip(reduction: Reduction, *, reduced_from: str, against: str, command: str) -> bytes:
    """The folder `write_reduction` writes, as the bytes of a .zip (for a report to offer as a download)."""
    import io
    import tempfile
    import zipfile

    with tempfile.TemporaryDirectory(prefix="explorer-reduced-") as folder:
        root = Path(folder) / "reduced"
        write_reduction(reduction, root, reduced_from=reduced_from, against=against, command=command)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(root.rglob("*")):
                if path.is_file():
                    archive.write(path, path.relative_to(root.parent).as_posix())
        return buffer.getvalue()
