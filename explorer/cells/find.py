"""`recurrent_cells(model)`: every recurrent cell of a model, whatever form the exporter gave it, nested bodies
included, found once per model."""
from __future__ import annotations

import weakref

from ..errors import ExplorerError
from ..model.model import Model
from ..proto.graph import NodeRef
from ..spec.rnn import CELLS, cell_kind, rnn_config
from .cell import RecurrentCell
from .dataflow import Flows
from .loop_cells import loop_cells
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
        operators = [_operator_cell(model, n, framework) for n in nodes if cell_kind(n) is not None]
        loops = loop_cells(flows, nodes, model.opsets, framework)
        inside = {cell.operator for cell in loops}  # an operator over one step is its loop's cell
        found = [c for c in operators if c.path not in inside] + loops + unrolled_cells(flows, framework)
        order = {n.path: i for i, n in enumerate(nodes)}
        found.sort(key=lambda c: order.get(c.path.split("#")[0], order.get(c.gate_nodes[0].get("H", ""), 0)))
        _FOUND[model] = found
    return list(found)


def find_cell(model: Model, path: str) -> RecurrentCell:
    """The cell at `path`; KeyError naming it when the model has none there."""
    for cell in recurrent_cells(model):
        if cell.path == path:
            return cell
    if path not in model.index.nodes:
        raise KeyError(f"no node with path {path!r}")
    raise KeyError(f"no recurrent cell at {path!r} (a {model.index.nodes[path].op_type})")


def _operator_cell(model: Model, node: NodeRef, framework: str) -> RecurrentCell:
    """A GRU/LSTM/RNN operator (or onnxruntime's DynamicQuantizeLSTM) as a cell: its directions and hidden size
    from its attributes (else R's shape)."""
    kind = cell_kind(node) or node.op_type
    try:
        config = rnn_config(node, model.opsets.get("", 1))
        directions, hidden = config.num_directions, config.hidden_size
        reset_after = config.linear_before_reset if kind == "GRU" else None
    except ExplorerError:
        directions, hidden, reset_after = 1, None, None
    if hidden is None and len(node.proto.input) > 2:
        declared = model.index.value_type(node.proto.input[2], node.graph.path)
        dims = declared.tensor_type.shape.dim if declared is not None and declared.HasField("tensor_type") else []
        axis = 1 if kind != node.op_type else -1  # DynamicQuantizeLSTM's R is [directions, hidden, 4 hidden]
        hidden = dims[axis].dim_value if len(dims) == 3 and dims[axis].HasField("dim_value") else None
    return RecurrentCell(path=node.path, kind=kind, form="op", hidden_size=hidden,
                         num_directions=directions,
                         gate_nodes=tuple({letter: node.path for letter in CELLS[kind].computed}
                                          for _ in range(directions)),
                         framework=framework, reset_after=reset_after, op_type=node.op_type)
