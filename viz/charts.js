/* kg charts: bar charts and sparklines (and the element helpers the pages share) drawn as inline SVG by the page itself (no library, no network).
   Labels are set with textContent, so no data string is ever parsed as markup. */
(function () {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";

  function node(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined) e.textContent = String(text);
    return e;
  }

  // An HTML element holding `text` as text: every page builds its markup this way, never from strings.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  // A bar chart of `values` (with `labels` under the first, middle and last bars, and a hover title per bar).
  function bars(values, labels, opts) {
    const o = Object.assign({ width: 260, height: 90, color: "#4e79a7", unit: "papers", extra: null }, opts || {});
    const n = values.length, top = Math.max(1, ...values), pad = 16;
    const svg = node("svg", { width: o.width, height: o.height, viewBox: "0 0 " + o.width + " " + o.height,
                              class: "kg-chart", role: "img" });
    svg.appendChild(node("title", {}, o.title || "chart"));
    const w = n ? (o.width - 2) / n : 0, h = o.height - pad - 4;
    values.forEach((v, i) => {
      const bh = v ? Math.max(1.5, (h * v) / top) : 0;
      const r = node("rect", { x: 1 + i * w + (w > 4 ? 0.5 : 0), y: 4 + h - bh, width: Math.max(0.5, w - (w > 4 ? 1 : 0)),
                               height: bh, fill: o.color, class: "kg-bar" });
      r.appendChild(node("title", {}, labels[i] + ": " + v + " " + o.unit + (o.extra ? o.extra(i) : "")));
      svg.appendChild(r);
    });
    svg.appendChild(node("line", { x1: 0, x2: o.width, y1: 4 + h + 0.5, y2: 4 + h + 0.5, stroke: "#d0d7de" }));
    const ticks = n > 2 ? [0, Math.floor(n / 2), n - 1] : [...Array(n).keys()];
    for (const i of ticks) {
      const anchor = i === 0 ? "start" : i === n - 1 ? "end" : "middle";
      const x = i === 0 ? 1 : i === n - 1 ? o.width - 1 : 1 + (i + 0.5) * w;
      svg.appendChild(node("text", { x: x, y: o.height - 2, "text-anchor": anchor, class: "kg-tick" }, labels[i]));
    }
    return svg;
  }

  // A sparkline: one small bar per value, scaled to the largest.
  function spark(values, opts) {
    const o = Object.assign({ width: 120, height: 22, color: "#4e79a7" }, opts || {});
    const n = values.length, top = Math.max(1, ...values);
    const svg = node("svg", { width: o.width, height: o.height, viewBox: "0 0 " + o.width + " " + o.height,
                              class: "kg-spark", role: "img" });
    svg.appendChild(node("title", {}, o.title || values.join(" ")));
    const w = n ? o.width / n : 0;
    values.forEach((v, i) => {
      if (!v) return;
      const bh = Math.max(1.5, ((o.height - 2) * v) / top);
      svg.appendChild(node("rect", { x: i * w, y: o.height - bh, width: Math.max(0.6, w - 0.6), height: bh,
                                     fill: o.color, class: "kg-bar" }));
    });
    svg.appendChild(node("line", { x1: 0, x2: o.width, y1: o.height - 0.5, y2: o.height - 0.5, stroke: "#d0d7de" }));
    return svg;
  }

  // Values over time: one dot per point ({x: year, y: value, label}), the x axis from the first to the last year,
  // the y axis from the lowest to the highest value (`better` "higher" or "lower" marks which end is better).
  function scatter(points, opts) {
    const o = Object.assign({ width: 260, height: 110, color: "#59a14f", title: "values over time", better: null,
                              format: (v) => String(v) }, opts || {});
    const pad = { l: 4, r: 4, t: 12, b: 16 };
    const svg = node("svg", { width: o.width, height: o.height, viewBox: "0 0 " + o.width + " " + o.height,
                              class: "kg-chart kg-scatter", role: "img" });
    svg.appendChild(node("title", {}, o.title));
    const pts = points.filter((p) => typeof p.x === "number" && typeof p.y === "number" && isFinite(p.y));
    if (!pts.length) return svg;
    const xs = pts.map((p) => p.x), ys = pts.map((p) => p.y);
    const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    const w = o.width - pad.l - pad.r, h = o.height - pad.t - pad.b;
    const px = (x) => pad.l + 6 + (x1 === x0 ? (w - 12) / 2 : ((x - x0) * (w - 12)) / (x1 - x0));
    const py = (y) => pad.t + (y1 === y0 ? h / 2 : h - ((y - y0) * h) / (y1 - y0));
    svg.appendChild(node("line", { x1: pad.l, x2: o.width - pad.r, y1: pad.t + h + 0.5, y2: pad.t + h + 0.5,
                                   stroke: "#d0d7de" }));
    for (const p of pts) {
      const c = node("circle", { cx: px(p.x).toFixed(1), cy: py(p.y).toFixed(1), r: 3.5, fill: o.color,
                                 "fill-opacity": 0.75, class: "kg-dot" });
      c.appendChild(node("title", {}, p.label));
      svg.appendChild(c);
    }
    const top = o.format(y1) + (o.better === "higher" ? " (better)" : ""), bottom = o.format(y0) +
      (o.better === "lower" ? " (better)" : "");
    svg.appendChild(node("text", { x: pad.l, y: pad.t - 2, class: "kg-tick" }, top));
    if (y1 !== y0) svg.appendChild(node("text", { x: o.width - pad.r, y: pad.t + h - 3, "text-anchor": "end",
                                                  class: "kg-tick" }, bottom));
    svg.appendChild(node("text", { x: pad.l, y: o.height - 3, class: "kg-tick" }, String(x0)));
    if (x1 !== x0) svg.appendChild(node("text", { x: o.width - pad.r, y: o.height - 3, "text-anchor": "end",
                                                  class: "kg-tick" }, String(x1)));
    return svg;
  }

  window.kgCharts = { bars: bars, spark: spark, scatter: scatter, el: el, plural: plural };
})();
