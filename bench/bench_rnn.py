"""GRU and LSTM (T=200, B=8, I=64, H=128) through explorer.run with every gate recorded, against
ReferenceEvaluator and onnxruntime measured in the same run; prints the gate memory too."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).parent))
from timing import best_interleaved, onnxruntime_runner, reference_runner, report  # noqa: E402

import explorer  # noqa: E402

SEQ, BATCH, INPUT, HIDDEN = 200, 8, 64, 128


def recurrent_model(op: str, blocks: int, **attributes) -> tuple[onnx.ModelProto, dict]:
    """One `op` node with constant weights; X [SEQ, BATCH, INPUT] is the only input."""
    rng = np.random.default_rng(0)
    weights = {
        "W": rng.standard_normal((1, blocks * HIDDEN, INPUT)) * 0.1,
        "R": rng.standard_normal((1, blocks * HIDDEN, HIDDEN)) * 0.1,
        "B": rng.standard_normal((1, 2 * blocks * HIDDEN)) * 0.1,
    }
    node = helper.make_node(op, ["X", "W", "R", "B"], ["Y", "Y_h"], hidden_size=HIDDEN, **attributes)
    graph = helper.make_graph(
        [node], op.lower(), [helper.make_tensor_value_info("X", TensorProto.FLOAT, [SEQ, BATCH, INPUT])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(w.astype(np.float32), name) for name, w in weights.items()])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    feeds = {"X": rng.standard_normal((SEQ, BATCH, INPUT)).astype(np.float32)}
    return proto, feeds


def gate_bytes(trace: explorer.Trace) -> int:
    """Bytes of the recorded gate arrays (views of one buffer counted once)."""
    seen, total = set(), 0
    for array in trace.gates(trace.events[0].node).values():
        base = array if array.base is None else array.base
        if id(base) not in seen:
            seen.add(id(base))
            total += base.nbytes
    return total


def bench(title: str, proto: onnx.ModelProto, feeds: dict) -> None:
    model = explorer.load(proto)
    trace = explorer.run(model, feeds)
    ours, reference, runtime = best_interleaved([
        lambda: explorer.run(model, feeds), reference_runner(proto, feeds), onnxruntime_runner(proto, feeds)])
    report(title, ours, reference, runtime, "<= 0.6 x ReferenceEvaluator, <= 3 x onnxruntime")
    names = ", ".join(trace.gates(trace.events[0].node))
    print(f"  gates recorded: {names} — {gate_bytes(trace) / 2**20:.1f} MiB")


def main() -> None:
    shape = f"T={SEQ}, B={BATCH}, I={INPUT}, H={HIDDEN}"
    bench(f"GRU lbr=1 ({shape})", *recurrent_model("GRU", 3, linear_before_reset=1))
    bench(f"LSTM ({shape})", *recurrent_model("LSTM", 4))


if __name__ == "__main__":
    main()
