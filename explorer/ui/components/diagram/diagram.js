// The diagram canvas: an SVG (laid out by graphviz on the server, or in the browser by Graphviz WebAssembly
// when the server has no `dot`) under @panzoom/panzoom, with zoom buttons, a minimap and a legend floating in its
// corners, highlighted search hits, and zoom-to-node for the selected or current node. Speaks Streamlit's
// component protocol.
import { showLegend } from "./legend.js";
import { makeStepper } from "./stepper.js";

const stage = document.getElementById("stage");
const content = document.getElementById("content");
const minimap = document.getElementById("minimap");
const mapImage = minimap.querySelector("img");
const viewport = document.getElementById("viewport");
const statusLine = document.getElementById("status");
const legend = document.getElementById("legend");
// minimap width (px); the smallest zoom at which labels can be read (graphviz's 10 pt labels at 7.5 px, its 8 pt
// lines at 6 px: at 50 % they were 5 and 4 px, too small to read without zooming)
const MAP_WIDTH = 130, READABLE = 0.75;
const TOP = 42;  // px the controls take at the top of the canvas: a tall drawing's top starts below them

const send = (type, extra) => window.parent.postMessage({ isStreamlitMessage: true, type, ...extra }, "*");
// the canvas's value for the server, numbered (see `answered` in draw); returns its number
const tell = (value) => { send("streamlit:setComponentValue", { value: { ...value, n: ++clicks }, dataType: "json" }); return clicks; };
const panzoom = Panzoom(content, { canvas: true, origin: "0 0", maxScale: 6, minScale: 0.02, step: 0.25 });
stage.addEventListener("wheel", (event) => { event.preventDefault(); autoView = null; panzoom.zoomWithWheel(event); },
                       { passive: false });

let shownKey = null, size = { w: 1, h: 1 }, args = {}, lastFocus = null, clicks = 0, graphviz = null, frameHeight = null;
let allScale = 1;  // the zoom showing the whole drawing
let autoView = null;  // the view chosen for the user (re-applied when the canvas is resized) until they move it
let mapChosen = null;  // the Map button's choice (true shown, false hidden); null: shown where it hides no node

// The minimap, in the canvas's bottom-right corner, shows only where it helps and hides nothing: not when the whole
// drawing is in view, nor over a node of the opening view (the Map button shows or hides it whatever the rule).
function placeMap(moved = false) {  // moved: the view followed a node, the map may hide, never come back
  if (mapChosen !== null) return minimap.classList.toggle("hidden", !mapChosen);
  if (moved && minimap.classList.contains("hidden")) return;
  minimap.classList.remove("hidden");
  const whole = panzoom.getScale() <= allScale * 1.001;
  const m = minimap.getBoundingClientRect();
  const covers = () => [...content.querySelectorAll("g.node")].some((node) => {
    const r = node.getBoundingClientRect();
    return r.right > m.left && r.left < m.right && r.bottom > m.top && r.top < m.bottom;
  });
  minimap.classList.toggle("hidden", whole || covers());
}

function measure() {  // the zoom showing the whole drawing on the canvas as wide as it is now
  allScale = Math.min(stage.clientWidth / size.w, (args.height - TOP) / size.h, 1) * 0.97;
  panzoom.setOptions({ minScale: allScale / 2 });
}
const svgCache = new Map(), CACHED_LAYOUTS = 8;  // the SVGs last shown, by layout name
const stateStyle = document.head.appendChild(document.createElement("style"));

function setView(scale, x, y) {
  panzoom.zoom(scale, { animate: false, force: true });
  panzoom.pan(x, y, { animate: false, force: true });
  afterChange();
}

function centerOn(cx, cy, scale) {
  setView(scale, stage.clientWidth / (2 * scale) - cx, stage.clientHeight / (2 * scale) - cy);
}

function showAll() {  // centred below the controls
  const scale = allScale;
  setView(scale, stage.clientWidth / (2 * scale) - size.w / 2, (TOP + (stage.clientHeight - TOP) / 2) / scale - size.h / 2);
}

// The opening view: the whole drawing when it can be read that way; else (a tall or wide drawing) its top at
// its width or, when that is too small to read, at a readable zoom (drag or use the minimap to move on).
function fit() {
  if (allScale >= READABLE) return showAll();
  const scale = Math.min(Math.max(stage.clientWidth / size.w * 0.97, READABLE), 1);
  setView(scale, stage.clientWidth / (2 * scale) - size.w / 2, TOP / scale);
}

function boxOf(el) {  // an element's box in content coordinates (whatever the current zoom)
  const scale = panzoom.getScale(), r = el.getBoundingClientRect(), c = content.getBoundingClientRect();
  return { x: (r.left - c.left) / scale, y: (r.top - c.top) / scale, w: r.width / scale, h: r.height / scale };
}

function find(id) {
  return id ? content.querySelector('[id="' + CSS.escape(id) + '"]') : null;
}

