"""Differential harness: one-node models run in explorer and in onnxruntime (graph optimizations off), compared
exactly for integers, bools and strings, and at a tolerance for floats (NaN positions must match).

Cases of one (domain, op, version) run together: every case is one node of a single model at opset = version,
so one onnxruntime session and one explorer run check them all. Where onnxruntime is wrong or refuses, the case
names the spec's value (`expected`), or the version of the op the spec says computes the same (`judge_version`),
with a one-line `reason`. Where onnxruntime lacks a kernel for the case's element type, the case's `cast` judges it:
onnxruntime on the same values cast to a type it has, its result cast back, with a one-line reason why that is the
case's result. A random operator's case is judged by its `sampled` (sampled.py): its types and shapes against the
spec's and onnxruntime's, its values' statistics against the spec's distribution. A case of an integer-product
operator (MatMulInteger, QLinearConv, QGemm, QAttention, ...) is judged by exact integer arithmetic written from
its spec, and by onnxruntime too only where onnxruntime's kernel is exact (quantized_judge.py: its u8s8 kernel
saturates on CPUs without VNNI). Every case has a judge: a case
onnxruntime lacks without a `cast` or spec value fails (`check` counts such cases per operator and type as
unjudged: conftest.py prints that count, which must stay zero).

Element types onnxruntime's Python API cannot take or give (bfloat16, float8, float4, 4- and 2-bit integers; numpy
holds them through ml_dtypes) still reach it: such inputs are initializers of the model, and such outputs are cast
to float32 inside it (exact for all of them); explorer's outputs of those types are compared as float32.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

import explorer
from explorer.spec.schema import schema_at

from .sampled import Sampled, sampled_problem

IR_VERSION = 10  # onnxruntime 1.32 loads it at every opset the cases use
NOT_IMPLEMENTED = "NOT_IMPLEMENTED"


@dataclass
class Seq:
    """A sequence input: its tensors, and their element type (needed when it is empty)."""

    items: list[np.ndarray]
    dtype: Any = None


@dataclass(frozen=True)
class Cast:
    """A judge for a case whose element type onnxruntime lacks: onnxruntime runs the same case with the inputs of
    the swept type parameters cast to `to` (strings relabelled as codes, '' as 0), and its outputs of those
    parameters (and of `tied` ones, e.g. EyeLike's T2) are cast back; or, with `attr`, the attribute naming the
    output type (e.g. output_datatype) names `to` and the `tied` outputs are cast back to its type. `why` says in one line why that is the
    case's result: exact (every value representable, the op only moves, compares or adds small numbers, integer
    sums agreeing modulo 2**bits), or compared at `to`'s precision (float64 narrowed to float32)."""

    to: Any
    why: str
    params: tuple[str, ...] = ()  # the swept type parameters; default: the first input's
    tied: tuple[str, ...] = ()  # output type parameters that follow the first swept one (or `attr`)
    attr: str = ""  # the attribute naming the output type, when that is the type onnxruntime lacks


@dataclass
class Map:
    """A map input: its items and the element type of its values (keys are strings or int64 as given)."""

    items: dict[Any, Any]
    dtype: Any


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
    dtype_sweep: bool = False  # generated across the schema's types (where onnxruntime lacks one, `cast` judges)
    cast: Cast | None = None  # the judge where onnxruntime lacks the case's element type
    output_types: list[Any] | None = None  # each output's dtype, where onnxruntime cannot infer it (None: untyped)
    sampled: Sampled | None = None  # a random operator's judge: types and shapes, statistics (sampled.py)

    def __post_init__(self) -> None:
        if (self.expected is not None or self.judge_version is not None or self.judge_attrs is not None) \
                and not self.reason:
            raise ValueError(f"{self.op}-{self.version}: a case judged without onnxruntime needs a reason")
        if self.cast is not None and not self.cast.why:
            raise ValueError(f"{self.op}-{self.version}: a case judged by a cast needs its reason")

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.domain, self.op, self.version)


DEFAULT_TOL = {np.dtype(np.float16): (2e-3, 1e-3), np.dtype(np.float32): (2e-5, 1e-6),
               np.dtype(np.float64): (1e-10, 1e-12)}


