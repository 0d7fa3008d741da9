"""A departing module whose ONNX node holds one of its settings otherwise: the normalizations' eps written into
the operator's epsilon, LeakyReLU's slope into alpha, ELU's alpha... (the fix: set the attribute to the module's
value)."""
from __future__ import annotations

from ..model.model import Model
from ..proto.graph import attribute
from .align import Point
from .captured import ModuleInfo
from .report import Finding
from .scopes import Scopes

# (framework class, setting) -> (ONNX operator, attribute)
SETTINGS = {
    ("LayerNorm", "eps"): ("LayerNormalization", "epsilon"),
    ("BatchNorm1d", "eps"): ("BatchNormalization", "epsilon"),
    ("BatchNorm2d", "eps"): ("BatchNormalization", "epsilon"),
    ("BatchNorm3d", "eps"): ("BatchNormalization", "epsilon"),
    ("GroupNorm", "eps"): ("GroupNormalization", "epsilon"),
    ("InstanceNorm1d", "eps"): ("InstanceNormalization", "epsilon"),
    ("InstanceNorm2d", "eps"): ("InstanceNormalization", "epsilon"),
    ("RMSNorm", "eps"): ("RMSNormalization", "epsilon"),
    ("LeakyReLU", "negative_slope"): ("LeakyRelu", "alpha"),
    ("ELU", "alpha"): ("Elu", "alpha"),
    ("CELU", "alpha"): ("Celu", "alpha"),
}


def odd_setting(model: Model, scopes: Scopes, info: ModuleInfo, point: Point) -> Finding | None:
    """The first node of the point's call whose attribute differs from the module's setting."""
    nodes = scopes.calls(point.module).get(point.call, [])
    for (cls, setting), (op, name) in SETTINGS.items():
        value = info.settings.get(setting)
        if cls != info.class_name or not isinstance(value, (int, float)):
            continue
        for node in nodes:
            if node.proto.op_type != op:
                continue
            written = attribute(node.proto, name)
            if written is None or abs(float(written) - float(value)) <= 1e-6 * max(1.0, abs(float(value))):
                continue
            return Finding(point.module, node.path,
                           f"{op} {node.path!r} has {name}={float(written):g}; {point.module!r} ({cls}) has "
                           f"{setting}={float(value):g}", f"set {name}={float(value):g}", point=point.label,
                           attribute=(node.path, name, float(value)))
    return None
