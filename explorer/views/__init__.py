"""Views: turn models, traces and rewrites into diagrams, figures and tables (no Streamlit here)."""
from .dot import model_to_dot
from .dot_escape import parse_svg_id, svg_id
from .navigation import breadcrumb, graph_title
from .overlays import RewriteOverlay, TraceOverlay
from .render import GraphvizError, GraphvizMissing, dot_available, render
from .search import SearchHit, search, search_nodes

__all__ = [
    "GraphvizError", "GraphvizMissing", "RewriteOverlay", "SearchHit", "TraceOverlay", "breadcrumb",
    "dot_available", "graph_title", "model_to_dot", "parse_svg_id", "render", "search", "search_nodes",
    "svg_id",
]
