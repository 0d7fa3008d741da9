"""Weights read where they lie: external data mapped read-only, a model file's own raw data left in the file, bytes
and protos parsed without their weights; runs read and record the mapped arrays without copying them; models
written back in one file or with external data; onnxruntime given a path whose weights are links to the files."""
from __future__ import annotations

import gc
import mmap
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import explorer
from explorer.errors import ModelError
from explorer.judge.judge import run_onnxruntime
from explorer.model.model_files import needs_external, runtime_copy, save_model
from explorer.model.model_inference import model_bytes
from explorer.optimizer import optimize
from explorer.proto import weights

N = 512  # a [512, 1024] float32 weight is 2 MiB; ten of them make 20 MiB of external data
RNG = np.random.default_rng(0)
WEIGHTS = [(RNG.standard_normal((N, 2 * N)) / 30).astype(np.float32) if k % 2 == 0 else
           (RNG.standard_normal((2 * N, N)) / 30).astype(np.float32) for k in range(10)]
X = RNG.standard_normal((3, N)).astype(np.float32)


def chain_graph() -> onnx.GraphProto:
    """x [3, 512] through ten MatMuls (2 MiB weights) and a Reshape whose small shape tensor inference reads."""
    nodes, current = [], "x"
    for k in range(len(WEIGHTS)):
        nodes.append(h.make_node("MatMul", [current, f"w{k}"], [f"m{k}"], name=f"mm{k}"))
        current = f"m{k}"
    nodes.append(h.make_node("Reshape", [current, "shape"], ["y"], name="reshape"))
    inits = [numpy_helper.from_array(w, f"w{k}") for k, w in enumerate(WEIGHTS)]
    inits.append(numpy_helper.from_array(np.array([N, 3], np.int64), "shape"))
    return h.make_graph(nodes, "chain", [h.make_tensor_value_info("x", T.FLOAT, [3, N])],
                        [h.make_tensor_value_info("y", T.FLOAT, None)], inits)


def chain_model() -> onnx.ModelProto:
    return h.make_model(chain_graph(), opset_imports=[h.make_opsetid("", 18)])


def expected_output() -> np.ndarray:
    out = X
    for w in WEIGHTS:
        out = out @ w
    return out.reshape(N, 3)


def external_path(folder) -> str:
    path = folder / "model.onnx"
    onnx.save(chain_model(), path, save_as_external_data=True, location="weights.bin", size_threshold=1024)
    return str(path)


def mapped_file(array: np.ndarray) -> object:
    """The object at the root of an array's bases (a view of a mapping ends at the mmap)."""
    base = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return base.obj if isinstance(base, memoryview) else base


def assert_mapped(model: explorer.Model) -> None:
    """Every weight of the model points at mapped bytes: none of its data is in the proto."""
    for tensor in model.graph.initializer:
        if tensor.name.startswith("w"):
            assert not tensor.raw_data and tensor.data_location == T.EXTERNAL
            assert weights.entries(tensor)["location"].startswith(weights.MAPPED)
    assert model.proto.ByteSize() < 64 << 10


# ---- loading ------------------------------------------------------------------------------------------------
def test_external_data_is_mapped_read_only_and_never_in_the_proto(tmp_path):
    model = explorer.load(external_path(tmp_path))
    assert_mapped(model)
    w0 = next(t for t in model.graph.initializer if t.name == "w0")
    value = weights.tensor_value(w0)
    np.testing.assert_array_equal(value, WEIGHTS[0])
    assert not value.flags.writeable and isinstance(mapped_file(value), mmap.mmap)
    shape = next(t for t in model.graph.initializer if t.name == "shape")
    assert shape.raw_data and not shape.external_data  # a small tensor is read in, for shape inference
    reshaped = model.index.value_type("y", "")
    assert [d.dim_value for d in reshaped.tensor_type.shape.dim] == [N, 3]
    assert model.given is not None and model.given.external
    assert model.given.bytes == model_bytes(chain_model())


@pytest.mark.parametrize("given", ["file", "bytes", "proto"])
def test_a_single_piece_model_is_parsed_without_its_weights(tmp_path, given):
    proto = chain_model()
    path = tmp_path / "single.onnx"
    path.write_bytes(proto.SerializeToString())
    source = {"file": str(path), "bytes": path.read_bytes(), "proto": proto}[given]
    model = explorer.load(source)
    assert_mapped(model)
    assert model.given is not None and not model.given.external
    assert model.given.bytes == len(proto.SerializeToString())
    for k, w in enumerate(WEIGHTS):
        tensor = next(t for t in model.graph.initializer if t.name == f"w{k}")
        np.testing.assert_array_equal(weights.tensor_value(tensor), w)
    np.testing.assert_allclose(explorer.run(model, {"x": X}).outputs["y"], expected_output(), rtol=1e-4, atol=1e-5)
    if given == "file":  # raw data lies where protobuf put it: read into aligned memory where BLAS needs that
        offsets = {t.name: int(weights.entries(t)["offset"]) for t in model.graph.initializer if t.name[0] == "w"}
        odd = next(t for t in model.graph.initializer if t.name in offsets and offsets[t.name] % 4)
        value = weights.tensor_value(odd, aligned=True)
        assert value.flags.aligned and not weights.tensor_value(odd).flags.aligned
        np.testing.assert_array_equal(value, WEIGHTS[int(odd.name[1:])])
    if given == "proto":
        assert proto.graph.initializer[0].raw_data  # the caller's proto is left as it was


