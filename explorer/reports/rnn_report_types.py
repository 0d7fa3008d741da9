"""What the exported-RNN report holds (rnn_report.py for the operators, cell_report.py for cells written as
loops, scans or unrolled graphs): each gate's block of the weights with its ONNX, PyTorch and Keras names, the
findings, and which framework exported the model."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..spec.rnn import RnnConfig


@dataclass(frozen=True)
class WeightBlock:
    """One gate's slice of W, R, B (its Wb or Rb half) or P for one direction."""

    direction: int  # 0, or 1 for the reverse half of a bidirectional node
    tensor: str  # "W", "R", "B" or "P"
    gate: str  # the spec's letter: z r h (GRU), i o f c (LSTM), i (RNN)
    onnx: str  # the spec's name, e.g. "Wz", "RBh", "WBbi", "Pf"
    index: tuple[int, int]  # [start, stop) along axis 1 of the tensor (rows of W/R, entries of B/P)
    pytorch: str  # e.g. "weight_ih_l0[128:256] (W_iz)"; "" where PyTorch has no such parameter
    keras: str  # e.g. "kernel[:, 0:128]"; "" where Keras has no such weight
    values: np.ndarray | None  # the block itself, when known (a constant of the model, or from a trace)
    position: str = ""  # where the block sits when not in an ONNX W/R/B/P input, e.g. "kernel_1[:, 4:8]"

    @property
    def where(self) -> str:
        return self.position or f"{self.tensor}[{self.direction}, {self.index[0]}:{self.index[1]}]"


@dataclass(frozen=True)
class Finding:
    level: str  # "error", "warning" or "note"
    message: str


@dataclass
class RnnReport:
    """What `rnn_report` found out about one GRU/LSTM/RNN node."""

    node: str
    op_type: str
    origin: str  # "PyTorch", "TensorFlow/Keras" or "unknown", from the model's producer
    config: RnnConfig | None  # None when the node's attributes are invalid (see findings)
    hidden_size: int | None
    input_size: int | None
    blocks: list[WeightBlock] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return [f.message for f in self.findings if f.level in ("error", "warning")]

    def lines(self) -> list[str]:
        """The report as text, one line per fact."""
        source = "exporter not recorded in the model" if self.origin == "unknown" else f"exported by {self.origin}"
        out = [f"{self.op_type} {self.node!r} ({source})"]
        if self.config is not None:
            c = self.config
            acts = " | ".join(", ".join(str(a) for a in d) for d in c.activations)
            out.append(f"  {c.cell.op_type}-{c.version}, direction {c.direction}, hidden_size "
                       f"{self.hidden_size}, input_size {self.input_size}, layout {c.layout}, "
                       f"activations {acts}")
        for f in self.findings:
            out.append(f"  {f.level}: {f.message}")
        for b in self.blocks:
            names = [n for n in (b.pytorch and f"PyTorch {b.pytorch}", b.keras and f"Keras {b.keras}") if n]
            stats = "" if b.values is None else f"  mean |x| {np.abs(b.values).mean():.4g}"
            out.append(f"  {b.onnx:5} {b.where}  "
                       f"{' · '.join(names)}{stats}")
        return out


def origin_of(producer: str) -> str:
    """The framework a model's producer name says exported it: "PyTorch", "TensorFlow/Keras" or "unknown"."""
    name = producer.lower()
    if "pytorch" in name or "torch" in name:
        return "PyTorch"
    if "tf2onnx" in name or "keras" in name or "tensorflow" in name:
        return "TensorFlow/Keras"
    return "unknown"
