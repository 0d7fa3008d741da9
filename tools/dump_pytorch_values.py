"""Dump a PyTorch module's values as reference values for `explorer compare` (needs torch only when run).

    python tools/dump_pytorch_values.py mypackage.models:build --inputs feeds.npz \
        --value encoder.gru[1]=/encoder/gru/GRU_output_1 --value head=logits \
        --rnn encoder.gru=/encoder/gru/GRU -o values.npz
    python -m explorer compare model.onnx --reference values.npz --inputs feeds.npz

`mypackage.models:build` names a function returning the nn.Module (in eval mode is best). The module runs once
on the arrays of --inputs, passed as positional arguments in the .npz's order (the ONNX model's inputs). Forward
hooks record the output of every submodule named by --value (`NAME[k]` takes output k of a tuple) under the ONNX
value name it was exported as; --rnn stores an nn.GRU/nn.LSTM/nn.RNN's parameters under the ONNX node's path or
name (`<node>.weight_ih_l0`, ...), so explorer can recompute PyTorch's own gates and show which one an export got
wrong.
"""
from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from explorer.bridge.capture import run_hooked  # noqa: E402

_INDEXED = re.compile(r"^(?P<module>[^\[]*)(\[(?P<index>\d+)\])?$")


def _as_array(value: Any) -> np.ndarray:
    return value.detach().cpu().numpy()


def dump_values(module: Any, inputs: list[np.ndarray], values: dict[str, str],
                rnns: dict[str, str] | None = None) -> dict[str, np.ndarray]:
    """Runs `module` on `inputs` and returns ONNX value name -> array for every `values` entry (`submodule` or
    `submodule[k]` -> ONNX value name; "" names the whole module), plus the parameters of each `rnns` entry
    (submodule -> ONNX node path or name) as `<node>.weight_ih_l0`, `<node>.bias_hh_l0_reverse`, ..."""
    named = dict(module.named_modules())
    found: dict[str, np.ndarray] = {}
    hooks = []
    for spec, onnx_name in values.items():
        match = _INDEXED.match(spec)
        if match is None or match["module"] not in named:
            raise KeyError(f"no submodule {spec!r} (known: {', '.join(sorted(n for n in named if n))})")
        index = match["index"]

        def record(_module: Any, _args: Any, output: Any, name: str = onnx_name, k: str | None = index) -> None:
            chosen = output[int(k)] if k is not None else (output[0] if isinstance(output, tuple) else output)
            found[name] = _as_array(chosen)

        hooks.append(named[match["module"]].register_forward_hook(record))
    run_hooked(module, inputs, hooks)
    for submodule, node in (rnns or {}).items():
        for name, parameter in named[submodule].named_parameters():
            found[f"{node}.{name}"] = _as_array(parameter)
    return found


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        left, sep, right = item.partition("=")
        if not sep:
            raise SystemExit(f"{flag} wants MODULE=ONNX_NAME, got {item!r}")
        pairs[left] = right
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("factory", help="package.module:function returning the nn.Module")
    parser.add_argument("--inputs", required=True, help=".npz of the inputs, in the order forward() takes them")
    parser.add_argument("--value", action="append", default=[], metavar="MODULE[k]=ONNX_VALUE")
    parser.add_argument("--rnn", action="append", default=[], metavar="MODULE=ONNX_NODE")
    parser.add_argument("-o", "--output", required=True, help="the .npz to write")
    args = parser.parse_args()
    module_name, _, function = args.factory.partition(":")
    module = getattr(importlib.import_module(module_name), function)()
    module.eval()
    with np.load(args.inputs, allow_pickle=False) as feeds:
        inputs = [feeds[name] for name in feeds.files]
    values = dump_values(module, inputs, _pairs(args.value, "--value"), _pairs(args.rnn, "--rnn"))
    np.savez(args.output, **values)
    print(f"wrote {len(values)} arrays to {args.output}: {', '.join(sorted(values))}")


if __name__ == "__main__":
    main()
