"""If / Loop / Scan / SequenceMap: each body execution is a child frame of the engine, recorded per iteration.

Loop follows onnxruntime where the spec's mode table and its text disagree: the body's `cond` output is a
loop-carried value that ends the loop when false, even when the `cond` input is omitted.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ExecutionError, where
from ..proto.body_signatures import BodySignature, body_signature
from .body_values import declared_rank, empty_stack, one_value, stack_outputs
from .ops.base import Call, OpNode, SpecialKernel

if TYPE_CHECKING:
    from ..trace.trace import EventInfo
    from .compiled import Bodies


def _signature(op: OpNode, attribute: str = "body") -> BodySignature:
    """The body's signature; ExecutionError naming the node when node and body do not fit the spec."""
    signature = body_signature(op.node.proto, op.opset, attribute)
    if signature.problems:
        raise op.error(signature.problems[0])
    return signature


def _check_slice_rank(bodies: Bodies, body_path: str, name: str, rank: int, call: Call) -> None:
    """A scan input's slices must have the rank the body declares for that input (when it declares one)."""
    tp = bodies.value_type(body_path, name)
    if tp is None or not tp.HasField("tensor_type") or not tp.tensor_type.HasField("shape"):
        return
    declared = len(tp.tensor_type.shape.dim)
    if declared != rank:
        raise ExecutionError(f"{where(call.path, call.op_type, call.iteration)}: its slices of rank {rank} feed body "
                             f"input {name!r}, declared with rank {declared}", node=call.path, op_type=call.op_type,
                             iteration=call.iteration)


def if_kernel(op: OpNode, bodies: Bodies) -> SpecialKernel:
    then_path, else_path = f"{op.path}/then_branch", f"{op.path}/else_branch"
    for branch in ("then_branch", "else_branch"):
        _signature(op, branch)

    def run(args: Sequence[Any], call: Call) -> tuple[list[Any], EventInfo]:
        branch = "then_branch" if one_value(args[0], "cond", call) else "else_branch"
        body = bodies.graph(then_path if branch == "then_branch" else else_path)
        base = call.engine.body_frame(body, call.env, call.path, "If", call.iteration)
        outputs = call.engine.run_body(body, base, [], call.iteration)
        return outputs, {"branch": branch}

    return run


def loop_kernel(op: OpNode, bodies: Bodies) -> SpecialKernel:
    body_path = f"{op.path}/body"
    signature = _signature(op)
    n_carried = len(signature.carried)
    iteration_shape = (1,) * declared_rank(bodies, body_path, signature.inputs[0])
    cond_shape = (1,) * declared_rank(bodies, body_path, signature.inputs[1])

    def run(args: Sequence[Any], call: Call) -> tuple[list[Any], EventInfo]:
        body = bodies.graph(body_path)
        engine = call.engine
        trip = args[0] if len(args) > 0 else None
        cond = args[1] if len(args) > 1 else None
        max_trip = int(one_value(trip, "M (trip count)", call)) if trip is not None else None
        keep_going = bool(one_value(cond, "cond", call)) if cond is not None else True
        cond_value = np.full(cond_shape, keep_going)
        carried = list(args[2:])
        n_scan = len(body.output_names) - 1 - n_carried
        scans: list[list[Any]] = [[] for _ in range(n_scan)]
        base = engine.body_frame(body, call.env, call.path, "Loop", call.iteration)
        i = 0
        while True:
            if max_trip is not None and i >= max_trip:
                reason = "trip count reached"
                break
            if not keep_going:
                reason = "cond false"
                break
            counter = np.array(i, dtype=np.int64)
            inputs = [counter.reshape(iteration_shape) if iteration_shape else counter, cond_value, *carried]
            outputs = engine.run_iteration(body, base, inputs, call.path, "Loop", call.iteration, i)
            cond_value = outputs[0]
            if type(cond_value) is np.ndarray and cond_value.size == 1:  # one_value's usual case, inline
                keep_going = bool(cond_value.item())
            else:
                keep_going = bool(one_value(cond_value, "the body's cond output", call))
            carried = outputs[1:1 + n_carried]
            for store, element in zip(scans, outputs[1 + n_carried:]):
                store.append(element)
            i += 1
        stacked = [
            stack_outputs(store, 0, call, name) if store else empty_stack(bodies, body_path, name)
            for store, name in zip(scans, body.output_names[1 + n_carried:])
        ]
        return [*carried, *stacked], {"stop_reason": reason, "iterations": i}

    return run


