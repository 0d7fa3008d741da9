"""GRU / LSTM / RNN kernels: outputs against onnxruntime, gates against a plain transcription of the spec
(itself checked against onnxruntime here), hand-computed values where onnxruntime departs from the spec."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

import explorer
from explorer.errors import ExecutionError, LimitExceeded
from explorer.executor.rnn import kernel as rnn_kernel
from explorer.executor.rnn import step_rows
from explorer.executor.run import program_of
from explorer.limits import Limits
from tests.support.rnn_reference import reference

INPUTS = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
BLOCKS = {"GRU": 3, "LSTM": 4, "RNN": 1}
PER_DIRECTION = {"GRU": 2, "LSTM": 3, "RNN": 1}
ALL_ACTIVATIONS = ["Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
                   "HardSigmoid", "Elu", "Softsign", "Softplus"]
RTOL, ATOL = 1e-4, 1e-5


def build(op: str, attrs: dict, feeds: dict, outputs: list[str], opset: int = 22) -> onnx.ModelProto:
    """One `op` node whose given inputs are all graph inputs (absent optional inputs left empty)."""
    last = max(INPUTS.index(name) for name in feeds)
    names = [name if name in feeds else "" for name in INPUTS[:last + 1]]
    node = helper.make_node(op, names, outputs, name="rnn", **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for k, v in feeds.items()],
        [helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(feeds["X"].dtype), None)
         for o in outputs if o])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def make_feeds(op: str, rng: np.random.Generator, seq: int, batch: int, inp: int, hidden: int, nd: int,
               optional: tuple[str, ...] = ("B", "initial_h", "initial_c", "P"), lens=None,
               dtype=np.float32) -> dict:
    g = BLOCKS[op]

    def rand(*shape):
        return rng.standard_normal(shape).astype(dtype)

    feeds = {"X": rand(seq, batch, inp), "W": rand(nd, g * hidden, inp), "R": rand(nd, g * hidden, hidden)}
    if "B" in optional:
        feeds["B"] = rand(nd, 2 * g * hidden)
    if lens is not None:
        feeds["sequence_lens"] = np.asarray(lens, np.int32)
    if "initial_h" in optional:
        feeds["initial_h"] = rand(nd, batch, hidden)
    if op == "LSTM" and "initial_c" in optional:
        feeds["initial_c"] = rand(nd, batch, hidden)
    if op == "LSTM" and "P" in optional:
        feeds["P"] = rand(nd, 3 * hidden)
    return feeds


def all_outputs(op: str) -> list[str]:
    return ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]


def run_rnn(model: onnx.ModelProto, feeds: dict) -> tuple[list[np.ndarray], dict]:
    trace = explorer.run(model, feeds)
    names = [o.name for o in model.graph.output]
    return [trace.outputs[n] for n in names], trace.gates("rnn")


def check_against_judges(op: str, attrs: dict, feeds: dict) -> None:
    """explorer == onnxruntime on Y/Y_h/Y_c, reference == onnxruntime too, explorer's gates == reference's."""
    outputs = all_outputs(op)
    model = build(op, attrs, feeds, outputs)
    ours, gates = run_rnn(model, feeds)
    theirs = onnxruntime_outputs(model, feeds)
    ref = reference(op, **feeds, **attrs)
    for name, a, b, r in zip(outputs, ours, theirs, ref):
        np.testing.assert_allclose(a, b, RTOL, ATOL, err_msg=f"{name} vs onnxruntime")
        np.testing.assert_allclose(r, b, RTOL, ATOL, err_msg=f"reference {name} vs onnxruntime")
    check_gates(gates, ref[3])


def check_gates(gates: dict, expected: dict, rtol: float = RTOL, atol: float = ATOL) -> None:
    assert set(gates) == set(expected)
    for name, want in expected.items():
        got = gates[name]
        assert got.shape == want.shape, name
        if name == "mask":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got.astype(np.float64), want, rtol, atol, err_msg=f"gate {name}")


CASES = {  # id: (op, attributes, make_feeds keyword arguments)
    "gru_defaults": ("GRU", {}, dict(optional=())),
    "gru_reverse_bias_h0": ("GRU", {"direction": "reverse"}, {}),
    "gru_bidirectional_lbr1": ("GRU", {"direction": "bidirectional", "linear_before_reset": 1}, {}),
    "gru_lbr0_ragged": ("GRU", {}, dict(lens=[5, 2, 0])),
    "gru_lbr1_ragged_bidirectional": ("GRU", {"direction": "bidirectional", "linear_before_reset": 1},
                                      dict(lens=[3, 5, 1])),
    "gru_bidirectional_directions_differ_ragged": (  # the directions run stacked, each with its own activations
        "GRU", {"direction": "bidirectional", "activations": ["Sigmoid", "Tanh", "HardSigmoid", "Softsign"],
                "activation_alpha": [0.3], "activation_beta": [0.4]}, dict(lens=[4, 1, 5])),
    "gru_clip_lbr1": ("GRU", {"clip": 0.6, "linear_before_reset": 1}, {}),
    "gru_activations": ("GRU", {"activations": ["HardSigmoid", "LeakyRelu"], "activation_alpha": [0.3, 0.2],
                                "activation_beta": [0.4]}, {}),
    "lstm_defaults": ("LSTM", {}, dict(optional=())),
    # the default activations without peepholes: every gate from one tanh (kernel._gate_scales)
    "lstm_tanh_form_bidirectional_ragged": ("LSTM", {"direction": "bidirectional"},
                                            dict(optional=("B", "initial_h", "initial_c"), lens=[2, 5, 0])),
    "lstm_tanh_form_reverse": ("LSTM", {"direction": "reverse"}, dict(optional=("B",))),
    "lstm_peepholes_initial_states": ("LSTM", {}, {}),
    "lstm_input_forget": ("LSTM", {"input_forget": 1}, {}),
    "lstm_input_forget_peepholes_clip_reverse": (
        "LSTM", {"input_forget": 1, "clip": 0.8, "direction": "reverse"}, dict(lens=[4, 1, 5])),
    "lstm_bidirectional_ragged_peepholes": ("LSTM", {"direction": "bidirectional"}, dict(lens=[2, 5, 0])),
    "lstm_hidden1_peepholes": ("LSTM", {}, dict(hidden=1)),  # a stride numpy 2.4 negates wrongly in place
    "lstm_activations_consumed_in_order": (
        "LSTM", {"activations": ["Sigmoid", "LeakyRelu", "HardSigmoid"], "activation_alpha": [0.3, 0.15],
                 "activation_beta": [0.45]}, {}),
    "rnn_defaults": ("RNN", {}, dict(optional=())),
    "rnn_relu_bidirectional": ("RNN", {"direction": "bidirectional", "activations": ["Relu", "Relu"]}, {}),
    "rnn_leakyrelu_clip_ragged": (
        "RNN", {"activations": ["LeakyRelu"], "activation_alpha": [0.2], "clip": 0.9}, dict(lens=[1, 5, 3])),
    "rnn_reverse_ragged": ("RNN", {"direction": "reverse"}, dict(lens=[4, 2, 5])),
}


@pytest.mark.parametrize("case", list(CASES))
def test_matches_onnxruntime_and_records_the_spec_gates(case):
    op, attrs, options = CASES[case]
    options = dict(options)
    hidden = options.pop("hidden", 3)
    nd = 2 if attrs.get("direction") == "bidirectional" else 1
    feeds = make_feeds(op, np.random.default_rng(len(case)), 5, 3, 4, hidden, nd, **options)
    check_against_judges(op, {"hidden_size": hidden, **attrs}, feeds)


@pytest.mark.parametrize("case", ["gru_lbr1_ragged_bidirectional", "lstm_bidirectional_ragged_peepholes",
                                  "lstm_input_forget_peepholes_clip_reverse", "lstm_tanh_form_bidirectional_ragged",
                                  "rnn_relu_bidirectional"])
def test_input_projection_in_chunks_of_steps(case, monkeypatch):
    """X·Wᵀ is computed a few steps at a time (a bounded buffer beside the gates): chunks of one and two steps
    land each direction's steps where its processing order puts them, ragged and reversed ones too."""
    op, attrs, options = CASES[case]
    options = dict(options)
    nd = 2 if attrs.get("direction") == "bidirectional" else 1
    feeds = make_feeds(op, np.random.default_rng(7), 5, 3, 4, 3, nd, **options)
    for steps in (1, 2):
        monkeypatch.setattr(rnn_kernel, "RNN_STEP_INPUT_BYTES", steps * 3 * nd * BLOCKS[op] * 3 * 4)
        check_against_judges(op, {"hidden_size": 3, **attrs}, feeds)


