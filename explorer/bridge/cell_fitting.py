"""A cell module (nn.GRUCell, nn.LSTMCell, nn.RNNCell) written by the exporter as plain nodes, one call per step,
that departs on its own: the exporter variants are fitted on the weights its nodes read under the module's own
parameter names (`gcell.weight_ih`...): the gate blocks of weight_ih, weight_hh, bias_ih and bias_hh in another
order (together or one alone), the two biases swapped. The call's nodes are rerun from exact inputs with each
variant (forcing.py); the one that gives the framework's value is the fix, written into those weights."""
from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
from onnx import numpy_helper

from ..compare.stats import compare_values
from ..model.model import Model
from ..spec.rnn import CELLS
from .align import Point, Recorded
from .captured import ModuleInfo
from .forcing import force
from .report import Finding

PARAMETERS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
TORCH_LETTERS = {"GRU": "rzn", "LSTM": "ifgo", "RNN": "a"}  # PyTorch's gate order in a cell's parameters


def _variants(params: dict[str, np.ndarray], letters: str) -> Iterator[tuple[str, str, dict[str, np.ndarray]]]:
    """(what is wrong, the fix, the parameters fixed)."""
    gates = len(letters)

    def reorder(value: np.ndarray, order: tuple[int, ...]) -> np.ndarray:
        return np.concatenate([np.split(value, gates, axis=0)[k] for k in order], axis=0)

    if "bias_ih" in params and "bias_hh" in params:
        yield ("its input and recurrent biases are swapped", "swap bias_ih and bias_hh",
               {"bias_ih": params["bias_hh"], "bias_hh": params["bias_ih"]})
    for order in itertools.permutations(range(gates)):
        if order == tuple(range(gates)):
            continue
        shown = "".join(letters[k] for k in order)
        yield (f"the gate blocks of its weights are in the wrong order (PyTorch's {letters} holds {shown})",
               f"reorder the gate blocks of {', '.join(params)} as {shown}",
               {name: reorder(value, order) for name, value in params.items()})
        for name in params:
            yield (f"the gate blocks of its {name} are in the wrong order",
                   f"reorder the gate blocks of {name} as {shown}", {name: reorder(params[name], order)})


def fit_cell(model: Model, info: ModuleInfo, point: Point, before: list[Point], recorded: Recorded,
             errors: dict[int, float], rtol: float, atol: float) -> Finding | None:
    """The variant of the cell's weights that gives the framework's value at this call, as a finding with its
    fix; None when the module is no cell, its weights are not stored under its parameter names, or none fits."""
    op = info.cell
    if op is None or op not in CELLS:
        return None
    stored = {t.name: t for t in model.graph.initializer}
    params = {p: numpy_helper.to_array(stored[f"{info.name}.{p}"]) for p in PARAMETERS if f"{info.name}.{p}" in stored}
    if not params:
        return None
    for wrong, fix, changed in _variants(params, TORCH_LETTERS[op]):
        replace = {f"{info.name}.{k}": v for k, v in changed.items()}
        forced = force(model, point, before, recorded, errors, replace)
        if forced.value is None:
            continue
        diff = compare_values(point.label, forced.value, point.framework, rtol, atol)
        if diff.ok:
            return Finding(point.module, point.onnx_node,
                           f"{info.class_name} {point.module!r} (call {point.call}): {wrong}. Fixed ({fix}), the call "
                           f"matches the framework to {diff.max_abs:.1g}", fix, point=point.label, replace=replace)
    return None
