"""explorer's operator kernels, in explicit tables (read by executor/kernels.py's `build_kernel`):

- `FAMILIES`: one module per operator family; each defines `KERNELS: dict[str, KernelFactory]` (op_type of the
  default domain -> `factory(node, program) -> fn(args: list[Any]) -> tuple of outputs`). Nothing registers itself
  by being imported: a family module missing here, or two families claiming one op, fails a test.
- `SPECIAL`: kernels that run bodies or record more than values: `fn(args, call) -> (outputs, info)`. Calls of
  model-local functions are special too; they are found in the model (executor/functions.py), not here.
- `REFERENCE_FALLBACK`: the (domain, op_type) pairs still run by onnx.reference, listed one by one.

To add a kernel: write its factory in its family's module (ops.base.OpNode gives the version and attributes),
add it to that module's `KERNELS`, remove the op from `REFERENCE_FALLBACK`, and add its differential cases
(tests/differential/cases_<family>.py).
"""
from __future__ import annotations

from importlib import import_module
from types import ModuleType

from .. import control_flow, rnn
from .base import KernelFactory

FAMILY_NAMES = (
    "activation", "attention", "binary", "cast", "constant", "conv", "detection", "generate", "indexing", "layout",
    "linalg", "manipulation", "normalization", "optional", "pad", "passthrough", "patches", "pool", "quantize",
    "reduction", "resize", "sampling", "scatter", "sequence", "shape", "signal", "softmax", "sorting", "unary",
    "variadic",
)
"""The family modules (explorer.executor.ops.<name>), each with its `KERNELS` table."""
FAMILIES: tuple[ModuleType, ...] = tuple(import_module(f"{__name__}.{name}") for name in FAMILY_NAMES)

SPECIAL: dict[str, KernelFactory] = {
    "If": control_flow.if_kernel,
    "Loop": control_flow.loop_kernel,
    "Scan": control_flow.scan_kernel,
    "SequenceMap": control_flow.sequence_map_kernel,
    "GRU": rnn.rnn_kernel,
    "LSTM": rnn.rnn_kernel,
    "RNN": rnn.rnn_kernel,
}


def _gather(families: tuple[ModuleType, ...]) -> dict[str, KernelFactory]:
    kernels: dict[str, KernelFactory] = {}
    for family in families:
        kernels.update(family.KERNELS)
    return kernels


KERNELS: dict[str, KernelFactory] = _gather(FAMILIES)
"""Every own kernel of the default domain, op_type -> factory."""


def _ops(domain: str, names: str) -> set[tuple[str, str]]:
    """(domain, op) for each whitespace-separated name; `#` starts a comment."""
    words = " ".join(line.split("#")[0] for line in names.splitlines()).split()
    return {(domain, name) for name in words}


REFERENCE_FALLBACK: frozenset[tuple[str, str]] = frozenset(
    _ops("", """
        # rare: random sampling, signal processing, strings, training losses, recent fused ops
        Bernoulli CausalConvWithState DFT ImageDecoder LinearAttention Multinomial NegativeLogLikelihoodLoss
        RandomNormal RandomNormalLike RandomUniform RandomUniformLike RegexFullMatch STFT SoftmaxCrossEntropyLoss
        StringConcat StringNormalizer StringSplit SwiGLU TfIdfVectorizer
    """)
    | _ops("ai.onnx.ml", """
        ArrayFeatureExtractor Binarizer CastMap CategoryMapper DictVectorizer FeatureVectorizer Imputer
        LabelEncoder LinearClassifier LinearRegressor Normalizer OneHotEncoder SVMClassifier SVMRegressor Scaler
        TreeEnsemble TreeEnsembleClassifier TreeEnsembleRegressor ZipMap
    """)
    | _ops("ai.onnx.preview.training", "Adagrad Adam Gradient Momentum")
    | _ops("ai.onnx.preview", "FlexAttention")
)
