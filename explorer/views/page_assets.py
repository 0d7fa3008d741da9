"""The report page's own style sheet and script, inline: colours from views/styles.py, pan and zoom of the drawing
by wheel, drag and buttons, and nothing fetched from anywhere."""
from __future__ import annotations

from . import styles

_C = styles.REPORT_COLOURS

CSS = f"""
body {{ font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: {_C["text"]};
  background: {_C["background"]}; margin: 0 auto; padding: 12px; max-width: 1400px; }}
h1 {{ font-size: 1.35em; margin: .2em 0 .4em; overflow-wrap: anywhere; }}
h2 {{ font-size: 1.1em; margin: 1.2em 0 .4em; border-bottom: 1px solid {_C["rule"]}; }}
code, .name {{ font-family: ui-monospace, Menlo, Consolas, monospace; overflow-wrap: anywhere; }}
.verdict {{ padding: 8px 12px; background: {_C["panel"]}; border-left: 4px solid {_C["departing"]}; }}
.verdict.agree {{ border-left-color: {_C["muted"]}; }}
.muted {{ color: {_C["muted"]}; }}
.scroll {{ overflow-x: auto; }}
table {{ border-collapse: collapse; font-size: .92em; }}
th, td {{ border-bottom: 1px solid {_C["rule"]}; padding: 3px 8px; text-align: left; vertical-align: top; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
#graph {{ position: relative; height: 70vh; min-height: 320px; border: 1px solid {_C["rule"]}; overflow: hidden;
  background: {_C["background"]}; touch-action: none; cursor: grab; }}
#graph > svg {{ transform-origin: 0 0; position: absolute; left: 0; top: 0; }}
#graph-tools {{ margin: 4px 0; }}
#graph-tools button {{ font: inherit; margin-right: 4px; }}
g.node.departing path, g.node.departing polygon, g.node.departing ellipse {{
  stroke: {_C["departing"]}; stroke-width: 5px; }}
g.node.on-path path, g.node.on-path polygon {{ stroke: {_C["path"]}; stroke-width: 3px; }}
.plots {{ display: flex; flex-wrap: wrap; gap: 10px; }}
.plots svg {{ max-width: 100%; height: auto; }}
svg.plot {{ width: 560px; }}
.plot-title {{ font-size: 12px; fill: {_C["text"]}; }}
.plot-tick {{ font-size: 10px; fill: {_C["muted"]}; }}
.plot-frame {{ fill: none; stroke: {_C["rule"]}; }}
@media (max-width: 700px) {{ body {{ padding: 6px; }} #graph {{ height: 55vh; }} }}
"""

SCRIPT = """
(function () {
  var box = document.getElementById("graph");
  if (!box) { return; }
  var svg = box.querySelector("svg");
  if (!svg) { return; }
  var scale = 1, x = 0, y = 0, drag = null;
  function apply() { svg.style.transform = "translate(" + x + "px," + y + "px) scale(" + scale + ")"; }
  function fit() {
    var w = svg.viewBox.baseVal.width || svg.getBBox().width, h = svg.viewBox.baseVal.height || svg.getBBox().height;
    svg.setAttribute("width", w); svg.setAttribute("height", h);
    scale = Math.min(box.clientWidth / w, box.clientHeight / h, 1); x = (box.clientWidth - w * scale) / 2; y = 0;
    apply();
  }
  function show(id) {
    var node = document.getElementById(id);
    if (!node) { return false; }
    var b = node.getBBox(), m = node.getCTM(), root = svg.getCTM();
    var cx = b.x + b.width / 2, cy = b.y + b.height / 2;
    if (m && root) { var p = svg.createSVGPoint(); p.x = cx; p.y = cy; p = p.matrixTransform(root.inverse().multiply(m)); cx = p.x; cy = p.y; }
    scale = Math.max(scale, 1);
    x = box.clientWidth / 2 - cx * scale; y = box.clientHeight / 2 - cy * scale; apply(); return true;
  }
  box.addEventListener("wheel", function (e) {
    e.preventDefault();
    var r = box.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top;
    var k = e.deltaY < 0 ? 1.2 : 1 / 1.2;
    x = px - (px - x) * k; y = py - (py - y) * k; scale *= k; apply();
  }, {passive: false});
  box.addEventListener("pointerdown", function (e) { drag = [e.clientX - x, e.clientY - y]; box.setPointerCapture(e.pointerId); });
  box.addEventListener("pointermove", function (e) { if (drag) { x = e.clientX - drag[0]; y = e.clientY - drag[1]; apply(); } });
  box.addEventListener("pointerup", function () { drag = null; });
  var zoomIn = document.getElementById("zoom-in"), zoomOut = document.getElementById("zoom-out");
  var fitButton = document.getElementById("zoom-fit"), goButton = document.getElementById("zoom-departing");
  if (zoomIn) { zoomIn.onclick = function () { scale *= 1.25; apply(); }; }
  if (zoomOut) { zoomOut.onclick = function () { scale /= 1.25; apply(); }; }
  if (fitButton) { fitButton.onclick = fit; }
  fit();
  var target = box.getAttribute("data-focus");
  if (goButton) { goButton.onclick = function () { show(target); }; }
  if (target) { show(target); }
})();
"""
