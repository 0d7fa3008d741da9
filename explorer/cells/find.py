"""`recurrent_cells(model)`: every recurrent cell of a model, whatever form the exporter gave it, nested bodies
included, found once per model."""
from __future__ import annotations

import weakref

from ..model import Model
from ..spec.rnn import CELLS
from .cell import RecurrentCell
from .dataflow import Flows
from .loops import loop_cells
from .unrolled import unrolled_cells

_FOUND: weakref.WeakKeyDictionary[Model, list[RecurrentCell]] = weakref.WeakKeyDictionary()


def framework_of(model: Model) -> str:
    """Whose equations the model's cells follow, from the exporter that wrote it."""
    producer = model.proto.producer_name.lower()
    if "torch" in producer:
        return "PyTorch"
    if "tf2onnx" in producer or "keras" in producer or "tensorflow" in producer:
        return "Keras"
    return "unknown"


def recurrent_cells(model: Model) -> list[RecurrentCell]:
    """Every recurrent cell: GRU/LSTM/RNN operators, Loops and Scans whose body is a cell (bidirectional pairs
    joined), and cells unrolled into one group of nodes per time step; in the model's node order."""
    found = _FOUND.get(model)
    if found is None:
        nodes = list(model.nodes())
        framework = framework_of(model)
        flows = Flows(model.index)
        operators = [_operator_cell(n.path, n.op_type, framework) for n in nodes
                     if n.op_type in CELLS and n.domain in ("", "ai.onnx")]
        found = operators + loop_cells(flows, nodes, model.opsets, framework) + unrolled_cells(flows, framework)
        order = {n.path: i for i, n in enumerate(nodes)}
        found.sort(key=lambda c: order.get(c.path.split("#")[0], order.get(c.gate_nodes[0].get("H", ""), 0)))
        _FOUND[model] = found
    return list(found)


def find_cell(model: Model, path: str) -> RecurrentCell:
    """The cell at `path`; KeyError naming it when the model has none there."""
    for cell in recurrent_cells(model):
        if cell.path == path:
            return cell
    raise KeyError(f"no recurrent cell at {path!r}")


def _operator_cell(path: str, op_type: str, framework: str) -> RecurrentCell:
    return RecurrentCell(path=path, kind=op_type, form="op", hidden_size=None, num_directions=1,
                         gate_nodes=({letter: path for letter in CELLS[op_type].computed},), framework=framework)
