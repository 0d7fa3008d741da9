"""onnxruntime's generation operators (GreedySearch, BeamSearch, Sampling) on explorer's kernels: the models
onnxruntime's convert_generation writes (tests/models/generation_ops), judged by onnxruntime's outputs (stored by the
recipe, and live for the variants), every decode step recorded as an iteration."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import explorer
from explorer.errors import ExecutionError
from explorer.executor.search import search_kernels
from explorer.trace.shared_caches import held_bytes
from tests.support.generation_ops import EXPECTED, MODELS
from tests.support.generation_ops import feeds as _feeds

CASES = sorted({key.split("/", 1)[0] for key in EXPECTED.files if "/" in key})
FILES = {"greedy": "gpt2_greedy.onnx", "beam": "gpt2_beam.onnx", "sampling": "gpt2_sampling.onnx",
         "t5_beam": "t5_beam.onnx", "t5_init_beam": "t5_beam_init.onnx", "whisper_beam": "whisper_beam.onnx"}


def _file(case: str) -> str:
    return FILES[next(prefix for prefix in sorted(FILES, key=len, reverse=True) if case.startswith(prefix))]


def _onnxruntime(model: onnx.ModelProto | Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    source = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def _node(trace: explorer.Trace) -> str:
    return trace.events[-1].node


@pytest.mark.parametrize("case", CASES)
def test_outputs_equal_onnxruntimes(case):
    trace = explorer.run(MODELS / _file(case), _feeds(case))
    assert trace.error is None
    wanted = {key.split("=", 1)[1]: EXPECTED[key] for key in EXPECTED.files if key.startswith(f"{case}=")}
    for name, want in wanted.items():
        got = trace.outputs[name]
        if want.dtype.kind == "i":
            np.testing.assert_array_equal(got, want, err_msg=f"{case} {name}")
        else:  # T5's logits reach the hundreds with these weights: float32's error is relative
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4, err_msg=f"{case} {name}")


@pytest.mark.parametrize("case", ["greedy", "beam", "t5_beam", "t5_init_beam", "whisper_beam"])
def test_every_step_is_an_iteration_of_the_node(case):
    trace = explorer.run(MODELS / _file(case), _feeds(case))
    node = _node(trace)
    steps = trace.iterations(node)
    event = trace.events[-1]
    assert event.info["iterations"] == len(steps) > 1
    assert [it.index for it in steps] == [(k,) for k in range(len(steps))]
    decoder = [e for e in trace.events if e.node.startswith(f"{node}/decoder/")]
    first = 1 if case in ("t5_init_beam", "whisper_beam") else 0  # the encoder runs the first step
    assert {e.iteration for e in decoder} == {(k,) for k in range(first, len(steps))}
    rows = len(steps[0].info["tokens"])
    assert all(it.outputs["logits"].shape[0] == rows for it in steps[first:])
    assert all(e.iteration == (0,) for e in trace.events if e.node.startswith(f"{node}/encoder/"))
    subgraphs = {"t5_beam": ["encoder", "decoder"], "t5_init_beam": ["encoder"], "whisper_beam": ["encoder"]}.get(
        case, ["decoder"])
    assert steps[0].info["subgraphs"] == subgraphs
    assert all(it.info["subgraphs"] == ["decoder"] for it in steps[1:])


def test_greedy_iterations_hold_the_chosen_tokens():
    feeds = _feeds("greedy")
    trace = explorer.run(MODELS / "gpt2_greedy.onnx", feeds)
    chosen = np.array([it.info["tokens"] for it in trace.iterations(_node(trace))]).T
    prompt = feeds["input_ids"].shape[1]
    np.testing.assert_array_equal(trace.outputs["sequences"][:, prompt:], chosen)


def test_beam_iterations_rebuild_the_open_beams():
    """Following each step's beams (the row each new row continues) and tokens rebuilds the beams; their scores are
    the summed log-probabilities onnxruntime returns as the last step's scores, at the chosen tokens."""
    feeds = _feeds("beam")
    trace = explorer.run(MODELS / "gpt2_beam.onnx", feeds)
    steps = trace.iterations(_node(trace))
    beams = int(feeds["num_beams"][0])
    rows = np.repeat(feeds["input_ids"], beams, axis=0)
    for it in steps:
        rows = np.concatenate([rows[it.info["beams"]], np.array(it.info["tokens"])[:, None]], axis=1)
    last = steps[-1]
    scores = trace.outputs["scores"][len(steps) - 1].reshape(-1, trace.outputs["scores"].shape[-1])
    np.testing.assert_allclose(last.info["scores"], scores[last.info["beams"], last.info["tokens"]], rtol=1e-6)
    best = trace.outputs["sequences"][:, 0]
    assert any(np.array_equal(best[0], row) for row in rows[:beams])


def _with(model: onnx.ModelProto, **attributes: int) -> onnx.ModelProto:
    node = model.graph.node[0]
    for name, value in attributes.items():
        kept = [a for a in node.attribute if a.name != name]
        del node.attribute[:]
        node.attribute.extend([*kept, onnx.helper.make_attribute(name, value)])
    return model


