"""Running a PyTorch module once and keeping what each submodule computed: every call's inputs and outputs
(forward hooks), the call site in the user's own code, and, for nn.GRU / nn.LSTM / nn.RNN, each layer run alone
with that layer's own parameters (so an inner layer's per-step outputs can be compared too). torch is imported
only here, and only when a capture runs."""
from __future__ import annotations

import contextlib
import inspect
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .captured import RECURRENT_CLASSES, Captured, ModuleInfo

_TORCH_DIR = ""


def _outside_torch(filename: str) -> bool:
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.abspath(filename)
    return not (path.startswith(_TORCH_DIR) or path.startswith(here) or "/torch/" in path or
                filename.startswith("<"))


def _where(filename: str, line: int) -> str:
    path = Path(filename)
    try:
        shown = str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        shown = str(path)
    return f"{shown}:{line}"


def _call_site() -> str:
    """The first frame outside torch and explorer: where the module was called."""
    frame = sys._getframe(2)
    while frame is not None:
        if _outside_torch(frame.f_code.co_filename):
            return _where(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back  # type: ignore[assignment]
    return ""


def _assigned_at(parent: Any, attribute: str) -> str:
    """The line of `self.<attribute> =` in the parent's __init__ (or the first class that has it)."""
    for cls in type(parent).__mro__:
        init = cls.__dict__.get("__init__")
        if init is None:
            continue
        try:
            lines, start = inspect.getsourcelines(init)
            filename = inspect.getsourcefile(init) or ""
        except (OSError, TypeError):
            continue
        if not _outside_torch(filename):
            return ""
        for offset, text in enumerate(lines):
            if re.match(rf"\s*self\.{re.escape(attribute)}\s*(:[^=]*)?=[^=]", text):
                return _where(filename, start + offset)
    return ""


def _settings(module: Any) -> dict[str, Any]:
    """A module's plain settings (eps, momentum, padding...): its public attributes that are numbers, strings or
    tuples of them."""
    found: dict[str, Any] = {}
    for key, value in vars(module).items():
        if key.startswith("_") or key == "training":
            continue
        if isinstance(value, (bool, int, float, str)) or (
                isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str)) for v in value)):
            found[key] = list(value) if isinstance(value, tuple) else value
    return found


