"""Learning mode: questions asked before the trace reveals what happens next (which branch an If takes, the value
a loop carries into the next iteration), the checks of the answers, guided tours of the control-flow samples,
and the spec's C-style equivalent of the Loop mode a node uses."""
from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

import numpy as np
import onnx

from ..model.model import Model
from ..trace.trace import Iteration, Trace
from .cursor import ancestors, node_label
from .loops import BodyValues
from .tables import short_text

IF_BRANCHES = ("then_branch", "else_branch")
RTOL, ATOL = 1e-3, 1e-6  # a predicted number counts as right this close to the recorded one


@dataclass(frozen=True)
class BranchQuestion:
    """Before the trace enters a branch: which one will this If take? `key` names this If execution;
    `condition` the If's condition input and `condition_value` its value there (the reason for the answer)."""

    node: str
    label: str
    options: tuple[str, ...]
    answer: str
    key: str
    condition: str = ""
    condition_value: str = ""

    def feedback(self, picked: str) -> str:
        """What the learner is told: what they predicted, what ran, and why (the condition's value)."""
        because = f" The condition {self.condition} was {self.condition_value}." if self.condition else ""
        if picked == self.answer:
            return f"Right: you predicted {picked}, and {self.answer} ran.{because}"
        return f"Not quite: you predicted {picked}, but {self.answer} ran.{because}"


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
            condition = owner.proto.input[0] if owner.proto.input else ""
            return BranchQuestion(owner.path, node_label(owner), IF_BRANCHES, attribute,
                                  f"{owner.path}@{upcoming.iteration}@{upcoming.index}", condition,
                                  _condition_value(trace, owner.path, upcoming.iteration, condition))
    return None


def _condition_value(trace: Trace, node: str, iteration: tuple[int, ...], condition: str) -> str:
    """The value an If's condition had at the execution whose branch runs at `iteration` ("" when unrecorded)."""
    for event in trace.events_of(node):
        if event.iteration == iteration and condition in event.site.inputs:
            value = np.asarray(event.inputs[condition])
            return str(bool(value.reshape(-1)[0])) if value.size else "empty"
    return ""


@dataclass(frozen=True)
class CarriedQuestion:
    """Before iteration `iteration` is revealed: the numbers the loop will carry out of it, by what is asked
    (a scalar's body input name, or "‖name‖" for the norm of a carried vector or tensor); `before` is what came
    in, by body input name, and `asked` which body input each question is about."""

    iteration: int
    before: dict[str, str]
    answers: dict[str, float]
    asked: dict[str, str] = field(default_factory=dict)

    def feedback(self, question: str, guess: float | None) -> str:
        """What the learner is told about one answer: what they predicted, what the loop carried, and from what."""
        answer = self.answers[question]
        name = self.asked.get(question, question)
        came = f" (it came in as {self.before[name]})" if name in self.before else ""
        truth = f"{question} leaves iteration {self.iteration} as {answer:.6g}{came}"
        if guess is not None and check_number(float(guess), answer):
            return f"Right: you predicted {float(guess):.6g}; {truth}."
        shown = "nothing" if guess is None else f"{float(guess):.6g}"
        return f"Not quite: you predicted {shown}, but {truth}."


def norm_label(name: str) -> str:
    """How the norm of a carried tensor is asked for."""
    return f"‖{name}‖"


def carried_question(values: BodyValues, iterations: list[Iteration], position: int) -> CarriedQuestion | None:
    """What to predict about iteration `position` (0-based) of a loop: each scalar number it carries on, and the
    (Euclidean) norm of each numeric vector or tensor it carries."""
    if not 0 <= position < len(iterations):
        return None
    it = iterations[position]
    answers: dict[str, float] = {}
    before: dict[str, str] = {}
    asked: dict[str, str] = {}
    for inp, out in values.carried:
        value = it.outputs.get(out)
        if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf" or value.size == 0:
            continue
        question = inp if value.size == 1 else norm_label(inp)
        answers[question] = float(value.reshape(())) if value.size == 1 else \
            float(np.linalg.norm(value.astype(np.float64).reshape(-1)))
        before[inp] = short_text(it.inputs.get(inp))
        asked[question] = inp
    return CarriedQuestion(position, before, answers, asked) if answers else None


def check_number(guess: float, answer: float) -> bool:
    """Whether a predicted number is the recorded one (to RTOL, or ATOL near zero); NaN matches NaN."""
    if np.isnan(answer):
        return bool(np.isnan(guess))
    return bool(np.isclose(guess, answer, rtol=RTOL, atol=ATOL))


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
