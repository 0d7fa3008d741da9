"""The real control-flow models of ../shared/models through explorer: outputs against onnxruntime (random feeds of
the shapes the manifest records) and against the reference outputs shipped with test fixtures; the spec-invalid
fixtures must stop with an explorer error naming the node; models onnxruntime refuses are checked by hand."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import explorer
from tests.support import control_flow_models as cf

ROOT = Path(__file__).resolve().parents[3] / "shared" / "models"
MANIFEST = json.loads((ROOT / "manifest.json").read_text()) if (ROOT / "manifest.json").exists() else {"models": []}
CONTROL_FLOW = {"If", "Loop", "Scan", "SequenceMap"}
ENTRIES = {e["file"]: e for e in MANIFEST["models"]
           if CONTROL_FLOW & {n["op"] for n in e.get("control_flow_rnn_nodes", [])}}
pytestmark = pytest.mark.skipif(not ENTRIES, reason="../shared/models is not there")

# Inputs whose random values would make a meaningless run: fixed to what the model is made for.
FIXED = {
    "snakers4__silero-vad/src/silero_vad/data/silero_vad.onnx": {"sr": np.array(16000, np.int64)},
    "snakers4__silero-vad/src/silero_vad/data/silero_vad_op18_ifless.onnx": {"sr": np.array(8000, np.int64)},
    "onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/crop_and_resize.onnx":  # box -> image index
        {"input2:0": np.array([1, 0], np.int32)},
    "NVIDIA__TensorRT/tools/Polygraphy/tests/models/bad_graph_conditionally_invalid.onnx": {"cond": np.array([True])},
}
# Spec-invalid fixtures: what explorer must say (node path and the problem), without running into a traceback.
MIGX = "ROCm__AMDMIGraphX/test/onnx/"
INVALID = {
    f"{MIGX}if_param_excp1_test.onnx": ("If_0", "cond must hold one value"),
    f"{MIGX}if_pl_test.onnx": ("If_0", "then_branch has 2 outputs, the node needs 1"),
    f"{MIGX}scan_arg_count_mismatch_test.onnx": ("Scan_0", "body has 2 inputs, the node passes it 3"),
    f"{MIGX}scan_arg_shapes_mismatch_test.onnx": ("Scan_0", "rank 1 feed body input 'scan_in2', declared with rank 2"),
    f"{MIGX}scan_input_axes_lens_mismatch_test.onnx": ("Scan_0", "different sequence lengths"),
    f"{MIGX}scan_invalid_input_axes_len_test.onnx": ("Scan_0", "scan_input_axes has 2 entries"),
    f"{MIGX}scan_invalid_input_axes_vals_test.onnx": ("Scan_0", "scan_input_axes[0]=3 is out of range"),
    f"{MIGX}scan_invalid_input_dirs_len_test.onnx": ("Scan_0", "scan_input_directions has 2 entries"),
    f"{MIGX}scan_invalid_input_dirs_vals_test.onnx": ("Scan_0", "scan_input_directions [2] may only hold 0 or 1"),
    f"{MIGX}scan_invalid_output_axes_len_test.onnx": ("Scan_0", "scan_output_axes has 2 entries"),
    f"{MIGX}scan_invalid_output_axes_vals_test.onnx": ("Scan_0", "scan_output_axes[0]=-4 is out of range"),
    f"{MIGX}scan_invalid_output_dirs_len_test.onnx": ("Scan_0", "scan_output_directions has 2 entries"),
    f"{MIGX}scan_invalid_output_dirs_vals_test.onnx": ("Scan_0", "scan_output_directions [-1] may only hold 0 or 1"),
    "onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/icm-31000000518483.onnx": ("If1", "cond input is missing"),
}
# Spec-invalid only through an attribute a body operator's version does not define (ReduceSum-13 `axes`).
TYPING_INVALID = {  # breaks a typing rule explorer checks at load (explorer.model.typing_rules)
    f"{MIGX}scan_invalid_input_axes_vals_test.onnx": r"scan_input_axes\[0\]=3 lies outside the 3 axes",
    f"{MIGX}scan_invalid_output_axes_vals_test.onnx": r"scan_output_axes\[0\]=-4 lies outside the 3 axes",
}
ATTRIBUTE_INVALID = [f"{MIGX}scan_test{i}.onnx" for i in range(1, 7)]
NEEDS_OWN_FEEDS = {  # no recorded shapes, or an optional input; covered by tests below
    "onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/gh_issue_11717.onnx",
    "onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/ort_github_issue_17000.onnx",
}
ORT_RUNS = sorted(f for f, e in ENTRIES.items()
                  if e.get("ort_random_run") == "ok" and f not in INVALID and f not in NEEDS_OWN_FEEDS)
WITH_REFERENCE = sorted(f for f, e in ENTRIES.items() if any("test_data_set_0/output" in r or r.endswith("io.npz")
                                                             for r in e.get("reference_files", [])))


def _id(file: str) -> str:
    return "/".join(Path(file).parts[-2:])


def _random(rng: np.random.Generator, tp: onnx.TypeProto, shape: list) -> object:
    """Random values of a declared type: small non-negative ints, standard normal floats, sequences of those."""
    if tp.HasField("sequence_type"):
        return [_random(rng, tp.sequence_type.elem_type, s) for s in shape]
    if tp.HasField("optional_type"):  # present or absent, half the time each
        return _random(rng, tp.optional_type.elem_type, shape) if rng.random() < 0.5 else None
    dtype = onnx.helper.tensor_dtype_to_np_dtype(tp.tensor_type.elem_type)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return rng.integers(0, 4, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _feeds(model: explorer.Model, entry: dict, seed: int) -> dict:
    """Random feeds of the shapes onnxruntime ran the model with (manifest), of the declared input types."""
    rng = np.random.default_rng(seed)
    shapes = entry.get("ort_random_input_shapes") or {}
    feeds = {}
    for spec in model.inputs:
        shape = shapes.get(spec.name, [d if isinstance(d, int) and d > 0 else 2 for d in spec.shape or []])
        feeds[spec.name] = _random(rng, spec.type_proto, shape)
    feeds.update(FIXED.get(entry["file"], {}))
    return feeds


@pytest.mark.parametrize("file", ORT_RUNS, ids=_id)
def test_real_model_matches_onnxruntime(file):
    model = explorer.load(ROOT / file)
    in_graphs = {ref.op_type for ref in model.nodes()} & CONTROL_FLOW  # not those inside model-local functions
    for seed in range(3):
        feeds = _feeds(model, ENTRIES[file], seed)
        trace = explorer.run(model, feeds)
        cf.assert_same(trace.outputs, cf.ort_run(model.proto, feeds), rtol=1e-4, atol=1e-5)
        assert not in_graphs or {e.op_type for e in trace.events} & CONTROL_FLOW, f"{file}: no control flow ran"


def _reference_sets(file: str) -> list[tuple[dict, dict]]:
    """(inputs, outputs) of the reference data next to a fixture: test_data_set_* .pb files or tract's io.npz."""
    folder = (ROOT / file).parent
    model = onnx.load(ROOT / file)
    initializers = {t.name for t in model.graph.initializer}
    in_names = [i.name for i in model.graph.input if i.name not in initializers]
    out_names = [o.name for o in model.graph.output]
    types = {v.name: v.type for v in [*model.graph.input, *model.graph.output]}

    def read(path: Path, name: str) -> object:
        if types[name].HasField("sequence_type"):
            proto = onnx.SequenceProto()
            proto.ParseFromString(path.read_bytes())
            return numpy_helper.to_list(proto)
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        return numpy_helper.to_array(tensor)

    sets = []
    for data in sorted(folder.glob("test_data_set_*")):
        sets.append(tuple({name: read(data / f"{prefix}_{i}.pb", name) for i, name in enumerate(names)
                           if (data / f"{prefix}_{i}.pb").exists()}
                          for prefix, names in (("input", in_names), ("output", out_names))))
    if (folder / "io.npz").exists():
        io = np.load(folder / "io.npz")
        sets.append(({n: io[n] for n in in_names if n in io}, {n: io[n] for n in out_names if n in io}))
    return sets


