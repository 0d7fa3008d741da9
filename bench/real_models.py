"""The real models the kernel benchmark and the real-model tests run, each with deterministic inputs:
onnx's 'light' CNNs (their weights are stripped to ConstantOfShape fills, so seeded weights replace them),
gtcrn and silero-vad from ../shared/models, 2-layer bidirectional GRU and LSTM laid out as PyTorch exports them, and
a TorchScript Loop with an If from tests/models/torch_exports."""
from __future__ import annotations

import json
import math
from collections.abc import Collection
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"
GTCRN = SHARED / "Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx"
SILERO = SHARED / "snakers4__silero-vad/src/silero_vad/data/silero_vad.onnx"


def manifest_entries(root: Path = SHARED) -> list[dict]:
    """Entries of root/manifest.json that onnxruntime runs on random feeds of recorded shapes (tensor inputs with
    declared types only); [] when the models are absent."""
    manifest = root / "manifest.json"
    if not manifest.exists():
        return []
    found = []
    for entry in json.loads(manifest.read_text())["models"]:
        shapes = entry.get("ort_random_input_shapes")
        dtypes = {i["name"]: i.get("dtype") for i in entry.get("inputs", [])}
        if entry.get("ort_random_run") != "ok" or shapes is None:
            continue
        if any(dtypes.get(k) is None or (v and isinstance(v[0], list)) for k, v in shapes.items()):
            continue  # sequence inputs or undeclared types: no feeds to build
        found.append(entry)
    return found


PROJECT_MODELS = Path(__file__).resolve().parents[1] / "tests" / "models"


def project_models(root: Path = PROJECT_MODELS) -> list[tuple[str, Path, dict[str, np.ndarray]]]:
    """The real exports kept in the repository, as (name, path, feeds): the first of each file's feed sets (see
    project_feed_sets)."""
    return [(name, path, sets[0]) for name, path, sets in project_feed_sets(root)]


def project_feed_sets(root: Path = PROJECT_MODELS) -> list[tuple[str, Path, list[dict[str, np.ndarray]]]]:
    """The real exports kept in the repository, as (name, path, feed sets): each folder's feeds.json gives, per
    file, its inputs, or a list of such sets (e.g. one per branch of a merged decoder's If); each input a `value`
    or a seeded random `shape` (integers in [0, `high`)), with its `dtype`."""
    rng = np.random.default_rng(0)
    found = []
    for listing in sorted(root.glob("*/feeds.json")):
        for file, given in json.loads(listing.read_text()).items():
            sets = []
            for inputs in given if isinstance(given, list) else [given]:
                sets.append(feeds_of(inputs, rng))
            found.append((f"{listing.parent.name}/{file}", listing.parent / file, sets))
    return found


def tabular_models(root: Path = PROJECT_MODELS) -> list[tuple[str, Path, dict]]:
    """skl2onnx's exports of tests/models as (name, path, feeds): inputs.json gives each input a `value` and its
    `dtype`, or a `map` (a dict fed as it is)."""
    folder = root / "skl2onnx"
    listed = json.loads((folder / "inputs.json").read_text()) if (folder / "inputs.json").exists() else {}
    return [(f"skl2onnx/{file}", folder / file,
             {key: spec["map"] if "map" in spec else np.array(spec["value"], dtype=np.dtype(spec["dtype"]))
              for key, spec in inputs.items()}) for file, inputs in listed.items()]


def size_symbols(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, int]:
    """The dims the model's inputs declare by a name (a symbol; not sums of symbols), each with its size in
    `feeds`, in the order the inputs first use them."""
    sizes: dict[str, int] = {}
    for name, dims in _declared_dims(model).items():
        for dim, size in zip(dims, np.shape(feeds[name]) if name in feeds else ()):
            if dim is not None and "+" not in dim:
                sizes.setdefault(dim, int(size))
    return sizes


def _declared_dims(model: onnx.ModelProto) -> dict[str, list[str | None]]:
    return {i.name: [d.dim_param or None for d in i.type.tensor_type.shape.dim] for i in model.graph.input
            if i.type.tensor_type.HasField("shape")}


