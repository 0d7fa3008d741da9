"""Property tests: random chains of Gather, Concat, Reshape and Transpose (with the Shape arithmetic exporters put
around them) optimize into models equivalent to the original under explorer and onnxruntime, and every rewrite
holds alone."""
from __future__ import annotations

import math

import numpy as np
import onnx
import onnxruntime as ort
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto as T
from onnx import helper as h

from explorer.optimizer import optimize
from explorer.optimizer.verify import check_steps, compare_models
from tests.support.optimizer_models import info, make, tensor


class Chain:
    """Builds a model one random step at a time, tracking the static shape of the current value."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.current = "x"
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.extra: list[onnx.ValueInfoProto] = []
        self.count = 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def const(self, value, dtype=np.int64) -> str:
        name = self.name("c")
        self.inits.append(tensor(name, value, dtype))
        return name

    def add(self, op: str, inputs: list[str], shape: tuple[int, ...], **attrs) -> None:
        out = self.name(op.lower())
        self.nodes.append(h.make_node(op, inputs, [out], **attrs))
        self.current, self.shape = out, shape


def transpose(data, chain: Chain) -> None:
    perm = data.draw(st.permutations(range(len(chain.shape))))
    chain.add("Transpose", [chain.current], tuple(chain.shape[p] for p in perm), perm=list(perm))


def reshape(data, chain: Chain) -> None:
    size = math.prod(chain.shape)
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    first = data.draw(st.sampled_from(divisors))
    target = [first, size // first] if data.draw(st.booleans()) else [size]
    spelled = list(target)
    if data.draw(st.booleans()):
        spelled[data.draw(st.integers(0, len(target) - 1))] = -1
    chain.add("Reshape", [chain.current, chain.const(spelled)], tuple(target))


def gather(data, chain: Chain) -> None:
    dim = chain.shape[0]
    if dim == 0:
        return
    if len(chain.shape) > 1 and data.draw(st.booleans()):
        index = data.draw(st.integers(-dim, dim - 1))
        chain.add("Gather", [chain.current, chain.const(index)], chain.shape[1:], axis=0)
        return
    indices = data.draw(st.lists(st.integers(-dim, dim - 1), min_size=1, max_size=4))
    chain.add("Gather", [chain.current, chain.const(indices)], (len(indices), *chain.shape[1:]), axis=0)


def concat(data, chain: Chain) -> None:
    rows = data.draw(st.integers(1, 2))
    other = chain.const(np.arange(rows * math.prod(chain.shape[1:])).reshape(rows, *chain.shape[1:]) / 4, np.float32)
    inputs = [chain.current, other] if data.draw(st.booleans()) else [other, chain.current, chain.current]
    rows_out = chain.shape[0] * (len(inputs) - 1) + rows
    chain.add("Concat", inputs, (rows_out, *chain.shape[1:]), axis=0)


def identity(data, chain: Chain) -> None:
    chain.add("Identity", [chain.current], chain.shape)


def flatten_by_shape(data, chain: Chain) -> None:
    """Reshape(x, Concat(Gather(Shape(x), [0]), [-1])), as exporters flatten."""
    shape = chain.name("shape")
    first = chain.name("first")
    target = chain.name("target")
    chain.nodes += [h.make_node("Shape", [chain.current], [shape]),
                    h.make_node("Gather", [shape, chain.const([0])], [first], axis=0),
                    h.make_node("Concat", [first, chain.const([-1])], [target], axis=0)]
    chain.add("Reshape", [chain.current, target], (chain.shape[0], math.prod(chain.shape[1:])))


def dims_around_constants(data, chain: Chain) -> None:
    """An extra output Gather(Concat([7, 8], Shape(x), [9]), i) with i inside Shape(x)'s part."""
    shape, padded, picked = chain.name("shape"), chain.name("padded"), chain.name("dims")
    rank = len(chain.shape)
    indices = data.draw(st.lists(st.integers(2, 1 + rank), min_size=1, max_size=3))
    chain.nodes += [h.make_node("Shape", [chain.current], [shape]),
                    h.make_node("Concat", [chain.const([7, 8]), shape, chain.const([9])], [padded], axis=0),
                    h.make_node("Gather", [padded, chain.const(indices)], [picked], axis=0)]
    chain.extra.append(info(picked, T.INT64, [len(indices)]))