@pytest.mark.parametrize("file", WITH_REFERENCE, ids=_id)
def test_real_model_matches_its_reference_outputs(file):
    sets = _reference_sets(file)
    assert sets and all(expected for _, expected in sets), file
    model = explorer.load(ROOT / file)
    for inputs, expected in sets:
        trace = explorer.run(model, inputs)
        cf.assert_same({name: trace.outputs[name] for name in expected}, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("file", sorted(INVALID), ids=_id)
def test_spec_invalid_fixture_gives_a_clear_error(file):
    node, message = INVALID[file]
    if file in TYPING_INVALID:  # refused at load by default; lenient mode runs it into the same run error
        with pytest.raises(explorer.ModelError, match=TYPING_INVALID[file]):
            explorer.load(ROOT / file)
    model = explorer.load(ROOT / file, lenient=file in TYPING_INVALID)
    feeds = _feeds(model, ENTRIES[file], 0)
    with pytest.raises(explorer.ExecutionError) as info:
        explorer.run(model, feeds)
    err = info.value
    assert err.node == node and f"node {node!r}" in str(err) and message in str(err), str(err)
    assert err.trace is not None and err.trace.error.node == node


@pytest.mark.parametrize("file", ATTRIBUTE_INVALID, ids=_id)
def test_undefined_attribute_in_a_body_is_refused(file):
    model = explorer.load(ROOT / file)
    assert any("Unrecognized attribute: axes" in w for w in model.warnings)
    with pytest.raises(explorer.ExecutionError, match=r"ReduceSum-13 has no attribute 'axes'") as info:
        explorer.run(model, _feeds(model, ENTRIES[file], 0))
    assert info.value.op_type == "ReduceSum" and "/body/" in info.value.node


def test_optional_input_through_nested_ifs():
    """gh_issue_11717: an optional input read back through two Ifs, present and absent."""
    model = explorer.load(ROOT / "onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/gh_issue_11717.onnx")
    for y, branch in [(np.arange(12, dtype=np.int32).reshape(3, 4), "then_branch"), (None, "else_branch")]:
        trace = explorer.run(model, {"y": y})
        cf.assert_same(trace.outputs, cf.ort_run(model.proto, {"y": y}))
        assert trace.branch("If_6") == branch


def test_sequence_input_read_in_a_branch():
    model = explorer.load(ROOT / "onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/ort_github_issue_17000.onnx")
    for length in (0, 1, 2, 3):
        feeds = {"seq_in": [np.full(3, k, np.float32) for k in range(length)]}
        trace = explorer.run(model, feeds)
        cf.assert_same(trace.outputs, cf.ort_run(model.proto, feeds))
        assert bool(trace.outputs["still_has_elements"]) == (length > 1)


@pytest.mark.parametrize(("axis1", "axis2"), [(0, 1), (0, 3), (1, 2), (1, 3), (2, 3)])
def test_branches_returning_outer_values_directly(axis1, axis2):
    """ort_github_issue_11536 swaps two axes; its If branches return outer values with no node in between, which
    onnxruntime refuses to load. They also declare those int64 shape slices float, so a Concat then mixes float
    and int64: explorer refuses the model by default and runs it in lenient mode. Judged by hand: the result is
    np.swapaxes."""
    path = ROOT / "onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/ort_github_issue_11536.onnx"
    with pytest.raises(explorer.ModelError, match="'tmp_5' is tensor.float. but 'dim1' is tensor.int64.; Concat-13"):
        explorer.load(path)
    model = explorer.load(path, lenient=True)
    x = np.random.default_rng(axis1 * 4 + axis2).standard_normal((2, 3, 4, 5)).astype(np.float32)
    trace = explorer.run(model, {"x": x, "axis1": np.array([axis1]), "axis2": np.array([axis2])})
    np.testing.assert_array_equal(trace.outputs["return_val"], np.swapaxes(x, axis1, axis2))
    assert trace.branch("If_8") == ("then_branch" if axis1 == 0 else "else_branch")
    with pytest.raises(Exception, match="outer scope value being returned directly"):
        cf.ort_run(model.proto, {"x": x, "axis1": np.array([axis1]), "axis2": np.array([axis2])})


def test_conditionally_invalid_graph_fails_only_on_the_bad_branch():
    """Polygraphy's fixture: the else branch yields a [2] tensor that cannot multiply z [1, 2]."""
    file = "NVIDIA__TensorRT/tools/Polygraphy/tests/models/bad_graph_conditionally_invalid.onnx"
    model = explorer.load(ROOT / file)
    with pytest.raises(explorer.ExecutionError) as info:
        explorer.run(model, {"cond": np.array([False])})
    assert info.value.node == "MatMul" and "node 'MatMul' (MatMul)" in str(info.value)
    assert info.value.trace.branch("If_Node") == "else_branch"
    with pytest.raises(Exception, match="MatMul"):
        cf.ort_run(model.proto, {"cond": np.array([False])})