@pytest.fixture
def made_step_rows(monkeypatch) -> list:
    """Every StepRows the kernels make (an LSTM whose steps are one product each), in order."""
    made = []

    class Counted(step_rows.StepRows):
        def __init__(self, *args) -> None:
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(rnn_kernel, "StepRows", Counted)
    return made


@pytest.mark.parametrize("steps_per_chunk", [None, 1, 2])
@pytest.mark.parametrize("case", [case for case, (op, _, _) in CASES.items() if op == "LSTM"])
def test_lstm_steps_as_one_product_each(case, steps_per_chunk, monkeypatch, made_step_rows):
    """With a batch of 4 or more and an input at most half the hidden size, each LSTM step's gates come from one
    product of [Xt, Ht-1, 1] (step_rows.py): every LSTM case, its rows held whole or a chunk of one or two steps at
    a time, ragged and reversed directions included."""
    op, attrs, options = CASES[case]
    options = dict(options)
    options.pop("hidden", None)
    if options.get("lens") is not None:
        options["lens"] = [*options["lens"], 5, 3]
    nd = 2 if attrs.get("direction") == "bidirectional" else 1
    batch, size, hidden = 5, 2, 4
    if steps_per_chunk is not None:
        row_bytes = nd * batch * (size + hidden + 1) * 4
        monkeypatch.setattr(rnn_kernel, "RNN_STEP_INPUT_BYTES", steps_per_chunk * row_bytes)
    made = made_step_rows
    feeds = make_feeds(op, np.random.default_rng(len(case)), 5, batch, size, hidden, nd, **options)
    check_against_judges(op, {"hidden_size": hidden, **attrs}, feeds)
    assert len(made) == 1


