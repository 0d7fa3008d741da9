"""Example inputs from declared types, and validation of user feeds against them."""
from __future__ import annotations

import contextlib
import weakref
from collections.abc import Sequence
from typing import Any, Protocol, cast

import numpy as np
import onnx

from ..errors import FeedError
from ..limits import Limits
from .value_spec import ValueSpec


class Declared(Protocol):
    """What feeds read of a model (explorer.Model): its declared inputs, its graph and its initializers' names."""

    @property
    def inputs(self) -> Sequence[ValueSpec]: ...

    @property
    def graph(self) -> onnx.GraphProto: ...

    @property
    def initializer_names(self) -> frozenset[str]: ...


DEFAULT_DIM = 2
MAX_EXAMPLE_BYTES = Limits().max_tensor_bytes  # random inputs bigger than any value a node may produce


def _random_tensor(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "fV":  # numpy floats and ml_dtypes (bfloat16, float8 [e5m2 says "f"], int4 ...)
        return rng.standard_normal(shape).astype(np.float32).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        # small non-negative values: safe as indices, counts and trip counts
        return rng.integers(0, 4, size=shape).astype(dtype)
    if dtype.kind in ("O", "U", "S"):
        words = np.array(["alpha", "beta", "gamma", "delta"], dtype=object)
        return words[rng.integers(0, len(words), size=shape)].astype(object)
    raise FeedError(f"cannot build random values of dtype {dtype}")


def sum_terms(dim: str) -> list[str]:
    """The sizes a dimension written as their sum names (optimum's `past_sequence_length + sequence_length`): its
    size follows from theirs, never chosen apart. [] for any other name."""
    terms = [t.strip() for t in dim.split("+")]
    return terms if len(terms) > 1 and all(t.isidentifier() for t in terms) else []


def _concrete_shape(spec_shape, dims: dict[str, int], name: str) -> tuple[int, ...]:
    shape = []
    for axis, d in enumerate(spec_shape):
        if isinstance(d, int) and not isinstance(d, bool) and d >= 0:
            shape.append(d)  # (some exporters write -1 for "unknown")
        elif isinstance(d, str) and (terms := sum_terms(d)):
            shape.append(sum(int(dims.get(t, DEFAULT_DIM)) for t in terms))
        elif isinstance(d, str) and d in dims:
            shape.append(int(dims[d]))
        elif not isinstance(d, str) and f"{name}[{axis}]" in dims:  # an unnamed dynamic axis
            shape.append(int(dims[f"{name}[{axis}]"]))
        else:
            shape.append(DEFAULT_DIM)
    return tuple(shape)


def _example_for_type(tp: onnx.TypeProto, rng, dims: dict[str, int], name: str) -> Any:
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        elem = tp.tensor_type.elem_type
        if not elem:
            raise FeedError(f"input {name!r} declares no element type; give feeds explicitly")
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem))
        if not tp.tensor_type.HasField("shape"):
            raise FeedError(
                f"input {name!r} declares no shape (not even its rank), so no example can be built; "
                "give feeds explicitly (e.g. an .npz file)"
            )
        spec_shape = tuple(
            d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tp.tensor_type.shape.dim
        )
        shape = _concrete_shape(spec_shape, dims, name)
        size = int(np.prod(shape, dtype=object)) * max(dtype.itemsize, 8 if dtype.kind == "O" else 1)
        if size > MAX_EXAMPLE_BYTES:
            raise FeedError(f"input {name!r}: random values of shape {list(shape)} would take {size} bytes, beyond "
                            f"Limits.max_tensor_bytes={MAX_EXAMPLE_BYTES}; choose smaller sizes for its dims")
        if "mask" in name.lower() and (np.issubdtype(dtype, np.integer) or dtype == np.bool_):
            return np.ones(shape, dtype)  # an attention mask of 0..3 is no mask: all positions attended
        return _random_tensor(rng, dtype, shape)
    if which == "sequence_type":
        return [_example_for_type(tp.sequence_type.elem_type, rng, dims, name) for _ in range(DEFAULT_DIM)]
    if which == "optional_type":
        return _example_for_type(tp.optional_type.elem_type, rng, dims, name)
    if which == "map_type" and tp.map_type.value_type.WhichOneof("value") == "tensor_type":
        # DEFAULT_DIM entries: keys "k0", "k1"... (or 0, 1...), random values of the declared type
        value = tp.map_type.value_type.tensor_type.elem_type
        keys = [f"k{i}" if tp.map_type.key_type == onnx.TensorProto.STRING else i for i in range(DEFAULT_DIM)]
        values = _random_tensor(rng, np.dtype(onnx.helper.tensor_dtype_to_np_dtype(value)), (DEFAULT_DIM,))
        return dict(zip(keys, values.tolist()))
    raise FeedError(f"input {name!r} has type {which or 'unknown'}; give feeds explicitly")


