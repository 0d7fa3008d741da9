"""The Compare page's cache heatmap on beam generations: the caches each step carries are `beam.present.*` (the
decoder's presents reordered by the beams), sorted by layer."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import explorer
from explorer.views.generation import cache_errors, step_tokens
from tests.support.generation_faults import faulty_folder, scale_query_of_head

GPT2 = Path(__file__).resolve().parents[1] / "models" / "generation" / "gpt2"


def test_beam_caches_in_the_heatmap(tmp_path: Path) -> None:
    ours = explorer.generate(GPT2 / "decoder_with_past_model.onnx", [15, 2, 99, 7], max_new_tokens=4, beams=2)
    theirs = explorer.generate(faulty_folder(tmp_path, scale_query_of_head), [15, 2, 99, 7], max_new_tokens=4,
                               beams=2)
    errors, names = cache_errors(ours.trace, theirs.trace)
    assert names == ["beam.present.0.key", "beam.present.0.value", "beam.present.1.key", "beam.present.1.value"]
    assert errors.shape == (4, 4) and np.nanmax(errors[:, 2:]) > 0.01
    assert step_tokens(ours.trace) == ours.step_tokens.T.tolist()
