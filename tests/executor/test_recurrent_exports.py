"""Real exports of recurrent layers and of loops that are none (tests/models/keras_exports and
tests/models/torch_cells, made by tf2onnx and torch.onnx with the recipes kept there): explorer runs each on the
inputs the recipe recorded and gives onnxruntime's outputs and the framework's own; and each reference file holds
what the recipes promise: the inputs of feeds.json, the framework's outputs under the ONNX output names, the
framework's weights, and per recurrent layer its gates [seq, num_directions, batch, hidden] (the ONNX operators'
letters, NaN where the mask skips a step) which obey the cell's own update from step to step."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import explorer

MODELS = Path(__file__).parents[1] / "models"
FOLDERS = ("keras_exports", "torch_cells")
FILES = [path for folder in FOLDERS for path in sorted((MODELS / folder).glob("*.onnx"))]
LETTERS = {"GRU": {"z", "r", "h", "H"}, "LSTM": {"i", "o", "f", "c", "C", "H"}, "RNN": {"a", "H"}}
FRAMEWORK_TOLERANCE = {"keras_lstm_fp16.onnx": 5e-3}  # float16 weights and arithmetic inside the graph


def reference(path: Path) -> dict[str, np.ndarray]:
    with np.load(path.parent / "reference" / f"{path.stem}.npz") as stored:
        return {k: stored[k] for k in stored.files}


def section(stored: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix):]: v for k, v in stored.items() if k.startswith(prefix)}


def gate_layers(stored: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    layers: dict[str, dict[str, np.ndarray]] = {}
    for key, value in section(stored, "gates/").items():
        layer, letter = key.rsplit("/", 1)
        layers.setdefault(layer, {})[letter] = value
    return layers


def kind_of(gates: dict[str, np.ndarray]) -> str:
    (kind,) = [k for k, letters in LETTERS.items() if set(gates) == letters | {"mask"}]
    return kind


def name_of(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def test_every_model_has_its_feeds_and_its_reference():
    for folder in FOLDERS:
        models = {p.name for p in (MODELS / folder).glob("*.onnx")}
        assert models, folder
        assert set(json.loads((MODELS / folder / "feeds.json").read_text())) == models
        assert {p.stem + ".onnx" for p in (MODELS / folder / "reference").glob("*.npz")} == models
        assert (MODELS / folder / "export_models.py").exists() and (MODELS / folder / "README.md").exists()
        for model in models:
            assert (MODELS / folder / model).stat().st_size < 1_000_000, model


@pytest.mark.parametrize("path", FILES, ids=name_of)
def test_explorer_gives_onnxruntime_and_the_framework_outputs(path):
    stored = reference(path)
    feeds, framework = section(stored, "inputs/"), section(stored, "outputs/")
    trace = explorer.run(explorer.load(str(path)), feeds)
    assert trace.error is None, trace.error
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    assert sorted(names) == sorted(framework)
    tolerance = FRAMEWORK_TOLERANCE.get(path.name, 1e-5)
    for name, expected in zip(names, session.run(None, feeds)):
        got = trace.outputs[name]
        assert got.dtype == expected.dtype and got.shape == expected.shape, name
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=f"{name} against onnxruntime")
        np.testing.assert_allclose(got, framework[name], rtol=0, atol=tolerance, err_msg=f"{name} against the framework")


@pytest.mark.parametrize("path", FILES, ids=name_of)
def test_reference_inputs_are_the_feeds_of_the_folder(path):
    stored = reference(path)
    inputs = section(stored, "inputs/")
    listed = json.loads((path.parent / "feeds.json").read_text())[path.name]
    graph = onnx.load(str(path), load_external_data=False).graph
    initializers = {t.name for t in graph.initializer}
    assert sorted(inputs) == sorted(listed) == sorted(i.name for i in graph.input if i.name not in initializers)
    for name, spec in listed.items():
        value = np.array(spec["value"]).astype(spec["dtype"])
        assert value.dtype == inputs[name].dtype
        np.testing.assert_array_equal(value, inputs[name])
    assert sorted(section(stored, "outputs/")) == sorted(o.name for o in graph.output)


def recurrent_files() -> list[Path]:
    return [p for p in FILES if gate_layers(reference(p))]


@pytest.mark.parametrize("path", recurrent_files(), ids=name_of)
def test_reference_gates_obey_their_cell_step_by_step(path):
    """Each layer's gates are [seq, directions, batch, hidden] with a [seq, directions, batch] mask, NaN exactly
    where the mask is off; the squashed gates lie in [0, 1]; and the state follows the ONNX letters' update
    (GRU H = z H' + (1 - z) h, LSTM C = f C' + i c and H = o tanh(C), RNN H = tanh(a)) from the previous valid
    step's state (zero at the start), the reverse direction from the end."""
    for layer, gates in gate_layers(reference(path)).items():
        kind = kind_of(gates)
        mask = gates["mask"]
        assert mask.dtype == bool and mask.ndim == 3 and mask.any(), layer
        for letter in LETTERS[kind]:
            value = gates[letter]
            assert value.dtype == np.float64 and value.ndim == 4 and value.shape[:3] == mask.shape, (layer, letter)
            assert np.array_equal(np.isnan(value).any(axis=3), ~mask) and np.isnan(value).all(axis=3)[~mask].all()
            if letter in "zrifo":
                assert np.nanmin(value) >= 0 and np.nanmax(value) <= 1, (layer, letter)
        seq, directions = mask.shape[:2]
        for d in range(directions):
            h = np.zeros_like(gates["H"][0, d])
            c = np.zeros_like(h)
            for t in (range(seq - 1, -1, -1) if d == 1 else range(seq)):
                valid = mask[t, d][:, None]
                step = {k: v[t, d] for k, v in gates.items() if k != "mask"}
                if kind == "GRU":
                    expected = step["z"] * h + (1 - step["z"]) * step["h"]
                elif kind == "LSTM":
                    cell = step["f"] * c + step["i"] * step["c"]
                    np.testing.assert_allclose(np.where(valid, step["C"], 0), np.where(valid, cell, 0), atol=1e-12)
                    expected = step["o"] * np.tanh(cell)
                    c = np.where(valid, step["C"], c)
                else:
                    expected = np.tanh(step["a"])
                np.testing.assert_allclose(np.where(valid, step["H"], 0), np.where(valid, expected, 0), atol=1e-12,
                                           err_msg=f"{layer} direction {d} step {t}")
                h = np.where(valid, step["H"], h)


