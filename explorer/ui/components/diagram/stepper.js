// The Step page's stepper on the canvas: its moves (first, back, next, last, by iteration, by node, to the first
// NaN/Inf, previous/next iteration of every loop level around the event) and a slider over the events. The
// server sends the frames of the events around the cursor (views/step_moves.py); a move to one of them is shown
// at once (`show(index, frame)`), then the server is told (`tell(index)` returns the message's number) and its
// rerun follows. A rerun answering an older move than the last one told is not shown over it.
export function makeStepper(bar, show, tell) {
  let data = null, shown = null, asked = null, sliding = false;
  const top = document.createElement("div"), bottom = document.createElement("div");
  top.className = bottom.className = "row";
  const buttons = document.createElement("span"), slider = document.createElement("input");
  const position = document.createElement("div"), levels = document.createElement("span");
  slider.type = "range";
  slider.min = 0;
  slider.setAttribute("aria-label", "Event");
  position.className = "position";
  top.append(buttons, slider);
  bottom.append(levels);
  bar.append(top, position, bottom);

  function button([name, icon, label, help, target]) {
    const b = document.createElement("button");
    b.dataset.name = name;
    b.title = help;
    b.textContent = label ? icon + " " + label : icon;
    b.setAttribute("aria-label", label || help);
    if (target === null || target === undefined) b.disabled = true;
    else b.dataset.go = target;
    return b;
  }

  function render(index) {
    const frame = data.frames[index];
    position.textContent = frame ? frame.text : "Event " + index + " of 0–" + data.last;
    if (!sliding) slider.value = index;
    if (!frame) return;  // sliding past the frames sent: the moves follow when the server does
    buttons.replaceChildren(...frame.moves.filter((m) => !m[5]).map(button));
    const groups = new Map();
    for (const move of frame.moves.filter((m) => m[5])) groups.set(move[5], [...(groups.get(move[5]) || []), move]);
    levels.replaceChildren(...[...groups].map(([text, moves]) => {
      const group = document.createElement("span");
      group.className = "group";
      group.append(text + " ", ...moves.map(button));
      return group;
    }));
  }

  function go(index) {
    const frame = data.frames[index];
    if (frame) show(index, frame);
    shown = index;
    render(index);
    asked = { index, n: tell(index) };
  }

  bar.addEventListener("click", (event) => {
    const b = event.target.closest("button[data-go]");
    if (b && !b.disabled) go(Number(b.dataset.go));
  });
  slider.addEventListener("input", () => {
    sliding = true;
    const index = Number(slider.value), frame = data.frames[index];
    if (frame) show(index, frame);
    render(index);
  });
  slider.addEventListener("change", () => { sliding = false; go(Number(slider.value)); });
  document.addEventListener("keydown", (event) => {  // arrow keys step back and forth while the canvas has focus
    const name = { ArrowLeft: "back", ArrowRight: "next" }[event.key];
    const b = name && buttons.querySelector(`button[data-name="${name}"]`);
    if (b && !b.disabled) { event.preventDefault(); go(Number(b.dataset.go)); }
  });

  // The server's args.stepper: {at, last, frames, set, answered: the number of the last message it has seen}. It
  // sends only the frames this canvas lacks: those of the same set are kept.
  // Returns the event to show and its frame: the server's, or (while it has not seen the last move) the one shown.
  function update(stepper) {
    const stale = asked !== null && (stepper.answered ?? -1) < asked.n;
    const kept = data && (stale || data.set === stepper.set) ? data.frames : {};
    data = { ...stepper, frames: { ...kept, ...stepper.frames } };
    if (!stale) asked = null;
    shown = stale ? shown : stepper.at;
    slider.max = stepper.last;
    bar.style.display = stepper.last > 0 ? "block" : "none";
    render(shown);
    return { index: shown, frame: data.frames[shown] };
  }

  return { update };
}
