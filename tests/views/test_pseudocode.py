"""The spec's Scan/Loop pseudo-code of the sample models: it names the node's real values and fills in the
chosen iteration's values, which must be the values the trace recorded for the body's nodes at that iteration
(taken from events, not from the iteration records the pseudo-code reads) or hand-computed ones."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import explorer
from explorer.views.pseudocode import format_value, pseudocode
from tests.support import control_flow_models as cf

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def _feeds(name: str, model: explorer.Model) -> dict:
    """Feeds that make every sample loop run several iterations."""
    if name == "loop_spec":  # the spec's example: a=3, b=6
        return {"a": np.array(3, np.int32), "b": np.array(6, np.int32), "keepgoing": np.array(True),
                "max_trip_count": np.array(10, np.int64)}
    if name == "while_loop":  # norm 8 * 5 = 40 is halved 6 times to 0.625
        return {"x": np.array([3.0, 4.0], np.float32)}
    if name == "loop_sequence":
        return {"x": np.array([1.0, -2.0], np.float32), "n": np.array(3, np.int64)}
    return model.example_inputs(seed=3, dims={"T": 3})


CASES = [("scan_rnn_encoding", "rnn"), ("scan_two_axes", "zip"), ("loop_spec", "loop"), ("while_loop", "while"),
         ("loop_sequence", "collect"), ("nested_loops", "enc"), ("nested_loops", "enc/body/inner")]


def _run(name: str):
    model = explorer.load(SAMPLES / f"{name}.onnx")
    feeds = _feeds(name, model)
    return model, feeds, explorer.run(model, feeds)


def _body_value(model: explorer.Model, trace: explorer.Trace, graph_path: str, name: str, index: tuple):
    """A body value at one iteration, read from the event of the body node that produced it (None: no node did)."""
    producer = model.index.producers(graph_path).get(name)
    return None if producer is None else trace.event(producer, index).outputs[name]


def _expected_inputs(model, trace, path: str, index: tuple) -> dict:
    """What each body input held at iteration `index`: from the loop's own event at the first iteration, else
    from the body events of the previous iteration (states/carried values), the feeds' slices, the counter."""
    ref = model.node(path)
    body = next(g for g in ref.subgraphs if g.attribute == "body")
    b_in = [i.name for i in body.proto.input]
    b_out = [o.name for o in body.proto.output]
    outer = trace.event(path, index[:-1])
    k, previous = index[-1], (*index[:-1], index[-1] - 1)
    expected = {}
    if ref.op_type == "Loop":
        expected[b_in[0]] = np.array(k, np.int64)
        chained = list(zip(b_in[1:], b_out))  # cond and carried: output i of one iteration is input i of the next
        initial = list(ref.proto.input[1:])
    else:
        n = len(ref.proto.input) - int(next(a.i for a in ref.proto.attribute if a.name == "num_scan_inputs"))
        chained, initial = list(zip(b_in[:n], b_out[:n])), list(ref.proto.input[:n])
    for (name_in, name_out), init in zip(chained, initial):
        if k == 0:
            expected[name_in] = outer.inputs[init] if init else np.array(True)
        else:
            expected[name_in] = _body_value(model, trace, body.path, name_out, previous)
    return {name: value for name, value in expected.items() if value is not None}


@pytest.mark.parametrize(("sample", "path"), CASES)
def test_pseudocode_fills_in_each_iteration_from_the_trace(sample, path):
    model, _, trace = _run(sample)
    ref = model.node(path)
    body = next(g for g in ref.subgraphs if g.attribute == "body")
    records = trace.iterations(path)
    assert len(records) >= 2, "feeds chosen so that every loop runs at least twice"
    for record in records:
        code = pseudocode(ref, trace, record.index, model.opsets[""])
        assert f"'{path}'" in code.splitlines()[0]
        assert f"// values at iteration {record.index}:" in code
        for node in body.proto.node:  # every body node, with its real names
            outputs = ", ".join(o for o in node.output if o)
            assert f"{outputs} = {node.op_type}({', '.join(i or '<none>' for i in node.input)});" in code
        for name, value in _expected_inputs(model, trace, path, record.index).items():
            assert f"//   {name} = {format_value(value)}" in code, (name, record.index)
        for out in body.proto.output:  # each carried/state/scan output line shows this iteration's value
            value = _body_value(model, trace, body.path, out.name, record.index)
            if value is not None:
                annotated = rf"\b{re.escape(out.name)}\b[^/]*;  // = {re.escape(format_value(value))}$"
                assert re.search(annotated, code, re.MULTILINE), (out.name, record.index)
        if ref.op_type == "Loop":
            info = trace.event(path, record.index[:-1]).info
            assert f"// stopped: {info['stop_reason']} after {info['iterations']} iteration(s)" in code


