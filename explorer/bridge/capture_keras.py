"""Running a Keras model once and keeping what each layer computed: every layer's inputs (a mask among them, for
a layer behind a Masking layer or an Embedding with mask_zero) and outputs (a probe model over the layers'
symbolic tensors), a Bidirectional layer's forward and backward layers run alone (the backward one's output in
its own, reversed, processing order, as the exporter computes it), and the recurrent layers' per-step outputs.
Keras keeps no record of where a layer was made: a model built inside `keras_sources()` (as `--keras
FILE.py:FACTORY` and `explorer.keras(factory)` build it) remembers, for each layer, the line of the user's code
that created it and the line that first called it. keras is imported only here, and only when a capture or a
build runs."""
from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .captured import Captured, ModuleInfo

_FRAMEWORK_PARTS = ("/keras/", "/tensorflow/", "/tf_keras/", "/site-packages/", "/dist-packages/")
_HERE = os.path.dirname(os.path.abspath(__file__))


def _site() -> str:
    """`file:line` of the first frame in the user's code (outside keras, TensorFlow and explorer)."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        path = os.path.abspath(filename)
        if not filename.startswith("<") and not path.startswith(_HERE) and \
                not any(part in path for part in _FRAMEWORK_PARTS):
            try:
                shown = str(Path(path).resolve().relative_to(Path.cwd().resolve()))
            except ValueError:
                shown = path
            return f"{shown}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return ""


@contextlib.contextmanager
def keras_sources() -> Iterator[None]:
    """Layers created and called inside it remember where (`_explorer_defined_at`, `_explorer_called_at`)."""
    import keras

    layer_class = keras.layers.Layer
    init, call = layer_class.__init__, layer_class.__call__

    def remembering_init(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if not vars(self).get("_explorer_defined_at"):
            object.__setattr__(self, "_explorer_defined_at", _site())

    def remembering_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not vars(self).get("_explorer_called_at"):
            object.__setattr__(self, "_explorer_called_at", _site())
        return call(self, *args, **kwargs)

    layer_class.__init__, layer_class.__call__ = remembering_init, remembering_call
    try:
        yield
    finally:
        layer_class.__init__, layer_class.__call__ = init, call


def build_with_sources(factory: Callable[[], Any]) -> Any:
    """`factory()` run inside `keras_sources()`."""
    with keras_sources():
        return factory()


def _flat(value: Any) -> list[Any]:
    """The tensors of a layer's symbolic input or output (a list of the data and its mask, a nested structure)."""
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _flat(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _flat(item)]
    return [] if value is None else [value]

KERAS_RECURRENT = {"GRU": "GRU", "LSTM": "LSTM", "SimpleRNN": "RNN"}


def _recurrent(layer: Any) -> dict[str, Any] | None:
    op = KERAS_RECURRENT.get(type(layer).__name__)
    if op is None or not getattr(layer, "return_sequences", False):
        return None
    return {"op": op, "num_layers": 1, "bidirectional": False, "batch_first": True, "hidden_size": layer.units,
            "go_backwards": bool(getattr(layer, "go_backwards", False)),
            "reset_after": bool(getattr(layer, "reset_after", True))}


def _info(name: str, layer: Any) -> ModuleInfo:
    info = ModuleInfo(name, f"{type(layer).__module__}.{type(layer).__qualname__}", calls=1,
                      called_at=vars(layer).get("_explorer_called_at", ""),
                      defined_at=vars(layer).get("_explorer_defined_at", ""))
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
                      calls=1, defined_at=vars(model).get("_explorer_defined_at", ""))
    root.settings = {"name": model.name}
    captured.modules[""] = root
    symbolic = [(_flat(layer.input), _flat(layer.output)) for layer in layers]
    probe = keras.Model(model.inputs, [t for ins, outs in symbolic for t in (*ins, *outs)])
    arrays = [np.asarray(x) for x in inputs]
    flat = iter([np.asarray(v) for v in _flat(probe(arrays if len(arrays) > 1 else arrays[0]))])
    for layer, (ins, outs) in zip(layers, symbolic):
        xs, ys = [next(flat) for _ in ins], [next(flat) for _ in outs]
        x, y = xs[0], ys[0]
        info = captured.modules[layer.name] = _info(layer.name, layer)
        if type(layer).__name__ == "Bidirectional":
            for sub in (layer.forward_layer, layer.backward_layer):
                name = f"{layer.name}.{sub.name}"
                info.children.append(sub.name)
                captured.modules[name] = _info(name, sub)
                masked = len(xs) > 1 and xs[1].dtype == np.bool_
                out = np.asarray(sub(x, mask=xs[1]) if masked else sub(x))
                captured.values[("in", name, 0, 0)] = x
                captured.values[("out", name, 0, 0)] = out
                if captured.modules[name].recurrent is not None:
                    captured.values[("layer_in", name, 0, 0)] = x
                    captured.values[("layer_out", name, 0, 0)] = out
                captured.order.append((name, 0))
        for j, value in enumerate(xs):
            captured.values[("in", layer.name, 0, j)] = value
        for j, value in enumerate(ys):
            captured.values[("out", layer.name, 0, j)] = value
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
