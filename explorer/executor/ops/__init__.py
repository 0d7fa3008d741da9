"""explorer's operator kernels, in explicit tables (read by executor/kernels.py's `build_kernel`):

- `FAMILIES`: one module per operator family; each defines `KERNELS: dict[str, KernelFactory]` (op_type ->
  `factory(op: OpNode) -> fn(args: Sequence[Any]) -> tuple of outputs`) for the operators of its `DOMAIN` (the
  default domain "" when the module sets none). Nothing registers itself by being imported: a family module
  missing here, or two families claiming one (domain, op), fails a test.
- `KERNELS`: every family's kernels, by (domain, op_type).
- `REFERENCE_FALLBACK`: the (domain, op_type) pairs still run by onnx.reference, listed one by one.

To add a kernel: write its factory in its family's module (ops.base.OpNode gives the version and attributes),
add it to that module's `KERNELS` (a new family module: import it and list it in `FAMILIES`), remove the op from
`REFERENCE_FALLBACK`, and add its differential cases (tests/differential/cases_<family>.py).
"""
from __future__ import annotations

from types import ModuleType

from . import (
    activation,
    attention,
    binary,
    cast,
    constant,
    contrib_activation,
    contrib_attention,
    contrib_fused,
    contrib_gqa,
    contrib_normalization,
    contrib_qlinear,
    contrib_quantize,
    contrib_tokenizer,
    conv,
    detection,
    draws,
    fourier,
    generate,
    indexing,
    layout,
    linalg,
    losses,
    manipulation,
    ml_features,
    ml_labels,
    ml_linear,
    ml_maps,
    ml_svm,
    ml_trees,
    normalization,
    optional,
    pad,
    passthrough,
    patches,
    pool,
    quantize,
    reduction,
    resize,
    sampling,
    scatter,
    sequence,
    shape,
    signal,
    softmax,
    sorting,
    strings,
    tfidf,
    unary,
    variadic,
)
from .base import KernelFactory

FAMILIES: tuple[ModuleType, ...] = (
    activation, attention, binary, cast, constant, conv, detection, draws, generate, indexing,
    layout, linalg, losses, manipulation, normalization, optional, pad, passthrough, patches, pool,
    quantize, reduction, resize, sampling, scatter, sequence, shape, signal, softmax, sorting,
    unary, variadic,
    strings, tfidf, fourier,
    # onnxruntime's own operators (com.microsoft)
    contrib_activation, contrib_attention, contrib_fused, contrib_gqa, contrib_normalization,
    contrib_qlinear, contrib_quantize, contrib_tokenizer,
    # ai.onnx.ml
    ml_features, ml_labels, ml_linear, ml_maps, ml_svm, ml_trees,
)
"""The family modules (explorer.executor.ops.<name>), each with its `KERNELS` table."""


def family_domain(family: ModuleType) -> str:
    """The domain of a family's operators ("" for the default domain)."""
    return str(getattr(family, "DOMAIN", ""))


def _gather(families: tuple[ModuleType, ...]) -> dict[tuple[str, str], KernelFactory]:
    return {(family_domain(family), op): factory for family in families for op, factory in family.KERNELS.items()}


KERNELS: dict[tuple[str, str], KernelFactory] = _gather(FAMILIES)
"""Every own kernel, (domain, op_type) -> factory."""


def _ops(domain: str, names: str) -> set[tuple[str, str]]:
    """(domain, op) for each whitespace-separated name; `#` starts a comment."""
    words = " ".join(line.split("#")[0] for line in names.splitlines()).split()
    return {(domain, name) for name in words}


REFERENCE_FALLBACK: frozenset[tuple[str, str]] = frozenset(
    _ops("", """
        # rare: recent fused ops, image decoding
        CausalConvWithState ImageDecoder LinearAttention SwiGLU
    """)
    | _ops("ai.onnx.preview.training", "Adagrad Adam Gradient Momentum")
    | _ops("ai.onnx.preview", "FlexAttention")
)
