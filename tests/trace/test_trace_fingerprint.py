"""The recording is unchanged by the executor's speed work: every model of trace_fingerprint.py records, value by
value, what the stored fingerprint (made before that work) says: every event, iteration record, If branch, loop
stop reason, gate and output. A second run of the same model must leave the first run's trace as it was (no
buffer kept from run to run may be one a trace records)."""
from __future__ import annotations

import gzip
import json
import math
from typing import Any

import pytest

import explorer
from tests.support.trace_fingerprint import (
    PLATFORM,
    STORED,
    fingerprint_models,
    platform_key,
    run_print,
    trace_print,
)

STORED_PRINTS: dict[str, Any] = json.loads(gzip.decompress(STORED.read_bytes()))
EXACT = STORED_PRINTS.pop(PLATFORM) == platform_key()
"""On the platform that made the fingerprint every value's bytes must be the same."""
MODELS = {name: (model, feeds) for name, model, feeds in fingerprint_models()}


def same_value(found: Any, stored: Any) -> bool:
    """Equal fingerprints; or, on another platform than the fingerprint's, for a float value whose bytes differ,
    the same dtype and shape and float64 sums within a rounding of the stored ones (a BLAS of another CPU rounds
    its products otherwise)."""
    if found == stored:
        return True
    if EXACT or not (isinstance(found, list) and isinstance(stored, list) and len(found) == len(stored) == 4):
        return False
    if found[:2] != stored[:2]:
        return False
    (total, size, squares, nans, infs), (total0, size0, squares0, nans0, infs0) = found[3], stored[3]
    scale = max(size0, 1e-30)
    return ((nans, infs) == (nans0, infs0) and math.isclose(size, size0, rel_tol=1e-4)
            and abs(total - total0) <= 1e-4 * scale and math.isclose(squares, squares0, rel_tol=1e-3, abs_tol=1e-30))


def assert_same(found: dict[str, Any], stored: dict[str, Any]) -> None:
    assert found["error"] == stored["error"]
    for part in ("events", "iterations", "outputs"):
        assert len(found[part]) == len(stored[part]), part
    values, values0 = found["values"], stored["values"]

    def same_refs(refs: list[Any], refs0: list[Any], where: str) -> None:
        assert len(refs) == len(refs0), where
        for ref, ref0 in zip(refs, refs0):
            if isinstance(ref, list):  # [name, value]
                assert ref[0] == ref0[0], where
                ref, ref0 = ref[1], ref0[1]
            assert same_value(values[ref], values0[ref0]), f"{where}: {values[ref]} != {values0[ref0]}"

    for event, event0 in zip(found["events"], stored["events"]):
        where = f"event {event0[0]} ({event0[1]}, {event0[2]}, iteration {event0[3]})"
        assert event[:6] == event0[:6] and event[9] == event0[9], where
        same_refs(event[6], event0[6], where + " inputs")
        same_refs(event[7], event0[7], where + " outputs")
        info, info0 = event[8], event0[8]
        assert [key for key, _ in info] == [key for key, _ in info0], where
        for (key, value), (_, value0) in zip(info, info0):
            if key == "gates":
                same_refs(value, value0, where + " gates")
            else:
                assert value == value0, f"{where} {key}"
    for record, record0 in zip(found["iterations"], stored["iterations"]):
        where = f"iteration {record0[1]} of {record0[0]}"
        assert record[:2] == record0[:2] and record[4] == record0[4], where
        same_refs(record[2], record0[2], where + " inputs")
        same_refs(record[3], record0[3], where + " outputs")
    same_refs(found["outputs"], stored["outputs"], "outputs")


def test_every_stored_model_is_run() -> None:
    assert set(STORED_PRINTS) - {"gtcrn", "silero-vad"} <= set(MODELS)
    assert len(STORED_PRINTS) >= 70


@pytest.mark.parametrize("name", sorted(STORED_PRINTS))
def test_recording_unchanged(name: str) -> None:
    if name not in MODELS:
        pytest.skip(f"{name} is in ../shared/models, absent here")
    model, feeds = MODELS[name]
    assert_same(run_print(model, feeds), STORED_PRINTS[name])


@pytest.mark.parametrize("name", ["Loop with If", "bi-LSTM x2", "keras_exports/keras_embedding_bigru.onnx",
                                  "torch_cells/ts_lstmcell_loop.onnx", "sample_models/nested_loops.onnx",
                                  "optimum_exports/llama_decoder_with_past.onnx", "gtcrn", "silero-vad"])
def test_a_rerun_leaves_the_first_trace_as_it_was(name: str) -> None:
    if name not in MODELS:
        pytest.skip(f"{name} is in ../shared/models, absent here")
    model, feeds = MODELS[name]
    loaded = explorer.load(model)
    first = explorer.run(loaded, feeds, threads=1)
    explorer.run(loaded, feeds, threads=1)
    explorer.run(loaded, {k: v * 0 + 1 if v.dtype.kind == "f" else v for k, v in feeds.items()}, threads=1)
    assert_same(trace_print(first), STORED_PRINTS[name])