function zoomTo(id, keepScale) {
  const el = find(id);
  if (!el) return false;
  const b = boxOf(el);
  const readable = Math.min(stage.clientWidth / (b.w * 5), stage.clientHeight / (b.h * 7), 1);
  const scale = keepScale ? panzoom.getScale() : Math.max(readable, allScale);
  centerOn(b.x + b.w / 2, b.y + b.h / 2, scale);
  return true;
}

function mapScale() {
  return Math.min(minimap.clientWidth / size.w, minimap.clientHeight / size.h);
}

function afterChange() {
  const scale = panzoom.getScale(), pan = panzoom.getPan();
  content.classList.toggle("far", scale < 0.45);
  const k = mapScale();
  viewport.style.left = (-pan.x * k) + "px";
  viewport.style.top = (-pan.y * k) + "px";
  viewport.style.width = (stage.clientWidth / scale * k) + "px";
  viewport.style.height = (stage.clientHeight / scale * k) + "px";
  statusLine.textContent = Math.round(scale * 100) + "%";
  if (autoView && !minimap.classList.contains("hidden")) placeMap(true);  // a view chosen for the user: nothing hidden
}
content.addEventListener("panzoomchange", afterChange);

function mark() {
  content.querySelectorAll(".explorer-selected, .explorer-hit").forEach(
    (el) => el.classList.remove("explorer-selected", "explorer-hit"));
  for (const id of args.hits || []) find(id)?.classList.add("explorer-hit");
  if (args.mark) find(args.focus)?.classList.add("explorer-selected");
}

let marked = [];  // elements carrying a trace state class (st-<state>), and the badge
function applyMarks() {
  for (const el of marked) el.classList.remove(...[...el.classList].filter((c) => c.startsWith("st-")));
  marked = [];
  content.querySelector("#badge")?.remove();
  const marks = args.marks;
  if (!marks) return;
  for (const [state, ids] of Object.entries(marks.states)) {
    for (const id of ids) {
      const el = find(id);
      if (el) { el.classList.add("st-" + state); marked.push(el); }
    }
  }
  const [id, text] = marks.badge || [];
  const el = find(id);
  if (el) {
    const b = boxOf(el), badge = document.createElement("div");
    badge.id = "badge";
    badge.textContent = text;
    badge.style.left = b.x + "px";
    badge.style.top = (b.y + b.h + 2) + "px";
    content.append(badge);
  }
}

function visible(id) {  // whether an element lies wholly inside the stage at the current zoom
  const el = find(id);
  if (!el) return true;
  const r = el.getBoundingClientRect(), s = stage.getBoundingClientRect();
  return r.left >= s.left && r.right <= s.right && r.top >= s.top && r.bottom <= s.bottom;
}

function remember(name, svg) {
  svgCache.delete(name);
  svgCache.set(name, svg);
  if (svgCache.size > CACHED_LAYOUTS) svgCache.delete(svgCache.keys().next().value);
}

async function layout(dot) {
  if (!graphviz) {
    statusLine.textContent = "laying out in the browser…";
    const { Graphviz } = await import("./vendor/graphviz.js");
    graphviz = await Graphviz.load();
  }
  return graphviz.layout(dot, "svg", "dot");
}

function markDrawn() {  // what is on screen (for tests, benches)
  document.body.dataset.drawn = args.layout + "|" + (args.step ?? "") + "|" + (args.focus || "");
}
function fitHeight() {
  const height = args.height + 2 + (stepbar.style.display === "block" ? stepbar.offsetHeight + 4 : 0);
  if (height !== frameHeight) send("streamlit:setFrameHeight", { height: (frameHeight = height) });
}

// a step the canvas shows before the server's rerun: the same layout, that event's marks and box to follow
function showStep(index, frame) {
  args = { ...args, marks: frame.marks, focus: frame.focus, step: index };
  if (args.focus && args.focus !== lastFocus && !visible(args.focus)) zoomTo(args.focus, true) && placeMap(true);
  lastFocus = args.focus;
  applyMarks();
  fitHeight();
  markDrawn();
}
const stepbar = document.getElementById("stepbar");
const stepper = makeStepper(stepbar, showStep, (index) => tell({ go: index }));

