// elements: made with text only through textContent; an SVG from the model parsed and
// stripped of scripts

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function safeSvg(text) {
  const doc = new DOMParser().parseFromString(text || "<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml");
  const svg = doc.documentElement;
  if (svg.nodeName !== "svg") return null;
  svg.querySelectorAll("script, foreignObject").forEach((n) => n.remove());
  svg.querySelectorAll("*").forEach((n) => {
    for (const a of Array.from(n.attributes)) {
      if (a.name.startsWith("on")) n.removeAttribute(a.name);
    }
  });
  return document.importNode(svg, true);
}
