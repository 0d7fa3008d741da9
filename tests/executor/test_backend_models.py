"""onnx's backend model folders (shipped in the onnx wheel with their data sets): PyTorch's legacy exports at
opsets 6 to 9 (pytorch-converted, pytorch-operator: broadcast=1 with size-1 dims, PRelu-6's per-channel slope)
and the 'simple' models, through explorer.run against their expected outputs at the case's tolerances."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from onnx.backend.test.loader import load_model_tests

import explorer

KINDS = ("pytorch-converted", "pytorch-operator", "simple")
# Gradient (ai.onnx.preview.training) differentiates a graph: a training operator no inference model uses,
# left to onnx.reference, which has no kernel for it.
NOT_RUN = {"test_gradient_of_add": "Gradient", "test_gradient_of_add_and_mul": "Gradient"}


def _cases() -> dict[str, object]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {f"{kind}/{case.name}": case for kind in KINDS for case in load_model_tests(kind=kind)}


CASES = _cases()


def _read(path: Path) -> np.ndarray:
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def _numbered(folder: Path, prefix: str) -> list[np.ndarray]:
    files = sorted(folder.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    return [_read(path) for path in files]


def test_the_wheel_ships_every_folder():
    counts = {kind: sum(name.startswith(f"{kind}/") for name in CASES) for kind in KINDS}
    assert counts == {"pytorch-converted": 82, "pytorch-operator": 35, "simple": 23}


@pytest.mark.parametrize("name", sorted(CASES))
def test_backend_model_matches_its_data(name):
    case = CASES[name]
    folder = Path(case.model_dir)
    model = explorer.load(folder / "model.onnx")
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    sets = sorted(folder.glob("test_data_set_*"))
    assert sets
    for data in sets:
        if case.name in NOT_RUN:
            with pytest.raises(explorer.UnsupportedOperatorError, match=NOT_RUN[case.name]):
                explorer.run(model, dict(zip(names, _numbered(data, "input"))))
            continue
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            trace = explorer.run(model, dict(zip(names, _numbered(data, "input"))))
        expected = _numbered(data, "output")
        assert len(expected) == len(model.graph.output)
        for output, want in zip(model.graph.output, expected):
            got = trace.outputs[output.name]
            assert got.shape == want.shape and got.dtype == want.dtype, f"{output.name}: {got.dtype}{got.shape}"
            if want.dtype.kind in "OUS":
                assert got.tolist() == want.tolist()
            else:
                np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol, err_msg=output.name)
