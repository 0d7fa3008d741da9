"""Graph diagrams as DOT: nested clusters for control-flow bodies, collapse and drill-in, PyTorch scope
groups, trace and rewrite overlays.

Ids. Every DOT node is named by its SVG id, `kind:key[:key]` made by dot_escape.svg_id, and carries it as
its `id=` attribute (graphviz writes both: `<g id="…" class="node"><title>…</title>`); a cluster is named
`cluster:<id>` and carries `id=<id>`. Keys are percent-encoded by dot_escape.encode, which leaves ordinary
names unchanged and encodes `%&"'<>\\:`, whitespace and non-printable characters; `parse_svg_id` gives back
(kind, decoded keys), e.g. "node:Loop_0/body/Add_1" -> ("node", ("Loop_0/body/Add_1",)).

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

Graph and node paths are those of explorer.graph ("" is the main graph); a scope key is a graph's prefix and a
scope path (`/encoder/layer.0`, `Loop_0/body//encoder`) or a block of consecutive nodes (`#0-14`).
"""
from __future__ import annotations

from collections.abc import Iterable

from ..model import Model
from . import styles
from .builder import Options, SceneBuilder
from .expansion import Rule
from .overlays import RewriteOverlay, TraceOverlay
from .scene import write_dot


def model_to_dot(
    model: Model,
    *,
    graph_path: str = "",
    expand: Rule = None,
    focus: str | None = None,
    cursor: TraceOverlay | None = None,
    overlay: RewriteOverlay | None = None,
    highlight: Iterable[str] = (),
    scopes: Rule = None,
    group_scopes: bool = True,
    max_expanded_nodes: int = 40,
    max_boxes: int = 300,
    fold_initializers: bool = True,
    edge_labels: bool = True,
    rankdir: str = "TB",
) -> str:
    """DOT text of a model's diagram.

    - `graph_path`: the graph at the top of the drawing ("" the main graph, or a body's graph path).
    - `focus`: drill in to a graph path or a scope key below `graph_path`; only that part is drawn, under a
      breadcrumb back to `graph_path`, and values crossing its border show as `↑ name` / `↓ name` stubs.
    - `expand`: which bodies are drawn as clusters, the rest collapsed into their node with a badge
      (`▸ body · 12 nodes · depth 1`). None: bodies of at most `max_expanded_nodes` nodes (nested ones
      counted), plus those holding a cursor, overlay or highlighted node; "all"; "none"; a body graph path or
      an iterable of them (exactly those, with their enclosing bodies); or a mapping path -> bool overriding
      the default rule. Unknown paths raise ValueError.
    - `scopes`: the same kinds of rule over scope keys, when `group_scopes` groups PyTorch-style names
      (`/encoder/layer.0/attn/MatMul`) into clusters. None: expand scope levels while a graph shows at most
      `max_boxes` boxes, plus scopes holding a cursor, overlay or highlighted node.
    - `cursor`: a TraceOverlay (executed, current, running, error nodes; the current node's input and output
      edges). `overlay`: a RewriteOverlay (removed and added nodes). `highlight`: node paths to mark, such as
      search results.
    - `fold_initializers`: list initializers in their consumers' labels (`W ⟨3×4 float⟩`) instead of boxes.
    - `edge_labels`: label data edges with value name and type (off makes `dot` faster on huge graphs).
    """
    options = Options(graph_path=graph_path, focus=focus, expand=expand, scopes=scopes, cursor=cursor,
                      overlay=overlay, highlight=frozenset(highlight), group_scopes=group_scopes,
                      max_expanded_nodes=max_expanded_nodes, max_boxes=max_boxes,
                      fold_initializers=fold_initializers, edge_labels=edge_labels)
    root, edges = SceneBuilder(model, options).build()
    defaults = {"graph": {**styles.GRAPH_ATTRS, "rankdir": rankdir}, "node": dict(styles.NODE_ATTRS),
                "edge": dict(styles.EDGE_ATTRS)}
    return write_dot(root, edges, defaults)
