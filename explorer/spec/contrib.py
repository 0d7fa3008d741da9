"""onnxruntime's com.microsoft operators (contrib_schemas.json, written from onnxruntime by tools/contrib_schemas.py):
each as an onnx OpSchema, so nodes of that domain are checked like the default domain's (attributes, their types
and defaults, input counts, type constraints), and each operator's doc with its place in onnxruntime's
ContribOperators.md."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import onnx

CONTRIB_DOMAIN = "com.microsoft"
DOC_URL = "https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#com.microsoft.{op}"
_OpSchema = onnx.defs.OpSchema
_OPTIONS = {"single": _OpSchema.FormalParameterOption.Single, "optional": _OpSchema.FormalParameterOption.Optional,
            "variadic": _OpSchema.FormalParameterOption.Variadic}


@cache
def _table() -> dict[str, Any]:
    table: dict[str, Any] = json.loads((files(__package__) / "contrib_schemas.json").read_text(encoding="utf-8"))
    return table


@cache
def _versions() -> dict[str, tuple[int, ...]]:
    """op_type -> its since_versions, ascending."""
    found: dict[str, list[int]] = {}
    for key in _table()["operators"]:
        name, version = key.rsplit("-", 1)
        found.setdefault(name, []).append(int(version))
    return {name: tuple(sorted(versions)) for name, versions in found.items()}


def contrib_versions(op_type: str) -> tuple[int, ...]:
    """The since_versions onnxruntime defines a com.microsoft operator at (none when it does not)."""
    return _versions().get(op_type, ())


def contrib_operators() -> tuple[str, ...]:
    """Every com.microsoft operator onnxruntime defines."""
    return tuple(sorted(_versions()))


def _entry(op_type: str, opset: int) -> tuple[int, dict[str, Any]] | None:
    versions = [v for v in _versions().get(op_type, ()) if v <= opset]
    if not versions:
        return None
    return versions[-1], _table()["operators"][f"{op_type}-{versions[-1]}"]


def _attribute(name: str, spec: dict[str, Any]) -> _OpSchema.Attribute:
    description = spec["description"]
    if spec["default"] is not None:
        return _OpSchema.Attribute(name, onnx.helper.make_attribute(name, spec["default"]), description)
    return _OpSchema.Attribute(name, getattr(_OpSchema.AttrType, spec["type"]), description,
                               required=spec["required"])


def _formal(spec: dict[str, Any]) -> _OpSchema.FormalParameter:
    return _OpSchema.FormalParameter(spec["name"], spec["type"], spec["description"],
                                     param_option=_OPTIONS[spec["option"]],
                                     is_homogeneous=spec.get("homogeneous", True))


@cache
def contrib_schema(op_type: str, opset: int) -> onnx.defs.OpSchema | None:
    """The schema a com.microsoft operator has at an opset of that domain (None when onnxruntime defines no such
    operator, or only at later versions)."""
    found = _entry(op_type, opset)
    if found is None:
        return None
    version, spec = found
    return _OpSchema(op_type, CONTRIB_DOMAIN, version, doc=spec["doc"],
                     inputs=[_formal(f) for f in spec["inputs"]], outputs=[_formal(f) for f in spec["outputs"]],
                     type_constraints=[tuple(c) for c in spec["type_constraints"]],
                     attributes=[_attribute(name, a) for name, a in spec["attributes"].items()])


@dataclass(frozen=True)
class OperatorDoc:
    """What onnxruntime documents about one com.microsoft operator version."""

    op_type: str
    domain: str
    since_version: int
    text: str  # the schema's doc, as ContribOperators.md shows it
    url: str  # the operator's section in onnxruntime's ContribOperators.md
    attributes: dict[str, str]  # name -> description
    source: str  # "onnxruntime 1.32.0": where the schemas were read from


def contrib_doc(op_type: str, opset: int = 1) -> OperatorDoc | None:
    """onnxruntime's doc of a com.microsoft operator at an opset of that domain; None when it defines none."""
    found = _entry(op_type, opset)
    if found is None:
        return None
    version, spec = found
    return OperatorDoc(op_type, CONTRIB_DOMAIN, version, spec["doc"], DOC_URL.format(op=op_type),
                       {name: a["description"] for name, a in spec["attributes"].items()},
                       f"onnxruntime {_table()['onnxruntime']}")
