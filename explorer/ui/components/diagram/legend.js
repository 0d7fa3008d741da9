// The canvas's legend: what the colours of the chosen overlay mean (hidden when the overlay has none).

export function showLegend(element, legend) {
  const items = (legend && legend.items) || [];
  element.style.display = items.length ? "block" : "none";
  element.replaceChildren();
  if (!items.length) return;
  const title = document.createElement("div");
  title.textContent = legend.title;
  title.style.fontWeight = "bold";
  element.append(title);
  for (const [colour, text] of items) {
    const row = document.createElement("div"), chip = document.createElement("span");
    chip.className = "chip";
    chip.style.background = colour;
    row.append(chip, document.createTextNode(text));
    element.append(row);
  }
}