def _tensors(value: Any) -> list[Any]:
    """The tensors of a module's inputs or outputs, depth first (tuples, lists, dicts of tensors)."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    return []


def _array(tensor: Any) -> np.ndarray:
    return tensor.detach().cpu().numpy().copy()


def capture(module: Any, inputs: list[np.ndarray] | tuple[np.ndarray, ...]) -> Captured:
    """Runs `module` (put in eval mode) once on `inputs` (positional arguments of forward) and returns every
    submodule's calls with their inputs, outputs and call sites, the module tree and the layer-by-layer values of
    its recurrent modules."""
    import torch

    global _TORCH_DIR
    _TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
    module.eval()
    named = dict(module.named_modules())
    names = {id(m): n for n, m in named.items()}
    captured = Captured()
    for name, sub in named.items():
        parent_name, _, attribute = name.rpartition(".")
        info = ModuleInfo(name, f"{type(sub).__module__}.{type(sub).__qualname__}",
                          [child for child, _ in sub.named_children()])
        if name:
            info.defined_at = _assigned_at(named[parent_name], attribute)
        else:
            with contextlib.suppress(OSError, TypeError):
                info.defined_at = _where(inspect.getsourcefile(type(sub)) or "",
                                         inspect.getsourcelines(type(sub).forward)[1])
        info.settings = _settings(sub)
        if type(sub).__name__ in RECURRENT_CLASSES and isinstance(sub, torch.nn.RNNBase):
            info.recurrent = {"op": RECURRENT_CLASSES[type(sub).__name__], "num_layers": sub.num_layers,
                              "bidirectional": sub.bidirectional, "batch_first": sub.batch_first,
                              "hidden_size": sub.hidden_size, "proj_size": getattr(sub, "proj_size", 0),
                              "bias": sub.bias, "nonlinearity": getattr(sub, "nonlinearity", "tanh")}
        captured.modules[name] = info
    stack: list[tuple[str, int]] = []

    def before(sub: Any, args: tuple) -> None:
        name = names[id(sub)]
        info = captured.modules[name]
        call = info.calls
        info.calls += 1
        if call == 0 and name:  # the whole model is called by whoever captures it: its line is its forward's
            info.called_at = _call_site()
        for j, tensor in enumerate(_tensors(args)):
            captured.values[("in", name, call, j)] = _array(tensor)
        stack.append((name, call))

    def after(sub: Any, args: tuple, output: Any) -> None:
        name, call = stack.pop()
        for j, tensor in enumerate(_tensors(output)):
            captured.values[("out", name, call, j)] = _array(tensor)
        captured.order.append((name, call))

    hooks = []
    for sub in named.values():
        hooks.append(sub.register_forward_pre_hook(before))
        hooks.append(sub.register_forward_hook(after))
    with _plain_control_flow():
        run_hooked(module, inputs, hooks)
    captured.inputs = [np.asarray(x) for x in inputs]
    for name, info in captured.modules.items():
        if info.recurrent is not None and not info.recurrent["proj_size"]:  # projected LSTMs: see the report
            for call in range(info.calls):
                _layers(named[name], name, call, captured)
            for pname, parameter in named[name].named_parameters():
                captured.params[f"{name}.{pname}"] = _array(parameter)
    return captured


@contextlib.contextmanager
def _plain_control_flow() -> Iterator[None]:
    """torch.cond and torch.scan run as plain Python: forward hooks cannot run inside them (they compile their
    bodies). A scan's combine function is called once per step, so a cell it calls is captured per step."""
    import importlib

    import torch

    scan_module: Any = importlib.import_module("torch._higher_order_ops.scan")  # the package's `scan` is the function
    original_cond, original_run = torch.cond, scan_module._maybe_compile_and_run_fn

    def cond(pred: Any, true_fn: Any, false_fn: Any, operands: Any = (), **_: Any) -> Any:
        return true_fn(*operands) if bool(pred) else false_fn(*operands)

    def run(fn: Any, combine_fn: Any, leaves_init: list[Any], leaves_xs: list[Any]) -> Any:
        if getattr(fn, "__name__", "") != "run_flattened_scan":
            return original_run(fn, combine_fn, leaves_init, leaves_xs)
        carry_leaves, outs, carry = list(leaves_init), [], None
        for t in range(leaves_xs[0].shape[0]):
            carry, out = combine_fn(*carry_leaves, *[x[t] for x in leaves_xs])
            carry_leaves = torch.utils._pytree.tree_leaves(carry)
            outs.append(out)
        return carry, torch.utils._pytree.tree_map(lambda *ys: torch.stack(ys), *outs)

    torch.cond, scan_module._maybe_compile_and_run_fn = cond, run
    try:
        yield
    finally:
        torch.cond, scan_module._maybe_compile_and_run_fn = original_cond, original_run


def run_hooked(module: Any, inputs: Sequence[np.ndarray], hooks: list[Any]) -> Any:
    """`module(*inputs)` without gradients (NumPy arrays in), its hooks removed afterwards whatever happens."""
    import torch

    try:
        with torch.no_grad():
            return module(*[torch.from_numpy(np.asarray(x)) for x in inputs])
    finally:
        for hook in hooks:
            hook.remove()


def _layers(rnn: Any, name: str, call: int, captured: Captured) -> None:
    """Each layer of a recurrent module run alone (a one-layer module holding that layer's parameters), on the
    previous layer's output, from the call's own initial state (zeros when none was given)."""
    import torch

    kind = type(rnn)
    x = captured.values.get(("in", name, call, 0))
    if x is None:
        return
    h0 = captured.values.get(("in", name, call, 1))
    c0 = captured.values.get(("in", name, call, 2))
    directions = 2 if rnn.bidirectional else 1
    extra = {"nonlinearity": rnn.nonlinearity} if kind is torch.nn.RNN else {}
    for layer in range(rnn.num_layers):
        alone = kind(x.shape[-1], rnn.hidden_size, num_layers=1, bias=rnn.bias, batch_first=rnn.batch_first,
                     bidirectional=rnn.bidirectional, **extra).eval()
        with torch.no_grad():
            for pname, _ in alone.named_parameters():
                getattr(alone, pname).copy_(getattr(rnn, pname.replace("_l0", f"_l{layer}")))
            state = None
            if h0 is not None:
                h = torch.from_numpy(h0[layer * directions:(layer + 1) * directions])
                state = (h, torch.from_numpy(c0[layer * directions:(layer + 1) * directions])) \
                    if c0 is not None else h
            out = alone(torch.from_numpy(x), state) if state is not None else alone(torch.from_numpy(x))
        y = _array(out[0])
        captured.values[("layer_in", name, call, layer)] = x
        captured.values[("layer_out", name, call, layer)] = y
        x = y
