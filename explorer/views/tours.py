"""Guided tours of the control-flow samples: what to look at, in order, the first time a sample is opened."""
from __future__ import annotations

TOURS: dict[str, tuple[str, ...]] = {
    "nested_loops": (
        ("Three levels nest here: a Scan over the rows of X, a Loop inside each Scan step, an If inside each Loop "
        "iteration. The breadcrumb above the diagram always says where the cursor stands in all three."),
        ("Step to the first **Mod 'parity'**: it computes j mod 2, and **Equal 'is_even'** turns it into the If's "
        "condition. Predict the branch before stepping into it (learning mode)."),
        ("Use the iteration arrows of each level: the inner Loop's arrows stay in one Scan step, the Scan's arrows "
        "keep the same inner iteration in the next row of X."),
        "On the Loops page pick the inner Loop: its carried value alternates between adding x_t and halving.",
    ),
    "if_sign": (
        "One If: the condition is whether the sum of x is positive.",
        "The branches read x from the outer scope (dashed capture edges): they have no inputs of their own.",
        "The branch not taken is drawn greyed out and dashed: its nodes never ran.",
    ),
    "loop_spec": (
        "This is the Loop example from the ONNX specification: trip count M and a condition, both given.",
        ("On the Loops page compare the spec's pseudo-code, filled with this run's values, to its C-style "
        "equivalent beside it."),
        "Watch b: each iteration computes a - b, so it flips sign; keepgoing stops the loop once it turns false.",
        "Predict b after the next iteration before revealing it (learning mode).",
    ),
    "loop_sequence": (
        "The Loop carries a sequence: each iteration appends a prefix sum with SequenceInsert.",
        "On the Loops page the carried sequence grows by one element per iteration.",
    ),
    "while_loop": (
        "No trip count, only a condition: a while loop. Its C-style equivalent is shown on the Loops page.",
        "The carried value halves every iteration; the condition compares its norm to 1.",
        "The stop reason says which test ended the loop: here the condition turned false.",
        "Predict the carried norm before each iteration (learning mode).",
    ),
    "scan_rnn_encoding": (
        "A Scan runs a tanh RNN cell over the time axis of X: one slice of X per iteration.",
        "The hidden state is carried: on the Loops page follow it across iterations.",
        "The scan output stacks every hidden state: compare it with the carried value step by step.",
    ),
    "scan_two_axes": (
        "Two scan inputs on different axes (0 and -1), the second read backwards.",
        "On the Loops page the slice each iteration reads is shown per input: check the reversed one.",
        "The scan output is stacked along its own axis: see where each iteration's element lands.",
    ),
}


def tour(sample: str | None) -> tuple[str, ...]:
    """The tips for a bundled sample, in order (empty for models without a tour)."""
    return TOURS.get(sample or "", ())
