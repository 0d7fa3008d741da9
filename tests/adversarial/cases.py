"""The adversarial corpus: each case is a function returning its outcome ("ok" when explorer agrees with
onnxruntime, "rendered", "equivalent", "inconclusive", "exit 2", ...) or raising; EXPECTED maps each case to
the outcome class it must end in (an explorer error class, or one of those words)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from explorer.budgets import MAX_GRAPH_DEPTH
from explorer.cli import main
from explorer.compare.outputs import compare_with_onnxruntime
from explorer.inputs.input_files import feeds_from_input_protos, feeds_from_npz
from explorer.limits import Limits
from explorer.optimizer.verify import compare_models
from explorer.reports.rnn_report import rnn_reports
from explorer.views.dot_escape import parse_svg_id
from explorer.views.render import write_diagram

from . import models as m

SVG = "{http://www.w3.org/2000/svg}"

CASES: dict[str, Callable[[], str]] = {}
EXPECTED: dict[str, str] = {}
SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
SMALL = Limits(max_iterations=2000, max_tensor_bytes=256 << 20, trace_budget_bytes=64 << 20)


def case(expected: str) -> Callable[[Callable[[], str]], Callable[[], str]]:
    def register(fn: Callable[[], str]) -> Callable[[], str]:
        CASES[fn.__name__] = fn
        EXPECTED[fn.__name__] = expected
        return fn

    return register


def agrees_with_onnxruntime(model: onnx.ModelProto, feeds: dict, limits: Limits | None = None) -> str:
    loaded = explorer.load(model)
    trace = explorer.run(loaded, feeds, limits=limits)
    report = compare_with_onnxruntime(loaded, feeds, trace.outputs)
    return "ok" if report.ok else f"differs: {report.lines()}"


def cli(*argv: str) -> str:
    """`exit N` for the command; a failure must be one line on stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(list(argv))
    lines = err.getvalue().strip().splitlines()
    if code == 2 and len(lines) != 1:
        return f"exit 2 with {len(lines)} lines"
    return f"exit {code}"