@pytest.mark.parametrize("path", recurrent_files(), ids=name_of)
def test_reference_holds_the_weights_of_every_recurrent_layer(path):
    """Keras: <layer>/recurrent_kernel per direction, its columns gates x units (ConvLSTM2D: units are positions x
    filters); PyTorch: <module>.weight_hh_l<k> (and _reverse) for layer <module>_l<k> of nn.RNN/GRU/LSTM,
    <module>.weight_hh for a cell module, its rows gates x hidden."""
    stored = reference(path)
    per_gate = {"GRU": 3, "LSTM": 4, "RNN": 1}
    for layer, gates in gate_layers(stored).items():
        kind = kind_of(gates)
        seq, directions, batch, hidden = gates["H"].shape
        if path.parent.name == "keras_exports":
            kernels = [v for k, v in stored.items() if k.startswith(layer + "/") and k.endswith("/recurrent_kernel")]
            units = [k.shape[-1] // per_gate[kind] for k in kernels]
            positions = [hidden // u for u in units]
            assert all(p * u == hidden and (p == 1 or k.ndim == 4) for p, u, k in zip(positions, units, kernels))
        else:
            numbered = re.fullmatch(r"(.+)_(l\d+)", layer)  # nn.GRU's layer k is <module>_lk, a cell <module>
            names = [f"{numbered[1]}.weight_hh_{numbered[2]}{end}" for end in ("", "_reverse")] if numbered else [
                f"{layer}.weight_hh"]
            kernels = [stored[n] for n in names if n in stored]
            assert all(k.shape == (per_gate[kind] * hidden, hidden) for k in kernels), layer
        assert len(kernels) == directions, layer
