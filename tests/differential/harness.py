"""Differential harness: one-node models run in explorer and in onnxruntime (graph optimizations off), compared
exactly for integers, bools and strings, and at a tolerance for floats (NaN positions must match).

Cases of one (domain, op, version) run together: every case is one node of a single model at opset = version,
so one onnxruntime session and one explorer run check them all. Where onnxruntime is wrong or refuses, the case
names the spec's value (`expected`), or the version of the op the spec says computes the same (`judge_version`),
with a one-line `reason`.

Element types onnxruntime's Python API cannot take or give (bfloat16, float8, float4, 4- and 2-bit integers; numpy
holds them through ml_dtypes) still reach it: such inputs are initializers of the model, and such outputs are cast
to float32 inside it (exact for all of them); explorer's outputs of those types are compared as float32.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

import explorer
from explorer.spec.schema import schema_at

IR_VERSION = 10  # onnxruntime 1.32 loads it at every opset the cases use
NOT_IMPLEMENTED = "NOT_IMPLEMENTED"


@dataclass
class Seq:
    """A sequence input: its tensors, and their element type (needed when it is empty)."""

    items: list[np.ndarray]
    dtype: Any = None


@dataclass
class Case:
    op: str
    version: int  # the since_version judged; the model imports exactly this opset
    inputs: list[Any]  # arrays; None for an omitted optional input; Seq for a sequence
    attrs: dict[str, Any] = field(default_factory=dict)
    outputs: int = 1
    domain: str = ""
    tol: tuple[float, float] | None = None  # (rtol, atol) for floats; defaults by dtype
    reason: str = ""  # why onnxruntime is not the judge (with expected or judge_version)
    expected: list[Any] | None = None  # the spec's values
    judge_version: int | None = None  # onnxruntime at this version of the op, which the spec says is the same
    judge_attrs: dict[str, Any] | None = None  # onnxruntime given these attributes, which mean the case's to it
    error: str | None = None  # explorer must refuse the node (at load or run) with an error containing this
    dtype_sweep: bool = False  # generated across the schema's types: not judged where onnxruntime lacks the type
    float32_judge: bool = False  # where onnxruntime lacks the type: judged on the values as float32, cast back
    output_types: list[Any] | None = None  # each output's dtype, where onnxruntime cannot infer it (None: untyped)

    def __post_init__(self) -> None:
        if (self.expected is not None or self.judge_version is not None or self.judge_attrs is not None) \
                and not self.reason:
            raise ValueError(f"{self.op}-{self.version}: a case judged without onnxruntime needs a reason")

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.domain, self.op, self.version)


DEFAULT_TOL = {np.dtype(np.float16): (2e-3, 1e-3), np.dtype(np.float32): (2e-5, 1e-6),
               np.dtype(np.float64): (1e-10, 1e-12)}


def _value_type(value: Any) -> onnx.TypeProto:
    if isinstance(value, Seq):
        dtype = value.dtype if value.dtype is not None else value.items[0].dtype
        elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        return helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, None))
    array = np.asarray(value)
    elem = onnx.TensorProto.STRING if array.dtype.kind in "OUS" else helper.np_dtype_to_tensor_dtype(array.dtype)
    return helper.make_tensor_type_proto(elem, list(array.shape))


def _defined_at(case: Case, version: int) -> dict[str, Any]:
    """The case's attributes that the judging version defines (e.g. without version 1's consumed_inputs)."""
    schema = schema_at(case.op, version, case.domain)
    assert schema is not None, f"{case.domain}.{case.op}-{version} has no schema"
    known = schema.attributes
    return {name: value for name, value in case.attrs.items() if name in known}


def is_exotic(value: Any) -> bool:
    """Whether a value's element type is one numpy holds through ml_dtypes (onnxruntime's Python API lacks it)."""
    return isinstance(value, np.ndarray) and value.dtype.type.__module__ == "ml_dtypes"


def build_model(cases: list[Case], version: int | None = None) -> tuple[onnx.ModelProto, dict[str, Any]]:
    """One model holding every case as node `c<k>` (inputs `c<k>_i<j>`, outputs `c<k>_o<j>`), and its feeds
    (inputs of ml_dtypes types are initializers instead)."""
    first = cases[0]
    nodes, inputs, outputs, feeds, initializers = [], [], [], {}, []
    for k, case in enumerate(cases):
        names = []
        for j, value in enumerate(case.inputs):
            if value is None:
                names.append("")
                continue
            name = f"c{k}_i{j}"
            names.append(name)
            if is_exotic(value):
                initializers.append(numpy_helper.from_array(value, name))
                continue
            inputs.append(helper.make_value_info(name, _value_type(value)))
            feeds[name] = value.items if isinstance(value, Seq) else np.asarray(value)
        outs = [f"c{k}_o{j}" for j in range(case.outputs)]
        attrs = case.attrs if version is None else _defined_at(case, version)
        nodes.append(helper.make_node(case.op, names, outs, name=f"c{k}", domain=case.domain, **attrs))
        types = case.output_types or [None] * len(outs)
        outputs += [helper.make_value_info(name, onnx.TypeProto()) if t is None else
                    helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(t)), None)
                    for name, t in zip(outs, types)]
    opset = version or first.version
    imports = [helper.make_opsetid(first.domain, opset)]
    if first.domain:
        imports.append(helper.make_opsetid("", 21))
    graph = helper.make_graph(nodes, "differential", inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = IR_VERSION
    return model, feeds


def run_explorer(cases: list[Case]) -> list[list[Any] | Exception]:
    """Each case's outputs from explorer (one run for all; case by case when one fails)."""
    model, feeds = build_model(cases)
    try:
        outputs = explorer.run(model, feeds).outputs
    except explorer.ExplorerError as exc:
        if len(cases) == 1:
            return [exc]
        return [run_explorer([case])[0] for case in cases]
    return [[outputs[f"c{k}_o{j}"] for j in range(case.outputs)] for k, case in enumerate(cases)]