def example_inputs(model: Declared, seed: int = 0, dims: dict[str, int] | None = None) -> dict[str, Any]:
    """Random dtype-correct feeds for every declared input. Symbolic dims come from `dims` (by name, or as
    "input[axis]" for an unnamed one, see `unnamed_dims`), else DEFAULT_DIM. An integer scalar that bounds a loop
    (see `loop_bounds`) is drawn from LOOP_BOUND, so the loop runs at least twice."""
    rng = np.random.default_rng(seed)
    dims = dict(dims or {})
    bounds = loop_bounds(model)
    feeds = {}
    for spec in model.inputs:
        value = _example_for_type(spec.type_proto, rng, dims, spec.name)
        if spec.name in bounds:
            value = np.full(np.shape(value), rng.integers(*LOOP_BOUND), dtype=np.asarray(value).dtype)
        feeds[spec.name] = value
    return feeds


LOOP_BOUND = (2, 6)  # [low, high): random trip counts and loop bounds run a loop 2 to 5 times
_VIEWS = frozenset({"Identity", "Cast", "Squeeze", "Unsqueeze", "Reshape", "Flatten", "Expand"})
_COMPARISONS = frozenset({"Less", "LessOrEqual", "Greater", "GreaterOrEqual"})


def loop_bounds(model: Declared) -> frozenset[str]:
    """The integer scalar inputs that bound a loop: a Loop's trip count, or a value compared with (`i < max_len`,
    TorchScript's while loops), through views and casts, in the graph or any body. Random values of 0 to 3 would
    often run such a loop never or once."""
    scalars = {spec.name for spec in model.inputs if _integer_scalar(spec.type_proto)}
    views = {name: name for name in scalars}
    found: set[str] = set()

    def walk(graph: onnx.GraphProto) -> None:
        for node in graph.node:
            sources = [views.get(name) for name in node.input]
            if node.op_type in _VIEWS and sources and sources[0]:
                views.update({out: sources[0] for out in node.output if out})
            if node.op_type == "Loop" and sources and sources[0]:
                found.add(sources[0])
            if node.op_type in _COMPARISONS:
                found.update(source for source in sources if source)
            for attribute in node.attribute:
                for body in [attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else attribute.graphs:
                    walk(body)

    if scalars:
        walk(model.graph)
    return frozenset(found)


def _integer_scalar(tp: onnx.TypeProto) -> bool:
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return False
    dims = tp.tensor_type.shape.dim
    integral = np.issubdtype(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tp.tensor_type.elem_type)), np.integer) \
        if tp.tensor_type.elem_type else False
    return integral and all(d.HasField("dim_value") and d.dim_value == 1 for d in dims)


def symbolic_dims(model: Declared) -> list[str]:
    """Names of the symbolic dimensions used by the model's inputs, in order of first appearance (the terms of a
    dimension written as a sum, not the sum)."""
    seen: dict[str, None] = {}
    for spec in model.inputs:
        for d in spec.shape or ():
            if isinstance(d, str):
                seen.update(dict.fromkeys(sum_terms(d) or [d]))  # a sum's size follows from its terms'
    return list(seen)


def unnamed_dims(model: Declared) -> list[str]:
    """"input[axis]" for every dynamic axis of a tensor input that has no name (e.g. exported as "?" or -1), the
    keys `example_inputs` takes for their sizes."""
    return [f"{spec.name}[{axis}]" for spec in model.inputs if spec.kind == "tensor"
            for axis, d in enumerate(spec.shape or ()) if not isinstance(d, str) and not (isinstance(d, int) and d >= 0)]


def _check_tensor(spec: ValueSpec, value: Any) -> np.ndarray:
    if isinstance(value, onnx.TensorProto):
        value = onnx.numpy_helper.to_array(value)
    if not isinstance(value, np.ndarray):
        if isinstance(value, (list, tuple, int, float, bool, np.generic)):
            value = np.asarray(value, dtype=spec.dtype)
        else:
            raise FeedError(f"input {spec.name!r}: expected {spec.describe()}, got a {type(value).__name__}")
    if spec.dtype is not None and value.dtype != spec.dtype:
        if not (spec.dtype.kind == "O" and value.dtype.kind in ("U", "S", "O")):
            raise FeedError(f"input {spec.name!r}: expected {spec.describe()}, got dtype {value.dtype}")
        value = value.astype(object)
    if spec.shape is not None:
        if value.ndim != len(spec.shape):
            raise FeedError(
                f"input {spec.name!r}: expected {spec.describe()} (rank {len(spec.shape)}), got shape {value.shape}"
            )
        for axis, (want, got) in enumerate(zip(spec.shape, value.shape)):
            if isinstance(want, int) and want > 0 and want != got:
                raise FeedError(
                    f"input {spec.name!r}: expected {spec.describe()}, got shape {value.shape} (axis {axis} is {got})"
                )
    return value