@pytest.mark.parametrize("case", ["gru_lbr1_ragged_bidirectional", "lstm_tanh_form_bidirectional_ragged",
                                  "lstm_bidirectional_ragged_peepholes", "rnn_relu_bidirectional"])
def test_input_projection_of_fewer_rows_than_inputs(case):
    """With fewer steps times batch items than inputs and W and B fed (writeable, as computed weights are), the
    biases are added while the projection is copied into place rather than through a row under Wᵀ."""
    op, attrs, options = CASES[case]
    options = dict(options)
    options["lens"] = None
    feeds = make_feeds(op, np.random.default_rng(12), 2, 3, 9, 3, 2, **options)
    check_against_judges(op, {"hidden_size": 3, **attrs}, feeds)


WEIGHTS = ("W", "R", "B", "P")


@pytest.mark.parametrize("batch, size, hidden", [(3, 4, 3), (5, 2, 4)])  # the second: per-gate and joined products
@pytest.mark.parametrize("case", list(CASES))
def test_a_nodes_setup_is_kept_from_run_to_run_of_its_initializers(case, batch, size, hidden):
    """With W, R, B and P initializers, a node prepares its weights' layouts and its steps once and keeps them
    (kernel.Setup): runs on other X and initial states, on other sequence lengths and on another batch size still
    match onnxruntime and the spec's gates, and a run of the same shapes and lengths reuses the Setup."""
    op, attrs, options = CASES[case]
    options = {**options, "hidden": hidden} if "hidden" not in options else dict(options)
    hidden = options.pop("hidden")
    lens = options.pop("lens", None)
    attrs = {"hidden_size": hidden, **attrs}
    nd = 2 if attrs.get("direction") == "bidirectional" else 1
    rng = np.random.default_rng(len(case))
    runs = [(batch, None), (batch, None), (batch + 1, None)]
    if lens is not None:  # the same lengths twice, then others
        lens = [*lens, 5, 3][:batch]
        runs = [(batch, lens), (batch, lens), (batch, [*lens[1:], lens[0]])]
    first = make_feeds(op, rng, 5, batch, size, hidden, nd, lens=lens, **options)
    weights = {k: v for k, v in first.items() if k in WEIGHTS}
    outputs = all_outputs(op)
    model = build(op, attrs, first, outputs)
    inputs = [helper.make_tensor_value_info(i.name, i.type.tensor_type.elem_type, None)  # any batch size
              for i in model.graph.input if i.name not in weights]
    model.graph.ClearField("input")
    model.graph.input.extend(inputs)
    model.graph.initializer.extend(onnx.numpy_helper.from_array(v, k) for k, v in weights.items())
    loaded = explorer.load(model)
    kernel = program_of(loaded).graph("").plan[0][0].fn
    kept = next(c.cell_contents for c in kernel.__closure__ if isinstance(c.cell_contents, rnn_kernel.KeptWeights))
    setups = []
    for run_batch, run_lens in runs:
        feeds = {k: v for k, v in make_feeds(op, rng, 5, run_batch, size, hidden, nd, lens=run_lens,
                                             **options).items() if k not in WEIGHTS}
        trace = explorer.run(loaded, feeds)
        setups.append(kept._setup[-1])
        ours = [trace.outputs[o] for o in outputs]
        theirs = onnxruntime_outputs(model, feeds)
        ref = reference(op, **feeds, **weights, **attrs)
        for name, a, b in zip(outputs, ours, theirs):
            np.testing.assert_allclose(a, b, RTOL, ATOL, err_msg=f"{name} vs onnxruntime, batch {run_batch}")
        check_gates(trace.gates("rnn"), ref[3])
    assert setups[1] is setups[0] and setups[2] is not setups[1]  # kept for the same shapes, made again for others