def _value_type(value: Any) -> onnx.TypeProto:
    if isinstance(value, Map):
        key = onnx.TensorProto.STRING if all(isinstance(k, str) for k in value.items) else onnx.TensorProto.INT64
        dtype = np.dtype(value.dtype)
        elem = onnx.TensorProto.STRING if dtype.kind in "OUS" else helper.np_dtype_to_tensor_dtype(dtype)
        return helper.make_map_type_proto(key, helper.make_tensor_type_proto(elem, None))
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
            feeds[name] = value.items if isinstance(value, (Seq, Map)) else np.asarray(value)
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
    pending = []
    for i, case in enumerate(cases):  # left out at once: else each would cost a session of all those left
        if version == case.judge_version and onnxruntime_lacks(case):
            results[i] = f"{NOT_IMPLEMENTED}: onnxruntime has no kernel for the types of {describe(case)}"
        else:
            pending.append(i)
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
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{what}: map {got!r} vs {want!r}"
        kind = np.float32 if all(isinstance(v, float) for v in want.values()) else None
        assert_same(np.array([got[k] for k in want], kind), np.array(list(want.values()), kind), tol, what)
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
                       else f"map[{len(v.items)}]" if isinstance(v, Map)
                       else f"{np.asarray(v).dtype}{list(np.shape(v))}" for v in case.inputs)
    return f"{case.op}-{case.version}({shapes}) {case.attrs}"


def _dtype_of(value: Any) -> np.dtype:
    if isinstance(value, Seq):
        return np.dtype(value.dtype if value.dtype is not None else value.items[0].dtype)
    return np.asarray(value).dtype


def element_type(case: Case) -> str:
    """The element type a case is filed under: that of its first input (tensor or sequence)."""
    dtype = next((_dtype_of(v) for v in case.inputs if v is not None), None)
    return "none" if dtype is None else "string" if dtype.kind in "OUS" else str(dtype)


def _formal(params: list[onnx.defs.OpSchema.FormalParameter], count: int) -> list[str]:
    """The type parameter of each of `count` actual inputs or outputs (a variadic last one repeats)."""
    names = [p.type_str for p in params]
    return [names[min(k, len(names) - 1)] for k in range(count)] if names else []


def _cast_value(value: Any, to: np.dtype, codes: dict[str, int]) -> Any:
    if isinstance(value, Seq):
        return Seq([_cast_value(item, to, codes) for item in value.items], to)
    value = np.asarray(value)
    if value.dtype.kind in "OUS":
        return np.array([codes[str(v)] for v in value.ravel()], to).reshape(value.shape)
    return value.astype(to)


def _cast_back(value: Any, to: np.dtype, dtype: np.dtype, strings: list[str]) -> Any:
    if isinstance(value, list):
        return [_cast_back(item, to, dtype, strings) for item in value]
    value = np.asarray(value)
    if value.dtype != to:
        return value
    if dtype.kind == "O":
        return np.array([strings[int(v)] for v in value.ravel()], dtype=object).reshape(value.shape)
    return value.astype(dtype)


