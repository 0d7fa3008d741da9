"""The judge of the integer-product operators (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv, QGemm,
QAttention, MatMulIntegerToFloat, DynamicQuantizeMatMul, DynamicQuantizeLSTM, MatMulNBits): exact integer
arithmetic written from their specs (tests/support/quantized_reference.py) judges every case; onnxruntime judges it as
well only where its kernel is exact. On an x86 CPU without VNNI its u8s8 kernel saturates the int16 sum of each
pair of adjacent products (see quantized_reference.py), so a uint8 × int8 case is left to onnxruntime only when it
cannot saturate (2 · max(A) · max|B| within int16), or when the CPU has AVX-VNNI or AVX512-VNNI; elsewhere (another
architecture) onnxruntime's kernels are not known, and the same bound decides."""
from __future__ import annotations

import platform
from functools import cache
from pathlib import Path
from typing import Any

from tests.support.quantized_reference import REFERENCES, may_saturate, qattention, saturating_operands

from .harness import Case, run_onnxruntime

VNNI_FLAGS = ("avx512_vnni", "avx_vnni")


@cache
def cpu_has_vnni() -> bool:
    """Whether this x86 CPU has AVX-VNNI or AVX512-VNNI (where onnxruntime's u8s8 kernel sums exactly)."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"):
        return False
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return any(flag in flags for flag in VNNI_FLAGS)


def judged_exactly(case: Case) -> bool:
    """Whether the case is one of the integer-product operators' (and explorer must compute it)."""
    return (case.domain, case.op) in REFERENCES and case.error is None and case.expected is None \
        and case.judge_version is None and case.sampled is None


def can_saturate(case: Case) -> bool:
    """Whether onnxruntime's u8s8 kernel could saturate on the case's inputs (on a CPU without VNNI)."""
    return any(may_saturate(a, b) for a, b in saturating_operands(case.domain, case.op, case.inputs, case.attrs))


def onnxruntime_is_exact(case: Case) -> bool:
    """Whether onnxruntime's result is exact for the case here: it cannot saturate, or the CPU has VNNI."""
    return cpu_has_vnni() or not can_saturate(case)


def _float_attention(inputs: list, attrs: dict, outputs: int) -> list:
    """onnxruntime's float Attention (com.microsoft), which saturates nothing, on QAttention's projection."""
    result = run_onnxruntime([Case("Attention", 1, inputs, dict(attrs), domain="com.microsoft", outputs=outputs)])[0]
    if isinstance(result, str):
        raise AssertionError(f"onnxruntime's float Attention refuses QAttention's float part: {result}")
    return result


def exact_outputs(case: Case, saturate: bool = False) -> list[Any] | None:
    """The case's outputs by exact integer arithmetic (with `saturate`, as onnxruntime's u8s8 kernel computes them
    without VNNI); None where the reference says nothing (onnxruntime then judges alone)."""
    reference = REFERENCES[(case.domain, case.op)]
    if case.op == "QAttention":
        return qattention(case.inputs, case.attrs, saturate,
                          attention=lambda inputs, attrs: _float_attention(inputs, attrs, case.outputs))
    return reference(case.inputs, case.attrs, saturate)