@pytest.mark.parametrize("seed", range(60))
def test_random_configurations_match_onnxruntime(seed):
    rng = np.random.default_rng(1000 + seed)
    for _ in range(50):  # redraw configurations whose unbounded activations overflow float32
        op = ["GRU", "LSTM", "RNN"][seed % 3]
        direction = ["forward", "reverse", "bidirectional"][seed // 3 % 3]
        nd = 2 if direction == "bidirectional" else 1
        seq, batch, hidden = int(rng.integers(1, 7)), int(rng.integers(1, 5)), int(rng.integers(1, 6))
        optional = tuple(name for name in ("B", "initial_h", "initial_c", "P") if rng.random() < 0.6)
        lens = rng.integers(0, seq + 1, batch) if rng.random() < 0.5 else None
        feeds = make_feeds(op, rng, seq, batch, int(rng.integers(1, 5)), hidden, nd, optional, lens)
        attrs = {"hidden_size": hidden, "direction": direction}
        if op == "GRU":
            attrs["linear_before_reset"] = int(rng.integers(0, 2))
        if op == "LSTM":
            attrs["input_forget"] = int(rng.integers(0, 2))
        if rng.random() < 0.3:
            attrs["clip"] = float(rng.uniform(0.3, 2.0))
        if rng.random() < 0.4:
            # A full alpha/beta list: onnxruntime's fallbacks (0 for most) differ from the spec's defaults.
            attrs["activations"] = list(rng.choice(ALL_ACTIVATIONS, PER_DIRECTION[op] * nd))
            attrs["activation_alpha"] = [float(v) for v in rng.uniform(0.1, 1.5, 6)]
            attrs["activation_beta"] = [float(v) for v in rng.uniform(-0.5, 0.5, 6)]
        ref = reference(op, **feeds, **attrs)
        if all(np.all(np.abs(r) < 1e4) for r in ref[:3] if r is not None):
            break
    else:
        pytest.fail("no configuration without float32 overflow in 50 draws")
    check_against_judges(op, attrs, feeds)


@pytest.mark.parametrize("op", ["GRU", "LSTM", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_layout_1_matches_onnxruntime_on_the_transposed_layout_0_model(op, direction):
    nd = 2 if direction == "bidirectional" else 1
    feeds = make_feeds(op, np.random.default_rng(7), 4, 3, 2, 3, nd, lens=[4, 2, 3])
    attrs = {"hidden_size": 3, "direction": direction}
    batch_first = {k: (v.transpose(1, 0, 2) if k in ("X", "initial_h", "initial_c") else v)
                   for k, v in feeds.items()}
    ours, gates = run_rnn(build(op, {**attrs, "layout": 1}, batch_first, all_outputs(op)), batch_first)
    theirs = onnxruntime_outputs(build(op, attrs, feeds, all_outputs(op)), feeds)
    np.testing.assert_allclose(ours[0], theirs[0].transpose(2, 0, 1, 3), RTOL, ATOL)  # [batch, seq, dir, H]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b.transpose(1, 0, 2), RTOL, ATOL)  # Y_h, Y_c [batch, dir, hidden]
    _, layout0_gates = run_rnn(build(op, attrs, feeds, all_outputs(op)), feeds)
    check_gates(gates, layout0_gates)  # gates are indexed [seq, dir, batch, hidden] whatever the layout


@pytest.mark.parametrize("op,names", [
    ("GRU", ["sigmoid", "TANH"]), ("LSTM", ["hardsigmoid", "tanh", "SoftSign"]), ("RNN", ["relu"]),
    ("RNN", ["leakyRelu"])])
def test_activation_names_are_case_insensitive(op, names):
    feeds = make_feeds(op, np.random.default_rng(3), 4, 2, 3, 3, 1)
    extra = {"hidden_size": 3, "activation_alpha": [0.25], "activation_beta": [0.5]}
    canonical = [{n.lower(): n for n in ALL_ACTIVATIONS}[name.lower()] for name in names]
    ours, _ = run_rnn(build(op, {"activations": names, **extra}, feeds, all_outputs(op)), feeds)
    canonical_model = build(op, {"activations": canonical, **extra}, feeds, all_outputs(op))
    theirs = onnxruntime_outputs(canonical_model, feeds)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, RTOL, ATOL)


@pytest.mark.parametrize("op,outputs", [
    ("GRU", ["", "Y_h"]), ("GRU", ["Y"]), ("LSTM", ["", "", "Y_c"]), ("LSTM", ["Y", "", "Y_c"]),
    ("RNN", ["", "Y_h"])])
def test_optional_outputs_left_out(op, outputs):
    feeds = make_feeds(op, np.random.default_rng(5), 3, 2, 2, 4, 1)
    model = build(op, {"hidden_size": 4}, feeds, outputs)
    trace = explorer.run(model, feeds)
    assert sorted(trace.outputs) == sorted(o for o in outputs if o)
    produced = trace.events[0].outputs
    assert sorted(produced) == sorted(o for o in outputs if o)
    for name, theirs in zip([o for o in outputs if o], onnxruntime_outputs(model, feeds)):
        np.testing.assert_allclose(trace.outputs[name], theirs, RTOL, ATOL)


VERSIONS = [("GRU", 1), ("GRU", 3), ("GRU", 7), ("GRU", 14), ("GRU", 22), ("LSTM", 1), ("LSTM", 7),
            ("LSTM", 14), ("LSTM", 22), ("RNN", 1), ("RNN", 7), ("RNN", 14), ("RNN", 22)]


@pytest.mark.parametrize("op,version", VERSIONS)
@pytest.mark.parametrize("batch,size,hidden", [(2, 3, 3), (5, 2, 4)])  # (5, 2, 4): an LSTM's steps as one product
# each (step_rows.py), here with peepholes
def test_every_opset_version(op, version, batch, size, hidden):
    """Each version's node runs with that version's attributes; onnxruntime (which starts at opset 7) judges
    through the same node at max(version, 7)."""
    feeds = make_feeds(op, np.random.default_rng(version), 4, batch, size, hidden, 2, lens=[4, 2, 3, 1, 4][:batch])
    attrs = {"hidden_size": hidden, "direction": "bidirectional"}
    if op == "GRU" and version >= 3:
        attrs["linear_before_reset"] = 1
    mine = dict(attrs, output_sequence=1) if version == 1 else attrs
    model = build(op, mine, feeds, all_outputs(op), opset=version)
    explorer_model = explorer.load(model)
    from explorer.spec.rnn import rnn_config

    assert rnn_config(explorer_model.node("rnn"), version).version == version
    ours, _ = run_rnn(model, feeds)
    theirs = onnxruntime_outputs(build(op, attrs, feeds, all_outputs(op), opset=max(version, 7)), feeds)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, RTOL, ATOL)


@pytest.mark.parametrize("version", [version for op, version in VERSIONS if op == "LSTM"])
@pytest.mark.parametrize("batch,size", [(3, 3), (5, 2)])  # (5, 2): steps as one product each (step_rows.py)
def test_lstm_tanh_form_at_every_opset_version(version, batch, size):
    """An LSTM without peepholes takes every gate from one tanh (kernel._gate_scales) at each version, its input
    projected up front or joined to H in each step's product: its outputs match onnxruntime's (at max(version, 7))
    and its gates the reference's."""
    feeds = make_feeds("LSTM", np.random.default_rng(40 + version), 5, batch, size, 4, 2,
                       optional=("B", "initial_h", "initial_c"), lens=[5, 2, 4, 1, 3][:batch])
    attrs = {"hidden_size": 4, "direction": "bidirectional"}
    mine = dict(attrs, output_sequence=1) if version == 1 else attrs
    ours, gates = run_rnn(build("LSTM", mine, feeds, all_outputs("LSTM"), opset=version), feeds)
    theirs = onnxruntime_outputs(build("LSTM", attrs, feeds, all_outputs("LSTM"), opset=max(version, 7)), feeds)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, RTOL, ATOL)
    check_gates(gates, reference("LSTM", **feeds, **attrs)[3])


