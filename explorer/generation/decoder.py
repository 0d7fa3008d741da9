"""A decoder export as the generation loop drives it: which files run which step, the special token ids of its
config.json, and the roles of its inputs and outputs (ids, mask, positions, each past cache and the present that
feeds it next)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import onnx

from ..errors import ModelError

MERGED_FLAG = "use_cache_branch"
ENCODER_STATES, ENCODER_MASK = "encoder_hidden_states", "encoder_attention_mask"  # what the encoder gives a step
_FOLDER_FILES = (("decoder_model_merged.onnx",), ("decoder_model.onnx", "decoder_with_past_model.onnx"),
                 ("model.onnx",), ("decoder_with_past_model.onnx",))


@dataclass(frozen=True)
class CachePair:
    """A cache the loop carries: the past input a step reads and the present output that feeds the next step."""

    past: str
    present: str
    layer: int  # the layer its name gives (-1 when it names none)
    static: bool = False  # a cross-attention cache: made by the first step from the encoder's states, then kept


@dataclass
class DecoderExport:
    """The decoder graph(s) of one export: `later` runs every step that has a past (and the first one too when
    `first` is None: on an empty past, or on its `use_cache_branch` false branch when merged)."""

    later: onnx.ModelProto
    first: onnx.ModelProto | None = None
    source: str = ""
    encoder: onnx.ModelProto | None = None
    eos_token_ids: tuple[int, ...] = ()
    pad_token_id: int | None = None
    decoder_start_token_id: int | None = None
    caches: list[CachePair] = field(default_factory=list)

    @property
    def merged(self) -> bool:
        return any(i.name == MERGED_FLAG for i in self.later.graph.input)

    def input_names(self) -> list[str]:
        """The inputs the loop carries from step to step: `use_cache_branch` left out (the loop computes it), and
        what the encoder gives every step (its states and mask)."""
        fixed = {MERGED_FLAG, ENCODER_STATES, ENCODER_MASK} if self.encoder is not None else {MERGED_FLAG}
        return [i.name for i in self.later.graph.input if i.name not in fixed]

    def has_input(self, name: str) -> bool:
        return name in self.input_names()

    def logits_name(self) -> str:
        names = [o.name for o in self.later.graph.output]
        return "logits" if "logits" in names else names[0]


def present_of(past: str, outputs: list[str]) -> str | None:
    """The output that feeds `past` at the next step, as optimum (past_key_values.N.key -> present.N.key) and
    onnxruntime's transformer tools (past_N -> present_N) name them."""
    for candidate in (past.replace("past_key_values", "present"), past.replace("past", "present")):
        if candidate != past and candidate in outputs:
            return candidate
    return None


def cache_pairs(model: onnx.ModelProto, first: onnx.ModelProto | None = None) -> list[CachePair]:
    """Every past input with the present output that feeds it; a cross-attention cache (`.encoder.` in its name)
    is static, its present the first step's (`first`'s when the later steps' decoder does not return it)."""
    outputs = [o.name for o in model.graph.output] + [o.name for o in (first.graph.output if first else ())]
    pairs = []
    for value in model.graph.input:
        if "past" not in value.name:
            continue
        present = present_of(value.name, outputs)
        if present is None:
            raise ModelError(f"input {value.name!r} looks like a cache but no output feeds it next "
                             f"(outputs: {', '.join(outputs)})")
        found = re.search(r"(\d+)", value.name)
        pairs.append(CachePair(value.name, present, int(found.group(1)) if found else -1, ".encoder." in value.name))
    return pairs


def _ids(value: object) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, int))
    return ()


def open_decoder(path: str | Path, with_past: str | Path | None = None,
                 encoder: str | Path | None = None) -> DecoderExport:
    """The export at `path`: a decoder .onnx (with past inputs, or merged; `with_past` the decoder of the later
    steps when `path` has no past; `encoder` the encoder of an encoder-decoder), or an optimum-style folder
    (decoder_model_merged.onnx, or decoder_model.onnx with decoder_with_past_model.onnx, or model.onnx; with
    encoder_model.onnx for an encoder-decoder) whose config.json gives the special token ids."""
    path = Path(path)
    config: dict[str, object] = {}
    if path.is_dir():
        if (path / "config.json").exists():
            config = json.loads((path / "config.json").read_text())
        files = next((f for f in _FOLDER_FILES if all((path / name).exists() for name in f)), None)
        if files is None:
            raise ModelError(f"{path}: no decoder found (looked for {', '.join(n for f in _FOLDER_FILES for n in f)})")
        models = [onnx.load(str(path / name)) for name in files]
        if encoder is None and (path / "encoder_model.onnx").exists():
            encoder = path / "encoder_model.onnx"
    else:
        models = [onnx.load(str(path))] + ([onnx.load(str(with_past))] if with_past is not None else [])
        if (path.parent / "config.json").exists():
            config = json.loads((path.parent / "config.json").read_text())
    first = models[0] if len(models) == 2 else None
    later = models[-1]
    export = DecoderExport(later, first, str(path), None if encoder is None else onnx.load(str(encoder)),
                           _ids(config.get("eos_token_id")), next(iter(_ids(config.get("pad_token_id"))), None),
                           next(iter(_ids(config.get("decoder_start_token_id"))), None), cache_pairs(later, first))
    if not export.caches:
        raise ModelError(f"{path}: the decoder has no past inputs: nothing to carry from step to step "
                         "(pass the decoder with past, or the folder)")
    if first is not None and not {o.name for o in later.graph.output} <= {o.name for o in first.graph.output}:
        raise ModelError(f"{path}: the decoder with past returns outputs the first step's decoder does not")
    return export
