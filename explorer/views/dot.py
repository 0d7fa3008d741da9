"""Graph diagrams as DOT: nested clusters for control-flow bodies, collapse and drill-in, PyTorch scope
groups, trace and rewrite overlays.

Ids. Every DOT node is named by its SVG id, `kind:key[:key]` made by dot_escape.svg_id, and carries it as
its `id=` attribute (graphviz writes both: `<g id="…" class="node"><title>…</title>`); a cluster is named
`cluster:<id>` and carries `id=<id>`. Keys are percent-encoded by dot_escape.encode, which leaves ordinary
names unchanged and encodes `%&"'<>\\:`, whitespace and non-printable characters; `parse_svg_id` gives back
(kind, decoded keys), e.g. "node:Loop_0/body/Add_1" -> ("node", ("Loop_0/body/Add_1",)). A key longer than
dot_escape.MAX_KEY encoded is a digest in the id; the drawing maps it back (`Drawing.parse`).

    node:<node path>           an op node (for an expanded If/Loop/Scan/SequenceMap: its header box)
    exit:<node path>           the end box of an expanded control-flow node, where its outputs leave
    input:<graph path>:<i>     input number i of the main graph or of a body (formal input)
    output:<graph path>:<i>    output number i of the main graph or of a body (formal output)
    init:<graph path>:<name>   an initializer box (only with fold_initializers=False)
    scope:<scope key>          a collapsed scope box, or (cluster) an expanded scope
    graph:<graph path>         (cluster) an expanded body
    wrapper:<node path>        (cluster) the frame around an expanded control-flow node and its bodies
    outer:<value>              a value defined outside the drawn part (drill-in), drawn as `↑ value`
    outside:<value>            a value used outside a drilled-in scope, drawn as `↓ value`
    missing:<value>            a value no enclosing scope defines

Graph and node paths are those of explorer.proto.graph ("" is the main graph); a scope key is a graph's prefix and a
scope path (`/encoder/layer.0`, `Loop_0/body//encoder`) or a block of consecutive nodes (`#0-14`).
"""
from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from ..collector import collector_paused
from ..model.model import Model
from .builder import Drawing, build
from .dot_escape import long_keys
from .draw_plan import Options

_SETS = ("highlight", "reveal")


def model_to_dot(model: Model, options: Options | None = None, **choices: Any) -> Drawing:
    """The drawing of a model: `options` (an Options), with any of its fields overridden by keyword.

    - `graph_path`: the graph at the top of the drawing ("" the main graph, or a body's graph path).
    - `focus`: drill in to a graph path or a scope key below `graph_path`; only that part is drawn, under a
      breadcrumb back to `graph_path`, and values crossing its border show as `↑ name` / `↓ name` stubs.
    - `expand`: which bodies are drawn as clusters, the rest collapsed into their node with a badge
      (`▸ body · 12 nodes · depth 1`). None: bodies of at most `max_expanded_nodes` nodes (nested ones
      counted), plus those holding a cursor, overlay, highlighted or revealed node; "all"; "none"; a body graph
      path or an iterable of them (exactly those, with their enclosing bodies); or a mapping path -> bool
      overriding the default rule. Unknown paths raise ValueError.
    - `scopes`: the same kinds of rule over scope keys, when `group_scopes` groups PyTorch-style names
      (`/encoder/layer.0/attn/MatMul`) into clusters. None: expand scope levels while a graph shows at most
      `max_boxes` boxes, plus scopes holding a cursor, overlay, highlighted or revealed node.
    - `cursor`: a TraceOverlay (executed, current, running, error nodes, If branches not taken; the current
      node's input and output edges). `overlay`: a RewriteOverlay (removed and added nodes). `highlight`: node
      paths to mark, such as search results. `reveal`: node paths whose bodies and scopes are opened, unmarked
      (a selected node). `values`: a heat.NodeValues filling nodes by a number (time, max |value|, NaN/Inf).
    - `fold_initializers`: list initializers in their consumers' labels (`W ⟨3×4 float⟩`) instead of boxes.
    - `edge_labels`: label data edges with value name and type (off makes `dot` much faster on big drawings);
      None labels them only in drawings of at most draw_plan.AUTO_EDGE_LABELS boxes.
    - `rankdir`: graphviz's direction ("TB" top to bottom, "LR" left to right).
    """
    known = {f.name for f in fields(Options)}
    unknown = sorted(set(choices) - known)
    if unknown:
        raise TypeError(f"model_to_dot got unknown option {unknown[0]!r}; options: {', '.join(sorted(known))}")
    for name in _SETS:
        if name in choices:
            choices[name] = frozenset(choices[name])
    with collector_paused(), long_keys() as found:  # a big model's drawing makes objects per node: no collection
        drawing = build(model, replace(options or Options(), **choices))
    return replace(drawing, long_keys=found)
