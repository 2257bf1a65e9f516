// show_code's view: the compiled program, one line per row, syntax-highlighted in Python
// (the HTML comes from Python, pygments-escaped). A row that stands for a graph node points
// at it while the pointer rests on it (`pointed`, linked to the graph widget with jslink in
// the browser), and rows light up when the graph points at their node.
function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "tv-code";
  const title = document.createElement("div");
  title.className = "tv-code-title";
  const pre = document.createElement("pre");
  pre.className = "tv-code-pre";
  root.append(title, pre);
  el.appendChild(root);
  let rows = [];
  function point(id) {
    if (model.get("pointed") === id) return;
    model.set("pointed", id);
    model.save_changes();
  }
  function draw() {
    title.textContent = model.get("title") || "";
    pre.replaceChildren();
    rows = (model.get("rows") || []).map((r) => {
      const div = document.createElement("div");
      div.className = "tv-row tv-" + r.kind + (r.phase ? " tv-" + r.phase : "");
      div.innerHTML = r.html || "&nbsp;";
      if (r.node) {
        div.dataset.node = r.node;
        div.addEventListener("pointerenter", () => point(r.node));
        div.addEventListener("pointerleave", () => point(""));
      }
      pre.appendChild(div);
      return div;
    });
    mark();
  }
  function mark() {
    const id = model.get("pointed");
    for (const div of rows) div.classList.toggle("tv-pointed", !!id && div.dataset.node === id);
  }
  model.on("change:rows change:title", draw);
  model.on("change:pointed", mark);
  draw();
}

export default { render };