def run_onnxruntime(cases: list[Case], version: int | None = None) -> list[list[Any] | str]:
    """Each case's outputs from onnxruntime, or its refusal (a message)."""
    results: dict[int, list[Any] | str] = {}
    pending = list(range(len(cases)))
    while pending:
        model, feeds = build_model([cases[i] for i in pending], version)
        model = _exotic_outputs_as_float(model)
        try:
            session = _session(model)
            values = session.run(None, feeds)
        except Exception as exc:  # noqa: BLE001 - whatever onnxruntime raises is its refusal
            message = str(exc)
            found = re.search(r"node with name '?c(\d+)'?|\(node:'c(\d+)'", message)
            if len(pending) == 1:
                results[pending.pop()] = message
            elif found and int(found.group(1) or found.group(2)) < len(pending):
                results[pending.pop(int(found.group(1) or found.group(2)))] = message
            else:
                for i in pending:
                    results[i] = run_onnxruntime([cases[i]], version)[0]
                pending = []
            continue
        position = 0
        for i in pending:
            results[i] = list(values[position:position + cases[i].outputs])
            position += cases[i].outputs
        pending = []
    return [results[i] for i in range(len(cases))]


_EXOTIC = {onnx.TensorProto.BFLOAT16, onnx.TensorProto.FLOAT8E4M3FN, onnx.TensorProto.FLOAT8E4M3FNUZ,
           onnx.TensorProto.FLOAT8E5M2, onnx.TensorProto.FLOAT8E5M2FNUZ, onnx.TensorProto.FLOAT8E8M0,
           onnx.TensorProto.FLOAT4E2M1, onnx.TensorProto.INT4, onnx.TensorProto.UINT4, onnx.TensorProto.INT2,
           onnx.TensorProto.UINT2}


def _typed_by_schema(node: onnx.NodeProto, types: dict[str, int]) -> dict[str, int]:
    """A node's outputs typed as the first input bound to the same type parameter of its schema."""
    schema = schema_at(node.op_type, 1, node.domain)
    if schema is None:
        return {}
    bound = {}
    for formal, name in zip(schema.inputs, node.input):
        if name and types.get(name):
            bound.setdefault(formal.type_str, types[name])
    return {name: bound[formal.type_str] for formal, name in zip(schema.outputs, node.output)
            if formal.type_str in bound}


def _exotic_outputs_as_float(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with each output of an ml_dtypes type (as shape inference types it) cast to float32."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - a model inference rejects is judged as it is
        return model
    types = {v.name: v.type.tensor_type.elem_type for v in inferred.graph.value_info}
    types.update({v.name: v.type.tensor_type.elem_type for v in inferred.graph.output})
    types.update({v.name: v.type.tensor_type.elem_type for v in model.graph.input})
    types.update({v.name: v.data_type for v in model.graph.initializer})
    for node in model.graph.node:  # onnx does not infer com.microsoft nodes: their schemas' type parameters do
        if node.domain == "com.microsoft":
            types.update({k: v for k, v in _typed_by_schema(node, types).items() if not types.get(k)})
    graph = model.graph
    for output in graph.output:
        if types.get(output.name) in _EXOTIC:
            graph.node.append(helper.make_node("Cast", [output.name], [f"{output.name}_f"], to=onnx.TensorProto.FLOAT))
            output.name = f"{output.name}_f"
    return model


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def assert_same(got: Any, want: Any, tol: tuple[float, float] | None, what: str) -> None:
    """Same type, shape and values: exact for integers/bools/strings, floats at `tol` with NaN where NaN is."""
    if want is None:
        assert got is None, f"{what}: {got!r} instead of an empty optional"
        return
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{what}: sequence {got!r} vs {want!r}"
        for k, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, tol, f"{what}[{k}]")
        return
    want = np.asarray(want)
    assert isinstance(got, np.ndarray), f"{what}: {type(got).__name__} instead of an array"
    if is_exotic(got) and not is_exotic(want):  # onnxruntime's value came back cast to float32
        assert want.dtype == np.float32, f"{what}: {got.dtype} vs onnxruntime's {want.dtype}"
        got, tol = got.astype(np.float32), tol or (0.0, 0.0)
    elif is_exotic(want):  # a spec value of an ml_dtypes type
        assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs {want.dtype}"
        got, want, tol = got.astype(np.float32), want.astype(np.float32), tol or (0.0, 0.0)
    if want.dtype.kind in "OUS":
        assert got.dtype.kind in "OUS" and got.shape == want.shape, f"{what}: {got!r} vs {want!r}"
        assert [str(x) for x in got.ravel()] == [str(x) for x in want.ravel()], f"{what}: {got!r} vs {want!r}"
        return
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs {want.shape}"
    if want.dtype.kind == "c":  # complex: the real and imaginary parts as floats of the same precision
        part = np.dtype(np.float32 if want.dtype == np.complex64 else np.float64)
        for pick in (np.real, np.imag):
            assert_same(pick(got).astype(part), pick(want).astype(part), tol, what)
        return
    if want.dtype.kind != "f":
        assert np.array_equal(got, want), f"{what}: {got!r} vs {want!r}"
        return
    rtol, atol = tol or DEFAULT_TOL[want.dtype]
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{what}: NaN at other places:\n{got!r}\nvs\n{want!r}"
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                               equal_nan=True, err_msg=what)


