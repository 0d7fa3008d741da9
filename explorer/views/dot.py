"""Graph diagrams as DOT: nested clusters for control-flow bodies, collapse and drill-in, PyTorch scope groups,
trace and rewrite overlays.

Ids (stable across drawings, so an SVG element maps back to what it shows). `encode(s)` leaves ordinary names
unchanged and percent-encodes `%&"'<>\\:`, whitespace and non-printable characters (see dot_escape):

| drawn thing                          | DOT node / cluster name        | SVG `id=` (graphviz writes it as is)  |
|--------------------------------------|--------------------------------|---------------------------------------|
| op node (header of an expanded one)  | `encode(path)`                 | `node:<encode(path)>`                 |
| end box of an expanded If/Loop/Scan  | `exit:<encode(path)>`          | the same                              |
| graph or body input number i         | `input:<encode(graph)>:<i>`    | the same                              |
| graph or body output number i        | `output:<encode(graph)>:<i>`   | the same                              |
| collapsed scope                      | `scope:<encode(key)>`          | the same                              |
| initializer box (fold_initializers=False) | `init:<encode(graph)>:<encode(name)>` | the same                     |
| value from outside the view / used outside / undefined | `outer:…`, `outside:…`, `missing:…` + encode(name) | the same |
| body cluster                         | `cluster:graph:<encode(graph)>` | `graph:<encode(graph)>`              |
| expanded scope cluster               | `cluster:scope:<encode(key)>`  | `scope:<encode(key)>`                 |
| frame around an expanded node        | `cluster:wrapper:<encode(path)>` | `wrapper:<encode(path)>`            |

`parse_svg_id(id)` gives back (kind, decoded keys), e.g. ("node", ("Loop_0/body/Add_1",)). graphviz also writes
the DOT name of each node and cluster as its SVG `<title>`. Graph paths and node paths are those of
explorer.graph; a scope key is a graph's prefix followed by the scope path (`/encoder/layer.0`).
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
