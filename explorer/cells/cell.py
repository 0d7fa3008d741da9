"""A recurrent cell as explorer finds it, whatever form the exporter gave it: a GRU/LSTM/RNN operator, a Loop or
Scan whose body is the cell, or the same cell repeated once per time step (unrolled)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..trace.cell_layout import CellLayout, Source

KINDS = ("GRU", "LSTM", "RNN", "recurrence")
FORMS = ("op", "loop", "scan", "unrolled")


@dataclass(frozen=True)
class Weights:
    """The learned tensors of one direction as the graph applies them, each as the value a node reads (so a run
    gives its value even when the graph computes it): the kernel the step's input is multiplied by, the recurrent
    kernel the state is multiplied by, and the bias added to each product. `transposed`: a Gemm with transB
    applies the tensor as [gates * hidden, in] (PyTorch's weight_ih) rather than [in, gates * hidden] (Keras's
    kernel). `order`: the spec's gate letters in the order of their blocks in the fused product (empty when the
    gates are not cut from one product)."""

    graph: str
    kernel: Source | None = None
    recurrent: Source | None = None
    kernel_bias: Source | None = None
    recurrent_bias: Source | None = None
    transposed: bool = False
    recurrent_transposed: bool = False
    order: tuple[str, ...] = ()
    recurrent_order: tuple[str, ...] = ()
    candidate: Source | None = None  # GRU resetting before the product: the candidate's own recurrent kernel


@dataclass(frozen=True)
class RecurrentCell:
    """One recurrent cell. `path`: the operator's path; the Loop's or Scan's for a loop-form cell (its forward
    direction's, for a bidirectional pair); for an unrolled cell an id naming its first step's node.
    `gate_nodes`: per direction, gate letter -> the node writing it (its first step's, when unrolled)."""

    path: str
    kind: str  # GRU, LSTM, RNN or recurrence
    form: str  # op, loop, scan or unrolled
    hidden_size: int | None
    num_directions: int
    gate_nodes: tuple[dict[str, str], ...]
    framework: str = "unknown"  # whose equations the cell follows: "Keras", "PyTorch" or "unknown"
    reset_after: bool | None = None  # GRU: the reset gate applied after the recurrent product
    gate_activation: str = "Sigmoid"  # the activation of the gates (Keras's hard_sigmoid: HardSigmoid)
    activation: str = "Tanh"  # the candidate's (RNN: the state's) activation
    masked: bool = False  # a mask keeps the state at some steps
    conv: bool = False  # the products are convolutions (ConvLSTM): units are positions x channels
    normalized: bool = False  # its gates' pre-activations or its cell state are layer-normalized (RNN-T's LSTM)
    weights: tuple[Weights, ...] = ()  # per direction
    inputs: tuple[Source, ...] = ()  # per direction: the per-step input the cell reads (x_t)
    step_inputs: tuple[tuple[Source, ...], ...] = ()  # unrolled: per direction, each step's input (x_t, or its
    # projection x_t.W + b when the exporter projected the whole sequence at once: the direction's kernel is None)
    initial: tuple[dict[str, str], ...] = ()  # per direction: state letter (H, C) -> the outer value starting it
    loops: tuple[str, ...] = ()  # per direction: the Loop/Scan node running it (loop and scan forms)
    states: tuple[dict[str, str], ...] = ()  # per direction: state letter (H, C) -> the body input carrying it
    layout: CellLayout | None = field(default=None, repr=False)  # how its gates are gathered from a trace
    operator: str = ""  # a GRU/LSTM/RNN operator over one step inside the loop computes the update (its path)
    op_type: str = ""  # form op: the operator (GRU, LSTM, RNN, or onnxruntime's DynamicQuantizeLSTM)

    @property
    def directions(self) -> tuple[str, ...]:
        return ("forward", "reverse") if self.num_directions == 2 else (
            ("reverse",) if self.layout is not None and self.layout.directions[0].reverse else ("forward",))

    def details(self) -> list[str]:
        """What sets the cell apart: reset_after (or linear_before_reset), masking, hard gates, its size."""
        parts = []
        if self.kind == "GRU" and self.reset_after is not None:
            parts.append(f"reset_after={self.reset_after}" if self.framework == "Keras"
                         else f"linear_before_reset={int(self.reset_after)}")
        if self.masked:
            parts.append("masked")
        if self.gate_activation not in ("Sigmoid", ""):
            parts.append(f"gates {self.gate_activation}")
        if self.hidden_size is not None:
            parts.append(f"{'units' if self.conv else 'hidden'} {self.hidden_size}")
        return parts

    def describe(self) -> str:
        """One line: what the cell is, e.g. 'GRU · Keras loop, reset_after=True, hidden 3'."""
        framework = f"{self.framework} " if self.framework != "unknown" else ""
        bidirectional = ["bidirectional"] if self.num_directions == 2 else []
        return ", ".join([f"{self.kind} · {framework}{self.form}", *bidirectional, *self.details()])