def test_gru_1_default_direction_is_forward():
    feeds = make_feeds("GRU", np.random.default_rng(0), 3, 2, 2, 2, 1)
    ours, _ = run_rnn(build("GRU", {"hidden_size": 2}, feeds, ["Y", "Y_h"], opset=1), feeds)
    theirs = onnxruntime_outputs(build("GRU", {"hidden_size": 2}, feeds, ["Y", "Y_h"], opset=7), feeds)
    np.testing.assert_allclose(ours[0], theirs[0], RTOL, ATOL)


@pytest.mark.parametrize("op,attrs,defaults", [
    ("RNN", {"activations": ["LeakyRelu"]}, "alpha 0.01"),
    ("RNN", {"activations": ["ThresholdedRelu"]}, "alpha 1.0"),
    ("RNN", {"activations": ["Elu"]}, "alpha 1.0"),
    ("RNN", {"activations": ["Affine"]}, "alpha 1.0, beta 0.0"),
    ("RNN", {"activations": ["ScaledTanh"]}, "alpha 1.0, beta 1.0"),
    ("GRU", {"activations": ["HardSigmoid", "Tanh"]}, "alpha 0.2, beta 0.5"),
    ("LSTM", {"activations": ["Sigmoid", "LeakyRelu", "HardSigmoid"], "activation_alpha": [0.5]},
     "LeakyRelu takes 0.5, HardSigmoid its defaults"),
])
def test_missing_alpha_beta_take_the_onnx_operator_defaults(op, attrs, defaults):
    """onnxruntime falls back to 0 for most of these; the spec says the defaults of the ONNX operators."""
    feeds = make_feeds(op, np.random.default_rng(11), 4, 2, 3, 3, 1)
    ours, gates = run_rnn(build(op, {"hidden_size": 3, **attrs}, feeds, all_outputs(op)), feeds)
    ref = reference(op, **feeds, hidden_size=3, **attrs)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, RTOL, ATOL, err_msg=defaults)
    check_gates(gates, ref[3])


def test_leaky_relu_default_alpha_by_hand():
    """One step, one unit: H = LeakyRelu(x·w) with w = 1, x = -3 -> -0.03 (alpha 0.01)."""
    feeds = {"X": np.array([[[-3.0]]], np.float32), "W": np.ones((1, 1, 1), np.float32),
             "R": np.zeros((1, 1, 1), np.float32)}
    model = build("RNN", {"hidden_size": 1, "activations": ["LeakyRelu"]}, feeds, ["Y", "Y_h"])
    ours, gates = run_rnn(model, feeds)
    assert ours[1].item() == pytest.approx(-0.03)
    assert gates["a"].item() == pytest.approx(-3.0)


def test_one_gru_step_by_hand():
    """hidden 1, input 1: z = σ(1·x + 0.5·h0), r = σ(-1·x), h = tanh(2·x + r·(1·h0) + 0.25) with lbr=1."""
    x, h0 = 0.8, -0.4
    feeds = {"X": np.array([[[x]]], np.float32), "W": np.array([[[1.0], [-1.0], [2.0]]], np.float32),
             "R": np.array([[[0.5], [0.0], [1.0]]], np.float32),
             "B": np.array([[0, 0, 0.25, 0, 0, 0]], np.float32), "initial_h": np.array([[[h0]]], np.float32)}
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    z, r = sigmoid(x + 0.5 * h0), sigmoid(-x)
    h = np.tanh(2 * x + r * h0 + 0.25)
    want = (1 - z) * h + z * h0
    model = build("GRU", {"hidden_size": 1, "linear_before_reset": 1}, feeds, ["Y", "Y_h"])
    ours, gates = run_rnn(model, feeds)
    for name, value in {"z": z, "r": r, "h": h, "H": want}.items():
        assert gates[name].item() == pytest.approx(value, rel=1e-6), name
    assert ours[1].item() == pytest.approx(want, rel=1e-6)


