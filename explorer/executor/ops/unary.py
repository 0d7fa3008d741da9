"""Elementwise unary math: Abs, Neg, Exp, Log, Sqrt, Reciprocal, Floor, Ceil, Round (half to even), Sign, Erf,
trigonometric and hyperbolic functions, IsNaN, IsInf, Not, BitwiseNot. Version 1's `consumed_inputs` is a legacy
memory hint without effect."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel, as_array

# Cephes' rational approximations of erf (|x| < 1) and erfc (1 <= |x| < 8, |x| >= 8), double precision.
_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3, 7.00332514112805075473e3,
      5.55923013010394962768e4)
_U = (1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3, 2.26290000613890934246e4,
      4.92673942608635921086e4)
_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0, 4.86371970985681366614e1,
      1.96520832956077098242e2, 5.26445194995477358631e2, 9.34528527171957607540e2, 1.02755188689515710272e3,
      5.57535335369399327526e2)
_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2, 9.75708501743205489753e2,
      1.82390916687909736289e3, 2.24633760818710981792e3, 1.65666309194161350182e3, 5.57535340817727675546e2)
_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0, 6.16021097993053585195e0,
      7.40974269950448939160e0, 2.97886665372100240670e0)
_S = (1.0, 2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1, 1.70814450747565897222e1,
      9.60896809063285878198e0, 3.36907645100081516050e0)


def _poly(coefficients: tuple[float, ...], x: np.ndarray) -> np.ndarray:
    result = np.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        result = result * x + c
    return result


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, computed in float64 and returned in x's type."""
    v = x.astype(np.float64)
    a = np.abs(v)
    small = a < 1.0
    z = np.where(small, v * v, 0.0)
    inner = v * _poly(_T, z) / _poly(_U, z)
    big = np.where(small, 1.0, np.minimum(a, 30.0))  # finite where unused; erfc(30) is 0 in float64
    tail = np.exp(-big * big) * np.where(big < 8.0, _poly(_P, big) / _poly(_Q, big), _poly(_R, big) / _poly(_S, big))
    outer = np.copysign(1.0 - tail, v)
    return np.where(small, inner, outer).astype(x.dtype, copy=False)


def _round(x: np.ndarray) -> np.ndarray:
    return np.round(x)  # numpy rounds half to even, as the spec asks


def _not(x: np.ndarray) -> np.ndarray:
    return np.logical_not(x)


UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Abs": np.abs, "Neg": np.negative, "Exp": np.exp, "Log": np.log, "Sqrt": np.sqrt, "Reciprocal": np.reciprocal,
    "Floor": np.floor, "Ceil": np.ceil, "Round": _round, "Sign": np.sign, "Erf": erf,
    "Sin": np.sin, "Cos": np.cos, "Tan": np.tan, "Asin": np.arcsin, "Acos": np.arccos, "Atan": np.arctan,
    "Sinh": np.sinh, "Cosh": np.cosh, "Asinh": np.arcsinh, "Acosh": np.arccosh, "Atanh": np.arctanh,
    "IsNaN": np.isnan, "Not": _not, "BitwiseNot": np.invert,
}


def unary_kernel(op: OpNode) -> PlainKernel:
    fn = UNARY[op.op_type]

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return (as_array(fn(args[0])),)

    return run


def is_inf_kernel(op: OpNode) -> PlainKernel:
    negative, positive = op.get_int("detect_negative"), op.get_int("detect_positive")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if negative and positive:
            return (as_array(np.isinf(x)),)
        if negative:
            return (as_array(np.isneginf(x)),)
        if positive:
            return (as_array(np.isposinf(x)),)
        return (np.zeros(x.shape, dtype=bool),)

    return run


KERNELS: dict[str, KernelFactory] = {**{name: unary_kernel for name in UNARY}, "IsInf": is_inf_kernel}