def describe(case: Case) -> str:
    shapes = ", ".join("None" if v is None else f"seq[{len(v.items)}]" if isinstance(v, Seq)
                       else f"{np.asarray(v).dtype}{list(np.shape(v))}" for v in case.inputs)
    return f"{case.op}-{case.version}({shapes}) {case.attrs}"


def _judged_in_float32(case: Case, got: list[Any]) -> list[Any] | str:
    """onnxruntime's outputs for the case with its data (first input) and its inputs of types onnxruntime lacks
    (int64 ones but the data are indices or sizes) as float32 (exact for the small values the cases hold), cast to the types explorer gave (integers truncated)."""
    def widened(value: Any, data: bool) -> Any:
        if not isinstance(value, np.ndarray) or value.dtype == np.float32 or value.dtype.kind in "bOUS" \
                or (value.dtype == np.int64 and not data):
            return value
        return value.astype(np.float32)
    inputs = [widened(v, k == 0) for k, v in enumerate(case.inputs)]
    result = run_onnxruntime([Case(case.op, case.version, inputs, case.attrs, outputs=case.outputs,
                                   domain=case.domain)])[0]
    if isinstance(result, str):
        return result
    return [np.asarray(w).astype(g.dtype) for w, g in zip(result, got)]


def check(cases: list[Case]) -> int:
    """Runs and compares a batch of cases of one (domain, op, version); returns how many were judged."""
    judged = 0
    mine = run_explorer(cases)
    by_ort = [i for i, c in enumerate(cases) if c.expected is None and c.judge_version is None and c.error is None]
    judged_as = [c if c.judge_attrs is None else replace(c, attrs=c.judge_attrs) for c in cases]
    ort_results = dict(zip(by_ort, run_onnxruntime([judged_as[i] for i in by_ort]))) if by_ort else {}
    for version in {c.judge_version for c in cases if c.judge_version is not None}:
        picked = [i for i, c in enumerate(cases) if c.judge_version == version]
        ort_results.update(zip(picked, run_onnxruntime([cases[i] for i in picked], version)))
    failures = []
    for i, case in enumerate(cases):
        got = mine[i]
        if case.error is not None:
            if not (isinstance(got, (explorer.ExecutionError, explorer.ModelError)) and case.error in str(got)):
                failures.append(f"{describe(case)}: expected an error with {case.error!r}, got {got!r}")
            judged += 1
            continue
        want = case.expected if case.expected is not None else ort_results[i]
        tol = case.tol
        if isinstance(want, str) and case.float32_judge and NOT_IMPLEMENTED in want and not isinstance(got, Exception):
            want = _judged_in_float32(case, got)
            floor = DEFAULT_TOL[np.dtype(np.float32)]  # float64 values judged at float32's precision
            tol = floor if tol is None else (max(tol[0], floor[0]), max(tol[1], floor[1]))
        if isinstance(want, str):
            if case.dtype_sweep and NOT_IMPLEMENTED in want:
                continue
            failures.append(f"{describe(case)}: onnxruntime refuses it and the case gives no spec value: {want}")
            continue
        if isinstance(got, Exception):
            failures.append(f"{describe(case)}: explorer failed: {got}")
            continue
        try:
            assert len(got) == len(want), f"{len(got)} outputs vs {len(want)}"
            for j, (g, w) in enumerate(zip(got, want)):
                assert_same(g, w, tol, f"output {j}")
        except AssertionError as exc:
            failures.append(f"{describe(case)}: {exc}")
        judged += 1
    assert not failures, "\n".join(failures[:5]) + (f"\n... {len(failures)} failures" if len(failures) > 5 else "")
    return judged