def test_ragged_batch_pads_y_with_zeros_and_gates_with_nan():
    feeds = make_feeds("LSTM", np.random.default_rng(2), 5, 3, 2, 4, 2, lens=[5, 2, 0])
    model = build("LSTM", {"hidden_size": 4, "direction": "bidirectional"}, feeds, ["Y", "Y_h", "Y_c"])
    ours, gates = run_rnn(model, feeds)
    y, y_h, y_c = ours
    assert np.all(y[2:, :, 1] == 0) and np.all(y[:, :, 2] == 0)  # padded steps, and the empty sequence
    np.testing.assert_array_equal(y_h[0, 1], y[1, 0, 1])  # forward: last valid step
    np.testing.assert_array_equal(y_h[1, 1], y[0, 1, 1])  # reverse: it ends at position 0
    assert np.all(y_h[:, 2] == 0) and np.all(y_c[:, 2] == 0)  # length 0: zeros, as onnxruntime
    mask = gates["mask"]
    assert mask.shape == (5, 2, 3) and mask[:, :, 0].all() and not mask[:, :, 2].any()
    assert mask[:2, :, 1].all() and not mask[2:, :, 1].any()
    for name in ("i", "o", "f", "c", "C", "H"):
        assert np.isnan(gates[name][~mask]).all() and not np.isnan(gates[name][mask]).any(), name
    np.testing.assert_array_equal(gates["H"][mask], y[mask])


@pytest.mark.parametrize("op", ["GRU", "LSTM", "RNN"])
@pytest.mark.parametrize("seq,batch", [(0, 2), (3, 0)])
def test_empty_sequence_or_batch(op, seq, batch):
    """No step at all gives zero states, as a length-0 sequence does (onnxruntime aborts on these)."""
    feeds = make_feeds(op, np.random.default_rng(0), seq, batch, 2, 3, 2)
    model = build(op, {"hidden_size": 3, "direction": "bidirectional"}, feeds, all_outputs(op))
    ours, gates = run_rnn(model, feeds)
    assert ours[0].shape == (seq, 2, batch, 3)
    assert all(o.shape == (2, batch, 3) and not o.any() for o in ours[1:])
    assert gates["H"].shape == (seq, 2, batch, 3) and gates["mask"].shape == (seq, 2, batch)


@pytest.mark.parametrize("op,attrs", [("GRU", {"linear_before_reset": 1}), ("LSTM", {})])
@pytest.mark.parametrize("dtype,rtol,atol", [(np.float64, 1e-9, 1e-12), (np.float16, 1e-2, 1e-2)])
def test_other_float_types(op, attrs, dtype, rtol, atol):
    """onnxruntime runs only float32 recurrent nodes: the reference (checked against it above) judges, gates
    included (an LSTM with the default activations takes its sigmoids from tanh: exact to float64 too)."""
    optional = ("B", "initial_h", "initial_c")  # no peepholes: the LSTM takes its sigmoids from tanh
    feeds = make_feeds(op, np.random.default_rng(4), 4, 2, 3, 3, 1, optional, lens=[4, 3], dtype=dtype)
    feeds["sequence_lens"] = feeds["sequence_lens"].astype(np.int32)
    attrs = {"hidden_size": 3, **attrs}
    ours, gates = run_rnn(build(op, attrs, feeds, ["Y", "Y_h"]), feeds)
    wide_type = np.float64 if dtype == np.float64 else np.float32
    assert ours[0].dtype == dtype and gates["H"].dtype == wide_type
    wide = {k: (v.astype(np.float64) if v.dtype.kind == "f" else v) for k, v in feeds.items()}
    ref = reference(op, **wide, **attrs)
    np.testing.assert_allclose(ours[0].astype(np.float64), ref[0], rtol, atol)
    check_gates(gates, ref[3], rtol, atol)


def test_bfloat16_from_opset_22():
    import ml_dtypes

    feeds32 = make_feeds("LSTM", np.random.default_rng(9), 3, 2, 2, 3, 1)
    feeds = {k: v.astype(ml_dtypes.bfloat16) for k, v in feeds32.items()}
    ours, _ = run_rnn(build("LSTM", {"hidden_size": 3}, feeds, ["Y", "Y_h", "Y_c"]), feeds)
    assert ours[0].dtype == ml_dtypes.bfloat16
    ref = reference("LSTM", **{k: v.astype(np.float64) for k, v in feeds.items()}, hidden_size=3)
    np.testing.assert_allclose(ours[0].astype(np.float64), ref[0], 2e-2, 2e-2)


def expect_error(model: onnx.ModelProto, feeds: dict, fragment: str, node: str = "rnn") -> ExecutionError:
    with pytest.raises(ExecutionError) as info:
        explorer.run(model, feeds)
    assert fragment in str(info.value) and f"'{node}'" in str(info.value)
    assert info.value.node == node
    return info.value