def scan_kernel(op: OpNode, bodies: Bodies) -> SpecialKernel:
    body_path = f"{op.path}/body"
    signature = _signature(op)
    m = len(signature.scan_inputs)
    if signature.batch_axis is not None:
        return _scan8(bodies, body_path, signature)
    in_axes = [s.axis for s in signature.scan_inputs]
    reverse = [s.reverse for s in signature.scan_inputs]
    out_axes = [s.axis for s in signature.scan_outputs]
    prepend = [s.reverse for s in signature.scan_outputs]

    def run(args: Sequence[Any], call: Call) -> tuple[list[Any], EventInfo]:
        body = bodies.graph(body_path)
        n = len(args) - m
        states, scan_inputs = list(args[:n]), args[n:]
        axes = []
        for j, x in enumerate(scan_inputs):
            axis = in_axes[j]
            if not -x.ndim <= axis < x.ndim:
                raise ExecutionError(f"{where(call.path, 'Scan', call.iteration)}: scan_input_axes[{j}]={axis} is "
                                     f"out of range for input of shape {x.shape}", node=call.path,
                                     op_type="Scan", iteration=call.iteration)
            axes.append(axis % x.ndim)
            _check_slice_rank(bodies, body_path, body.input_names[n + j], x.ndim - 1, call)
        lengths = {x.shape[a] for x, a in zip(scan_inputs, axes)}
        if len(lengths) > 1:
            raise ExecutionError(f"{where(call.path, 'Scan', call.iteration)}: scan inputs have different sequence "
                                 f"lengths {sorted(lengths)}", node=call.path, op_type="Scan",
                                 iteration=call.iteration)
        length = lengths.pop() if lengths else 0
        k = len(body.output_names) - n
        elements: list[list[Any]] = [[] for _ in range(k)]
        engine = call.engine
        base = engine.body_frame(body, call.env, call.path, "Scan", call.iteration)
        leading = [(slice(None),) * a for a in axes]  # a slice is a view: scanned values are never written to
        for t in range(length):
            slices = [x[lead + (length - 1 - t if rev else t, ...)] for x, lead, rev in zip(scan_inputs, leading, reverse)]
            outputs = engine.run_iteration(body, base, [*states, *slices], call.path, "Scan", call.iteration, t)
            states = outputs[:n]
            for store, element in zip(elements, outputs[n:]):
                store.append(element)
        results = []
        for j, (store, name) in enumerate(zip(elements, body.output_names[n:])):
            axis = out_axes[j]
            if not store:
                results.append(empty_stack(bodies, body_path, name, axis))
                continue
            rank = np.ndim(store[0]) + 1
            if not -rank <= axis < rank:
                raise ExecutionError(f"{where(call.path, 'Scan', call.iteration)}: scan_output_axes[{j}]={axis} is "
                                     f"out of range for rank {rank}", node=call.path, op_type="Scan",
                                     iteration=call.iteration)
            results.append(stack_outputs(store[::-1] if prepend[j] else store, axis % rank, call, name))
        return [*states, *results], {"iterations": length}

    return run