@dataclass
class _CastRun:
    """One case of a `Cast` judge: the case onnxruntime runs in `to`, and how its outputs come back."""

    case: Case
    cast_case: Case
    to: np.dtype
    back: dict[str, np.dtype]  # output type parameter -> the case's element type
    first: np.dtype  # the element type sequences' tensors come back to
    strings: list[str]  # the code of each string is its index

    @classmethod
    def of(cls, case: Case, version: int | None) -> _CastRun:
        assert case.cast is not None
        cast, to = case.cast, np.dtype(case.cast.to)
        schema = schema_at(case.op, version or case.version, case.domain)
        assert schema is not None, f"{case.domain}.{case.op}-{version or case.version} has no schema"
        formal = _formal(list(schema.inputs), len(case.inputs))
        params = cast.params or (() if cast.attr else (formal[0],))
        originals: dict[str, np.dtype] = {}
        for param, value in zip(formal, case.inputs):
            if param in params and value is not None and param not in originals:
                originals[param] = np.dtype(_dtype_of(value))
        swept = [v for p, v in zip(formal, case.inputs) if p in params and v is not None]
        arrays = [np.asarray(a) for v in swept for a in (v.items if isinstance(v, Seq) else [v])]
        strings = [""] + sorted({str(x) for a in arrays if a.dtype.kind in "OUS" for x in a.ravel()} - {""})
        codes = {text: k for k, text in enumerate(strings)}
        inputs = [_cast_value(v, to, codes) if p in params and v is not None else v
                  for p, v in zip(formal, case.inputs)]
        attrs = case.attrs if case.judge_attrs is None else case.judge_attrs
        attrs = {**attrs, cast.attr: helper.np_dtype_to_tensor_dtype(to)} if cast.attr else attrs
        first = np.dtype(helper.tensor_dtype_to_np_dtype(case.attrs[cast.attr])) if cast.attr \
            else originals[params[0]]
        outputs = _formal(list(schema.outputs), case.outputs)
        back = {p: originals.get(p, first) for p in outputs if p in originals or p in cast.tied}
        types = None if case.output_types is None else [
            None if t is None else to if p in back else t for p, t in zip(outputs, case.output_types)]
        return cls(case, Case(case.op, case.version, inputs, attrs, outputs=case.outputs, domain=case.domain,
                              output_types=types), to, back, first, strings)

    def judged(self, result: list[Any] | str) -> tuple[list[Any] | str, tuple[float, float] | None]:
        """onnxruntime's result cast back, and the tolerance to compare at (at least `to`'s own when it is a float
        type narrower than the case's)."""
        to = self.to
        if isinstance(result, str):
            return f"onnxruntime refuses the case in {to} too: {result}", self.case.tol
        schema = schema_at(self.case.op, self.case.version, self.case.domain)
        assert schema is not None
        outputs = _formal(list(schema.outputs), self.case.outputs)
        want = [_cast_back(w, to, self.first, self.strings) if isinstance(w, list)
                else _cast_back(w, to, self.back[p], self.strings) if p in self.back else w
                for p, w in zip(outputs, result)]
        tol = self.case.tol
        if any(d.kind == "f" and to.kind == "f" and d.itemsize > to.itemsize for d in self.back.values()):
            floor = DEFAULT_TOL[to]
            tol = floor if tol is None else (max(tol[0], floor[0]), max(tol[1], floor[1]))
        return want, tol


def judged_by_cast(cases: list[Case], version: int | None = None
                   ) -> list[tuple[list[Any] | str, tuple[float, float] | None]]:
    """Each case's outputs from onnxruntime run in its `cast.to` and cast back (see Cast), with its tolerance;
    one onnxruntime session for all."""
    runs = [_CastRun.of(case, version) for case in cases]
    results = run_onnxruntime([run.cast_case for run in runs], version)
    return [run.judged(result) for run, result in zip(runs, results)]


_LACKS: dict[tuple[Any, ...], bool] = {}
_TYPE_ATTRIBUTES = ("to", "dtype", "output_datatype", "output_dtype")  # attributes that choose an output type


def onnxruntime_lacks(case: Case) -> bool:
    """Whether onnxruntime has no kernel for the case's types (at the version judging it); one session per
    operator, version and types."""
    key = (case.domain, case.op, case.version, case.judge_version, case.outputs,
           tuple(None if v is None else str(_dtype_of(v)) for v in case.inputs),
           tuple(sorted((k, repr(v)) for k, v in case.attrs.items() if k in _TYPE_ATTRIBUTES)))
    if key not in _LACKS:
        model, _ = build_model([case], case.judge_version)
        try:
            _session(_exotic_outputs_as_float(model))
            _LACKS[key] = False
        except Exception as exc:  # noqa: BLE001 - whatever onnxruntime raises is its refusal
            _LACKS[key] = NOT_IMPLEMENTED in str(exc)
    return _LACKS[key]


def has_judge(case: Case) -> bool:
    """Whether a case that explorer must compute has a judge: the spec's value, a cast for when onnxruntime
    lacks its type, or onnxruntime (at its version or `judge_version`) where it has the type."""
    if case.error is not None:
        return False
    return case.sampled is not None or case.expected is not None or case.cast is not None or not onnxruntime_lacks(case)


