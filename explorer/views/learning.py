"""Learning mode: questions asked before the trace reveals what happens next (which branch an If takes, the value
a loop carries into the next iteration), the checks of the answers, guided tours of the control-flow samples,
and the spec's C-style equivalent of the Loop mode a node uses."""
from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from ..model import Model
from ..trace import Iteration, Trace
from .cursor import ancestors, node_label
from .loops import BodyValues
from .tables import short_text

IF_BRANCHES = ("then_branch", "else_branch")
RTOL, ATOL = 1e-3, 1e-6  # a predicted number counts as right this close to the recorded one


@dataclass(frozen=True)
class BranchQuestion:
    """Before the trace enters a branch: which one will this If take? `key` names this If execution."""

    node: str
    label: str
    options: tuple[str, ...]
    answer: str
    key: str


def branch_question(model: Model, trace: Trace, index: int) -> BranchQuestion | None:
    """The question to ask at event `index` when the next event is the first one inside a branch of an If."""
    if index + 1 >= len(trace.events):
        return None
    here, upcoming = trace.events[index], trace.events[index + 1]
    for owner, attribute in ancestors(model, upcoming.node):
        if owner.op_type != "If":
            continue
        inside = f"{owner.path}/{attribute}/"
        depth = len(here.iteration)
        same_run = here.node.startswith(inside) and here.iteration[:depth] == upcoming.iteration[:depth]
        if not same_run:
            return BranchQuestion(owner.path, node_label(owner), IF_BRANCHES, attribute,
                                  f"{owner.path}@{upcoming.iteration}@{upcoming.index}")
    return None


@dataclass(frozen=True)
class CarriedQuestion:
    """Before iteration `iteration` is revealed: the numbers the loop will carry out of it, by body input name
    (`before` is what came in)."""

    iteration: int
    before: dict[str, str]
    answers: dict[str, float]


def carried_question(values: BodyValues, iterations: list[Iteration], position: int) -> CarriedQuestion | None:
    """What to predict about iteration `position` (0-based) of a loop: each scalar number it carries on."""
    if not 0 <= position < len(iterations):
        return None
    it = iterations[position]
    answers: dict[str, float] = {}
    before: dict[str, str] = {}
    for inp, out in values.carried:
        value = it.outputs.get(out)
        if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "biuf":
            answers[inp] = float(value.reshape(()))
            before[inp] = short_text(it.inputs.get(inp))
    return CarriedQuestion(position, before, answers) if answers else None


def check_number(guess: float, answer: float) -> bool:
    """Whether a predicted number is the recorded one (to RTOL, or ATOL near zero); NaN matches NaN."""
    if np.isnan(answer):
        return bool(np.isnan(guess))
    return bool(np.isclose(guess, answer, rtol=RTOL, atol=ATOL))


def feedback(right: bool, answer: Any) -> str:
    """What the learner is told after answering."""
    shown = answer if isinstance(answer, str) else f"{answer:.6g}"
    return f"Right: {shown}." if right else f"Not quite: it was {shown}."


LOOP_MODES = {(False, False): 'input ("", "")', (False, True): 'input ("", cond)',
              (True, False): "input (trip_count, \"\")", (True, True): "input (trip_count, cond)"}


def loop_mode_code(node: onnx.NodeProto, opset: int) -> tuple[str, str] | None:
    """(mode, C-style code) for the way a Loop node is used, quoted from the Loop spec of the model's opset:
    whether it has a trip count M and an initial condition."""
    if node.op_type != "Loop":
        return None
    inputs = list(node.input) + ["", ""]
    mode = LOOP_MODES[(bool(inputs[0]), bool(inputs[1]))]
    lines = (onnx.defs.get_schema("Loop", opset).doc or "").splitlines()
    heads = [i for i, line in enumerate(lines) if re.match(r"\s*(\*\s*)?input \(", line)]
    start = next((i for i in heads if re.sub(r"^\s*(\*\s*)?", "", lines[i]).startswith(mode)), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if i in heads or lines[i].startswith("*")), len(lines))
    title = re.sub(r"^\s*(\*\s*)?", "", lines[start]).strip()
    return title, textwrap.dedent("\n".join(lines[start + 1:end])).strip()