def test_loop_spec_example_by_hand():
    """The Loop spec's own example with a=3, b=6: b_in is 6 then -3, the loop stops because cond turns false."""
    model, _, trace = _run("loop_spec")
    code = pseudocode(model.node("loop"), trace, (1,))
    for line in ["// Loop 'loop': trip count and cond", "int64 max_trip_count = max_trip_count;",
                 "bool keepgoing_in = keepgoing;", "b_in = b;  // loop-carried",
                 "for (int64 i = 0; i < max_trip_count && keepgoing_in; ++i) {",
                 "    //   i = 1", "    //   keepgoing_in = True", "    //   b_in = -3",
                 "    keepgoing_in = keepgoing_out;  // = False", "    b_in = b_out;  // = 6",
                 "    user_defined_vals.append(user_defined_val);  // = -6", "b_final = b_in;",
                 "// stopped: cond false after 2 iteration(s)"]:
        assert line in code.splitlines(), line


def test_scan_two_axes_slices_by_hand():
    """B is scanned backwards along its last axis: iteration t reads B[:, 4 - t]; A forwards along axis 0."""
    model, feeds, trace = _run("scan_two_axes")
    for t in range(5):
        code = pseudocode(model.node("zip"), trace, (t,))
        assert f"//   a_t = {format_value(feeds['A'][t])}" in code
        assert f"//   b_t = {format_value(feeds['B'][:, 4 - t])}" in code
    assert "    b_t = B<axis=-1>[sequence_length - 1 - t];" in code.splitlines()
    assert "    products = Concat<axis=-1>(product, products);" in "\n".join(code.splitlines())


def test_without_a_trace_only_names_are_written():
    model, _, trace = _run("nested_loops")
    for path in ("enc", "enc/body/inner"):
        code = pseudocode(model.node(path), None, None, model.opsets[""])
        assert "values at iteration" not in code and "// =" not in code
        assert pseudocode(model.node(path), trace, (9, 9), model.opsets[""]).count("// =") == 0  # never ran


def test_default_iteration_is_the_first():
    model, _, trace = _run("while_loop")
    assert pseudocode(model.node("while"), trace) == pseudocode(model.node("while"), trace, (0,))
    assert "// stopped: cond false after 6 iteration(s)" in pseudocode(model.node("while"), trace)


def test_only_scan_and_loop_have_pseudocode():
    model, _, _ = _run("nested_loops")
    with pytest.raises(ValueError, match="Scan and Loop, not If"):
        pseudocode(model.node("enc/body/inner/body/branch"))


def test_opset8_scan_pseudocode_names_batch_and_lengths():
    model = explorer.load(cf.scan8(1, 2, 1, with_lens=True))
    rng = np.random.default_rng(0)
    feeds = {"S0": np.zeros((2, 3), np.float32), "lens": np.array([3, 2], np.int64),
             **{f"X{j}": rng.standard_normal((2, 3, 3)).astype(np.float32) for j in range(2)}}
    trace = explorer.run(model, feeds)
    code = pseudocode(model.node("scan"), trace, (4,), 8)  # flat counter 4 = batch 1, t 1
    assert "N = lens[batch];" in code and "for (int t = 0; t < N; ++t) {" in code
    assert f"//   x0 = {format_value(feeds['X0'][1, 1])}" in code


def test_opset8_scan_pseudocode_shows_reversed_inputs():
    model = explorer.load(cf.scan8(1, 2, 1, directions=[0, 1]))
    feeds = {"S0": np.zeros((1, 3), np.float32), "X0": np.ones((1, 3, 3), np.float32),
             "X1": np.ones((1, 3, 3), np.float32)}
    code = pseudocode(model.node("scan"), explorer.run(model, feeds), (0,), 8)
    assert "x0 = (X0<axis=0>[batch])<axis=1>[t];" in code
    assert "x1 = (X1<axis=0>[batch])<axis=1>[N - 1 - t];" in code


def test_format_value():
    assert format_value(None) == "<empty>"
    assert format_value(np.array([1, 2, 3], np.int64)) == "[1, 2, 3]"
    assert format_value(np.array(True)) == "True"
    assert format_value([np.array([1.5], np.float32)]) == "[[1.5]]"
    big = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert format_value(big) == "float32[3, 4] min=0 max=11 mean=5.5"
