"""Styles as data: op type -> category -> colours, node and edge states -> outline overrides."""
from __future__ import annotations

from typing import Any

# op category -> op types. An op not listed here is "other".
CATEGORY_OPS: dict[str, tuple[str, ...]] = {k: tuple(v.split()) for k, v in {
    "control": "If Loop Scan SequenceMap",
    "recurrent": "GRU LSTM RNN",
    "linear": (
        "MatMul MatMulInteger Gemm Conv ConvInteger ConvTranspose Einsum QLinearConv QLinearMatMul "
        "Attention MultiHeadAttention DeformConv"),
    "math": (
        "Add Sub Mul Div Pow Sqrt Reciprocal Exp Log Abs Neg Floor Ceil Round Sign Mod Max Min Sum Mean "
        "Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh Erf Clip BitShift BitwiseAnd BitwiseOr "
        "BitwiseXor BitwiseNot CumSum Det IsNaN IsInf"),
    "activation": (
        "Relu LeakyRelu PRelu Elu Selu Celu Gelu Sigmoid HardSigmoid HardSwish Tanh Softmax "
        "LogSoftmax Softplus Softsign Mish ThresholdedRelu Hardmax Swish"),
    "normalization": (
        "BatchNormalization LayerNormalization InstanceNormalization GroupNormalization "
        "LpNormalization MeanVarianceNormalization RMSNormalization LRN Dropout"),
    "reduction": (
        "ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum "
        "ReduceLogSumExp ReduceSumSquare ArgMax ArgMin TopK"),
    "pooling": (
        "MaxPool AveragePool GlobalAveragePool GlobalMaxPool LpPool GlobalLpPool MaxRoiPool RoiAlign "
        "MaxUnpool"),
    "shape": (
        "Reshape Transpose Squeeze Unsqueeze Flatten Shape Size Expand Concat Split Slice Gather "
        "GatherElements GatherND Scatter ScatterElements ScatterND Tile Pad DepthToSpace SpaceToDepth "
        "Resize Upsample ReverseSequence Compress NonZero Unique Trilu CenterCropPad Col2Im OneHot"),
    "logic": "Equal Less LessOrEqual Greater GreaterOrEqual And Or Not Xor Where",
    "cast": "Cast CastLike QuantizeLinear DequantizeLinear DynamicQuantizeLinear",
    "constant": (
        "Constant ConstantOfShape Range EyeLike RandomNormal RandomUniform RandomNormalLike "
        "RandomUniformLike Multinomial Bernoulli"),
    "sequence": (
        "SequenceConstruct SequenceEmpty SequenceInsert SequenceAt SequenceErase SequenceLength "
        "SplitToSequence ConcatFromSequence Optional OptionalHasElement OptionalGetElement"),
    "identity": "Identity",
}.items()}

# category -> (fill colour, border colour)
CATEGORY_COLOURS: dict[str, tuple[str, str]] = {
    "control": ("#ffe8cc", "#d9480f"),
    "recurrent": ("#f3d9fa", "#9c36b5"),
    "linear": ("#d0ebff", "#1864ab"),
    "math": ("#e9ecef", "#495057"),
    "activation": ("#d3f9d8", "#2b8a3e"),
    "normalization": ("#c5f6fa", "#0b7285"),
    "reduction": ("#fff3bf", "#e67700"),
    "pooling": ("#dbe4ff", "#364fc7"),
    "shape": ("#f1f3f5", "#868e96"),
    "logic": ("#ffdeeb", "#a61e4d"),
    "cast": ("#fff9db", "#f08c00"),
    "constant": ("#f8f9fa", "#adb5bd"),
    "sequence": ("#e5dbff", "#5f3dc4"),
    "identity": ("#ffffff", "#adb5bd"),
    "other": ("#ffffff", "#343a40"),
}

OP_CATEGORY: dict[str, str] = {op: cat for cat, ops in CATEGORY_OPS.items() for op in ops}

# Graph-level values and helper boxes.
VALUE_STYLES: dict[str, dict[str, str]] = {
    "input": {"shape": "box", "style": "rounded,filled", "fillcolor": "#ebfbee", "color": "#2b8a3e"},
    "output": {"shape": "box", "style": "rounded,filled", "fillcolor": "#e7f5ff", "color": "#1864ab"},
    "formal_input": {"shape": "box", "style": "rounded,filled", "fillcolor": "#f4fce3", "color": "#5c940d"},
    "formal_output": {"shape": "box", "style": "rounded,filled", "fillcolor": "#e3fafc", "color": "#0b7285"},
    "initializer": {"shape": "note", "style": "filled", "fillcolor": "#fff9db", "color": "#e67700"},
    "outer": {"shape": "box", "style": "rounded,dashed", "color": "#868e96", "fontcolor": "#495057"},
    "missing": {"shape": "box", "style": "rounded,dashed,filled", "fillcolor": "#fff5f5", "color": "#c92a2a"},
    "exit": {"shape": "box", "style": "rounded,filled", "fillcolor": "#ffe8cc", "color": "#d9480f"},
    "scope": {"shape": "box3d", "style": "filled", "fillcolor": "#f8f0fc", "color": "#862e9c"},
    "crumb": {"shape": "plaintext", "fontcolor": "#1864ab"},
}

