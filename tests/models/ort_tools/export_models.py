"""The recipe of the models in this folder: tiny transformers exported by PyTorch and rewritten by onnxruntime's
transformer optimizer (onnxruntime.transformers.optimizer), and models made by onnxruntime's quantization tools
(onnxruntime.quantization: quantize_dynamic, quantize_static in QOperator and QDQ formats, MatMulNBitsQuantizer),
plus skl2onnx's text pipeline (its Tokenizer). Produced with torch 2.13.0+cpu, transformers 4.57, onnxruntime 1.32
and skl2onnx; run from this folder in an environment that has them: python export_models.py (CI has none of
them: the .onnx files and feeds.json are committed)."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper

HERE = Path(__file__).resolve().parent
OPSET = 17
FEEDS: dict[str, dict[str, dict]] = {}


def _ids(name: str, batch: int, seq: int, high: int) -> dict:
    return {name: {"shape": [batch, seq], "dtype": "int64", "high": high}}


def _export(module: torch.nn.Module, args: tuple, names: list[str], path: Path) -> None:
    dynamic = {n: {0: "batch", 1: "seq"} for n in names}
    torch.onnx.export(module, args, str(path), input_names=names, output_names=["out"], opset_version=OPSET,
                      dynamic_axes=dynamic, dynamo=False)


def _optimized(source: Path, target: str, model_type: str, heads: int, hidden: int) -> None:
    from onnxruntime.transformers.optimizer import optimize_model

    optimized = optimize_model(str(source), model_type=model_type, num_heads=heads, hidden_size=hidden,
                               opt_level=1, use_gpu=False)
    optimized.save_model_to_file(str(HERE / target))


class _First(torch.nn.Module):
    """The first output of a transformers model (its last hidden state)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.model(*args)[0]


