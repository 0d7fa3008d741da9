"""The verdict the command line and the Compare page show first: compare.verdict with the recurrent nodes'
findings (rnn_report: an exporter bug, a clip, an attribute onnxruntime refuses) where the sides part at them,
so that a diagnosis is part of the verdict, never a line beside it."""
from __future__ import annotations

from ..compare import Comparison
from ..compare.verdict import Verdict, failed_node, verdict
from ..errors import ExplorerError
from ..reports.rnn_report import rnn_report
from ..spec.rnn import cell_kind


def full_verdict(result: Comparison) -> Verdict:
    """The comparison's verdict, with the warnings of the recurrent node where the sides part (A's and, when B
    is a model, B's counterpart)."""
    nodes = {g.node: g.node for g in result.gates}
    first = result.first
    if first is not None:
        nodes[first.node] = first.b_node
    failed = failed_node(result)
    if failed is not None:
        nodes.setdefault(failed, failed)
    findings: dict[str, list[str]] = {}
    for node, b_node in nodes.items():
        found: list[str] = []
        for recording, path in ((result.a, node), (result.b, b_node)):
            model = recording.model if recording is not None else None
            if model is None or path not in model.index.nodes or cell_kind(model.index.nodes[path]) is None:
                continue
            try:
                report = rnn_report(model, path, recording.trace if recording is not None else None)
            except (ExplorerError, KeyError, ValueError):
                continue
            found += [w for w in report.warnings if w not in found]
            if path == failed and recording is result.a:
                found = [f.message for f in report.findings if f.level == "error"] or found
        if found:
            findings[node] = found
    return verdict(result, findings)
