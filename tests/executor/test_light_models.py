"""onnx's 'light' CNNs (shipped in the onnx wheel, weights stripped to constant fills) at their own opset 9,
with seeded weights and inputs, through explorer and judged by onnxruntime: Conv, BatchNormalization, LRN,
MaxPool, AveragePool, GlobalAveragePool, Gemm, Dropout, Concat, Sum, Softmax-9 as exported."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from real_models import LIGHT, seeded_light_model

import explorer

# AlexNet, ZFNet and VGG19 hold 60-140 M fully connected weights: seeding and shipping them to onnxruntime's
# child process takes minutes; bench/bench_models.py runs VGG19.
HEAVY = {"bvlc_alexnet", "zfnet512", "vgg19"}
NAMES = sorted(path.stem.removeprefix("light_") for path in LIGHT.glob("light_*.onnx"))


def test_the_wheel_ships_the_light_models():
    assert {"resnet50", "inception_v1", "squeezenet", "vgg19", "densenet121"} <= set(NAMES)


@pytest.mark.parametrize("name", [name for name in NAMES if name not in HEAVY])
def test_light_model_matches_onnxruntime(name):
    proto, feeds = seeded_light_model(name)
    model = explorer.load(proto)
    trace = explorer.run(model, feeds)
    (output,) = trace.outputs.values()
    assert np.isfinite(output).all() and output.std() > 0, "seeded weights must give a telling output"
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, feeds)
    np.testing.assert_allclose(output, expected, rtol=1e-3, atol=1e-6)