def proto_to_value(value: Any) -> Any:
    """TensorProto / SequenceProto / OptionalProto feeds become arrays, lists and None."""
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    if isinstance(value, onnx.SequenceProto):
        return onnx.numpy_helper.to_list(value)
    if isinstance(value, onnx.OptionalProto):
        return onnx.numpy_helper.to_optional(value)
    if isinstance(value, onnx.MapProto):
        return onnx.numpy_helper.to_dict(value)
    return value


# an input's (dtype, rank or -1 for any, (axis, size) of its fixed dimensions): what an array fed as it is must fit
_Plain = tuple[np.dtype, int, tuple[tuple[int, int], ...]]
_Declaration = tuple[dict[str, ValueSpec], frozenset[str], dict[str, _Plain] | None]
_DECLARED: weakref.WeakKeyDictionary[Any, _Declaration] = weakref.WeakKeyDictionary()


def _declared(model: Declared) -> _Declaration:
    """The model's inputs by name, its overridable initializers (inputs that are also initializers) and, when
    every input is a tensor of a known type, what an array fed for each must fit (`_plain`); made once per model:
    reading the graph's protos again costs a small model's run microseconds."""
    try:
        found = _DECLARED.get(model)
    except TypeError:  # not weakly referable
        found = None
    if found is None:
        specs = {s.name: s for s in model.inputs}
        plain = {name: _plain(spec) for name, spec in specs.items()}
        found = (specs, model.initializer_names & {i.name for i in model.graph.input},
                 None if None in plain.values() else cast("dict[str, _Plain]", plain))
        with contextlib.suppress(TypeError):
            _DECLARED[model] = found
    return found


def _plain(spec: ValueSpec) -> _Plain | None:
    """What an array fed for `spec` must fit to be taken as it is; None for an input that is not a tensor of a
    known type."""
    if spec.kind != "tensor" or spec.dtype is None:
        return None
    if spec.shape is None:
        return spec.dtype, -1, ()
    fixed = tuple((axis, d) for axis, d in enumerate(spec.shape) if isinstance(d, int) and d > 0)
    return spec.dtype, len(spec.shape), fixed


def _fed_as_declared(plain: dict[str, _Plain], feeds: dict[str, Any]) -> bool:
    """Whether the feeds are exactly the declared inputs, each an ndarray of its type, rank and fixed sizes (what
    a sweep or a generation feeds at every run): then they need no other check."""
    if len(feeds) != len(plain):
        return False
    ndarray = np.ndarray
    for name, value in feeds.items():
        check = plain.get(name)
        if check is None or type(value) is not ndarray:
            return False
        dtype, rank, fixed = check
        shape = value.shape
        if value.dtype != dtype or (rank >= 0 and len(shape) != rank):
            return False
        for axis, size in fixed:
            if shape[axis] != size:
                return False
    return True


def validate_feeds(model: Declared, feeds: dict[str, Any]) -> dict[str, Any]:
    """Checks feeds against the declared inputs: missing, extra, wrong dtype or shape raise FeedError. An
    initializer may be fed only when it is also a graph input (overridable, as onnxruntime allows)."""
    if not isinstance(feeds, dict):
        raise FeedError(f"feeds must be a dict of input name -> value, got {type(feeds).__name__}")
    specs, optional, plain = _declared(model)
    if plain is not None and _fed_as_declared(plain, feeds):
        return dict(feeds)
    missing = [name for name in specs if name not in feeds]
    if missing:
        described = "; ".join(f"{n!r}: {specs[n].describe()}" for n in missing)
        raise FeedError(f"missing input(s) {described}")
    extra = [name for name in feeds if name not in specs and name not in optional]
    if extra:
        fixed = [name for name in extra if name in model.initializer_names]
        note = f" ({fixed} are initializers that are not graph inputs: a run cannot override them)" if fixed else ""
        raise FeedError(f"unknown input(s) {extra}; the model's inputs are {list(specs)}{note}")
    checked: dict[str, Any] = {}
    for name, value in feeds.items():
        spec = specs.get(name)
        if spec is None or spec.kind != "tensor":
            checked[name] = proto_to_value(value)
        else:
            checked[name] = _check_tensor(spec, value)
    return checked