def check(cases: list[Case], tally: Counter[str] | None = None) -> int:
    """Runs and compares a batch of cases of one (domain, op, version); returns how many were judged. `tally`
    counts the cases each judge took ("exact integers", "onnxruntime", "cast", "spec", "statistics", "error") and, as
    "unjudged <dtype>", those that had none (which fail the batch)."""
    from .quantized_judge import exact_outputs, judged_exactly, onnxruntime_is_exact  # noqa: I001 - a cycle

    tally = Counter() if tally is None else tally
    mine = run_explorer(cases)
    exact = {i: exact_outputs(c) for i, c in enumerate(cases) if judged_exactly(c)}
    exact = {i: want for i, want in exact.items() if want is not None}
    by_ort = [i for i, c in enumerate(cases) if c.expected is None and c.judge_version is None and c.error is None
              and (i not in exact or onnxruntime_is_exact(c))]
    judged_as = [c if c.judge_attrs is None else replace(c, attrs=c.judge_attrs) for c in cases]
    ort_results = dict(zip(by_ort, run_onnxruntime([judged_as[i] for i in by_ort]))) if by_ort else {}
    for version in {c.judge_version for c in cases if c.judge_version is not None}:
        picked = [i for i, c in enumerate(cases) if c.judge_version == version]
        ort_results.update(zip(picked, run_onnxruntime([cases[i] for i in picked], version)))
    lacking = [i for i, r in ort_results.items() if isinstance(r, str) and NOT_IMPLEMENTED in r
               and cases[i].cast is not None]
    cast_results = {}
    for version in {cases[i].judge_version for i in lacking}:
        picked = [i for i in lacking if cases[i].judge_version == version]
        cast_results.update(zip(picked, judged_by_cast([cases[i] for i in picked], version)))
    failures = []
    for i, case in enumerate(cases):
        got = mine[i]
        if case.error is not None:
            if not (isinstance(got, (explorer.ExecutionError, explorer.ModelError)) and case.error in str(got)):
                failures.append(f"{describe(case)}: expected an error with {case.error!r}, got {got!r}")
            tally["error"] += 1
            continue
        if case.sampled is not None:
            tally["statistics"] += 1
            problem = sampled_problem(case.sampled, got, ort_results[i])
            if problem is not None:
                failures.append(f"{describe(case)}: {problem}")
            continue
        if i in exact:
            problem = _compared(got, exact[i], case.tol)
            tally["exact integers"] += 1
            if problem:
                failures.append(f"{describe(case)}: against exact integer arithmetic: {problem}")
            if i not in ort_results:
                continue
        want = case.expected if case.expected is not None else ort_results[i]
        tol, judge = case.tol, "spec" if case.expected is not None else "onnxruntime"
        if i in cast_results:
            (want, tol), judge = cast_results[i], "cast"
        if isinstance(want, str):
            if NOT_IMPLEMENTED in want and case.cast is None:
                tally[f"unjudged {element_type(case)}"] += 1
                failed = f"; explorer failed too: {got}" if isinstance(got, Exception) else ""
                failures.append(f"{describe(case)}: onnxruntime lacks its type and the case has no judge (give it "
                                f"a Cast or the spec's value){failed}")
            else:
                failures.append(f"{describe(case)}: onnxruntime refuses it and the case gives no spec value: {want}")
            continue
        tally[judge] += 1
        problem = _compared(got, want, tol)
        if problem:
            failures.append(f"{describe(case)}: {problem}")
    assert not failures, "\n".join(failures[:5]) + (f"\n... {len(failures)} failures" if len(failures) > 5 else "")
    return sum(n for judge, n in tally.items() if not judge.startswith("unjudged"))


def _compared(got: list[Any] | Exception, want: list[Any], tol: tuple[float, float] | None) -> str:
    """Why explorer's outputs are not `want` ('' when they are)."""
    if isinstance(got, Exception):
        return f"explorer failed: {got}"
    try:
        assert len(got) == len(want), f"{len(got)} outputs vs {len(want)}"
        for j, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, tol, f"output {j}")
    except AssertionError as exc:
        return str(exc)
    return ""
