"""Loading a model: parse (model_source.py), map its weights (external_data.py), checker complaints as warnings,
shape inference, node paths."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import onnx

from ..collector import collector_paused
from ..errors import ModelError, cause_text
from ..files.atomic_write import remember_loaded
from ..proto.graph import GraphRef, NodeRef, subgraph_attributes
from ..proto.graph_index import GraphIndex
from ..proto.weights import FileSource, WeightSource
from .external_data import map_external_data
from .feeds import example_inputs
from .model_guards import check_domains, check_sparse, import_implied_domains, inference_too_costly, survey
from .model_inference import check_and_infer, copy_fields, model_bytes
from .model_source import parse_model
from .typing_rules import violations
from .value_spec import ValueSpec, value_spec

# Domains explorer can run natively (onnx.reference covers them); others need a model-local function.
KNOWN_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview"})


@dataclass(frozen=True)
class GivenModel:
    """What the model was before loading added inferred value_info: its bytes (its weights included, wherever
    they are) and its declared value_info names (the optimizer keeps its output within a margin of that size),
    its main graph without initializers (which loading leaves as they are) when inference changed it, and whether
    it kept weights in external data files."""

    bytes: int
    value_info: frozenset[str]
    graph: onnx.GraphProto | None = None
    external: bool = False


class Model:
    """A loaded ONNX model: the (shape-inferred) proto, warnings, and every node of every graph by static path.
    Its big weights are not in the proto: `weights` holds the sources they are read from (weights.py)."""

    def __init__(self, proto: onnx.ModelProto, *, source: str = "<memory>", warnings: list[str] | None = None,
                 lenient: bool = False, given: GivenModel | None = None, weights: tuple[WeightSource, ...] = (),
                 path: Path | None = None):
        self.proto = proto
        self.given = given  # the model as given, before shape inference (None when built from a proto directly)
        self.weights = weights  # kept alive as long as the model
        self.path = path  # the file it was loaded from, if any
        self.source = source
        self.lenient = lenient  # loaded in lenient mode: models derived from it (optimized, rewritten) are too
        self.warnings: list[str] = list(warnings or [])
        self.opsets: dict[str, int] = {(o.domain or ""): o.version for o in proto.opset_import}
        if "ai.onnx" in self.opsets and "" not in self.opsets:
            self.opsets[""] = self.opsets["ai.onnx"]
        self.functions = {(f.domain, f.name): f for f in proto.functions}

    @cached_property
    def index(self) -> GraphIndex:
        """Every graph and node by static path (built on first use: optimizing a model needs none)."""
        with collector_paused():
            return GraphIndex(self.proto.graph, self.functions)

    @cached_property
    def sha256(self) -> str:
        """The (shape-inferred) model's key, computed on first use: sha256 of its proto, where each mapped tensor
        names its weight source by a token of the source's content (bytes) or identity (a file's path, size and
        modification time)."""
        return hashlib.sha256(self.proto.SerializeToString(deterministic=True)).hexdigest()

    @property
    def graph(self) -> onnx.GraphProto:
        return self.proto.graph

    def as_given(self) -> onnx.ModelProto:
        """The model exactly as its source has it, without the types loading inferred (what onnxruntime is
        handed: an inferred type onnx got wrong would make it refuse a model that runs); `proto` itself when
        loading added nothing."""
        shell = self.given.graph if self.given is not None else None
        if shell is None:
            return self.proto
        model = onnx.ModelProto()
        copy_fields(self.proto, model, skip="graph")
        copy_fields(shell, model.graph)
        model.graph.initializer.extend(self.proto.graph.initializer)
        return model

    def nodes(self) -> Iterator[NodeRef]:
        """Every node of every graph (nested bodies included), depth-first, with its static path."""
        return self.index.iter_nodes()

    def node(self, path: str) -> NodeRef:
        """The node with this static path; KeyError naming the path when there is none."""
        try:
            return self.index.nodes[path]
        except KeyError:
            raise KeyError(f"no node with path {path!r}") from None

    def graphs(self) -> list[GraphRef]:
        return list(self.index.graphs.values())

    @cached_property
    def initializer_names(self) -> frozenset[str]:
        """Names of the main graph's initializers (an input that is also one is an optional feed)."""
        return frozenset(t.name for t in self.graph.initializer)

    @cached_property
    def inputs(self) -> list[ValueSpec]:
        """Declared graph inputs the caller must feed (inputs that are also initializers are optional feeds)."""
        return [value_spec(i) for i in self.graph.input if i.name not in self.initializer_names]

    @cached_property
    def outputs(self) -> list[ValueSpec]:
        return [value_spec(o) for o in self.graph.output]

    def example_inputs(self, seed: int = 0, dims: dict[str, int] | None = None) -> dict[str, Any]:
        """Random dtype-correct feeds from the declared input types; symbolic dims from `dims`, else 2."""
        return example_inputs(self, seed=seed, dims=dims)

    def __repr__(self) -> str:
        return f"Model({self.source!r}, {len(self.index.nodes)} nodes, opsets={self.opsets})"


