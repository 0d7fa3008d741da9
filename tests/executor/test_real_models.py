"""Real exported models from ../shared/models, run through explorer and judged by onnxruntime."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import explorer
from explorer.compare.outputs import compare_with_onnxruntime

SHARED = Path(__file__).resolve().parents[3] / "shared" / "models"
pytestmark = pytest.mark.skipif(not SHARED.exists(), reason="the real models live in ../shared/models, absent here")


def _vad_feeds(rate: int, samples: int) -> dict:
    rng = np.random.default_rng(rate)
    return {"input": rng.standard_normal((1, samples)).astype(np.float32) * 0.1,
            "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(rate, np.int64)}


CASES = {
    "gtcrn": ("Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx", None),
    "gtcrn_simple": ("Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn_simple.onnx", None),
    "silero_vad_16k": ("snakers4__silero-vad/src/silero_vad/data/silero_vad.onnx", _vad_feeds(16000, 512)),
    "silero_vad_8k": ("snakers4__silero-vad/src/silero_vad/data/silero_vad.onnx", _vad_feeds(8000, 256)),
    "silero_vad_op15": ("snakers4__silero-vad/src/silero_vad/data/silero_vad_16k_op15.onnx", None),
    "silero_vad_ifless": ("snakers4__silero-vad/src/silero_vad/data/silero_vad_op18_ifless.onnx",
                          _vad_feeds(16000, 512)),
    "tract_qlstm": ("sonos__tract/onnx/test_cases/qlstm_3-2-3_T3_S1/model.onnx", None),
    "tract_bidi_lstm": ("sonos__tract/onnx/test_cases/byte_sb_bidi_lstm/model.onnx", None),
    "ort_scan_1": ("onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/scan_1.onnx", None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_real_model_matches_onnxruntime(case):
    path, feeds = CASES[case]
    model = explorer.load(SHARED / path)
    if feeds is None:
        feeds = model.example_inputs(seed=0, dims={"batch": 1})
        if case == "silero_vad_op15":
            feeds = {k: v for k, v in _vad_feeds(16000, 512).items() if k in feeds}
    with np.errstate(all="ignore"):
        trace = explorer.run(model, feeds)
    report = compare_with_onnxruntime(model, feeds, trace.outputs, rtol=1e-3, atol=1e-4)
    assert report.ok, report.lines()
    assert len(trace.events) > 1