# Node states, strongest first: the first state a node has decides its outline.
NODE_STATES: dict[str, dict[str, str]] = {
    "error": {"color": "#c92a2a", "fillcolor": "#ffc9c9", "penwidth": "4", "extra_style": "bold"},
    "current": {"color": "#e8590c", "penwidth": "4", "extra_style": "bold"},
    "running": {"color": "#e8590c", "penwidth": "2.5", "extra_style": "dashed"},
    "removed": {"color": "#c92a2a", "fillcolor": "#ffe3e3", "fontcolor": "#868e96", "penwidth": "2",
                "extra_style": "dashed"},
    "added": {"color": "#2b8a3e", "fillcolor": "#d3f9d8", "penwidth": "3", "extra_style": "bold"},
    "match": {"color": "#f59f00", "penwidth": "4", "extra_style": "bold"},
    "skipped": {"fillcolor": "#f8f9fa", "fontcolor": "#ced4da", "color": "#dee2e6", "extra_style": "dashed"},
    "executed": {"color": "#212529", "penwidth": "2"},
    "pending": {"fillcolor": "#ffffff", "fontcolor": "#adb5bd", "color": "#ced4da"},
}

EDGE_STYLES: dict[str, dict[str, str]] = {
    "data": {"color": "#495057"},
    "capture": {"color": "#7048e8", "style": "dashed"},
    "binding": {"color": "#adb5bd", "style": "dotted", "arrowsize": "0.6"},
    "carried": {"color": "#ae3ec9", "style": "dashed", "constraint": "false", "penwidth": "1.5"},
    "order": {"style": "invis"},
    "crumb": {"color": "#adb5bd", "arrowhead": "none"},
}

# Trace states of an edge (the current node's inputs and outputs).
EDGE_STATES: dict[str, dict[str, str]] = {
    "input": {"color": "#1c7ed6", "penwidth": "3", "fontcolor": "#1c7ed6"},
    "output": {"color": "#2b8a3e", "penwidth": "3", "fontcolor": "#2b8a3e"},
}

# Fill of body clusters by nesting depth (cycled).
CLUSTER_FILLS: tuple[str, ...] = ("#fff9f2", "#f3f0ff", "#f1fbf3", "#fff0f6")
WRAPPER_STYLE: dict[str, str] = {"style": "rounded,dashed", "color": "#d9480f"}
# Small coloured lines inside labels.
LABEL_TINTS: dict[str, str] = {"initializer": "#e67700", "collapsed": "#d9480f", "iteration": "#e8590c"}

# Value overlays (time, magnitude, NaN/Inf, error): fills from low to high, and the text colour on them.
HEAT_SCALE: tuple[str, ...] = ("#fff5f0", "#fdd0a2", "#fd8d3c", "#e6550d", "#a63603")
HEAT_FONT = "#212529"

# Plot colour scales (plotly names): values around 0 (blue below, red above), and values of one sign.
DIVERGING_SCALE = "RdBu_r"
SEQUENTIAL_SCALE = "Viridis"
# the same scales' stops for the inline SVG charts (plotly's own, low to high), and plotly's colours of a figure's
# successive series, so a chart reads the same in either form
DIVERGING_STOPS: tuple[str, ...] = ("#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7", "#fddbc7",
                                    "#f4a582", "#d6604d", "#b2182b", "#67001f")
SEQUENTIAL_STOPS: tuple[str, ...] = ("#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779",
                                     "#6ece58", "#b5de2b", "#fde725")
SERIES_COLOURS: tuple[str, ...] = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692",
                                   "#b6e880", "#ff97ff", "#fecb52")
# an inline chart's frame, grid lines and texts
CHART_COLOURS: dict[str, str] = {"text": "#262730", "muted": "#6c757d", "grid": "#e9ecef", "axis": "#adb5bd",
                                 "background": "#ffffff", "blank": "#f1f3f5"}

# Streamlit's colour directives for verdicts in the app's text: good, bad, unsure, and quiet (nothing to see).
TONES: dict[str, str] = {"good": "green", "bad": "red", "unsure": "orange", "quiet": "gray"}
# the same tones where the app writes HTML (Streamlit's red and gray), and the lines of its value tables
TONE_HEX: dict[str, str] = {"good": "#21c354", "bad": "#ff4b4b", "unsure": "#ffa421", "quiet": "#808495"}
TABLE_COLOURS: dict[str, str] = {"border": "rgba(128, 128, 128, .3)", "rule": "rgba(128, 128, 128, .15)",
                                 "head": "#f8f9fa"}


