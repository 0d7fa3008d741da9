"""Running a Keras model once and keeping what each layer computed: every layer's input and output (a probe
model over the layers' symbolic outputs), a Bidirectional layer's forward and backward layers run alone (the
backward one's output in its own, reversed, processing order, as the exporter computes it), and the recurrent
layers' per-step outputs. keras is imported only here, and only when a capture runs."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .captured import Captured, ModuleInfo

KERAS_RECURRENT = {"GRU": "GRU", "LSTM": "LSTM", "SimpleRNN": "RNN"}


def _recurrent(layer: Any) -> dict[str, Any] | None:
    op = KERAS_RECURRENT.get(type(layer).__name__)
    if op is None or not getattr(layer, "return_sequences", False):
        return None
    return {"op": op, "num_layers": 1, "bidirectional": False, "batch_first": True, "hidden_size": layer.units,
            "go_backwards": bool(getattr(layer, "go_backwards", False)),
            "reset_after": bool(getattr(layer, "reset_after", True))}


def _info(name: str, layer: Any) -> ModuleInfo:
    info = ModuleInfo(name, f"{type(layer).__module__}.{type(layer).__qualname__}", calls=1)
    info.settings = {k: v for k, v in layer.get_config().items() if isinstance(v, (bool, int, float, str))}
    info.recurrent = _recurrent(layer)
    return info


def capture_keras(model: Any, inputs: Sequence[np.ndarray]) -> Captured:
    """Runs a functional (or Sequential) keras.Model once on `inputs` and returns each layer's input and output
    in the model's layer order, a Bidirectional layer's two directions, and the whole model's outputs."""
    import keras

    captured = Captured(framework="Keras")
    layers = [layer for layer in model.layers if type(layer).__name__ != "InputLayer"]
    root = ModuleInfo("", f"{type(model).__module__}.{type(model).__qualname__}", [layer.name for layer in layers],
                      calls=1)
    root.settings = {"name": model.name}
    captured.modules[""] = root
    probe = keras.Model(model.inputs, [out for layer in layers for out in (layer.input, layer.output)])
    arrays = [np.asarray(x) for x in inputs]
    values = [np.asarray(v) for v in probe(arrays if len(arrays) > 1 else arrays[0])]
    for k, layer in enumerate(layers):
        x, y = values[2 * k], values[2 * k + 1]
        info = captured.modules[layer.name] = _info(layer.name, layer)
        if type(layer).__name__ == "Bidirectional":
            for sub in (layer.forward_layer, layer.backward_layer):
                name = f"{layer.name}.{sub.name}"
                info.children.append(sub.name)
                captured.modules[name] = _info(name, sub)
                out = np.asarray(sub(x))
                captured.values[("in", name, 0, 0)] = x
                captured.values[("out", name, 0, 0)] = out
                if captured.modules[name].recurrent is not None:
                    captured.values[("layer_in", name, 0, 0)] = x
                    captured.values[("layer_out", name, 0, 0)] = out
                captured.order.append((name, 0))
        captured.values[("in", layer.name, 0, 0)] = x
        captured.values[("out", layer.name, 0, 0)] = y
        if info.recurrent is not None and not info.recurrent["go_backwards"]:
            captured.values[("layer_in", layer.name, 0, 0)] = x
            captured.values[("layer_out", layer.name, 0, 0)] = y
        captured.order.append((layer.name, 0))
    outputs = model(arrays if len(arrays) > 1 else arrays[0])
    for j, value in enumerate(outputs if isinstance(outputs, (list, tuple)) else [outputs]):
        captured.values[("out", "", 0, j)] = np.asarray(value)
    captured.order.append(("", 0))
    captured.inputs = arrays
    return captured