@pytest.mark.parametrize("attributes", [{"early_stopping": 1}, {"no_repeat_ngram_size": 2},
                                        {"no_repeat_ngram_size": 1, "early_stopping": 1}])
def test_beam_search_attributes_as_onnxruntime(attributes):
    model = _with(onnx.load(MODELS / "gpt2_beam.onnx"), **attributes)
    feeds = {**_feeds("beam_long"), "max_length": np.array([30], np.int32)}
    want = _onnxruntime(model, feeds)
    trace = explorer.run(model, feeds)
    np.testing.assert_array_equal(trace.outputs["sequences"], want["sequences"])
    np.testing.assert_allclose(trace.outputs["sequences_scores"], want["sequences_scores"], rtol=1e-5)


def test_greedy_rows_that_end_early_as_onnxruntime():
    """The first prompt reaches the end-of-sequence id (3, also the pad id) after 24 tokens, the other never: the
    first row's pad stands for it and for every later token, as in onnxruntime's."""
    feeds = {**_feeds("greedy"), "input_ids": np.array([[98, 94, 108, 25], [109, 82, 67, 37]], np.int32),
             "max_length": np.array([40], np.int32)}
    want = _onnxruntime(MODELS / "gpt2_greedy.onnx", feeds)
    trace = explorer.run(MODELS / "gpt2_greedy.onnx", feeds)
    np.testing.assert_array_equal(trace.outputs["sequences"], want["sequences"])
    assert (trace.outputs["sequences"][0, 28:] == 3).all()
    assert trace.iterations(_node(trace))[-1].info["finished"] == [True, False]


def test_greedy_vocab_mask_as_onnxruntime():
    model = onnx.load(MODELS / "gpt2_greedy.onnx")
    model.graph.input.append(onnx.helper.make_tensor_value_info("vocab_mask", onnx.TensorProto.INT32, [128]))
    model.graph.node[0].input[4] = "vocab_mask"
    mask = np.ones(128, np.int32)
    mask[[28, 48, 13]] = 0  # the tokens greedy picks most
    feeds = {**_feeds("greedy"), "vocab_mask": mask}
    trace = explorer.run(model, feeds)
    np.testing.assert_array_equal(trace.outputs["sequences"], _onnxruntime(model, feeds)["sequences"])


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**31 - 2])
def test_sampling_draws_onnxruntimes_tokens(seed):
    feeds = {**_feeds("sampling"), "seed": np.array([seed], np.int32)}
    trace = explorer.run(MODELS / "gpt2_sampling.onnx", feeds)
    np.testing.assert_array_equal(trace.outputs["sequences"],
                                  _onnxruntime(MODELS / "gpt2_sampling.onnx", feeds)["sequences"])


def test_greedy_search_of_an_encoder_decoder_is_refused_as_onnxruntime_refuses_it():
    model = onnx.load(MODELS / "t5_beam.onnx")
    node = model.graph.node[0]
    node.op_type = "GreedySearch"
    del node.input[3:]
    del node.output[1:]
    kept = [a for a in node.attribute if a.name != "early_stopping"]
    del node.attribute[:]
    node.attribute.extend(kept)
    with pytest.raises(ExecutionError, match="model_type 1: onnxruntime's GreedySearch runs"):
        explorer.run(model, _feeds("t5_beam"))


def test_whispers_inputs_are_refused_naming_the_node():
    model = onnx.load(MODELS / "gpt2_beam.onnx")
    model.graph.input.append(onnx.helper.make_tensor_value_info("logits_processor", onnx.TensorProto.INT32, [1]))
    node = model.graph.node[0]
    node.input.extend([""] * (11 - len(node.input)) + ["logits_processor"])  # its 12th input
    with pytest.raises(ExecutionError, match="BeamSearch_gpt2.*logits_processor"):
        explorer.run(model, {**_feeds("beam"), "logits_processor": np.array([1], np.int32)})


@pytest.mark.parametrize(("custom", "penalty"), [(1, 0.0), (1, 2.5), (0, 2.5)])
def test_custom_sampling_and_the_presence_penalty_as_onnxruntime(custom, penalty):
    """The custom top-p rule and the presence penalty (whose whole mask's penalty lands on the first score, as
    onnxruntime's loop never moves its pointer)."""
    model = onnx.load(MODELS / "gpt2_sampling.onnx")
    model.graph.input.append(onnx.helper.make_tensor_value_info("presence_mask", onnx.TensorProto.INT32, ["b", 128]))
    node = model.graph.node[0]
    node.input[7] = "presence_mask"
    _with(model, custom=custom)
    for attribute in node.attribute:
        if attribute.name == "presence_penalty":
            attribute.f = penalty
    mask = np.zeros((2, 128), np.int32)
    mask[:, [28, 48, 13, 125]] = 1
    feeds = {**_feeds("sampling"), "presence_mask": mask}
    trace = explorer.run(model, feeds)
    np.testing.assert_array_equal(trace.outputs["sequences"], _onnxruntime(model, feeds)["sequences"])