def scrolled_table_css(scope: str, max_height: int) -> str:
    """The CSS of a table in a frame (class `grid`) that scrolls under its sticky header, for HTML under class
    `scope` (views/value_html.py's value tables, views/html_blocks.py's tables of records)."""
    return (f".{scope} .grid {{ max-height: {max_height}px; overflow: auto; border: 1px solid "
            f"{TABLE_COLOURS['border']}; border-radius: 0.4rem; }}\n"
            f".{scope} table {{ border-collapse: collapse; }}\n"
            f".{scope} th, .{scope} td {{ padding: 0.1rem 0.5rem; border-bottom: 1px solid {TABLE_COLOURS['rule']}; }}\n"
            f".{scope} th {{ position: sticky; top: 0; background: {TABLE_COLOURS['head']}; color: {TONE_HEX['quiet']}; "
            "font-weight: normal; white-space: nowrap; }\n")


# code's keywords and literals where the app shows it as HTML (views/html_blocks.py; comments are quiet)
CODE_COLOURS: dict[str, str] = {"keyword": "#0b63c4", "literal": "#1a7f37"}

# A framework comparison's module points (explorer.bridge) by status: the cause (own error) apart from the modules
# that only carry the error they were handed; (fill, what it means).
MODULE_STATUS: dict[str, tuple[str, str]] = {
    "own error": ("#ffc9c9", "departs by its own error: the cause"),
    "carried": ("#ffe8cc", "departs only by the error it was handed"),
    "unknown": ("#fff3bf", "departs; its own error could not be measured"),
    "agrees": ("#d3f9d8", "agrees with the framework"),
    "unaligned": ("#f1f3f5", "no ONNX value computes it"),
}

# Highlight drawn in the browser around the selected or searched element.
SELECTION_COLOUR = "#1c7ed6"

# The standalone HTML report (explorer/share): page, side A and B in plots, their difference, the departing node
# and the dataflow path leading to it.
REPORT_COLOURS: dict[str, str] = {"text": "#212529", "muted": "#868e96", "rule": "#dee2e6", "panel": "#f8f9fa",
                                  "a": "#1c7ed6", "b": "#e8590c", "diff": "#c92a2a", "departing": "#c92a2a",
                                  "path": "#f59f00", "background": "#ffffff"}

SCOPE_CLUSTER_STYLE: dict[str, str] = {"style": "rounded", "color": "#be4bdb", "fontcolor": "#862e9c"}

GRAPH_ATTRS: dict[str, str] = {"rankdir": "TB", "fontname": "Helvetica", "fontsize": "12", "nodesep": "0.3",
                               "ranksep": "0.35", "newrank": "true"}
NODE_ATTRS: dict[str, str] = {"shape": "box", "style": "rounded,filled", "fontname": "Helvetica",
                              "fontsize": "10", "margin": "0.08,0.04", "height": "0.3"}
EDGE_ATTRS: dict[str, str] = {"fontname": "Helvetica", "fontsize": "8", "arrowsize": "0.7"}


def body_cluster_style(depth: int) -> dict[str, str]:
    """Frame and fill of an expanded body at nesting depth `depth` (1 for a body of the main graph)."""
    return {"style": "rounded,filled", "color": CATEGORY_COLOURS["control"][1],
            "fillcolor": CLUSTER_FILLS[(depth - 1) % len(CLUSTER_FILLS)]}


def category(op_type: str) -> str:
    """The style category of an op type ("other" when unknown)."""
    return OP_CATEGORY.get(op_type, "other")


def op_style(op_type: str) -> dict[str, str]:
    """Fill and border colour of an op node."""
    fill, border = CATEGORY_COLOURS[category(op_type)]
    return {"fillcolor": fill, "color": border}


def with_state(attrs: dict[str, Any], state: str | None) -> dict[str, Any]:
    """`attrs` with a node state's overrides applied (`extra_style` is appended to the style list)."""
    if state is None:
        return attrs
    out = dict(attrs)
    for key, value in NODE_STATES[state].items():
        if key == "extra_style":
            styles = [s for s in out.get("style", NODE_ATTRS["style"]).split(",") if s]
            if value not in styles:
                styles.append(value)
            out["style"] = ",".join(styles)
        else:
            out[key] = value
    return out


def tinted(text: str, tone: str) -> str:
    """`text` (markdown the app wrote, never a model's string) in the colour of a TONES tone."""
    return f":{TONES[tone]}[{text}]"