def tmp(name: str, data: bytes) -> str:
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def zipped(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def npy_header(descr: str, shape: tuple[int, ...]) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def saved_trace() -> tuple[str, dict]:
    model = explorer.load(SAMPLES / "loop_spec.onnx")
    path = tmp("t.npz", b"")
    explorer.run(model, model.example_inputs()).save(path)
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    return path, members


def crafted_trace(change: Callable[[dict], None]) -> str:
    _, members = saved_trace()
    meta = json.loads(members["meta.json"])
    change(meta)
    members["meta.json"] = json.dumps(meta).encode()
    path = tmp("crafted.npz", zipped(members, zipfile.ZIP_STORED))
    explorer.Trace.load(path)
    return "loaded"


# ---- load --------------------------------------------------------------------------------------------------
for _name, _data in {"empty_bytes": b"", "garbage_bytes": b"\x08\x07garbage\xff\xff",
                     "truncated_model": m.endless_loop().SerializeToString()[:40]}.items():
    case("ModelError")(lambda data=_data: str(explorer.load(data)))
    CASES[_name] = CASES.pop("<lambda>")
    EXPECTED[_name] = EXPECTED.pop("<lambda>")


@case("ModelError")
def no_graph() -> str:
    return str(explorer.load(onnx.ModelProto(ir_version=8).SerializeToString()))


@case("ModelError")
def future_ir_version() -> str:
    proto = m.named("x")
    proto.ir_version = 99
    return str(explorer.load(proto))


@case("ModelError")
def opset_from_the_future() -> str:
    return str(explorer.load(m.model([h.make_node("Relu", ["x"], ["y"])], [m.vi("x", shape=[1])],
                                     [m.vi("y", shape=[1])], opset=[h.make_opsetid("", 999)])))


@case("ModelError")
def undeclared_domain() -> str:
    return str(explorer.load(m.model([h.make_node("Foo", ["x"], ["y"], domain="evil.corp")], [m.vi("x", shape=[1])],
                                     [m.vi("y", shape=[1])])))


@case("ModelError")
def external_data_absolute_path() -> str:
    return str(explorer.load(m.external_model("/etc/passwd"), base_dir=tempfile.mkdtemp()))


@case("ModelError")
def external_data_escaping_the_folder() -> str:
    return str(explorer.load(m.external_model("../../etc/passwd"), base_dir=tempfile.mkdtemp()))


@case("ModelError")
def external_data_missing_file() -> str:
    return str(explorer.load(m.external_model("nope.bin"), base_dir=tempfile.mkdtemp()))


@case("ModelError")
def external_data_offset_not_a_number() -> str:
    folder = Path(tmp("w.bin", bytes(16))).parent
    return str(explorer.load(m.external_model("w.bin", offset="0x10; rm -rf /"), base_dir=folder))


@case("ModelError")
def external_data_range_past_the_file() -> str:
    folder = Path(tmp("w.bin", bytes(16))).parent
    return str(explorer.load(m.external_model("w.bin", offset="8", length="4096"), base_dir=folder))


@case("ModelError")
def external_data_length_of_3_gb_in_a_small_file() -> str:
    folder = Path(tmp("w.bin", bytes(4096))).parent
    return str(explorer.load(m.external_model("w.bin", length=str(3 << 30), dims=(3 << 28,)), base_dir=folder))


@case("ModelError")
def external_data_offset_past_the_end_of_its_file() -> str:
    folder = Path(tmp("w.bin", bytes(4096))).parent
    return str(explorer.load(m.external_model("w.bin", offset=str(1 << 40), length="4096", dims=(1024,)),
                             base_dir=folder))


@case("ModelError")
def external_data_file_truncated_before_its_tensor_ends() -> str:
    folder = Path(tmp("w.bin", bytes(3000))).parent  # a [1024] float32 tensor needs 4096 bytes
    return str(explorer.load(m.external_model("w.bin", length=None, dims=(1024,)), base_dir=folder))


@case("ModelError")
def external_data_length_unlike_its_dims() -> str:
    folder = Path(tmp("w.bin", bytes(1 << 20))).parent
    return str(explorer.load(m.external_model("w.bin", length=str(1 << 20), dims=(1024,)), base_dir=folder))


@case("ModelError")
def model_file_truncated_inside_a_weight() -> str:
    weight = onnx.numpy_helper.from_array(np.ones((1024, 2048), np.float32), "w")  # 8 MiB: mapped, not parsed
    data = m.model([h.make_node("Identity", ["w"], ["y"])], [], [m.vi("y", shape=[1024, 2048])],
                   [weight]).SerializeToString()
    return str(explorer.load(tmp("cut.onnx", data[:len(data) // 2])))


@case("ModelError")
def external_data_without_a_folder() -> str:
    return str(explorer.load(m.external_model("w.bin")))


@case("ModelError")
def sparse_index_out_of_range() -> str:
    return str(explorer.load(m.sparse_model([0, 99], [4])))


@case("ModelError")
def sparse_negative_index() -> str:
    return str(explorer.load(m.sparse_model([-1, 2], [4])))


@case("ModelError")
def sparse_huge_dims() -> str:
    return str(explorer.load(m.sparse_model([0, 1], [1 << 40])))


@case("ModelError")
def sparse_indices_of_the_wrong_shape() -> str:
    return str(explorer.load(m.sparse_model([0, 1, 2], [4])))


@case("ok")
def sparse_valid_matches_onnxruntime() -> str:
    return agrees_with_onnxruntime(m.sparse_model([1, 3], [4]), {})


@case("ModelError")
def bodies_nested_too_deeply() -> str:
    return str(explorer.load(m.nested_ifs(MAX_GRAPH_DEPTH + 1)))


@case("ModelError")
def loop_trip_count_typed_float() -> str:
    proto = m.endless_loop()
    proto.graph.input.append(m.vi("n", T.FLOAT, []))
    proto.graph.node[0].input[0] = "n"
    return str(explorer.load(proto))


@case("ModelError")
def if_cond_typed_float() -> str:
    branch = h.make_graph([h.make_node("Identity", ["x"], ["b"])], "b", [], [m.vi("b", shape=[1])])
    node = h.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)
    return str(explorer.load(m.model([node], [m.vi("c", T.FLOAT, []), m.vi("x", shape=[1])], [m.vi("y", shape=[1])])))


@case("ModelError")
def two_nodes_write_one_value() -> str:
    nodes = [h.make_node("Relu", ["x"], ["y"], name="a"), h.make_node("Neg", ["x"], ["y"], name="b")]
    return str(explorer.load(m.model(nodes, [m.vi("x", shape=[2])], [m.vi("y", shape=[2])])))


@case("ModelError")
def path_is_a_directory() -> str:
    return str(explorer.load(tempfile.mkdtemp()))


@case("ModelError")
def path_does_not_exist() -> str:
    return str(explorer.load("/nonexistent/model.onnx"))


@case("ModelError")
def source_of_the_wrong_kind() -> str:
    return str(explorer.load(12345))  # type: ignore[arg-type]


# ---- run ---------------------------------------------------------------------------------------------------
def _run(proto: onnx.ModelProto, feeds: dict, limits: Limits = SMALL) -> str:
    explorer.run(explorer.load(proto), feeds, limits=limits)
    return "ran"


_F = np.float32
_ALLOCATING = {
    "pad_to_40_gb": ("Pad", {"x": np.ones((1000, 1000), _F)}, {"p": np.array([0, 0, 100_000, 100_000])}, {}),
    "expand_to_40_gb": ("Expand", {"x": np.ones((1, 1), _F)}, {"s": np.array([100_000, 100_000])}, {}),
    "tile_to_40_gb": ("Tile", {"x": np.ones((10, 10), _F)}, {"r": np.array([10_000, 10_000])}, {}),
    "range_of_10_billion": ("Range", {}, {"a": np.array(0.0, _F), "b": np.array(1e10, _F),
                                          "d": np.array(1.0, _F)}, {}),
    "onehot_to_40_gb": ("OneHot", {"i": np.zeros(100_000, np.int64)}, {"d": np.array(100_000),
                                                                       "v": np.array([0, 1], _F)}, {}),
    "broadcast_add_to_40_gb": ("Add", {"a": np.ones((100_000, 1), _F), "b": np.ones((1, 100_000), _F)}, {}, {}),
    "matmul_to_40_gb": ("MatMul", {"a": np.ones((100_000, 3), _F), "b": np.ones((3, 100_000), _F)}, {}, {}),
    "einsum_to_40_gb": ("Einsum", {"a": np.ones((100_000, 3), _F), "b": np.ones((3, 100_000), _F)}, {},
                        {"equation": "ij,jk->ik"}),
    "gather_to_4_gb": ("Gather", {"x": np.ones((10, 100_000), _F)}, {"i": np.zeros(1000, np.int64)}, {}),
    "resize_to_40_gb": ("Resize", {"x": np.ones((1, 1, 100, 100), _F)},
                        {"roi": np.array([], _F), "s": np.array([1, 1, 1000, 1000], _F)}, {"mode": "nearest"}),
    "where_to_40_gb": ("Where", {"c": np.ones((100_000, 1), bool), "a": np.ones((1, 100_000), _F)},
                       {"b": np.array(0.0, _F)}, {}),
    "gemm_outer_product_of_40_gb": ("Gemm", {"a": np.ones((100_000, 1), _F), "b": np.ones((1, 100_000), _F)}, {},
                                    {}),
    "conv_with_100_000_filters_to_40_gb": ("Conv", {"x": np.ones((1, 1, 1000, 100), _F)},
                                           {"w": np.ones((100_000, 1, 1, 1), _F)}, {}),
    "conv_transpose_with_huge_strides": ("ConvTranspose", {"x": np.ones((1, 1, 10, 10), _F)},
                                         {"w": np.ones((1, 1, 3, 3), _F)}, {"strides": [100_000, 100_000]}),
    "gather_nd_to_4_gb": ("GatherND", {"x": np.ones((100_000, 100), _F)},
                           {"i": np.zeros((10_000_000, 1), np.int64)}, {}),
    "grid_sample_to_40_gb": ("GridSample", {"x": np.ones((1, 100_000, 2, 2), _F)},
                             {"g": np.zeros((1, 1000, 100, 2), _F)}, {}),
    "center_crop_pad_to_40_gb": ("CenterCropPad", {"x": np.ones((10, 10), _F)},
                                 {"s": np.array([100_000, 100_000])}, {}),
    "hann_window_of_10_billion": ("HannWindow", {}, {"n": np.array(10_000_000_000)}, {}),
    "stft_of_tiny_steps_to_40_gb": ("STFT", {"x": np.ones((1, 200_000, 1), _F)},
                                    {"step": np.array(1), "w": np.ones(100_000, _F)}, {}),
    "max_unpool_to_a_huge_output_shape": ("MaxUnpool", {"x": np.ones((1, 1, 2, 2), _F)},
                                          {"i": np.zeros((1, 1, 2, 2), np.int64),
                                           "s": np.array([1, 1, 100_000, 100_000])}, {"kernel_shape": [2, 2]}),
    "gru_of_10_million_sequences_to_40_gb": ("GRU", {"x": np.ones((100_000, 100, 1), _F)},
                                             {"w": np.ones((1, 3000, 1), _F), "r": np.ones((1, 3000, 1000), _F)},
                                             {"hidden_size": 1000}),
}
for _name, (_op, _inputs, _consts, _attrs) in _ALLOCATING.items():
    def _allocating(op=_op, inputs=_inputs, consts=_consts, attrs=_attrs) -> str:
        proto, feeds = m.one_op(op, inputs, consts, **attrs)
        return _run(proto, feeds)

    CASES[_name], EXPECTED[_name] = _allocating, "LimitExceeded"


@case("LimitExceeded")
def random_normal_of_40_gb() -> str:
    proto = m.model([h.make_node("RandomNormal", [], ["y"], shape=[100_000, 100_000])], [], [m.vi("y", shape=None)])
    return _run(proto, {})


@case("LimitExceeded")
def affine_grid_of_40_gb() -> str:
    proto = m.model([h.make_node("AffineGrid", ["t", "s"], ["y"])], [], [m.vi("y", shape=None)],
                    [m.const("t", np.zeros((1, 2, 3), _F)), m.const("s", np.array([1, 1, 100_000, 100_000]))],
                    opset=[h.make_opsetid("", 20)])
    return _run(proto, {})


@case("LimitExceeded")
def constant_of_shape_of_40_gb() -> str:
    proto = m.model([h.make_node("ConstantOfShape", ["s"], ["y"])], [], [m.vi("y", shape=None)],
                    [m.const("s", np.array([100_000, 100_000]))])
    return _run(proto, {})


@case("LimitExceeded")
def endless_loop_stops_at_the_iteration_limit() -> str:
    return _run(m.endless_loop(), {"x": np.ones(1, _F)})


@case("LimitExceeded")
def doubling_loop_stops_before_the_memory_limit() -> str:
    return _run(m.doubling_loop(), {"x": np.ones(1024, _F)})


@case("LimitExceeded")
def stacked_scan_output_past_the_limit() -> str:
    return _run(m.stacking_loop(), {"x": np.ones(262_144, _F)})


@case("ok")
def growing_sequence_past_the_trace_budget_matches_onnxruntime() -> str:
    limits = Limits(trace_budget_bytes=50_000)
    return agrees_with_onnxruntime(m.growing_sequence_loop(), {"n": np.array(2000), "x": np.ones(4, _F)}, limits)


@case("UnsupportedOperatorError")
def unknown_operator() -> str:
    return _run(m.model([h.make_node("NoSuchOp", ["x"], ["y"])], [m.vi("x", shape=[1])], [m.vi("y", shape=[1])]),
                {"x": np.ones(1, _F)})


@case("FeedError")
def missing_feed() -> str:
    return _run(m.named("x"), {})


@case("FeedError")
def feed_of_the_wrong_dtype() -> str:
    return _run(m.named("x"), {"x": np.ones(3, np.int64)})


@case("FeedError")
def feed_of_the_wrong_shape() -> str:
    return _run(m.named("x"), {"x": np.ones(4, _F)})


@case("FeedError")
def feeds_that_are_not_a_dict() -> str:
    return _run(m.named("x"), [np.ones(3, _F)])  # type: ignore[arg-type]


@case("ExecutionError")
def reshape_to_an_impossible_shape() -> str:
    proto, feeds = m.one_op("Reshape", {"x": np.ones((2, 3), _F)}, {"s": np.array([7])})
    return _run(proto, feeds)


@case("FeedError")
def random_inputs_of_a_huge_dim() -> str:
    proto = m.model([h.make_node("Relu", ["x"], ["y"])], [m.vi("x", shape=["T", 1000])], [m.vi("y", shape=None)])
    return str(explorer.load(proto).example_inputs(dims={"T": 10**9}))


@case("ok")
def markdown_and_html_names_match_onnxruntime() -> str:
    return agrees_with_onnxruntime(m.named("![x](http://host/p.png)<img src=x>"), {"![x](http://host/p.png)<img src=x>":
                                                                                   np.array([-1, 0, 2], _F)})


@case("ok")
def gru_matches_onnxruntime() -> str:
    proto, feeds = m.gru()
    return agrees_with_onnxruntime(proto, feeds)


@case("ok")
def lenient_mode_runs_a_float_trip_count() -> str:
    proto = m.endless_loop()
    proto.graph.input.append(m.vi("n", T.FLOAT, []))
    proto.graph.node[0].input[0] = "n"
    model = explorer.load(proto, lenient=True)
    explorer.run(model, {"n": np.array(3.0, _F), "x": np.ones(1, _F)}, limits=SMALL)
    return "ok" if any(w.startswith("lenient mode") for w in model.warnings) else "no warning"


# ---- feeds ---------------------------------------------------------------------------------------------------
@case("FeedError")
def npz_bomb() -> str:
    return str(feeds_from_npz(zipped({"x.npy": npy_header("<f8", (1 << 29,)) + bytes(32 << 20)})))


@case("FeedError")
def npz_with_a_pickled_object_array() -> str:
    return str(feeds_from_npz(zipped({"x.npy": npy_header("|O", (1,)) + b"\x80\x04N."})))


@case("FeedError")
def npz_header_larger_than_its_data() -> str:
    return str(feeds_from_npz(zipped({"x.npy": npy_header("<f4", (1000,)) + bytes(40)})))


@case("FeedError")
def npz_that_is_not_a_zip() -> str:
    return str(feeds_from_npz(b"PK\x03\x04 not really"))


@case("FeedError")
def pb_feed_with_external_data() -> str:
    tensor = onnx.TensorProto(name="x", data_type=T.FLOAT, dims=[3], data_location=T.EXTERNAL)
    tensor.external_data.add(key="location", value="/etc/passwd")
    return str(feeds_from_input_protos(explorer.load(m.named("x")), {"input_0.pb": tensor.SerializeToString()}))


@case("FeedError")
def pb_feed_with_huge_dims() -> str:
    tensor = onnx.TensorProto(name="x", data_type=T.FLOAT, dims=[1 << 30, 1 << 30], raw_data=bytes(16))
    return str(feeds_from_input_protos(explorer.load(m.named("x")), {"input_0.pb": tensor.SerializeToString()}))


@case("FeedError")
def pb_feed_of_garbage() -> str:
    return str(feeds_from_input_protos(explorer.load(m.named("x")), {"input_0.pb": b"\xff\xfe garbage"}))


# ---- trace files -------------------------------------------------------------------------------------------
@case("TraceFileError")
def trace_file_of_garbage() -> str:
    return str(explorer.Trace.load(tmp("t.npz", b"garbage")))


@case("TraceFileError")
def trace_file_without_meta() -> str:
    return str(explorer.Trace.load(tmp("t.npz", zipped({"a0.npy": npy_header("<f4", (1,)) + bytes(4)}))))


@case("TraceFileError")
def trace_file_bomb() -> str:
    data = zipped({"meta.json": b"{}", "a0.npy": npy_header("<f8", (1 << 29,)) + bytes(64 << 20)})
    return str(explorer.Trace.load(tmp("t.npz", data)))


@case("TraceFileError")
def trace_file_with_a_pickled_member() -> str:
    return str(explorer.Trace.load(tmp("t.npz", zipped({"meta.json": b"{}", "a0.npy": npy_header("|O", (1,))}))))


@case("TraceFileError")
def trace_file_dtype_name_reaching_getattr() -> str:
    def change(meta: dict) -> None:
        meta["feeds"] = {"k": "dict", "v": {"x": {"k": "array", "ref": "a0", "dtype": "__loader__"}}}

    return crafted_trace(change)


@case("TraceFileError")
def trace_file_of_another_format() -> str:
    return crafted_trace(lambda meta: meta.update(format=2))


@case("TraceFileError")
def trace_file_with_malformed_events() -> str:
    return crafted_trace(lambda meta: meta.update(events=[[1, 2, 3]]))


@case("TraceFileError")
def trace_file_nested_too_deeply() -> str:
    return crafted_trace(lambda meta: meta.update(outputs=json.loads('{"k": "list", "v": [' * 200 + "]}" * 200)))


@case("TraceFileError")
def trace_file_with_a_dangling_array_ref() -> str:
    return crafted_trace(lambda meta: meta.update(outputs={"k": "array", "ref": "a99999"}))


# ---- render ------------------------------------------------------------------------------------------------
@case("rendered")
def names_of_20_kb_render_through_graphviz() -> str:
    svg = tmp("x.svg", b"")
    write_diagram(explorer.model_to_dot(explorer.load(m.named("n" * 20_000))).dot, svg)
    return "rendered" if os.path.getsize(svg) > 0 else "empty"


@case("rendered")
def names_with_quotes_braces_and_newlines_render() -> str:
    """graphviz draws the node, its input and output under the name as written (a newline shown as ⏎), and the
    node's SVG id gives the name back."""
    name = 'a"b}{<x>\n\\l|c'
    svg = tmp("x.svg", b"")
    write_diagram(explorer.model_to_dot(explorer.load(m.named(name))).dot, svg)
    shown = name.replace("\n", "⏎")
    drawn = {}
    for group in ElementTree.parse(svg).iter(f"{SVG}g"):
        if group.get("class") == "node":
            texts = [e.text for e in group.iter(f"{SVG}text")]
            drawn[parse_svg_id(group.get("id", ""))] = texts
    want = {("input", ("", "0")): [shown, "input", "3 float"], ("node", (name,)): ["Relu", f" '{shown}'"],
            ("output", ("", "0")): [f"{shown}_out", "output", "3 float"]}
    return "rendered" if drawn == want else f"drawn as {drawn}"


# ---- optimize and rnn report -------------------------------------------------------------------------------
@case("equivalent")
def optimize_a_valid_model() -> str:
    result = explorer.optimize(SAMPLES / "opt_linear_cleanup.onnx")
    return compare_models(result.original, result.optimized).status


@case("inconclusive")
def proof_of_an_endless_loop_is_inconclusive_without_running_onnxruntime() -> str:
    return compare_models(m.endless_loop(), m.endless_loop(), {"x": np.ones(1, _F)}).status


@case("ModelError")
def optimize_garbage() -> str:
    return str(explorer.optimize(b"garbage"))


@case("ok")
def rnn_report_of_a_gru() -> str:
    proto, feeds = m.gru()
    model = explorer.load(proto)
    reports = rnn_reports(model, explorer.run(model, feeds))
    return "ok" if len(reports) == 1 and reports[0].lines() else "no report"


# ---- command line ------------------------------------------------------------------------------------------
@case("exit 2")
def cli_run_of_garbage() -> str:
    return cli("run", tmp("m.onnx", b"garbage"))


@case("exit 2")
def cli_run_with_a_huge_dim() -> str:
    return cli("run", "nested_loops", "--dim", "T=99999999999999")


@case("exit 2")
def cli_run_with_a_bomb_of_inputs() -> str:
    bomb = tmp("x.npz", zipped({"x.npy": npy_header("<f8", (1 << 29,)) + bytes(32 << 20)}))
    return cli("run", "tiny_mlp", "--inputs", bomb)


@case("exit 2")
def cli_render_with_a_garbage_trace() -> str:
    return cli("render", "loop_spec", "-o", tmp("x.svg", b""), "--trace", tmp("t.npz", b"junk"))


@case("exit 2")
def cli_optimize_of_an_invalid_model() -> str:
    path = tmp("m.onnx", m.model([h.make_node("Relu", ["x"], ["y"], name="a"), h.make_node("Neg", ["x"], ["y"])],
                                 [m.vi("x", shape=[2])], [m.vi("y", shape=[2])]).SerializeToString())
    return cli("optimize", path)


@case("exit 2")
def cli_rnn_of_a_missing_file() -> str:
    return cli("rnn", "/nonexistent.onnx")


@case("exit 2")
def cli_run_of_an_endless_loop() -> str:
    return cli("run", tmp("m.onnx", m.endless_loop().SerializeToString()), "--max-iterations", "500", "--check")


@case("exit 0")
def cli_lenient_runs_an_invalid_model() -> str:
    proto = m.endless_loop()
    proto.graph.input.append(m.vi("n", T.FLOAT, []))
    proto.graph.node[0].input[0] = "n"
    path = tmp("m.onnx", proto.SerializeToString())
    feeds = tmp("f.npz", b"")
    np.savez(feeds, n=np.array(2.0, _F), x=np.ones(1, _F))
    return cli("run", path, "--lenient", "--inputs", feeds)


# ---- loops nested in loops, recursion, broken tensors and bodies, hostile characters, cancelling the judge ----
_X1 = {"x": np.ones(1, _F)}


@case("LimitExceeded")
def loops_nested_in_loops_stop_at_the_event_limit() -> str:
    """200**3 iterations, each loop within max_iterations: only the run's event count can stop it."""
    limits = Limits(max_iterations=1000, max_events=50_000)
    explorer.run(explorer.load(m.nested_loops(3, 200)), _X1, limits=limits)
    return "ran"


@case("ok")
def loops_nested_in_loops_below_the_event_limit_match_onnxruntime() -> str:
    return agrees_with_onnxruntime(m.nested_loops(3, 12), _X1, Limits(max_events=50_000))


@case("UnsupportedOperatorError")
def a_function_calling_itself() -> str:
    explorer.run(explorer.load(m.recursive_functions("f")), _X1)
    return "ran"


@case("UnsupportedOperatorError")
def functions_calling_each_other() -> str:
    explorer.run(explorer.load(m.recursive_functions("f", "g", "h")), _X1)
    return "ran"


@case("exit 0")
def cli_render_of_recursive_functions() -> str:
    return cli("render", tmp("m.onnx", m.recursive_functions("f", "g").SerializeToString()), "-o",
               tmp("m.dot", b""))


@case("ModelError")
def initializer_with_negative_dims() -> str:
    tensor = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[-4], raw_data=b"\0" * 16)
    explorer.run(explorer.load(m.reading_initializer(tensor)), _X1)
    return "ran"


@case("ModelError")
def initializer_of_a_terabyte_holding_four_bytes() -> str:
    tensor = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[1 << 20, 1 << 20], raw_data=b"\0" * 4)
    explorer.run(explorer.load(m.reading_initializer(tensor)), _X1)
    return "ran"


@case("ModelError")
def initializer_of_an_unknown_type() -> str:
    tensor = onnx.TensorProto(name="w", data_type=999, dims=[4], raw_data=b"\0" * 16)
    explorer.run(explorer.load(m.reading_initializer(tensor)), _X1)
    return "ran"


@case("ModelError")
def if_branches_giving_different_output_counts() -> str:
    then = h.make_graph([h.make_node("Identity", ["x"], ["a"]), h.make_node("Identity", ["x"], ["b"])], "t", [],
                        [m.vi("a", shape=[1]), m.vi("b", shape=[1])])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "e", [], [m.vi("e", shape=[1])])
    node = h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="if")
    explorer.load(m.model([node], [m.vi("c", T.BOOL, []), m.vi("x", shape=[1])], [m.vi("y", shape=[1])]))
    return "loaded"


