"""Real models with GRU/LSTM/RNN nodes from ../shared/models: reference outputs shipped with them, onnxruntime
on the rest, clear errors on the spec-invalid MIGraphX fixtures."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import explorer
from explorer.errors import ExecutionError
from explorer.judge.judge import run_onnxruntime
from explorer.reports.rnn_report import rnn_reports

MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"
pytestmark = pytest.mark.skipif(not MODELS.exists(), reason="../shared/models is not present")
RESOURCES = "JetBrains-Research__kinference/utils/utils-testing/src/commonMain/resources"
CNTK = "onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/CNTK"
GRU_CASES = ("bidirectional", "defaults", "seq_length", "with_initial_bias")
LSTM_CASES = ("bilstm_defaults", "bilstm_with_bias", "lstm_defaults", "lstm_with_initial_bias",
              "lstm_with_peepholes")
WITH_REFERENCE = [f"{RESOURCES}/gru/test_gru_{n}" for n in GRU_CASES] + \
                 [f"{RESOURCES}/lstm/test_{n}" for n in LSTM_CASES] + \
                 [f"{RESOURCES}/pos_tagger", f"{CNTK}/test_LSTM.tanh.bidirectional",
                  f"{CNTK}/test_RNN.bidirectional.one_layer.relu"]


def tensors(folder: Path, prefix: str) -> list[np.ndarray]:
    files = sorted(folder.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[-1]))
    return [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in files]


def run_quietly(model, feeds):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return explorer.run(model, feeds)


@pytest.mark.parametrize("folder", WITH_REFERENCE, ids=lambda f: f.split("/")[-1])
def test_matches_the_reference_outputs_shipped_with_the_model(folder):
    model = explorer.load(MODELS / folder / "model.onnx")
    data = MODELS / folder / "test_data_set_0"
    inputs, outputs = tensors(data, "input"), tensors(data, "output")
    assert (len(inputs), len(outputs)) == (len(model.inputs), len(model.outputs))  # a value for each, none missing
    trace = run_quietly(model, dict(zip([i.name for i in model.inputs], inputs)))
    for spec, expected in zip(model.outputs, outputs):
        np.testing.assert_allclose(trace.outputs[spec.name], expected, 1e-4, 1e-4, err_msg=spec.name)
    assert any("gates" in e.info for e in trace.events)


def test_tract_bidirectional_lstm_matches_its_npz():
    folder = MODELS / "sonos__tract/onnx/test_cases/byte_sb_bidi_lstm"
    data = np.load(folder / "io.npz")
    trace = run_quietly(explorer.load(folder / "model.onnx"), {"input": data["input"]})
    np.testing.assert_allclose(trace.outputs["output"], data["Add_26"], rtol=1e-4, atol=1e-5)


def silero_feeds(model) -> dict:
    rng = np.random.default_rng(0)
    feeds = {"input": (rng.standard_normal((1, 576)) * 0.1).astype(np.float32),
             "state": (rng.standard_normal((2, 1, 128)) * 0.1).astype(np.float32)}
    if any(i.name == "sr" for i in model.inputs):
        feeds["sr"] = np.array(16000, np.int64)
    return feeds


@pytest.mark.parametrize("file,make_feeds", [
    ("snakers4__silero-vad/src/silero_vad/data/silero_vad.onnx", silero_feeds),
    ("snakers4__silero-vad/src/silero_vad/data/silero_vad_16k_op15.onnx", silero_feeds),
    ("snakers4__silero-vad/src/silero_vad/data/silero_vad_half.onnx", silero_feeds),
    ("snakers4__silero-vad/src/silero_vad/data/silero_vad_openvino_16k.onnx", silero_feeds),
    ("NVIDIA__TensorRT/tools/onnx-graphsurgeon/tests/models/lstm.onnx", None),
    ("zwxxx__onnxruntime/onnxruntime/test/testdata/lstm_1.onnx", None),
], ids=lambda v: v.split("/")[-1] if isinstance(v, str) else "")
def test_matches_onnxruntime(file, make_feeds):
    model = explorer.load(MODELS / file)
    feeds = make_feeds(model) if make_feeds else model.example_inputs(seed=0)
    trace = run_quietly(model, feeds)
    theirs = run_onnxruntime(model, feeds)
    for name, value in theirs.items():
        np.testing.assert_allclose(trace.outputs[name], value, rtol=1e-4, atol=1e-5, err_msg=name)
    assert any("gates" in e.info for e in trace.events)


def test_gtcrn_every_gru_matches_onnxruntime():
    """gtcrn_simple's 14 GRUs (PyTorch export, linear_before_reset=1) against onnxruntime, node by node: their
    outputs are made graph outputs for onnxruntime and read from the trace for explorer."""
    model = explorer.load(MODELS / "Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn_simple.onnx")
    rng = np.random.default_rng(0)
    feeds = {"mix": rng.standard_normal((1, 257, 1, 2)).astype(np.float32),
             "conv_cache": np.zeros((2, 1, 16, 16, 33), np.float32),
             "tra_cache": np.zeros((2, 3, 1, 1, 16), np.float32),
             "inter_cache": np.zeros((2, 1, 33, 16), np.float32)}
    try:
        trace = run_quietly(model, feeds)
    except ExecutionError as exc:  # a later, unrelated node may fail; the GRUs come before it
        trace = exc.trace
    grus = [e for e in trace.events if e.op_type == "GRU"]
    assert len(grus) == 14
    probe = onnx.ModelProto()
    probe.CopyFrom(model.proto)
    wanted = [name for e in grus for name in e.outputs]
    probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(name) for name in wanted)
    theirs = run_onnxruntime(explorer.load(probe), feeds)
    for event in grus:
        recorded = event.info["gates"]["H"]
        y = next((v for k, v in event.outputs.items() if v.ndim == 4), None)
        if y is not None:
            np.testing.assert_array_equal(recorded, y)
        for name, value in event.outputs.items():
            np.testing.assert_allclose(value, theirs[name], 1e-4, 1e-5, err_msg=f"{event.node} {name}")


MIGRAPHX = sorted(p.name for p in (MODELS / "ROCm__AMDMIGraphX/test/onnx").glob("*.onnx")
                  if any(n.op_type in ("GRU", "LSTM", "RNN") for n in onnx.load(str(p)).graph.node)) \
    if MODELS.exists() else []


@pytest.mark.parametrize("name", MIGRAPHX)
def test_spec_invalid_migraphx_fixtures_give_a_clear_error_naming_the_node(name):
    """They write clip as an INT (the spec wants FLOAT) or clip=0, which onnxruntime refuses too."""
    model = explorer.load(MODELS / "ROCm__AMDMIGraphX/test/onnx" / name)
    node = next(r for r in model.nodes() if r.op_type in ("GRU", "LSTM", "RNN"))
    with pytest.raises(ExecutionError) as info:
        run_quietly(model, model.example_inputs(seed=0))
    assert info.value.node == node.path and f"node {node.path!r} ({node.op_type})" in str(info.value)
    assert "clip" in str(info.value)
    assert rnn_reports(model)[0].findings[0].level == "error"


def test_reports_of_every_real_model():
    listed = json.loads((MODELS / "manifest.json").read_text())["models"]
    files = [m["file"] for m in listed if {"GRU", "LSTM", "RNN"} & set(m.get("op_counts", {}))]
    assert len(files) > 60
    for file in files:
        model = explorer.load(MODELS / file)
        reports = rnn_reports(model)
        assert reports and all(r.lines()[0].startswith(f"{r.op_type} {r.node!r}") for r in reports)
        assert all(r.blocks or r.config is None for r in reports)