def test_a_run_reads_the_mapping_and_records_weights_by_reference(tmp_path):
    model = explorer.load(external_path(tmp_path))
    trace = explorer.run(model, {"x": X})
    np.testing.assert_allclose(trace.outputs["y"], expected_output(), rtol=1e-4, atol=1e-5)
    w3 = trace.events_of("mm3")[0].inputs["w3"]
    assert isinstance(mapped_file(w3), mmap.mmap) and not w3.flags.writeable
    assert trace.recorded_bytes < 1 << 20  # only what nodes produced: the weights are references
    again = explorer.run(model, {"x": X})
    assert again.events_of("mm3")[0].inputs["w3"] is w3


def test_a_loop_body_reads_the_outer_weight_from_the_mapping(tmp_path):
    weight = (RNG.standard_normal((N, N)) / 30).astype(np.float32)
    body = h.make_graph([h.make_node("MatMul", ["h", "W"], ["m"], name="mm"), h.make_node("Tanh", ["m"], ["h2"]),
                         h.make_node("Identity", ["c"], ["c2"])], "body",
                        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
                         h.make_tensor_value_info("h", T.FLOAT, [1, N])],
                        [h.make_tensor_value_info("c2", T.BOOL, []), h.make_tensor_value_info("h2", T.FLOAT, [1, N])])
    graph = h.make_graph([h.make_node("Loop", ["n", "", "x"], ["y"], body=body, name="loop")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, N])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, N])],
                         [numpy_helper.from_array(weight, "W"), numpy_helper.from_array(np.array(3, np.int64), "n")])
    path = tmp_path / "loop.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), path, save_as_external_data=True,
              location="loop.bin")
    model = explorer.load(path)
    x = RNG.standard_normal((1, N)).astype(np.float32)
    trace = explorer.run(model, {"x": x})
    recorded = [event.inputs["W"] for event in trace.events_of("loop/body/mm")]
    assert len(recorded) == 3 and all(value is recorded[0] for value in recorded)
    assert isinstance(mapped_file(recorded[0]), mmap.mmap)
    expected = x
    for _ in range(3):
        expected = np.tanh(expected @ weight)
    np.testing.assert_allclose(trace.outputs["y"], expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(run_onnxruntime(model, {"x": x})["y"], trace.outputs["y"], rtol=1e-4, atol=1e-5)


def test_the_mapping_lives_as_long_as_a_model_that_reads_it(tmp_path):
    model = explorer.load(external_path(tmp_path))
    token = model.weights[0].token
    same = explorer.load(tmp_path / "model.onnx")
    assert same.weights[0] is model.weights[0] and same.sha256 == model.sha256
    del model, same
    gc.collect()
    assert weights.source_of(token) is None


def test_a_weight_file_changed_on_disk_gives_another_key(tmp_path):
    first = explorer.load(external_path(tmp_path))
    data = tmp_path / "weights.bin"
    os.utime(data, ns=(os.stat(data).st_atime_ns, os.stat(data).st_mtime_ns + 10**9))
    assert explorer.load(tmp_path / "model.onnx").sha256 != first.sha256


def test_a_tensor_pointing_outside_any_mapping_is_refused():
    tensor = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[4], data_location=T.EXTERNAL)
    tensor.external_data.add(key="location", value="weights.bin")
    with pytest.raises(ModelError, match="not loaded"):
        weights.tensor_value(tensor)


@pytest.mark.parametrize("location", ["#explorer:f0123", "#stripped:abc"])
def test_a_file_cannot_point_at_mappings_of_this_process(tmp_path, location):
    model = chain_model()
    tensor = model.graph.initializer[0]
    tensor.ClearField("raw_data")
    tensor.data_location = T.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", str(WEIGHTS[0].nbytes))):
        tensor.external_data.add(key=key, value=value)
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    with pytest.raises(ModelError, match="names no file"):
        explorer.load(tmp_path / "m.onnx")


# ---- writing ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("external", [False, True])
def test_a_mapped_model_is_written_back_whole(tmp_path, external):
    model = explorer.load(external_path(tmp_path))
    target = tmp_path / "out" / "copy.onnx"
    target.parent.mkdir()
    written = save_model(model, target, external=external)
    assert written == ([target, target.parent / "copy.onnx.data"] if external else [target])
    again = onnx.load(str(target))  # onnx's own reader, external data included
    for k, w in enumerate(WEIGHTS):
        np.testing.assert_array_equal(numpy_helper.to_array(next(t for t in again.graph.initializer
                                                                 if t.name == f"w{k}")), w)
    assert len(again.graph.node) == len(model.graph.node)