def feeds_of(inputs: dict[str, dict], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Arrays from a feeds.json set: each input a `value`, or random of its `shape` (integers in [0, `high`),
    else standard normal), of its `dtype`."""
    feeds = {}
    for name, spec in inputs.items():
        if "value" in spec:
            value = np.array(spec["value"])
        elif "high" in spec:
            value = rng.integers(0, spec["high"], spec["shape"])
        else:
            value = rng.standard_normal(spec["shape"])
        feeds[name] = value.astype(np.dtype(spec["dtype"]))
    return feeds


def other_size(model: onnx.ModelProto, feeds: dict[str, np.ndarray], grow: int = 1,
               symbols: Collection[str] | None = None) -> dict[str, np.ndarray]:
    """The same inputs at another size: every dim the model's inputs declare by a name (a symbol, or a sum of
    symbols such as optimum's `past_sequence_length + sequence_length`) grown by `grow` per symbol (only those of
    `symbols` when given), each array wrapped around along its grown axes, so token ids, masks of ones and flags
    keep their kinds of values."""
    declared = _declared_dims(model)
    sizes = size_symbols(model, feeds)
    growth = {p: grow if symbols is None or p in symbols else 0 for p in sizes}

    def grown(dim: str | None, size: int) -> int:
        parts = [] if dim is None else [p.strip() for p in dim.split("+")]
        return sum(sizes[p] + growth[p] for p in parts) if parts and all(p in sizes for p in parts) else size

    resized = {}
    for name, value in feeds.items():
        dims = declared.get(name)
        if dims is not None and len(dims) == np.ndim(value):
            for axis, (dim, size) in enumerate(zip(dims, np.shape(value))):
                target = grown(dim, size)
                if target != size and size > 0:
                    value = np.take(value, np.arange(target) % size, axis=axis)
        resized[name] = value
    return resized


def proof_sets(path: Path, sets: list[dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    """A project model's feed sets for the proofs, each at its own size and at another one (other_size: every
    named dim one larger, or, when onnxruntime does not run the model so, the first named dim alone one larger,
    then one smaller, it runs it with, explorer saying when onnxruntime refuses the model: the exporters fix
    some dims, e.g. a traced time length or batch); a model whose inputs name no dim (every size fixed) gets its
    float inputs drawn again instead."""
    model = onnx.load(str(path))
    found = []
    rng = np.random.default_rng(1)
    for feeds in sets:
        found.append(feeds)
        if not size_symbols(model, feeds):
            found.append({k: rng.standard_normal(v.shape).astype(v.dtype) if v.dtype.kind == "f" else v
                          for k, v in feeds.items()})
            continue
        symbols = size_symbols(model, feeds)
        resized = [other_size(model, feeds)] + [
            other_size(model, feeds, grow, [symbol]) for grow in (1, -1) for symbol, size in symbols.items()
            if size + grow > 0]
        runs = next((r for r in resized if _runs(path, r)), None)
        if runs is not None:
            found.append(runs)
    return found


def _runs(path: Path, feeds: dict[str, np.ndarray]) -> bool:
    """Whether onnxruntime runs the model on these feeds; explorer says, when onnxruntime refuses the model itself
    (a model computing in bfloat16: no verdict of onnxruntime's to prove it by, at any size)."""
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - onnxruntime refuses the model at any size
        import explorer

        try:
            explorer.run(explorer.load(path), feeds)
        except explorer.ExplorerError:
            return False
        return True
    try:
        session.run(None, feeds)
    except Exception:  # noqa: BLE001 - the model does not take these feeds
        return False
    return True


def manifest_feeds(entry: dict) -> dict[str, np.ndarray]:
    """Seeded random feeds of the shapes onnxruntime accepted for a manifest entry (silero-vad gets a sample rate
    it supports)."""
    rng = np.random.default_rng(0)
    dtypes = {i["name"]: np.dtype(i["dtype"]) for i in entry["inputs"] if i.get("dtype")}
    feeds = {}
    for name, shape in entry["ort_random_input_shapes"].items():
        dtype = dtypes[name]
        if dtype.kind == "f":
            value = rng.standard_normal(shape)
        elif dtype.kind == "b":
            value = rng.random(shape) < 0.5
        else:
            value = rng.integers(0, 3, shape)
        feeds[name] = np.asarray(value, dtype=dtype)
    if "sr" in feeds:
        feeds["sr"] = np.array(16000, feeds["sr"].dtype)
    return feeds


def seeded_light_model(name: str, seed: int = 0) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A light CNN (e.g. 'resnet50') with every ConstantOfShape-filled weight replaced by a seeded initializer
    (He-scaled weights, 1-D parameters in [0.5, 1.5] so variances stay positive), and a seeded input."""
    model = onnx.load(str(LIGHT / f"light_{name}.onnx"))
    rng = np.random.default_rng(seed)
    graph = model.graph
    shapes = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    kept, used_shapes = [], set()
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in shapes:
            shape = tuple(int(d) for d in shapes[node.input[0]])
            if len(shape) <= 1:
                value = rng.uniform(0.5, 1.5, shape)
            else:
                value = rng.standard_normal(shape) * math.sqrt(2.0 / max(math.prod(shape[1:]), 1))
            graph.initializer.append(numpy_helper.from_array(value.astype(np.float32), node.output[0]))
            used_shapes.add(node.input[0])
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)
    remaining = [t for t in graph.initializer if t.name not in used_shapes]
    del graph.initializer[:]
    graph.initializer.extend(remaining)
    initializers = {t.name for t in graph.initializer}
    inputs = [value for value in graph.input if value.name not in initializers | used_shapes]
    del graph.input[:]
    graph.input.extend(inputs)
    model.ir_version = max(model.ir_version, 4)  # initializers need not be listed as inputs
    feeds = {}
    for value in inputs:
        dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = rng.standard_normal(dims).astype(np.float32)
    return model, feeds


def gtcrn() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """gtcrn's streaming model with one seeded spectrogram frame and seeded caches."""
    model = onnx.load(str(GTCRN))
    rng = np.random.default_rng(0)
    feeds = {}
    for value in model.graph.input:
        dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = (rng.standard_normal(dims) * 0.1).astype(np.float32)
    return model, feeds


def silero_vad() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """silero-vad at batch 1 on 576 samples (512 plus 64 of context), 16 kHz."""
    model = onnx.load(str(SILERO))
    rng = np.random.default_rng(0)
    feeds = {"input": (rng.standard_normal((1, 576)) * 0.1).astype(np.float32),
             "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}
    return model, feeds


def bidirectional_rnn(op: str = "GRU", seq: int = 100, batch: int = 1, features: int = 64, hidden: int = 128,
                      layers: int = 2) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """nn.GRU or nn.LSTM(features, hidden, num_layers=2, bidirectional=True, batch_first=True) as torch.onnx
    exports it: Transposes around each layout-0 node (a GRU with linear_before_reset=1; an LSTM with zero initial
    cell states), directions merged by Transpose + Reshape."""
    rng = np.random.default_rng(0)
    gates = {"GRU": 3, "LSTM": 4}[op]
    nodes, inits = [], []
    nodes.append(helper.make_node("Transpose", ["x"], ["seq_first"], perm=[1, 0, 2]))
    current, width = "seq_first", features
    for layer in range(layers):
        for name, shape in (("W", (2, gates * hidden, width)), ("R", (2, gates * hidden, hidden)),
                            ("B", (2, 2 * gates * hidden))):
            value = rng.uniform(-1, 1, shape) / math.sqrt(hidden)
            inits.append(numpy_helper.from_array(value.astype(np.float32), f"{name}{layer}"))
        y = f"y{layer}"
        states = [f"h0_{layer}"] + ([f"c0_{layer}"] if op == "LSTM" else [])
        outputs = [y, f"hn{layer}"] + ([f"cn{layer}"] if op == "LSTM" else [])
        extra = {"linear_before_reset": 1} if op == "GRU" else {}
        nodes.append(helper.make_node(op, [current, f"W{layer}", f"R{layer}", f"B{layer}", "", *states], outputs,
                                      hidden_size=hidden, direction="bidirectional", **extra))
        for state in states:
            inits.append(numpy_helper.from_array(np.zeros((2, batch, hidden), np.float32), state))
        nodes.append(helper.make_node("Transpose", [y], [f"{y}_t"], perm=[0, 2, 1, 3]))
        nodes.append(helper.make_node("Reshape", [f"{y}_t", "merge_shape"], [f"{y}_merged"]))
        current, width = f"{y}_merged", 2 * hidden
    inits.append(numpy_helper.from_array(np.array([0, 0, -1], np.int64), "merge_shape"))
    nodes.append(helper.make_node("Transpose", [current], ["out"], perm=[1, 0, 2]))
    graph = helper.make_graph(
        nodes, f"bi{op.lower()}", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, features])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [batch, seq, 2 * hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    feeds = {"x": rng.standard_normal((batch, seq, features)).astype(np.float32)}
    return model, feeds


def torchscript_loop_with_if(max_len: int = 32) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """tests/models/torch_exports' greedy token decoder (a TorchScript Loop whose body holds an If), run for up to
    `max_len` steps on its seeded feeds."""
    name = "torch_exports/ts_greedy_tokens.onnx"
    path, feeds = next((path, feeds) for found, path, feeds in project_models() if found == name)
    feeds["max_len"] = np.array(max_len, feeds["max_len"].dtype)
    return onnx.load(str(path)), feeds


LIGHT_NAMES = ("resnet50", "inception_v1", "squeezenet", "vgg19", "densenet121")


def benchmark_models() -> dict[str, tuple[onnx.ModelProto, dict[str, np.ndarray]]]:
    """Every model the benchmark runs, by display name; the ../shared ones only when that folder exists."""
    models = {}
    if GTCRN.exists():
        models["gtcrn"] = gtcrn()
    if SILERO.exists():
        models["silero-vad"] = silero_vad()
    for name in LIGHT_NAMES:
        models[name] = seeded_light_model(name)
    models["bi-GRU x2"] = bidirectional_rnn("GRU")
    models["bi-LSTM x2"] = bidirectional_rnn("LSTM")
    models["Loop with If"] = torchscript_loop_with_if()
    return models