async function draw() {
  if (args.pending) {  // sent ahead of its drawing (diagram.py's show_ahead): loaded, it asks for the drawing
    stage.style.height = args.height + "px";
    statusLine.textContent = "drawing…";
    fitHeight();
    if (asked !== args.pending) tell({ ready: (asked = args.pending) });
    return;
  }
  if (args.stepper) {
    clicks = Math.max(clicks, args.stepper.answered ?? 0);  // a canvas made anew numbers on from the last message
    const { index, frame } = stepper.update(args.stepper);
    document.body.dataset.answered = args.stepper.answered ?? "";  // the server's rerun reached the canvas
    if (index !== args.step && frame) args = { ...args, marks: frame.marks, focus: frame.focus, step: index };
  }
  for (const name of ["selected", "hit", "badge"]) document.body.style.setProperty("--" + name, args.colours[name]);
  if (args.state_css && stateStyle.textContent !== args.state_css) stateStyle.textContent = args.state_css;
  stage.style.height = args.height + "px";
  legend.style.maxHeight = Math.round(args.height * 0.4) + "px";
  if (args.layout !== shownKey) {
    let svg = args.svg || svgCache.get(args.layout);
    if (!svg && !args.dot) {  // a step sends only the layout's name; this canvas was re-created and lost it
      tell({ missing: args.layout });
      return;
    }
    if (!svg) svg = await layout(args.dot);
    remember(args.layout, svg);
    const before = shownKey !== null ? { scale: panzoom.getScale(), size } : null;
    content.innerHTML = svg;
    const el = content.querySelector("svg");
    const box = el.viewBox.baseVal;
    size = { w: box && box.width ? box.width : el.width.baseVal.value, h: box && box.height ? box.height : el.height.baseVal.value };
    el.setAttribute("width", size.w);
    el.setAttribute("height", size.h);
    content.style.width = size.w + "px";
    content.style.height = size.h + "px";
    measure();
    minimap.style.width = MAP_WIDTH + "px";
    minimap.style.height = Math.max(40, Math.min(args.height * 0.25, size.h * MAP_WIDTH / size.w)) + "px";
    const k = mapScale();
    if (mapImage.src) URL.revokeObjectURL(mapImage.src);
    mapImage.src = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
    mapImage.style.width = size.w * k + "px";
    mapImage.style.height = size.h * k + "px";
    shownKey = args.layout;
    const sameLayout = before && Math.abs(before.size.w - size.w) < 1 && Math.abs(before.size.h - size.h) < 1;
    const kept = sameLayout && args.focus && zoomTo(args.focus, true);
    const opening = () => {
      if (!(args.focus && !args.follow && allScale < READABLE && zoomTo(args.focus, false))) {
        fit();
        if (args.follow && args.focus && !visible(args.focus)) zoomTo(args.focus, true);
      }
      placeMap();
    };
    if (!kept) {
      opening();
      autoView = opening;
    } else placeMap();
    // and once the frame has its size (Streamlit sizes it after the first paint): hidden if it now covers a node
    requestAnimationFrame(() => requestAnimationFrame(() => placeMap(true)));
    lastFocus = args.focus;
  } else if (args.focus && args.focus !== lastFocus) {
    if (!args.follow) {
      const focus = args.focus;
      autoView = () => zoomTo(focus, false) && placeMap(true);
      autoView();
    }
    else if (!visible(args.focus)) zoomTo(args.focus, true) && placeMap(true);  // stepping: keep the zoom, pan
    lastFocus = args.focus;
  }
  mark();
  applyMarks();
  showLegend(legend, args.legend);
  afterChange();
  fitHeight();
  markDrawn();
  if (args.report && reported !== args.layout) {  // the server waits for this drawing to be painted (diagram.py)
    reported = args.layout;
    const layout = args.layout;
    requestAnimationFrame(() => requestAnimationFrame(() => tell({ drawn: layout })));
  }
}
let reported = null;  // the layout whose drawing was reported
let asked = null;  // the drawing (its name) this canvas was sent ahead of and asked for

let down = null;
stage.addEventListener("pointerdown", (e) => { down = { x: e.clientX, y: e.clientY }; autoView = null; });
content.addEventListener("click", (event) => {
  if (down && Math.hypot(event.clientX - down.x, event.clientY - down.y) > 5) return;  // a drag, not a click
  const target = event.target.closest("g.node, g.cluster");
  if (target && target.id) tell({ clicked: target.id });
});
document.getElementById("controls").addEventListener("click", (event) => {
  const act = event.target.dataset.act;
  if (act === "map") {
    mapChosen = minimap.classList.contains("hidden");
    return placeMap();
  }
  const views = { in: () => panzoom.zoomIn(), out: () => panzoom.zoomOut(), fit, all: showAll,
                  node: () => zoomTo(args.focus, false) };
  if (!views[act]) return;
  views[act]();
  autoView = act === "in" || act === "out" ? null : views[act];
});
// a canvas laid out before its frame got its width (a new iframe starts 300 px wide) re-applies its view
window.addEventListener("resize", () => {
  if (shownKey === null) return;
  measure();
  if (autoView) autoView();
  else afterChange();
});

function mapTo(event) {
  const k = mapScale();
  const r = minimap.getBoundingClientRect();
  centerOn((event.clientX - r.left) / k, (event.clientY - r.top) / k, panzoom.getScale());
}
let mapping = false;
// the overlays (controls, legend, minimap) take their own pointer events: pressing them never drags the drawing
for (const el of document.querySelectorAll(".overlay")) el.addEventListener("pointerdown", (e) => e.stopPropagation());
minimap.addEventListener("pointerdown", (e) => { mapping = true; autoView = null; mapTo(e); });
minimap.addEventListener("pointermove", (e) => { if (mapping) mapTo(e); });
window.addEventListener("pointerup", () => { mapping = false; });

let pending = Promise.resolve();
window.addEventListener("message", (event) => {
  if (event.data.type !== "streamlit:render") return;
  args = event.data.args;
  pending = pending.then(draw).catch((error) => { statusLine.textContent = "could not draw: " + error; });
});
send("streamlit:componentReady", { apiVersion: 1 });