def transformers_models(scratch: Path) -> None:
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

    torch.manual_seed(0)
    bert = BertModel(BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                intermediate_size=48, max_position_embeddings=16)).eval()
    ids, mask = torch.randint(0, 64, (2, 8)), torch.ones(2, 8, dtype=torch.int64)
    _export(_First(bert), (ids, mask, torch.zeros_like(ids)), ["input_ids", "attention_mask", "token_type_ids"],
            scratch / "bert.onnx")
    _optimized(scratch / "bert.onnx", "bert_optimized.onnx", "bert", 2, 32)
    FEEDS["bert_optimized.onnx"] = {**_ids("input_ids", 2, 8, 64), "attention_mask": {"value": [[1] * 8, [1] * 6 + [0] * 2], "dtype": "int64"},
                                    "token_type_ids": {"value": [[0] * 4 + [1] * 4] * 2, "dtype": "int64"}}

    gpt2 = GPT2Model(GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=2, n_positions=16)).eval()
    _export(_First(gpt2), (ids,), ["input_ids"], scratch / "gpt2.onnx")
    _optimized(scratch / "gpt2.onnx", "gpt2_optimized.onnx", "gpt2", 2, 32)
    FEEDS["gpt2_optimized.onnx"] = _ids("input_ids", 2, 8, 64)


    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    quantize_dynamic(str(HERE / "bert_optimized.onnx"), str(HERE / "bert_quantize_dynamic.onnx"),
                     weight_type=QuantType.QInt8, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    FEEDS["bert_quantize_dynamic.onnx"] = FEEDS["bert_optimized.onnx"]
    quantizer = MatMulNBitsQuantizer(onnx.load(str(scratch / "bert.onnx")), block_size=16, is_symmetric=False)
    quantizer.process()
    quantizer.model.save_model_to_file(str(HERE / "bert_matmul_4bits.onnx"))
    FEEDS["bert_matmul_4bits.onnx"] = FEEDS["bert_optimized.onnx"]


class SmallCnn(torch.nn.Module):
    """Conv, Add, Mul, LeakyRelu, Sigmoid, Concat, AveragePool, GlobalAveragePool, Gemm and Softmax: what the static
    quantizer rewrites into QLinear operators."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.Conv2d(3, 4, 1)
        self.c = torch.nn.Conv2d(8, 6, 3, padding=1)
        self.fc = torch.nn.Linear(6, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.a(x), self.b(x)
        y = torch.cat([torch.nn.functional.leaky_relu(a + b, 0.1), torch.sigmoid(a * b)], 1)
        y = torch.nn.functional.avg_pool2d(self.c(y), 2)
        return torch.softmax(self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1)), -1)


def quantized_cnns(scratch: Path) -> None:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    torch.manual_seed(0)
    x = torch.randn(2, 3, 8, 8)
    _export(SmallCnn().eval(), (x,), ["x"], scratch / "cnn.onnx")

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            rng = np.random.default_rng(1)
            self.items = iter([{"x": rng.standard_normal((2, 3, 8, 8)).astype(np.float32)} for _ in range(4)])

        def get_next(self) -> dict | None:
            return next(self.items, None)

    for target, form, extra in (("cnn_qoperator.onnx", QuantFormat.QOperator, {}),
                                ("cnn_qdq.onnx", QuantFormat.QDQ, {"UseQDQContribOps": True})):
        quantize_static(str(scratch / "cnn.onnx"), str(HERE / target), Reader(), quant_format=form,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, extra_options=extra)
        FEEDS[target] = {"x": {"shape": [2, 3, 8, 8], "dtype": "float32"}}


def quantized_lstm(scratch: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    rng = np.random.default_rng(2)
    hidden, inputs = 8, 6

    def weights(name: str, *shape: int) -> onnx.TensorProto:
        return onnx.numpy_helper.from_array(rng.uniform(-0.5, 0.5, shape).astype(np.float32), name)

    node = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y", "y_h", "y_c"], name="lstm", hidden_size=hidden,
                            direction="bidirectional")
    graph = helper.make_graph(
        [node], "quantized_lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", "batch", inputs])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "y_h", "y_c")],
        initializer=[weights("W", 2, 4 * hidden, inputs), weights("R", 2, 4 * hidden, hidden),
                     weights("B", 2, 8 * hidden)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]), scratch / "lstm.onnx")
    quantize_dynamic(str(scratch / "lstm.onnx"), str(HERE / "lstm_quantize_dynamic.onnx"),
                     op_types_to_quantize=["LSTM"], weight_type=QuantType.QInt8)
    FEEDS["lstm_quantize_dynamic.onnx"] = {"x": {"shape": [5, 2, inputs], "dtype": "float32"}}


def text_pipeline() -> None:
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import StringTensorType
    from sklearn.feature_extraction.text import TfidfVectorizer

    corpus = ["the cat sat on the mat", "a dog ate my homework", "The dog sat", "cats and dogs, on mats!"]
    vectorizer = TfidfVectorizer(lowercase=False).fit(corpus)  # no StringNormalizer: it needs a locale
    model = convert_sklearn(vectorizer, initial_types=[("text", StringTensorType([None, 1]))],
                            options={id(vectorizer): {"tokenexp": r"\b\w\w+\b", "separators": None}},
                            target_opset={"": OPSET, "ai.onnx.ml": 3})
    onnx.save(model, HERE / "tfidf_tokenizer.onnx")
    FEEDS["tfidf_tokenizer.onnx"] = {"text": {"value": [["The cat sat on a mat"], ["dogs and cats"]],
                                              "dtype": "object"}}


def main() -> None:
    warnings.filterwarnings("ignore")
    scratch = HERE / "scratch"
    scratch.mkdir(exist_ok=True)
    transformers_models(scratch)
    quantized_cnns(scratch)
    quantized_lstm(scratch)
    text_pipeline()
    for path in scratch.iterdir():
        path.unlink()
    scratch.rmdir()
    (HERE / "feeds.json").write_text("{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}"
                                                        for k, v in sorted(FEEDS.items())) + "\n}\n")


if __name__ == "__main__":
    main()