@pytest.mark.parametrize("op,attrs,opset,fragment", [
    ("GRU", {"layout": 1}, 7, "GRU-7 has no attribute 'layout'"),
    ("GRU", {"linear_before_reset": 1}, 1, "GRU-1 has no attribute 'linear_before_reset'"),
    ("LSTM", {"clip": 0}, 22, "attribute 'clip' is INT; the spec wants FLOAT"),
    ("LSTM", {"clip": 0.0}, 22, "clip must be positive"),
    ("GRU", {"activations": ["Sigmoid"]}, 22, "takes 2 per direction"),
    ("LSTM", {"activations": ["Sigmoid", "Tanh", "Tanh"], "direction": "bidirectional"}, 22, "6 here"),
    ("RNN", {"activations": ["Swish"]}, 22, "unknown activation 'Swish'"),
    ("RNN", {"direction": "backward"}, 22, "direction 'backward'"),
    ("GRU", {"layout": 2}, 22, "layout must be 0 or 1"),
])
def test_invalid_attributes_name_the_node(op, attrs, opset, fragment):
    nd = 2 if attrs.get("direction") == "bidirectional" else 1
    feeds = make_feeds(op, np.random.default_rng(0), 2, 1, 2, 2, nd, optional=())
    expect_error(build(op, {"hidden_size": 2, **attrs}, feeds, all_outputs(op), opset), feeds, fragment)


@pytest.mark.parametrize("change,fragment", [
    (lambda f: f.update(W=f["W"][:, :-1]), "input W has shape (1, 11, 2)"),
    (lambda f: f.update(X=f["X"][0]), "X must be 3-D"),
    (lambda f: f.update(sequence_lens=np.array([3, 1], np.int32)),
     "sequence_lens[0] = 3 is outside [0, seq_length=2]"),
    (lambda f: f.update(sequence_lens=np.array([1, 1, 1], np.int32)), "sequence_lens has shape (3,)"),
    (lambda f: f.update(initial_h=np.zeros((1, 3, 3), np.float32)), "input initial_h has shape (1, 3, 3)"),
    (lambda f: f.update(P=np.zeros((1, 3), np.float32)), "input P has shape (1, 3)"),
])
def test_invalid_inputs_name_the_node(change, fragment):
    feeds = make_feeds("LSTM", np.random.default_rng(0), 2, 2, 2, 3, 1, lens=[2, 1])
    change(feeds)
    model = build("LSTM", {"hidden_size": 3}, feeds, ["Y"])
    expect_error(model, feeds, fragment)


def test_mixed_input_types_are_refused_at_load_and_named_by_the_kernel_in_lenient_mode():
    feeds = make_feeds("LSTM", np.random.default_rng(0), 2, 2, 2, 3, 1, lens=[2, 1])
    feeds["R"] = feeds["R"].astype(np.float64)
    model = build("LSTM", {"hidden_size": 3}, feeds, ["Y"])
    with pytest.raises(explorer.ModelError, match=r"'X' is tensor\(float\) but 'R' is tensor\(double\); LSTM-\d+ wants"):
        explorer.load(model)
    with pytest.raises(ExecutionError, match="input R is float64 but X is float32"):
        explorer.run(explorer.load(model, lenient=True), feeds)


def test_hidden_size_may_be_left_to_r():
    feeds = make_feeds("GRU", np.random.default_rng(1), 3, 2, 2, 4, 1)
    ours, _ = run_rnn(build("GRU", {}, feeds, ["Y", "Y_h"]), feeds)
    theirs = onnxruntime_outputs(build("GRU", {"hidden_size": 4}, feeds, ["Y", "Y_h"]), feeds)
    np.testing.assert_allclose(ours[0], theirs[0], RTOL, ATOL)


def test_huge_gate_recording_is_refused_before_allocation():
    feeds = make_feeds("LSTM", np.random.default_rng(0), 50, 4, 2, 64, 1, optional=())
    model = explorer.load(build("LSTM", {"hidden_size": 64}, feeds, ["Y"]))
    with pytest.raises(LimitExceeded) as info:
        explorer.run(model, feeds, limits=Limits(max_tensor_bytes=300_000))  # 7 arrays of 50*4*64 floats
    assert info.value.node == "rnn" and "recording its gates" in str(info.value)
    assert info.value.limit == "max_tensor_bytes"
    explorer.run(model, feeds, limits=Limits(max_tensor_bytes=400_000))


def test_gates_survive_trace_save_and_load(tmp_path):
    feeds = make_feeds("GRU", np.random.default_rng(8), 4, 3, 2, 3, 2, lens=[4, 1, 3])
    model = build("GRU", {"hidden_size": 3, "direction": "bidirectional"}, feeds, ["Y", "Y_h"])
    trace = explorer.run(model, feeds)
    trace.save(tmp_path / "t.npz")
    loaded = explorer.Trace.load(tmp_path / "t.npz")
    check_gates(loaded.gates("rnn"), {k: np.asarray(v, np.float64) if k != "mask" else v
                                      for k, v in trace.gates("rnn").items()}, 0, 0)


