"""The kernel registry: explicit tables, no registration by import, the fallback onto onnx.reference listed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from explorer.executor import kernels, ops
from explorer.executor.ops.base import OpNode
from explorer.executor.run import program_of

OPS_DIR = Path(ops.__file__).parent
NOT_FAMILIES = {"__init__", "base", "axes", "element_types", "shared", "windows", "ml_forest", "ml_scores",
                "streams"}  # helpers


def test_every_family_module_is_in_families():
    files = {p.stem for p in OPS_DIR.glob("*.py")} - NOT_FAMILIES
    listed = {family.__name__.rsplit(".", 1)[-1] for family in ops.FAMILIES}
    assert files == listed, f"family modules missing from ops.FAMILIES: {sorted(files - listed)}"


def test_no_op_is_claimed_twice():
    owner: dict[tuple[str, str], str] = {}
    for family in ops.FAMILIES:
        for op in family.KERNELS:
            key = (ops.family_domain(family), op)
            assert key not in owner, f"{key} is claimed by {owner.get(key)} and {family.__name__}"
            owner[key] = family.__name__
    assert not set(owner) & set(kernels.SPECIAL), "an op is both special and owned by a family"
    assert set(owner) == set(ops.KERNELS)


def test_no_owned_op_is_also_in_the_fallback():
    owned = {*ops.KERNELS, *kernels.SPECIAL}
    assert not owned & ops.REFERENCE_FALLBACK, sorted(owned & ops.REFERENCE_FALLBACK)


def test_onnxruntimes_generation_operators_run_their_subgraphs():
    generation = {("com.microsoft", op) for op in ("GreedySearch", "BeamSearch", "WhisperBeamSearch", "Sampling")}
    assert generation <= set(kernels.BODIES) <= kernels.SPECIAL
    assert not generation & {*ops.KERNELS, *ops.REFERENCE_FALLBACK}


def test_every_operator_onnx_defines_has_a_kernel_or_is_listed():
    defined = {(s.domain, s.name) for s in onnx.defs.get_all_schemas_with_history()}
    routed = {*ops.KERNELS, *kernels.SPECIAL} | ops.REFERENCE_FALLBACK
    assert defined - routed == set()
    assert defined >= ops.REFERENCE_FALLBACK, sorted(ops.REFERENCE_FALLBACK - defined)


def _one_node(op, inputs, outputs, opset, domain="", **attrs):
    node = h.make_node(op, [i.name for i in inputs], [o.name for o in outputs], name="n", domain=domain, **attrs)
    imports = [h.make_opsetid("", opset)] + ([h.make_opsetid(domain, 1)] if domain else [])
    graph = h.make_graph([node], "g", inputs, outputs)
    return explorer.load(h.make_model(graph, opset_imports=imports))


X = h.make_tensor_value_info("x", T.FLOAT, [2, 3])
Y = h.make_tensor_value_info("y", T.FLOAT, None)


def test_an_op_without_kernel_names_node_and_op(monkeypatch):
    monkeypatch.setattr(ops, "REFERENCE_FALLBACK", ops.REFERENCE_FALLBACK - {("", "Tan")})
    monkeypatch.setattr(ops, "KERNELS", {k: v for k, v in ops.KERNELS.items() if k != ("", "Tan")})
    with pytest.raises(explorer.UnsupportedOperatorError, match=r"node 'n': operator 'Tan' .*no kernel") as info:
        explorer.run(_one_node("Tan", [X], [Y], 17), {"x": np.zeros((2, 3), np.float32)})
    assert info.value.node == "n" and info.value.op_type == "Tan"


def test_an_unknown_op_names_node_and_op():
    with pytest.raises(explorer.UnsupportedOperatorError, match=r"operator 'Frob' \(domain 'my.dom'.*no kernel"):
        explorer.run(_one_node("Frob", [X], [Y], 17, "my.dom"), {"x": np.zeros((2, 3), np.float32)})


def _op_node(op, opset, n_inputs=1, **attrs):
    model = _one_node(op, [h.make_tensor_value_info(f"x{i}", T.FLOAT, None) for i in range(n_inputs)], [Y], opset,
                      **attrs)
    return OpNode(model.index.nodes["n"], program_of(model).opsets, lambda name: None)


@pytest.mark.parametrize("op, opset, version", [("ReduceSum", 12, 11), ("ReduceSum", 13, 13),
                                                ("Softmax", 12, 11), ("Softmax", 21, 13), ("Relu", 7, 6)])
def test_version_is_the_schemas_since_version_at_the_models_opset(op, opset, version):
    assert _op_node(op, opset).version == version


def test_attributes_come_with_the_versions_defaults():
    assert _op_node("Softmax", 11).get_int("axis") == 1
    assert _op_node("Softmax", 13).get_int("axis") == -1
    assert _op_node("Softmax", 13, axis=0).get_int("axis") == 0
    assert _op_node("LeakyRelu", 16).get_float("alpha") == pytest.approx(0.01)
    assert _op_node("ReduceSum", 11).get_ints("axes") is None
    node = _op_node("Gelu", 20)
    assert node.get_str("approximate") == "none" and not node.has("approximate")


@pytest.mark.parametrize("op, opset, n_inputs, attrs, message", [
    ("ReduceSum", 13, 1, {"axes": [0]}, "ReduceSum-13 has no attribute 'axes'"),
    ("LeakyRelu", 16, 1, {"alpha": 1}, "attribute 'alpha' is INT; the spec wants FLOAT"),
    ("Clip", 6, 3, {}, "it has 3 inputs; Clip-6 takes at most 1"),
    ("Add", 14, 1, {}, "the B input is missing (Add-14 requires it)"),
])
def test_what_the_version_does_not_allow_is_refused_naming_the_node(op, opset, n_inputs, attrs, message):
    with pytest.raises(explorer.ExecutionError) as info:
        _op_node(op, opset, n_inputs, **attrs)
    assert info.value.node == "n" and "node 'n'" in str(info.value) and message in str(info.value)


def test_the_guide_lists_the_fallback_with_its_count():
    readme = (Path(__file__).resolve().parents[2] / "docs" / "operators.md").read_text()
    count = readme.split("<!-- fallback-count -->")[1].split("<!-- /fallback-count -->")[0]
    listed = readme.split("<!-- fallback -->")[1].split("<!-- /fallback -->")[0]
    names = {word for line in listed.split("- ")
             for word in line.split(":", 1)[-1].replace(";", " ").split() if word[0].isupper()}
    assert int(count) == len(ops.REFERENCE_FALLBACK)
    assert names == {op for _, op in ops.REFERENCE_FALLBACK}
