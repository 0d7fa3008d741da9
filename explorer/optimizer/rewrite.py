"""The optimizer's entry point: a model in, its nodes named by their ids, the driver run over its main graph, the
optimized model written and kept within its size limit."""
from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

import onnx

from ..budgets import FOLD_GROWTH, FOLD_GROWTH_MIN_BYTES, OPTIMIZER_ROUNDS
from ..collector import collector_paused
from ..judge.judge import warm_onnxruntime
from ..model.model import GivenModel, Model, load, value_info_names
from ..model.model_inference import copy_fields, model_bytes
from ..proto.graph import node_ids, subgraph_attributes
from .acceptance import accepted
from .context import Context, RewriteKey
from .driver import Driver
from .pattern import Pattern
from .record import ModelHeader
from .result import OnnxruntimeCheck, OptimizationResult
from .scope import all_names, name_nodes
from .size import drop_value_info, fit_size, graphs, size_limit
from .state import GraphState


def _without_graph(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of a model's fields but its graph (which the optimizer rebuilds: its initializers are not copied
    twice)."""
    shell = onnx.ModelProto()
    copy_fields(model, shell, skip="graph")
    return shell


def _named(graph: onnx.GraphProto) -> onnx.GraphProto:
    """The graph itself when every node (bodies too) is named by its static id already, as exporters name them;
    else a copy of it but its initializers (the optimizer reads those from the original) whose nodes are. Either
    way the nodes' paths are those GraphIndex gives the original."""
    if _has_ids(graph):
        return graph
    named = onnx.GraphProto()
    copy_fields(graph, named, skip="initializer")
    name_nodes(named)
    return named


def _has_ids(graph: onnx.GraphProto) -> bool:
    if not all(node.name for node in graph.node):
        return False  # an unnamed node's id is never its name
    return all(node.name == node_id and all(_has_ids(body) for _, body in subgraph_attributes(node))
               for node, node_id in zip(graph.node, node_ids(graph)))


def optimize(model: Model | str | bytes | onnx.ModelProto, *, patterns: Iterable[str | Pattern] | None = None,
             exclude: Iterable[str] = (), stop_after: int | None = None, max_rounds: int = OPTIMIZER_ROUNDS,
             lenient: bool = False, check: bool = True,
             refused: Mapping[RewriteKey, str] | None = None) -> OptimizationResult:
    """Rewrites a model with the selected patterns (default: all) until nothing matches. `stop_after=N` applies
    only the first N rewrites (bisection); `exclude` drops patterns by name. The input is never modified.
    `lenient` loads a path, bytes or proto in lenient mode (a Model keeps the mode it was loaded in). `check`
    loads the result in onnxruntime at the end: a rewrite whose result onnxruntime refuses is not applied
    (acceptance.py; `result.onnxruntime` says what it found, or why it was not asked). `refused` names rewrites
    not to apply, each with why (RewriteStep.key)."""
    from .patterns import select_patterns

    if check:
        warm_onnxruntime()  # its child imports onnxruntime while the rewrites run
    with collector_paused():
        chosen = select_patterns(patterns, exclude)
        # the checker's complaints are warnings, which an optimization does not report
        loaded = model if isinstance(model, Model) else load(model, lenient=lenient, check=False)

        def rerun(refusals: dict[RewriteKey, str], count: int | None) -> OptimizationResult:
            return _optimize(loaded, chosen, stop_after if count is None else count, max_rounds, refusals)

        result = rerun(dict(refused or {}), None)
        if not check:
            result.onnxruntime = OnnxruntimeCheck("not checked", "check=False")
            return result
        return accepted(result, rerun)


def first_rewrites(result: OptimizationResult, count: int) -> OptimizationResult:
    """The model after the first `count` rewrites of `result`: the same optimization run again, stopped there
    (the rewrites onnxruntime refused left out as they were; not checked in onnxruntime itself)."""
    found = optimize(result.model or result.original, patterns=result.selected, stop_after=count, check=False,
                     refused=result.refused, lenient=result.lenient)
    if result.inferred_value_info_dropped:
        drop_value_info(found.optimized, result.declared_value_info())
        found.inferred_value_info_dropped = True
    return found


def _optimize(loaded: Model, chosen: list[Pattern], stop_after: int | None, max_rounds: int,
              refused: dict[RewriteKey, str]) -> OptimizationResult:
    start = time.perf_counter()
    given = loaded.given or GivenModel(model_bytes(loaded.proto), value_info_names(loaded.proto.graph))
    original = loaded.proto  # read, never changed
    named = {n.name for g in graphs(original.graph) for n in g.node if n.name}
    opsets = {(o.domain if o.domain != "ai.onnx" else ""): o.version for o in original.opset_import}
    ctx = Context(opsets=opsets, ir_version=original.ir_version,
                  size_budget=max(FOLD_GROWTH_MIN_BYTES, int(given.bytes * FOLD_GROWTH)), refused=refused)
    all_names(original.graph, ctx.names)
    header = ModelHeader(original.ir_version, tuple(original.opset_import), tuple(original.functions))
    driver = Driver(chosen, ctx, header, stop_after=stop_after, max_rounds=max_rounds)
    # read, never changed: edits make new protos
    main = GraphState(_named(original.graph), ctx, initializers=original.graph.initializer)
    driver.optimize_graph(main)
    optimized = _without_graph(original)
    main.to_graph(optimized.graph)
    main.unlink()
    moved = fit_size(optimized, size_limit(given.bytes), set(given.value_info), named)
    return OptimizationResult(original, optimized, driver.steps, list(driver.stats.values()), ctx.declined,
                              driver.stopped, driver.rounds, time.perf_counter() - start, chosen,
                              loaded.lenient, moved, model=loaded, refused=refused, weights=ctx.weights)
