// tapeviz BackpropStepper controls and panel (anywidget ESM): every step's HTML is here
// (`pages`, made and escaped by Python), so a click shows its step at once and the kernel is
// told afterwards (`value`); the stepper links `value` in the browser to the panel and to the
// graph's highlight `frame`. Keyboard: the slider takes the arrow keys.

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function render({ model, el: root }) {
  const part = model.get("part");
  root.classList.add("tv-stepper", "tv-stepper-" + part);
  const body = el("div", "tv-step-body");
  const pageOf = (v) => {
    const pages = model.get("pages") || [];
    if (pages[v - 1]) return pages[v - 1];
    return model.get("page_at") === v ? model.get("page") : "";
  };
  let shown = null;
  const drawBody = () => {
    const html = pageOf(model.get("value"));
    if (html !== shown) { shown = html; body.innerHTML = html; }  // Python escaped every value
  };
  if (part === "panel") {
    root.appendChild(body);
    drawBody();
    model.on("change:value change:pages change:page change:page_at", drawBody);
    return () => {};
  }
  const go = (v) => {
    const n = model.get("count");
    v = Math.min(Math.max(1, v), n);
    if (v === model.get("value")) return;
    model.set("value", v);
    model.save_changes();
  };
  const bar = el("div", "tv-step-bar");
  // words and an arrow (before or after them) that every font has
  const button = (text, title, target) => {
    const b = el("button", "tv-step-button", text);
    b.title = title;
    b.addEventListener("click", () => go(target()));
    bar.appendChild(b);
    return b;
  };
  const first = button("\u00ab first", "first step", () => 1);
  const back = button("\u2039 back", "back step", () => model.get("value") - 1);
  const play = el("button", "tv-step-button tv-step-play", "\u25b6 play");
  play.title = "play the steps";
  bar.appendChild(play);
  const next = button("next \u203a", "next step", () => model.get("value") + 1);
  const last = button("last \u00bb", "last step", () => model.get("count"));
  const label = el("label", "tv-step-label", "step ");
  const slider = el("input", "tv-step-slider");
  slider.type = "range";
  slider.min = 1;
  slider.addEventListener("input", () => go(+slider.value));
  const readout = el("span", "tv-step-readout");
  label.append(slider, readout);
  bar.appendChild(label);
  let timer = null;
  const stop = () => { clearInterval(timer); timer = null; play.textContent = "\u25b6 play"; };
  play.addEventListener("click", () => {
    if (timer) { stop(); return; }
    if (model.get("value") >= model.get("count")) go(1);
    play.textContent = "\u2016 pause";
    timer = setInterval(() => {
      if (model.get("value") >= model.get("count")) stop();
      else go(model.get("value") + 1);
    }, Math.max(50, model.get("interval_ms")));
  });
  const drawBar = () => {
    const v = model.get("value"), n = model.get("count");
    first.disabled = back.disabled = v <= 1;
    next.disabled = last.disabled = v >= n;
    slider.max = n;
    slider.value = v;
    readout.textContent = ` ${v} / ${n}`;
  };
  root.append(body, bar);
  drawBody();
  drawBar();
  model.on("change:value", () => { drawBody(); drawBar(); });
  model.on("change:count", drawBar);
  model.on("change:pages change:page change:page_at", drawBody);
  return stop;
}

export default { render };
