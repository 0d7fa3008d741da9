"""Builds every sample model deterministically: `python sample_models/build.py [OUT_DIR]` writes <name>.onnx
files, samples.json (name -> description) and sample_inputs.json (name -> the inputs a sample is first run on)
next to this script, or into OUT_DIR."""
from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from pathlib import Path

import onnx

HERE = Path(__file__).resolve().parent


def all_samples():
    sys.path.insert(0, str(HERE))
    import builders

    samples = []
    for info in sorted(pkgutil.iter_modules(builders.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"builders.{info.name}")
        samples.extend(getattr(module, "SAMPLES", []))
    return samples


def main(out_dir: Path = HERE) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    index, inputs = {}, {}
    for sample in all_samples():
        model = sample.build()
        onnx.checker.check_model(model, full_check=True)
        (out_dir / f"{sample.name}.onnx").write_bytes(model.SerializeToString(deterministic=True))
        index[sample.name] = sample.description
        if sample.inputs is not None:
            inputs[sample.name] = {name: {"dtype": str(value.dtype), "shape": list(value.shape),
                                          "values": value.tolist()} for name, value in sample.inputs().items()}
        print(f"wrote {sample.name}.onnx")
    (out_dir / "samples.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    (out_dir / "sample_inputs.json").write_text(json.dumps(inputs, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