def test_whisper_starts_from_the_given_decoder_input_ids_as_onnxruntime():
    model = onnx.load(MODELS / "whisper_beam.onnx")
    model.graph.input.append(onnx.helper.make_tensor_value_info("decoder_input_ids", onnx.TensorProto.INT32,
                                                                ["batch", "start"]))
    node = model.graph.node[0]
    node.input.extend([""] * (10 - len(node.input)) + ["decoder_input_ids"])  # its 11th input
    feeds = {**_feeds("whisper_beam"), "decoder_input_ids": np.array([[1, 40, 41], [1, 7, 8]], np.int32)}
    want = _onnxruntime(model, feeds)
    trace = explorer.run(model, feeds)
    np.testing.assert_array_equal(trace.outputs["sequences"], want["sequences"])
    np.testing.assert_allclose(trace.outputs["scores"], want["scores"], rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("kind", ["gpt2_greedy.onnx", "gpt2_beam.onnx"])
def test_a_given_attention_mask_as_onnxruntime(kind):
    """The mask given replaces the one made from the pad ids; positions still count the ids that are not pad."""
    model = onnx.load(MODELS / kind)
    model.graph.input.append(onnx.helper.make_tensor_value_info("attention_mask", onnx.TensorProto.INT32,
                                                                ["batch", "sequence"]))
    node = model.graph.node[0]
    at = 6 if kind == "gpt2_greedy.onnx" else 9
    node.input.extend([""] * (at + 1 - len(node.input)))
    node.input[at] = "attention_mask"
    case = "greedy_penalty" if kind == "gpt2_greedy.onnx" else "beam_penalty"
    feeds = {**_feeds(case), "attention_mask": np.array([[0, 1, 1, 1], [1, 1, 0, 1]], np.int32)}
    trace = explorer.run(model, feeds)
    np.testing.assert_array_equal(trace.outputs["sequences"], _onnxruntime(model, feeds)["sequences"])


def test_t5s_encoder_mask_hides_only_leading_pad_ids_as_onnxruntime():
    feeds = {**_feeds("t5_beam"), "input_ids": np.array([[0, 0, 99, 0, 3], [5, 0, 7, 8, 3]], np.int32)}
    trace = explorer.run(MODELS / "t5_beam.onnx", feeds)
    np.testing.assert_array_equal(trace.outputs["sequences"], _onnxruntime(MODELS / "t5_beam.onnx", feeds)["sequences"])
    encoder = trace.iterations(_node(trace))[1].inputs["encoder_attention_mask"]
    np.testing.assert_array_equal(encoder[::4], [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])  # each entry's first beam


def _subgraph_session(path: Path, attribute: str) -> ort.InferenceSession:
    """onnxruntime's session of one of the node's subgraphs (each holds its own weights) as a model."""
    model = onnx.load(str(path))
    node = next(n for n in model.graph.node if n.domain == "com.microsoft")
    graph = next(a.g for a in node.attribute if a.name == attribute)
    proto = onnx.helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    return ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("case", ["greedy", "sampling", "beam", "t5_beam", "t5_init_beam", "whisper_beam"])
def test_caches_held_once_and_every_step_read_back(case, monkeypatch):
    """Each step's caches are held once (within 1.5 x the final cache: its presents and the cross-attention caches
    it read); every decoder step's present, as the trace gives it back, is what onnxruntime's decoder subgraph
    makes from the step's inputs; every value of every event equals the recording without the sharing."""
    path = MODELS / _file(case)
    trace = explorer.run(path, _feeds(case))
    steps = trace.iterations(_node(trace))
    last = steps[-1]
    final = sum(v.nbytes for k, v in dict.items(last.outputs) if "present" in k) + \
        sum(v.nbytes for k, v in dict.items(last.inputs) if "cross" in k)
    held = [v for step in steps for side in (step.inputs, step.outputs) for k, v in dict.items(side)
            if "past" in k or "present" in k]
    assert held_bytes(held) <= 1.5 * final
    decoder = _subgraph_session(path, "decoder")
    names = [i.name for i in decoder.get_inputs()]
    for step in steps:
        if step.info["subgraphs"][-1] != "decoder":
            continue
        returned = dict(zip([o.name for o in decoder.get_outputs()],
                            decoder.run(None, {k: step.inputs[k] for k in names})))
        for name, value in returned.items():
            if name.startswith("present"):
                np.testing.assert_allclose(step.outputs[name], value, rtol=1e-3, atol=1e-4, err_msg=name)  # T5: hundreds
    monkeypatch.setattr(search_kernels, "share_caches", lambda *args: None)
    unshared = explorer.run(path, _feeds(case))
    assert len(unshared.events) == len(trace.events)
    for ours, recorded in zip(trace.events, unshared.events):
        for a, b in ((ours.inputs, recorded.inputs), (ours.outputs, recorded.outputs)):
            for key, value in b.items():
                np.testing.assert_array_equal(a[key], value, err_msg=f"{ours.node} {ours.iteration} {key}")