def load(source: str | os.PathLike | bytes | onnx.ModelProto, *, base_dir: str | os.PathLike | None = None,
         label: str | None = None, lenient: bool = False, check: bool = True, max_nodes: int | None = None) -> Model:
    """Loads a model from a path, bytes or a ModelProto (never modified). External data is read only from
    files inside the model's folder (`base_dir` for bytes/protos). `label` names the model in messages (e.g. an
    uploaded file's name; default: the path, `<bytes>` or `<ModelProto>`). Raises ModelError on bad input,
    including a model that breaks the spec's typing rules (see typing_rules.py); `lenient=True` loads such a
    model anyway, each broken rule a warning that starts with "lenient mode". `check=False` skips onnx's checker,
    whose complaints are only warnings (for callers that do not show them, such as the optimizer). A model of
    more than `max_nodes` nodes (its bodies' included) is refused before anything is built of it."""
    try:
        with collector_paused():  # parsing and checking make objects per node: no collection meanwhile
            return _load(source, base_dir, label, lenient, check, max_nodes)
    except RecursionError:
        raise ModelError(f"{label or 'the model'} is nested too deeply to load") from None
    except MemoryError:
        raise ModelError(f"{label or 'the model'} does not fit in memory") from None


def _load(source: str | os.PathLike | bytes | onnx.ModelProto, base_dir: str | os.PathLike | None,
          label: str | None, lenient: bool, check: bool = True, max_nodes: int | None = None) -> Model:
    warnings: list[str] = []
    parsed = parse_model(source, base_dir, label)
    proto, label = parsed.proto, parsed.label
    _validate_header(proto, label)
    found = survey(proto, label)
    if max_nodes is not None and found.nodes > max_nodes:
        raise ModelError(f"{label} has {found.nodes:,} nodes, more than the {max_nodes:,} this app loads (its "
                         "operator's cap: nodes)")
    mapped = map_external_data(found.tensors, parsed.base_dir, label, stripped=parsed.stripped,
                               trusted=parsed.trusted)
    for sparse in found.sparse:
        check_sparse(sparse)
    warnings += import_implied_domains(proto, found.foreign)
    check_domains(proto, found.foreign, KNOWN_DOMAINS)
    skipped = inference_too_costly(found)
    warnings += [skipped] if skipped else []
    shell = None
    if not skipped:
        shell = onnx.GraphProto()
        copy_fields(proto.graph, shell, skip="initializer")
    given = GivenModel(model_bytes(proto), frozenset(found.value_info), shell, mapped.external)
    proto = check_and_infer(proto, warnings, cause_text, infer=not skipped, check=check,
                            data_prop=found.shared_name is None)
    broken = violations(proto)
    if broken and not lenient:
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        raise ModelError(f"{label} breaks the spec's typing rules: {broken[0]}{more}; onnxruntime refuses such a "
                         "model (load it with lenient=True, or --lenient, to run it anyway)")
    warnings += [f"lenient mode: {problem}" for problem in broken]
    _remember_files(parsed.path, mapped.files)
    return Model(proto, source=label, warnings=warnings, lenient=lenient, given=given,
                 weights=tuple(mapped.sources), path=parsed.path)


def _remember_files(path: Path | None, sources: list[WeightSource]) -> None:
    """Records a loaded model's files (its source, the files its weights are mapped from) with the process's
    writers (atomic_write.py): no save of this process may write over them."""
    if path is not None:
        remember_loaded(path)
    for source in sources:
        if isinstance(source, FileSource):
            remember_loaded(source.fileno())


def value_info_names(graph: onnx.GraphProto) -> frozenset[str]:
    """Names with a value_info entry in a graph or any body nested in it."""
    found = {info.name for info in graph.value_info}
    for node in graph.node:
        for _, body in subgraph_attributes(node):
            found |= value_info_names(body)
    return frozenset(found)




def _validate_header(proto: onnx.ModelProto, label: str) -> None:
    if proto.ir_version <= 0:
        raise ModelError(f"{label} is not an ONNX model (no IR version)")
    if not proto.HasField("graph"):
        raise ModelError(f"{label} has no graph")
    if proto.ir_version > onnx.IR_VERSION:
        raise ModelError(
            f"{label} uses IR version {proto.ir_version}; this onnx {onnx.__version__} supports up to {onnx.IR_VERSION}"
        )
    max_opset = onnx.defs.onnx_opset_version()
    for op in proto.opset_import:
        if op.domain in ("", "ai.onnx") and op.version > max_opset:
            raise ModelError(f"{label} imports opset {op.version} of the ONNX domain; the newest known is {max_opset}")
        if op.domain in ("", "ai.onnx") and op.version < 1:
            raise ModelError(f"{label} imports an invalid opset version {op.version}")
    imports_onnx = any(op.domain in ("", "ai.onnx") for op in proto.opset_import)
    if not imports_onnx and proto.ir_version >= 3 and any(n.domain in ("", "ai.onnx") for n in proto.graph.node):
        raise ModelError(f"{label} uses ONNX operators but does not import the ONNX opset")