def test_the_optimizer_writes_external_data_when_its_input_had_some(tmp_path):
    model = explorer.load(external_path(tmp_path))
    assert needs_external(model.proto)
    result = optimize(model)
    written = result.save(tmp_path / "optimized.onnx")
    assert [p.name for p in written] == ["optimized.onnx", "optimized.onnx.data"]
    reloaded = explorer.load(written[0])
    np.testing.assert_allclose(explorer.run(reloaded, {"x": X}).outputs["y"], expected_output(), rtol=1e-4,
                               atol=1e-5)
    single = explorer.load(chain_model().SerializeToString())
    assert not needs_external(single.proto)
    assert [p.name for p in optimize(single).save(tmp_path / "single.onnx")] == ["single.onnx"]


def test_onnxruntime_gets_a_path_with_links_to_the_weight_files(tmp_path):
    model = explorer.load(external_path(tmp_path))
    with runtime_copy(model) as path:
        files = sorted(os.listdir(path.parent))
        assert files == ["model.onnx", "weights0.bin"]
        assert os.stat(path.parent / "weights0.bin").st_ino == os.stat(tmp_path / "weights.bin").st_ino
        assert os.path.getsize(path) < 64 << 10
    assert not path.parent.exists()
    np.testing.assert_allclose(run_onnxruntime(model, {"x": X})["y"], expected_output(), rtol=1e-4, atol=1e-5)
    from_bytes = explorer.load(chain_model().SerializeToString())  # weights held in memory: written for it
    np.testing.assert_allclose(run_onnxruntime(from_bytes, {"x": X})["y"], expected_output(), rtol=1e-4,
                               atol=1e-5)


def test_a_sweep_sends_its_workers_the_file_or_the_weights_themselves(tmp_path):
    from explorer.sweep.api import model_ref
    from explorer.sweep.task import model_of

    ref, data, _ = model_ref(explorer.load(external_path(tmp_path)))
    assert data is None and ref.path == str(tmp_path / "model.onnx")
    ref, data, _ = model_ref(explorer.load(chain_model().SerializeToString()))
    assert ref.path is None and data is not None and len(data) > sum(w.nbytes for w in WEIGHTS)
    onnx.checker.check_model(onnx.load_from_string(data))  # a model any process can read: weights inside
    np.testing.assert_allclose(explorer.run(model_of(ref, data), {"x": X}).outputs["y"], expected_output(),
                               rtol=1e-4, atol=1e-5)


def test_copies_left_by_a_process_that_died_are_removed(tmp_path):
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphan = Path(tempfile.gettempdir()) / f"explorer-ort-{int(dead.stdout)}-left"
    orphan.mkdir(exist_ok=True)
    with runtime_copy(chain_model().SerializeToString()) as path:
        assert path.parent.name.startswith(f"explorer-ort-{os.getpid()}-")
    assert not orphan.exists()


@pytest.mark.usefixtures("fresh_app")
def test_the_app_opens_a_model_with_external_data_by_path_runs_and_steps(tmp_path):
    from tests.support.apptest import PAGES, assert_clean, html_text, start, step_to, stepper

    path = external_path(tmp_path)
    at = start("tiny_mlp")
    at.radio(key="w_source").set_value("Local path").run()
    at.text_input(key="w_path").input(path).run()
    assert_clean(at)
    assert at.session_state["active_model"].label == path
    at.switch_page(PAGES["step"]).run()
    assert stepper(at)["last"] == len(WEIGHTS)  # ten MatMuls and the Reshape
    step_to(at, 3)
    assert_clean(at)
    shown = html_text(at)
    assert "w3" in shown and "float32[1024, 512]" in shown  # the mapped weight the step read


@pytest.mark.usefixtures("fresh_app")
def test_the_optimizer_page_saves_a_result_with_external_data_to_a_local_path(tmp_path):
    from tests.support.apptest import PAGES, assert_clean, start

    at = start("tiny_mlp")
    at.radio(key="w_source").set_value("Local path").run()
    at.text_input(key="w_path").input(external_path(tmp_path)).run()
    at.switch_page(PAGES["optimizer"]).run()
    assert_clean(at)
    assert not [b for b in at.get("download_button") if "optimized model" in str(b.proto.label)]
    target = tmp_path / "out" / "model.optimized.onnx"
    target.parent.mkdir()
    assert at.text_input(key="w_optimized_path").value == str(tmp_path / "model.optimized.onnx")
    at.text_input(key="w_optimized_path").input(str(target)).run()
    at.button(key="w_optimized_save").click().run()
    assert any("Saved" in s.value for s in at.success)
    assert sorted(os.listdir(target.parent)) == ["model.optimized.onnx", "model.optimized.onnx.data"]
    reloaded = explorer.load(target)
    np.testing.assert_allclose(explorer.run(reloaded, {"x": X}).outputs["y"], expected_output(), rtol=1e-4,
                               atol=1e-5)
