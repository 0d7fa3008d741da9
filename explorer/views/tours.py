"""Guided tours of the control-flow samples: what to look at, in order, the first time a sample is opened. Each
tip names the node it describes, where there is one: the tour moves the step cursor to its first execution (and
selects it in the inspector), so the diagram shows what the tip talks about."""
from __future__ import annotations

from dataclasses import dataclass

from ..trace.trace import Trace


@dataclass(frozen=True)
class Tip:
    """One step of a tour: its text, and the node it is about ("" when it is about no node in particular)."""

    text: str
    node: str = ""


TOURS: dict[str, tuple[Tip, ...]] = {
    "nested_loops": (
        Tip("Three levels nest here: a Scan over the rows of X, a Loop inside each Scan step, an If inside each Loop "
            "iteration. The breadcrumb above the diagram always says where the cursor stands in all three.", "enc"),
        Tip("The cursor is at the first **Mod 'parity'**: it computes j mod 2, and **Equal 'is_even'** turns it into "
            "the If's condition. Predict the branch before stepping into it (learning mode).",
            "enc/body/inner/body/parity"),
        Tip("Use the iteration arrows of each level: the inner Loop's arrows stay in one Scan step, the Scan's arrows "
            "keep the same inner iteration in the next row of X.", "enc/body/inner/body/branch"),
        Tip("On the Loops page pick the inner Loop: its carried value alternates between adding x_t and halving.",
            "enc/body/inner"),
    ),
    "if_sign": (
        Tip("One If: the condition is whether the sum of x is positive.", "is_positive"),
        Tip("The branches read x from the outer scope (dashed capture edges): they have no inputs of their own.",
            "branch"),
        Tip("The branch not taken is drawn greyed out and dashed: its nodes never ran.", "branch"),
    ),
    "loop_spec": (
        Tip("This is the Loop example from the ONNX specification: trip count M and a condition, both given.", "loop"),
        Tip("On the Loops page compare the spec's pseudo-code, filled with this run's values, to its C-style "
            "equivalent beside it.", "loop"),
        Tip("Watch b: each iteration computes a - b, so it flips sign; keepgoing stops the loop once it turns false.",
            "loop/body/b_out"),
        Tip("Predict b after the next iteration before revealing it (learning mode).", "loop/body/b_out"),
    ),
    "loop_sequence": (
        Tip("The Loop carries a sequence: each iteration appends a prefix sum with SequenceInsert.",
            "collect/body/append"),
        Tip("On the Loops page the carried sequence grows by one element per iteration.", "collect"),
    ),
    "while_loop": (
        Tip("No trip count, only a condition: a while loop. Its C-style equivalent is shown on the Loops page.",
            "while"),
        Tip("The carried value halves every iteration; the condition compares its norm to 1.", "while/body/halve"),
        Tip("The stop reason says which test ended the loop: here the condition turned false.",
            "while/body/still_big"),
        Tip("Predict the carried norm before each iteration (learning mode).", "while/body/norm"),
    ),
    "scan_rnn_encoding": (
        Tip("A Scan runs a tanh RNN cell over the time axis of X: one slice of X per iteration.", "rnn/body/x_proj"),
        Tip("The hidden state is carried: on the Loops page follow it across iterations.", "rnn/body/tanh"),
        Tip("The scan output stacks every hidden state: compare it with the carried value step by step.",
            "rnn/body/accumulate"),
    ),
    "scan_two_axes": (
        Tip("Two scan inputs on different axes (0 and -1), the second read backwards.", "zip/body/pair_sum"),
        Tip("On the Loops page the slice each iteration reads is shown per input: check the reversed one.", "zip"),
        Tip("The scan output is stacked along its own axis: see where each iteration's element lands.",
            "zip/body/running"),
    ),
}


def tour(sample: str | None) -> tuple[Tip, ...]:
    """The tips for a bundled sample, in order (empty for models without a tour)."""
    return TOURS.get(sample or "", ())


def tip_event(trace: Trace, tip: Tip) -> int | None:
    """The index of the first execution of the node a tip is about (None when it names none or never ran)."""
    if not tip.node:
        return None
    events = trace.events_of(tip.node)
    return events[0].index if events else None