def test_gates_per_iteration_of_an_enclosing_loop():
    """An RNN in a Loop body reading a captured X scaled by the iteration number: gates per iteration."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 1, 2)).astype(np.float32)
    w = rng.standard_normal((1, 3, 2)).astype(np.float32)
    r = rng.standard_normal((1, 3, 3)).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=onnx.TensorProto.FLOAT),
         helper.make_node("Mul", ["X", "fi"], ["xi"]),
         helper.make_node("RNN", ["xi", "W", "R"], ["", "h"], name="cell", hidden_size=3),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", onnx.TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond", onnx.TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", onnx.TensorProto.BOOL, []),
         helper.make_tensor_value_info("h", onnx.TensorProto.FLOAT, None)])
    loop = helper.make_node("Loop", ["n", ""], ["hs"], name="loop", body=body)
    graph = helper.make_graph(
        [loop], "g", [helper.make_tensor_value_info("n", onnx.TensorProto.INT64, [])],
        [helper.make_tensor_value_info("hs", onnx.TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(v, k) for k, v in {"X": x, "W": w, "R": r}.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    trace = explorer.run(model, {"n": np.array(3, np.int64)})
    for i in range(3):
        gates = trace.gates("loop/body/cell", (i,))
        want = reference("RNN", x * i, w, r)
        np.testing.assert_allclose(gates["H"], want[3]["H"], RTOL, ATOL)
        np.testing.assert_allclose(trace.outputs["hs"][i], want[1], RTOL, ATOL)


@pytest.mark.parametrize("batch,size", [(2, 4), (5, 4), (5, 2)])  # 5: Rᵀ kept per gate (GRU with
# linear_before_reset, LSTM); 5 with an input of 2: the LSTM's [Wᵀ; Rᵀ; biases] (step_rows.py)
@pytest.mark.parametrize("op", ["GRU", "LSTM", "RNN"])
def test_weights_kept_from_run_to_run_only_while_they_are_the_same(op, batch, size):
    """Rᵀ and Wᵀ (with the biases) are kept while R, W and B are the same read-only initializers: runs on other
    inputs still match onnxruntime, and a writeable R, W or B fed anew, changed in place between runs, is read
    afresh."""
    rng = np.random.default_rng(3)
    feeds = make_feeds(op, rng, 6, batch, size, 5, 2)
    attrs = {"hidden_size": 5, "direction": "bidirectional", **({"linear_before_reset": 1} if op == "GRU" else {})}
    weights = {k: v for k, v in feeds.items() if k in ("W", "R", "B")}
    fed = build(op, attrs, feeds, all_outputs(op))
    graph = fed.graph
    kept_inputs = [i for i in graph.input if i.name not in weights]
    del graph.input[:]
    graph.input.extend(kept_inputs)
    graph.initializer.extend(onnx.numpy_helper.from_array(v, k) for k, v in weights.items())
    model = explorer.load(fed)
    for seed in range(3):
        run_feeds = {k: v for k, v in feeds.items() if k not in weights}
        run_feeds["X"] = np.random.default_rng(seed).standard_normal(feeds["X"].shape).astype(np.float32)
        ours = explorer.run(model, run_feeds).outputs
        theirs = onnxruntime_outputs(fed, run_feeds)
        for name, value in zip([o for o in all_outputs(op) if o], theirs):
            np.testing.assert_allclose(ours[name], value, RTOL, ATOL)
    fed_model = explorer.load(build(op, attrs, feeds, all_outputs(op)))
    explorer.run(fed_model, feeds)
    for name, factor in (("R", 0.5), ("W", -0.5), ("B", 3.0)):
        feeds[name] *= factor  # the same array object, changed in place
        ours = explorer.run(fed_model, feeds).outputs
        theirs = onnxruntime_outputs(build(op, attrs, feeds, all_outputs(op)), feeds)
        for output, value in zip([o for o in all_outputs(op) if o], theirs):
            np.testing.assert_allclose(ours[output], value, RTOL, ATOL, err_msg=f"{name} changed in place")


@pytest.mark.parametrize("name", ["ts_bilstm_wide", "dynamo_lstm_wide"])
def test_real_exports_whose_lstm_steps_are_one_product_each(name, monkeypatch, made_step_rows):
    """torch.onnx's TorchScript and dynamo exports of a 2-layer nn.LSTM(4, 16) (tests/models/torch_exports, recipe
    in export_models.py there): at batch 6 the first layer's steps are one product each (an input of 4 beside 16
    hidden units), the second's are not (its input is the first's H). The outputs match onnxruntime's on two runs
    (the second reads the kept weights), and every recorded gate equals what the projection path records."""
    path = Path(__file__).parents[1] / "models" / "torch_exports" / f"{name}.onnx"
    made = made_step_rows
    model = explorer.load(path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    traces = []
    for seed in range(2):
        feeds = {"x": np.random.default_rng(seed).standard_normal((6, 7, 4)).astype(np.float32)}
        trace = explorer.run(model, feeds)
        for output, want in zip(session.get_outputs(), session.run(None, feeds)):
            np.testing.assert_allclose(trace.outputs[output.name], want, RTOL, ATOL)
        traces.append(trace)
    assert len(made) == 2  # the first layer, in each run
    lstms = [e.node for e in traces[-1].events if "gates" in e.info]
    assert len(lstms) == 2
    monkeypatch.setattr(rnn_kernel.StepRows, "pays", staticmethod(lambda size, hidden, batch: False))
    projected = explorer.run(explorer.load(path), feeds)
    assert len(made) == 2
    for node in lstms:
        for gate, value in traces[-1].gates(node).items():
            np.testing.assert_allclose(value, projected.gates(node)[gate], 1e-5, 1e-6, err_msg=f"{node} {gate}")