def _scan8(bodies: Bodies, body_path: str, signature: BodySignature) -> SpecialKernel:
    """Scan opset 8: batch axis 0, sequence axis 1, optional sequence_lens, per-input directions."""
    m = len(signature.scan_inputs)
    reverse = [s.reverse for s in signature.scan_inputs]

    def run(args: Sequence[Any], call: Call) -> tuple[list[Any], EventInfo]:
        body = bodies.graph(body_path)
        lens, rest = args[0], args[1:]
        n = len(rest) - m
        inits, scan_inputs = rest[:n], rest[n:]
        batch = scan_inputs[0].shape[0] if scan_inputs else (inits[0].shape[0] if inits else 0)
        max_len = scan_inputs[0].shape[1] if scan_inputs else 0
        seq_lens = [max_len] * batch if lens is None else [int(v) for v in np.asarray(lens).ravel()]
        if len(seq_lens) != batch or any(not 0 <= s <= max_len for s in seq_lens):
            raise ExecutionError(f"{where(call.path, 'Scan', call.iteration)}: sequence_lens {seq_lens} does not "
                                 f"fit batch {batch} x max length {max_len}", node=call.path, op_type="Scan",
                                 iteration=call.iteration)
        engine = call.engine
        base = engine.body_frame(body, call.env, call.path, "Scan", call.iteration)
        k = len(body.output_names) - n
        final_states: list[list[Any]] = [[] for _ in range(n)]
        outputs_per_batch: list[list[Any]] = [[] for _ in range(k)]
        counter = 0
        for b in range(batch):
            states = [s[b] for s in inits]
            elements: list[list[Any]] = [[] for _ in range(k)]
            steps = seq_lens[b]
            for t in range(steps):
                slices = [x[b, steps - 1 - t if reverse[j] else t] for j, x in enumerate(scan_inputs)]
                outputs = engine.run_iteration(body, base, [*states, *slices], call.path, "Scan", call.iteration,
                                               counter, {"batch": b, "t": t})
                states = outputs[:n]
                for store, element in zip(elements, outputs[n:]):
                    store.append(element)
                counter += 1
            for store, state in zip(final_states, states):
                store.append(state)
            for j, store in enumerate(elements):
                outputs_per_batch[j].append(store)
        results = [stack_outputs(s, 0, call, name) for s, name in zip(final_states, body.output_names[:n])]
        for j, per_batch in enumerate(outputs_per_batch):
            name = body.output_names[n + j]
            template = next((e for store in per_batch for e in store), None)
            if template is None:
                empty = empty_stack(bodies, body_path, name, 0)
                results.append(np.zeros((batch, max_len, *empty.shape[1:]), dtype=empty.dtype))
                continue
            template = np.asarray(template)
            out = np.zeros((batch, max_len, *template.shape), dtype=template.dtype)
            for b, store in enumerate(per_batch):
                if store:
                    out[b, :len(store)] = stack_outputs(store, 0, call, name)
            results.append(out)
        return results, {"iterations": counter}

    return run


def sequence_map_kernel(op: OpNode, bodies: Bodies) -> SpecialKernel:
    body_path = f"{op.path}/body"
    _signature(op)

    def run(args: Sequence[Any], call: Call) -> tuple[list[Any], EventInfo]:
        body = bodies.graph(body_path)
        first = args[0]
        if not isinstance(first, list):
            raise ExecutionError(f"{where(call.path, 'SequenceMap', call.iteration)}: input_sequence must be a "
                                 "sequence", node=call.path, op_type="SequenceMap", iteration=call.iteration)
        count = len(first)
        for j, extra in enumerate(args[1:], start=1):
            if isinstance(extra, list) and len(extra) != count:
                raise ExecutionError(f"{where(call.path, 'SequenceMap', call.iteration)}: sequence input {j} has "
                                     f"{len(extra)} elements, input_sequence has {count}", node=call.path,
                                     op_type="SequenceMap", iteration=call.iteration)
        engine = call.engine
        base = engine.body_frame(body, call.env, call.path, "SequenceMap", call.iteration)
        results: list[list[Any]] = [[] for _ in body.output_names]
        for i in range(count):
            inputs = [a[i] if isinstance(a, list) else a for a in args]
            outputs = engine.run_iteration(body, base, inputs, call.path, "SequenceMap", call.iteration, i)
            for store, value in zip(results, outputs):
                store.append(value)
        return results, {"iterations": count}

    return run
