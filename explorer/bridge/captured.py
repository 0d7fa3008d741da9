"""What a framework computed, kept for comparison: the module tree (qualified names, classes, where each module
is called and assigned in the user's code), every call's inputs and outputs in execution order, each layer of
a recurrent module run alone, and the recurrent modules' parameters. Saved to and read from one .npz (the tree as
JSON bytes), so a comparison can run where the framework is not installed."""
from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CompareError
from ..files.atomic_write import write_bytes
from ..inputs.input_files import feeds_from_npz
from ..limits import Limits

# framework class name -> the ONNX operator that computes it
RECURRENT_CLASSES = {"GRU": "GRU", "LSTM": "LSTM", "RNN": "RNN"}
CELL_CLASSES = {"GRUCell": "GRU", "LSTMCell": "LSTM", "RNNCell": "RNN"}
# what a value key names: a call's input or output, or one layer's input or output of a recurrent module
KINDS = ("in", "out", "layer_in", "layer_out")
TREE_KEY = "__tree__"

ValueKey = tuple[str, str, int, int]  # (kind, module, call, index): index is the tensor, or the layer


@dataclass
class ModuleInfo:
    """One module of the tree: its qualified name ("" for the whole model), class, children's names, how many
    times it was called, where (file:line) it was first called and where it is assigned in its parent's
    __init__; `recurrent` describes an nn.GRU / nn.LSTM / nn.RNN (op, num_layers, bidirectional, batch_first,
    hidden_size)."""

    name: str
    cls: str
    children: list[str] = field(default_factory=list)
    calls: int = 0
    called_at: str = ""
    defined_at: str = ""
    recurrent: dict[str, Any] | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # plain attributes: eps, momentum, padding...

    @property
    def class_name(self) -> str:
        return self.cls.rsplit(".", 1)[-1]

    @property
    def leaf(self) -> bool:
        return not self.children

    @property
    def source(self) -> str:
        """Where the module is called in the user's code, else where it is assigned."""
        return self.called_at or self.defined_at

    @property
    def cell(self) -> str | None:
        """The ONNX operator of a cell module (nn.GRUCell...), None for others."""
        return CELL_CLASSES.get(self.class_name)


@dataclass
class Captured:
    """A framework run: `values[(kind, module, call, index)]`, `order` the (module, call) pairs as their calls
    ended, `inputs` the arrays forward() was called with, `params` the recurrent modules' parameters."""

    modules: dict[str, ModuleInfo] = field(default_factory=dict)
    values: dict[ValueKey, np.ndarray] = field(default_factory=dict)
    order: list[tuple[str, int]] = field(default_factory=list)
    inputs: list[np.ndarray] = field(default_factory=list)
    params: dict[str, np.ndarray] = field(default_factory=dict)
    framework: str = "PyTorch"

    def outputs(self, module: str, call: int = 0) -> list[np.ndarray]:
        found: list[np.ndarray] = []
        while ("out", module, call, len(found)) in self.values:
            found.append(self.values[("out", module, call, len(found))])
        return found

    def inputs_of(self, module: str, call: int = 0) -> list[np.ndarray]:
        """The tensors a module call was given, in order."""
        found: list[np.ndarray] = []
        while ("in", module, call, len(found)) in self.values:
            found.append(self.values[("in", module, call, len(found))])
        return found

    def layers(self, module: str, call: int = 0) -> list[np.ndarray]:
        found: list[np.ndarray] = []
        while ("layer_out", module, call, len(found)) in self.values:
            found.append(self.values[("layer_out", module, call, len(found))])
        return found

    def to_bytes(self) -> bytes:
        tree = {"framework": self.framework, "order": self.order,
                "modules": [vars(info) for info in self.modules.values()]}
        arrays: dict[str, Any] = {f"{kind}/{call}/{index}/{module}": value for (kind, module, call, index), value in
                  self.values.items()}
        arrays |= {f"input/{j}": value for j, value in enumerate(self.inputs)}
        arrays |= {f"param/{name}": value for name, value in self.params.items()}
        arrays[TREE_KEY] = np.frombuffer(json.dumps(tree).encode(), np.uint8)
        out = io.BytesIO()
        np.savez_compressed(out, **arrays)
        return out.getvalue()

    def save(self, path: str | Path) -> None:
        write_bytes(path, self.to_bytes())  # a temporary file moved into place once whole


def load_captured(source: str | Path | bytes, limits: Limits | None = None) -> Captured:
    """A capture saved by `Captured.save` (each array checked against `limits` before it is inflated)."""
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    arrays = feeds_from_npz(data, limits)
    if TREE_KEY not in arrays:
        raise CompareError("not a capture of a framework run: it has no module tree "
                           "(write one with explorer.bridge.capture)")
    tree = json.loads(arrays.pop(TREE_KEY).tobytes().decode())
    captured = Captured(framework=tree.get("framework", "PyTorch"))
    captured.order = [(name, int(call)) for name, call in tree["order"]]
    for entry in tree["modules"]:
        info = ModuleInfo(**entry)
        captured.modules[info.name] = info
    inputs: dict[int, np.ndarray] = {}
    for key, value in arrays.items():
        head, _, rest = key.partition("/")
        if head == "input":
            inputs[int(rest)] = value
        elif head == "param":
            captured.params[rest] = value
        elif head in KINDS:
            call, index, module = rest.split("/", 2)
            captured.values[(head, module, int(call), int(index))] = value
    captured.inputs = [inputs[j] for j in sorted(inputs)]
    return captured
