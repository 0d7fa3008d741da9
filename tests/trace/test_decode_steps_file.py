"""A trace of onnxruntime's BeamSearch keeps its decode steps through the trace file: each step's tokens, beams,
scores and finished entries, and its decoder's values."""
from __future__ import annotations

import numpy as np

import explorer
from tests.support.generation_ops import MODELS, feeds


def test_decode_steps_survive_save_and_load(tmp_path):
    trace = explorer.run(MODELS / "gpt2_beam.onnx", feeds("beam"))
    trace.save(tmp_path / "beam.npz")
    loaded = explorer.Trace.load(tmp_path / "beam.npz")
    before, after = trace.iterations("BeamSearch_gpt2"), loaded.iterations("BeamSearch_gpt2")
    assert [it.index for it in after] == [it.index for it in before] and len(after) == 12
    for old, new in zip(before, after):
        assert new.info == old.info
        np.testing.assert_array_equal(new.outputs["logits"], old.outputs["logits"])
    assert set(after[0].info) == {"tokens", "beams", "scores", "finished", "subgraphs"}