def twice(step):
    def both(data, chain: Chain) -> None:
        step(data, chain)
        if chain.shape:
            step(data, chain)

    return both


STEPS = [transpose, reshape, gather, concat, identity, flatten_by_shape, dims_around_constants, twice(transpose),
         twice(gather), twice(reshape)]


@st.composite
def chains(draw) -> tuple[onnx.ModelProto, dict]:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    chain = Chain(shape)
    data = draw(st.data())
    for step in draw(st.lists(st.sampled_from(STEPS), min_size=2, max_size=8)):
        if chain.shape and math.prod(chain.shape) <= 256:
            step(data, chain)
    symbolic = draw(st.booleans())
    declared = ["n", *shape[1:]] if symbolic else list(shape)
    model = make(chain.nodes, [info("x", shape=declared)], [info(chain.current, shape=None), *chain.extra],
                 chain.inits)
    feeds = {"x": np.random.default_rng(len(chain.nodes)).standard_normal(shape).astype(np.float32)}
    return model, feeds


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains())
def test_random_chains_optimize_into_equivalent_models(case):
    model, feeds = case
    result = optimize(model)
    verdict = compare_models(result.original, result.optimized, feeds)
    assert verdict.status == "equivalent", "\n".join(verdict.lines())
    assert all(r.unavailable is None for r in verdict.reports), "\n".join(verdict.lines())
    assert all(c.status == "equivalent" for c in check_steps(result, feeds)), result.stats_table()


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # its own rewrites off
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def chained(model: onnx.ModelProto, first: str, second: str) -> list[str]:
    """Nodes of type `second` reading a value that a `first` node writes."""
    written = {out for node in model.graph.node if node.op_type == first for out in node.output}
    return [node.name for node in model.graph.node if node.op_type == second and node.input[0] in written]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains(), st.integers(0, 12))
def test_every_prefix_of_the_rewrites_is_equivalent(case, count):
    """The first `count` rewrites of the full optimization, applied alone, give a model onnxruntime (which never
    saw the optimizer) computes the same as the original."""
    model, feeds = case
    full = optimize(model)
    partial = optimize(model, stop_after=count)
    assert [s.pattern for s in partial.steps] == [s.pattern for s in full.steps[:count]]
    for got, want in zip(onnxruntime_outputs(partial.optimized, feeds), onnxruntime_outputs(model, feeds),
                         strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains())
def test_the_rewrites_fire_where_the_chain_has_something_to_remove(case):
    """Identity nodes (but those giving a graph output a value that is a graph input or another output: each output
    keeps its name, and two outputs found equal need one node each) and Transposes of Transposes are gone, each by
    a rewrite of its own pattern, and no rewrite adds nodes overall."""
    model, _ = case
    result = optimize(model)
    inputs = {i.name for i in model.graph.input}
    named = inputs | {o.name for o in model.graph.output}
    left = [n.name for n in result.optimized.graph.node
            if n.op_type == "Identity" and not (n.input[0] in named and n.output[0] in named)]
    assert not left, result.stats_table()
    assert not chained(result.optimized, "Transpose", "Transpose"), result.stats_table()
    patterns = {s.pattern for s in result.steps}
    if any(n.op_type == "Identity" and n.input[0] not in inputs for n in model.graph.node):
        assert "IdentityRemoval" in patterns, patterns
    if chained(model, "Transpose", "Transpose"):
        assert any("Transpose" in p for p in patterns), patterns
    assert len(result.optimized.graph.node) <= len(model.graph.node)
