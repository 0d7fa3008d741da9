"""The float16 conversion of keras_lstm.onnx by onnxconverter-common (float16.convert_float_to_float16 with
keep_io_types=True: float32 in and out, Casts at the edges, the LSTM and its weights in float16). Its reference
file is keras_lstm's (same inputs, Keras's float32 outputs and gates); onnxruntime's output on the inputs must be
within 5e-3 of Keras's. Run from this folder after export_models.py, with a Python that has onnxconverter-common
(the PyTorch venv): python fp16_models.py."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxconverter_common
import onnxruntime as ort
from onnxconverter_common import float16

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from recipe_files import check_close, update_feeds  # noqa: E402

SOURCE, TARGET = "keras_lstm", "keras_lstm_fp16"


def main() -> None:
    converted = float16.convert_float_to_float16(onnx.load(str(HERE / f"{SOURCE}.onnx")), keep_io_types=True)
    onnx.checker.check_model(converted)
    onnx.save(converted, str(HERE / f"{TARGET}.onnx"))
    reference = np.load(HERE / "reference" / f"{SOURCE}.npz")
    feeds = {k.split("/", 1)[1]: reference[k] for k in reference.files if k.startswith("inputs/")}
    session = ort.InferenceSession(converted.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = [reference[f"outputs/{o.name}"] for o in converted.graph.output]
    for got, want in zip(session.run(None, feeds), expected):
        check_close(f"{TARGET}: onnxruntime against Keras", got, want, atol=5e-3)
    shutil.copyfile(HERE / "reference" / f"{SOURCE}.npz", HERE / "reference" / f"{TARGET}.npz")
    update_feeds(HERE, {f"{TARGET}.onnx": feeds})
    kinds = [n.op_type for n in converted.graph.node]
    print(f"onnxconverter-common {onnxconverter_common.__version__}, onnx {onnx.__version__}: "
          f"{len(kinds)} nodes ({', '.join(kinds)})")


if __name__ == "__main__":
    main()