@case("ExecutionError")
def loop_body_with_too_few_inputs() -> str:
    body = h.make_graph([h.make_node("Identity", ["c"], ["co"])], "body", [m.vi("c", T.BOOL, [])],
                        [m.vi("co", T.BOOL, [])])
    proto = m.model([h.make_node("Loop", ["n", "", "x"], ["y"], body=body, name="loop")], [m.vi("x", shape=[1])],
                    [m.vi("y", shape=[1])], [m.const("n", np.int64(3))])
    explorer.run(explorer.load(proto), _X1)
    return "ran"


@case("ExecutionError")
def scan_with_more_scan_inputs_than_inputs() -> str:
    body = h.make_graph([h.make_node("Identity", ["s"], ["so"])], "body", [m.vi("s", shape=[1])],
                        [m.vi("so", shape=[1])])
    node = h.make_node("Scan", ["s0"], ["sf"], body=body, num_scan_inputs=100, name="scan")
    explorer.run(explorer.load(m.model([node], [m.vi("s0", shape=[1])], [m.vi("sf", shape=[1])])),
                 {"s0": np.ones(1, _F)})
    return "ran"


@case("exit 0")
def names_with_nul_and_bidi_controls_render_as_svg() -> str:
    name = "x\x00\u202eevil\u200b"
    return cli("render", tmp("m.onnx", m.named(name).SerializeToString()), "-o", tmp("m.svg", b""))


@case("ok")
def names_with_nul_and_bidi_controls_match_onnxruntime() -> str:
    name = "x\x00\u202eevil"
    return agrees_with_onnxruntime(m.named(name), {name: np.array([-1.0, 0.0, 2.0], _F)})


@case("cancelled")
def cancelling_a_background_proof_of_an_endless_loop() -> str:
    """onnxruntime given an endless loop from a background job: cancel ends its process at once."""
    import threading

    from explorer.judge.judge import run_onnxruntime
    from explorer.judge.judge_job import JudgeJob

    job = JudgeJob(lambda: run_onnxruntime(m.endless_loop(), _X1, timeout=300), "proof")
    started, start = threading.Event(), job.judge._start
    job.judge._start = lambda: (start(), started.set())[0]
    job.start()
    if not started.wait(60):
        return "onnxruntime never started"
    process = job.judge._process
    job.cancel()
    if process is None or process.poll() is None:
        return "onnxruntime still running"
    return job.state
