"""Writes explorer/spec/contrib_schemas.json: onnxruntime's com.microsoft operator schemas, and the layer norms it
defines in the default domain where onnx has none (LayerNormalization before opset 17, SimplifiedLayerNormalization),
with their attributes (types, defaults), inputs, outputs, type constraints and doc text, read from the installed
onnxruntime, with onnxruntime's licence (MIT) that the doc text comes under.

explorer never imports onnxruntime in its own process (it runs it in a child, explorer/judge/judge.py); the schemas
its kernels check nodes against and the inspector shows are this file. Run again after upgrading onnxruntime:

    python tools/contrib_schemas.py
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import onnx
import onnxruntime
from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

DOMAIN = "com.microsoft"
DEFAULT_DOMAIN_OWN = ("LayerNormalization", "SimplifiedLayerNormalization")  # onnxruntime's, in the default domain
TARGET = Path(__file__).resolve().parent.parent / "explorer" / "spec" / "contrib_schemas.json"


def _default(raw: bytes) -> Any:
    if not raw:
        return None
    attribute = onnx.AttributeProto()
    attribute.ParseFromString(raw)
    value = onnx.helper.get_attribute_value(attribute)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [v.decode() if isinstance(v, bytes) else v for v in value]
    return value


def _formals(formals: Any) -> list[dict[str, Any]]:
    return [{"name": f.name, "type": f.typeStr, "option": f.option.name.lower(), "homogeneous": f.isHomogeneous,
             "description": f.description.strip()} for f in formals]


def _schema(schema: Any) -> dict[str, Any]:
    return {
        "since_version": schema.since_version,
        "doc": (schema.doc or "").strip(),
        "attributes": {name: {"type": attribute.type.name, "required": attribute.required,
                              "default": _default(attribute._default_value),
                              "description": attribute.description.strip()}
                       for name, attribute in sorted(schema.attributes.items())},
        "inputs": _formals(schema.inputs),
        "outputs": _formals(schema.outputs),
        "type_constraints": [[c.type_param_str, list(c.allowed_type_strs), c.description.strip()]
                             for c in schema.type_constraints],
        "min_input": schema.min_input, "max_input": schema.max_input,
        "min_output": schema.min_output, "max_output": schema.max_output,
    }


def main() -> None:
    onnx_defines = {(s.domain, s.name, s.since_version) for s in onnx.defs.get_all_schemas_with_history()}
    schemas = sorted((s for s in ort_c.get_all_operator_schema()
                      if s.domain == DOMAIN or (s.domain == "" and s.name in DEFAULT_DOMAIN_OWN
                                                and ("", s.name, s.since_version) not in onnx_defines)),
                     key=lambda s: (s.domain, s.name, s.since_version))
    operators: dict[str, dict[str, Any]] = {"": {}, DOMAIN: {}}
    for s in schemas:
        operators[s.domain][f"{s.name}-{s.since_version}"] = _schema(s)
    licence = (Path(onnxruntime.__file__).parent / "LICENSE").read_text().strip()
    table = {"onnxruntime": onnxruntime.__version__, "licence": licence, "operators": operators}
    TARGET.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(schemas)} schemas from onnxruntime {onnxruntime.__version__} -> {TARGET}")


if __name__ == "__main__":
    main()
