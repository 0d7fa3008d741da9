"""The bundled patterns, in the order a round tries them at each priority level."""
from __future__ import annotations

from collections.abc import Iterable

from ..pattern import Pattern
from .axes import SliceSqueezePattern, SqueezeUnsqueezePattern, UnsqueezeUnsqueezePattern
from .batchnorm import BatchNormFoldPattern
from .cast import CastCastPattern, CastSameTypePattern
from .concat import ConcatConcatPattern, ConcatSinglePattern, SliceConcatPattern
from .control import IfConstantPattern, SingleTripLoopPattern
from .cse import CommonSubexpressionPattern
from .fold import ConstantFoldingPattern
from .fusion import MatMulAddPattern
from .gather import GatherConcatPattern, GatherGatherPattern
from .gemm import FlatMatMulPattern, GemmBiasPattern
from .hoist import LoopInvariantHoistingPattern
from .identity import DeadNodePattern, IdentityRemovalPattern
from .logic import NotNotPattern
from .neutral import NEUTRAL_PATTERNS
from .noop import NoOpExpandPattern, NoOpSlicePattern, ReduceOverOnesPattern
from .reshape import ComputedReshapePattern, NoOpReshapePattern, ReshapeReshapePattern
from .rnn import RnnZeroStatePattern
from .scatter import ScatterNDBoxPattern
from .shape import KnownValuePattern, ShapeGatherPattern, StaticShapePattern
from .slices import SliceSlicePattern
from .transpose import IdentityTransposePattern, TransposeTransposePattern

PATTERN_CLASSES: tuple[type[Pattern], ...] = (
    # cleanups
    DeadNodePattern, IdentityRemovalPattern, *NEUTRAL_PATTERNS,
    IdentityTransposePattern, NoOpReshapePattern, NoOpExpandPattern, NoOpSlicePattern, ReduceOverOnesPattern,
    CastSameTypePattern, NotNotPattern,
    ConcatSinglePattern, SqueezeUnsqueezePattern,
    # simplifications
    GatherConcatPattern, GatherGatherPattern, ShapeGatherPattern, StaticShapePattern, KnownValuePattern, RnnZeroStatePattern, TransposeTransposePattern,
    ReshapeReshapePattern, UnsqueezeUnsqueezePattern, SliceSqueezePattern, CastCastPattern, ConcatConcatPattern, SliceConcatPattern,
    SliceSlicePattern,
    IfConstantPattern,
    ScatterNDBoxPattern, ConstantFoldingPattern,
    # structure
    CommonSubexpressionPattern, LoopInvariantHoistingPattern, SingleTripLoopPattern,
    # fusions
    MatMulAddPattern, BatchNormFoldPattern, GemmBiasPattern, FlatMatMulPattern, ComputedReshapePattern,
)


def default_patterns() -> list[Pattern]:
    """A fresh instance of every bundled pattern."""
    return [cls() for cls in PATTERN_CLASSES]


def pattern_names() -> list[str]:
    return [p.name for p in default_patterns()]


def select_patterns(patterns: Iterable[str | Pattern] | None = None, exclude: Iterable[str] = ()) -> list[Pattern]:
    """The patterns to run: the named (or given) ones, default all, minus `exclude`, each name once. Unknown
    names raise ValueError listing the known ones."""
    known = {p.name: p for p in default_patterns()}
    exclude = list(exclude)
    unknown = [n for n in exclude if n not in known]
    chosen: list[Pattern] = []
    for item in (known.values() if patterns is None else patterns):
        if isinstance(item, Pattern):
            chosen.append(item)
        elif item in known:
            chosen.append(known[item])
        else:
            unknown.append(str(item))
    if unknown:
        raise ValueError(f"unknown pattern(s) {unknown}; known: {', '.join(known)}")
    seen = set(exclude)
    unique = []
    for pattern in chosen:
        if pattern.name not in seen:
            seen.add(pattern.name)
            unique.append(pattern)
    return unique
