/* kg view: draws the graph embedded as JSON with vis-network. Every string from the data is set as text
   (textContent, DOM elements for tooltips), never parsed as HTML, so abstracts cannot inject markup. */
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("kg-data").textContent);
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";

  const el = window.kgCharts.el, plural = window.kgCharts.plural;  // charts.js, loaded first

  // -- tooltips: DOM elements, so vis-network shows them as built and never interprets a string as HTML --
  function nodeTip(n) {
    const d = el("div", "kg-tip");
    d.appendChild(el("div", "kg-tip-title", n.name));
    if (n.kg_type === "Paper") {
      const meta = [n.venue, n.year].filter((x) => x !== null && x !== undefined && x !== "").join(" ");
      d.appendChild(el("div", "kg-tip-meta", "Paper" + (meta ? " · " + meta : "") + " · " + n.id));
      if (n.authors && n.authors.length) d.appendChild(el("div", "kg-tip-text", n.authors.join(", ")));
      if (n.abstract) d.appendChild(el("p", "kg-tip-quote", n.abstract));
    } else {
      d.appendChild(el("div", "kg-tip-meta", n.kg_type + " · " + plural(n.paper_count, "paper") +
        (n.mention_count ? " · " + plural(n.mention_count, "mention") : "")));
      if (n.aliases && n.aliases.length) d.appendChild(el("div", "kg-tip-text", "also: " + n.aliases.join(", ")));
    }
    return d;
  }

  function edgeTip(e, names) {
    const d = el("div", "kg-tip");
    d.appendChild(el("div", "kg-tip-title", (names[e.from] || e.from) + " —" + e.kg_type + "→ " + (names[e.to] || e.to)));
    if (e.kg_type === "CO_OCCURS") {
      d.appendChild(el("div", "kg-tip-meta", "together in " + plural(e.count, "paper")));
    } else if (e.kg_type === "RELATED_TO") {
      d.appendChild(el("div", "kg-tip-meta", "related papers" + (e.score !== null && e.score !== undefined
        ? " · score " + Number(e.score).toFixed(2) : "")));
    } else {
      d.appendChild(el("div", "kg-tip-meta", e.kg_type + " · stated in " + plural(e.count, "paper") +
        (e.paper_id ? " · e.g. " + e.paper_id : "")));
    }
    if (e.sentence) d.appendChild(el("p", "kg-tip-quote", e.sentence));
    return d;
  }

  // -- legend symbols, drawn like vis-network's shapes --
  function symbol(shape, color) {
    const s = document.createElementNS(SVG, "svg");
    s.setAttribute("width", "16"); s.setAttribute("height", "16"); s.setAttribute("viewBox", "0 0 16 16");
    const pts = {
      diamond: "8,1 15,8 8,15 1,8", triangle: "8,1 15,14 1,14", triangleDown: "1,2 15,2 8,15",
      hexagon: "4,1.5 12,1.5 15.5,8 12,14.5 4,14.5 0.5,8",
      star: "8,1 9.8,6 15,6 10.8,9.2 12.4,14.5 8,11.3 3.6,14.5 5.2,9.2 1,6 6.2,6",
    };
    let shapeEl;
    if (shape === "square") {
      shapeEl = document.createElementNS(SVG, "rect");
      shapeEl.setAttribute("x", "2"); shapeEl.setAttribute("y", "2");
      shapeEl.setAttribute("width", "12"); shapeEl.setAttribute("height", "12");
    } else if (pts[shape]) {
      shapeEl = document.createElementNS(SVG, "polygon");
      shapeEl.setAttribute("points", pts[shape]);
    } else {
      shapeEl = document.createElementNS(SVG, "circle");
      shapeEl.setAttribute("cx", "8"); shapeEl.setAttribute("cy", "8"); shapeEl.setAttribute("r", "6.5");
    }
    shapeEl.setAttribute("fill", color);
    shapeEl.setAttribute("stroke", "rgba(0,0,0,0.35)");
    s.appendChild(shapeEl);
    return s;
  }

  // -- data --
  const names = {};
  for (const n of data.nodes) {
    names[n.id] = n.name;
    n.title = nodeTip(n);
  }
  for (const e of data.edges) e.title = edgeTip(e, names);
  // The page draws the labels itself (see drawLabels), so vis-network gets none to draw.
  const labels = layoutLabels();
  const nodes = new vis.DataSet(data.nodes);
  const edges = new vis.DataSet(data.edges);

  // -- labels: vis-network draws every label it is given, and in a graph of 150 nodes they pile up. The page
  // draws them after each frame instead: the hovered and selected nodes and the view's focus first, then by
  // degree in the view (then papers), each beside its node where its box crosses no label already drawn (nor
  // a node that ranks above its own); zooming in makes room for more, and hovering a node shows its own.
  // Edge labels come after every node label. --
  const LABEL = { face: "system-ui, sans-serif", min: 10, max: 30, pad: 2, edgeMin: 7, edgeMax: 16, cell: 64 };
  function layoutLabels() {
    const degree = {};
    for (const e of data.edges) {
      degree[e.from] = (degree[e.from] || 0) + 1;
      degree[e.to] = (degree[e.to] || 0) + 1;
    }
    const nodeLabels = [];
    for (const n of data.nodes) {
      if (n.label) nodeLabels.push({ id: n.id, text: String(n.label), size: (n.font && n.font.size) || 14,
                                     degree: degree[n.id] || 0, papers: n.paper_count || 0 });
      delete n.label;
    }
    nodeLabels.sort((a, b) => (b.id === data.focus) - (a.id === data.focus) || b.degree - a.degree ||
      b.papers - a.papers || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const edgeLabels = [];
    for (const e of data.edges) {
      if (e.label) edgeLabels.push({ id: e.id, from: e.from, to: e.to, text: String(e.label) });
      delete e.label;
    }
    return { nodes: nodeLabels, edges: edgeLabels, byId: new Map(nodeLabels.map((l) => [l.id, l])) };
  }

  const widths = new Map();  // text width at 1 px, per font weight and text
  function textWidth(ctx, text, bold) {
    const key = (bold ? "b" : "n") + text;
    let w = widths.get(key);
    if (w === undefined) {
      ctx.font = (bold ? "bold " : "") + "100px " + LABEL.face;
      w = ctx.measureText(text).width / 100;
      widths.set(key, w);
    }
    return w;
  }

  let hovered = null;
  let shown = [];  // the labels of the last frame, in the graph box's CSS pixels
  function drawLabels(ctx) {
    const scale = network.getScale();
    const ratio = ctx.getTransform().a / scale;  // device pixels per CSS pixel
    const W = ctx.canvas.width / ratio, H = ctx.canvas.height / ratio;  // the graph box, read without a layout
    const selected = new Set(network.getSelectedNodes());
    const first = [...new Set([hovered, ...selected])].filter((id) => id !== null && labels.byId.has(id));
    const order = first.map((id) => labels.byId.get(id)).concat(labels.nodes.filter((l) => !first.includes(l.id)));
    const rank = new Map(order.map((l, i) => [l.id, i]));

    // Two grids of boxes: the labels placed so far, and the nodes in view. A label may not cross another label,
    // nor a node that ranks above its own (a hub's label may cover a leaf; no label hides a hub; an edge's label
    // hides no node).
    const C = LABEL.cell, cols = Math.max(1, Math.ceil(W / C)), rows = Math.max(1, Math.ceil(H / C));
    const labelGrid = Array.from({ length: cols * rows }, () => []);
    const nodeGrid = Array.from({ length: cols * rows }, () => []);
    function claim(grid, b) {
      const gx1 = Math.min(cols - 1, Math.floor(b.x1 / C)), gy1 = Math.min(rows - 1, Math.floor(b.y1 / C));
      for (let gx = Math.max(0, Math.floor(b.x0 / C)); gx <= gx1; gx++) {
        for (let gy = Math.max(0, Math.floor(b.y0 / C)); gy <= gy1; gy++) grid[gx * rows + gy].push(b);
      }
    }
    // Whether the box crosses a label, or (node !== undefined) a node other than `node` ranked above `rk`
    // (Infinity: any node).
    function blocked(grid, x0, y0, x1, y1, node, rk) {
      const gx1 = Math.min(cols - 1, Math.floor(x1 / C)), gy1 = Math.min(rows - 1, Math.floor(y1 / C));
      for (let gx = Math.max(0, Math.floor(x0 / C)); gx <= gx1; gx++) {
        for (let gy = Math.max(0, Math.floor(y0 / C)); gy <= gy1; gy++) {
          for (const o of grid[gx * rows + gy]) {
            if (x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1 && (node === undefined || (o.node !== node && o.rank < rk))) {
              return true;
            }
          }
        }
      }
      return false;
    }
    const at = new Map();  // node id -> [x, y, radius] on screen, for the nodes in view
    for (const id of network.body.nodeIndices) {
      const n = network.body.nodes[id], p = network.canvasToDOM({ x: n.x, y: n.y }), r = (n.options.size || 10) * scale;
      if (p.x + r < 0 || p.x - r > W || p.y + r < 0 || p.y - r > H) continue;
      at.set(id, [p.x, p.y, r]);
      claim(nodeGrid, { x0: p.x - r, y0: p.y - r, x1: p.x + r, y1: p.y + r, node: id,
                        rank: rank.has(id) ? rank.get(id) : order.length });
    }
    const placed = [];
    const pad = LABEL.pad;
    function place(b) {
      claim(labelGrid, b);
      placed.push(b);
    }

    for (const l of order) {
      const pos = at.get(l.id);
      if (!pos || pos[0] < 0 || pos[0] > W || pos[1] < 0 || pos[1] > H) continue;  // hidden or off screen
      const [nx, ny, r] = pos, rk = rank.get(l.id);
      const px = Math.min(LABEL.max, Math.max(LABEL.min, l.size * scale));
      const bold = l.id === hovered || selected.has(l.id);
      const w = textWidth(ctx, l.text, bold) * px, h = Math.ceil(px * 1.2);
      // Below the node if there is room, else above, right or left of it; first where it covers no other node,
      // then where it covers only nodes ranked below its own. A label that would stick out at a side of the
      // graph is moved in, still against its node.
      const spots = [];
      for (const [sx, sy] of [[nx - w / 2, ny + r + 3], [nx - w / 2, ny - r - 3 - h], [nx + r + 4, ny - h / 2],
                              [nx - r - 4 - w, ny - h / 2]]) {
        const x = Math.min(Math.max(sx, 0), Math.max(0, W - w)), y = Math.min(Math.max(sy, 0), Math.max(0, H - h));
        if (!blocked(labelGrid, x - pad, y - pad, x + w + pad, y + h + pad)) spots.push([x, y]);
      }
      const spot = spots.find(([x, y]) => !blocked(nodeGrid, x - pad, y - pad, x + w + pad, y + h + pad, l.id, Infinity)) ||
        spots.find(([x, y]) => !blocked(nodeGrid, x - pad, y - pad, x + w + pad, y + h + pad, l.id, rk));
      if (!spot) continue;
      const [x, y] = spot;
      place({ x0: x - pad, y0: y - pad, x1: x + w + pad, y1: y + h + pad, kind: "node", id: l.id, text: l.text,
              x: x, y: y, w: w, h: h, px: px, bold: bold });
    }
    if (10 * scale >= LABEL.edgeMin) {
      const px = Math.min(LABEL.edgeMax, 10 * scale);
      for (const l of labels.edges) {
        const a = at.get(l.from), c = at.get(l.to);
        if (!a || !c) continue;  // an end hidden or off screen
        const w = textWidth(ctx, l.text, false) * px, h = Math.ceil(px * 1.2);
        const x = (a[0] + c[0] - w) / 2, y = (a[1] + c[1] - h) / 2;
        const x0 = x - pad, y0 = y - pad, x1 = x + w + pad, y1 = y + h + pad;
        if (x < 0 || x + w > W || y < 0 || y + h > H || blocked(labelGrid, x0, y0, x1, y1) ||
            blocked(nodeGrid, x0, y0, x1, y1, null, Infinity)) continue;
        place({ x0: x0, y0: y0, x1: x1, y1: y1, kind: "edge", id: l.id, text: l.text, x: x, y: y, w: w, h: h,
                px: px, bold: false });
      }
    }

    ctx.save();
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    ctx.lineJoin = "round";
    ctx.lineWidth = 3;
    ctx.strokeStyle = "#ffffff";
    for (const b of placed) {
      ctx.font = (b.bold ? "bold " : "") + b.px + "px " + LABEL.face;
      ctx.fillStyle = b.kind === "node" ? "#1f2328" : "#57606a";
      ctx.strokeText(b.text, b.x, b.y + b.h / 2);
      ctx.fillText(b.text, b.x, b.y + b.h / 2);
    }
    ctx.restore();
    shown = placed.map((b) => ({ kind: b.kind, id: b.id, text: b.text, x: b.x, y: b.y, w: b.w, h: b.h, px: b.px,
                                 bold: b.bold }));
  }

  // -- header --
  $("kg-title").textContent = data.title;
  $("kg-note").textContent = data.note;
  document.title = data.title + " · kg";
  $("kg-hint").textContent = data.link_base
    ? "Hover over a node or edge for details; click a node to open its own view."
    : "Hover over a node or edge for details.";

  // -- an entity's papers over time (per month where papers have dates, else per year), and its landscape --
  function drawTimeline(t) {
    const box = $("kg-timeline");
    const points = t.months.length ? t.months : t.years;
    if (!points.length || !window.kgCharts) return;
    box.appendChild(el("div", "kg-timeline-title", plural(t.papers, "paper") + " per " + (t.months.length ? "month" : "year")));
    box.appendChild(window.kgCharts.bars(points.map((p) => p.papers), points.map((p) => p.period), {
      width: 268, height: 70, color: "#4e79a7", title: "papers per " + (t.months.length ? "month" : "year"),
      extra: (i) => " of " + points[i].total + " (" + (100 * points[i].share).toFixed(2) + "%)" }));
    if (data.landscape && data.link_base) {
      const a = el("a", "kg-landscape-link", "Landscape: methods × " + (data.focus && nodes.get(data.focus) &&
        nodes.get(data.focus).kg_type === "Task" ? "datasets" : "tasks") + " →");
      a.href = new URL(data.link_base.replace(/\/+$/, "") + "/landscape/" + encodeURIComponent(data.focus), location.href).href;
      box.appendChild(a);
    }
  }
  if (data.timeline) drawTimeline(data.timeline);

  // -- a dataset's leaderboards (issue 34): a table per metric, each row's sentence a click away, and a chart of
  // the values over the years --
  function drawLeaderboard(lb) {
    const box = $("kg-leaderboard");
    if (!lb.groups.length || !window.kgCharts) return;
    box.appendChild(el("div", "kg-timeline-title", "Reported results (" + lb.kind + "s)"));
    for (const g of lb.groups) {
      const sec = el("section", "kg-lb-group");
      const how = g.ranked ? g.direction + " is better" : g.kind === "gain" ? "not ranked: each against its own baseline"
        : "direction unknown, not ranked";
      sec.appendChild(el("div", "kg-lb-metric", (g.metric || "(metric not named)") + " · " + g.unit));
      sec.appendChild(el("div", "kg-lb-how", how + " · " + plural(g.total, "row")));
      const table = el("table", "kg-lb-table");
      const head = el("tr");
      for (const h of ["#", "value", "system", "year"]) head.appendChild(el("th", null, h));
      table.appendChild(el("thead")).appendChild(head);
      const body = table.appendChild(el("tbody"));
      for (const r of g.rows) {
        const tr = el("tr", "kg-lb-row");
        tr.title = r.sentence;
        tr.appendChild(el("td", "kg-lb-rank", r.rank === null ? "–" : r.rank));
        tr.appendChild(el("td", "kg-lb-value", r.text));
        const sys = el("td", "kg-lb-system");
        const det = el("details");
        det.appendChild(el("summary", null, r.system || "(unnamed)"));
        det.appendChild(el("blockquote", "kg-lb-sentence", r.sentence));
        const url = data.link_base ? new URL(data.link_base.replace(/\/+$/, "") + "/paper/" + encodeURIComponent(r.paper_id),
          location.href) : null;
        const paper = el(url ? "a" : "span", "kg-lb-paper", r.paper_title);
        if (url) paper.href = url.href;
        det.appendChild(paper);
        sys.appendChild(det);
        tr.appendChild(sys);
        tr.appendChild(el("td", "kg-lb-year", r.year === null ? "" : r.year));
        body.appendChild(tr);
      }
      sec.appendChild(table);
      const points = g.rows.filter((r) => r.year !== null && r.value !== null).map((r) => ({
        x: r.year, y: r.value, label: (r.system || "(unnamed)") + ", " + r.year + ": " + r.text + " — " + r.sentence }));
      if (points.length > 1) {  // one value is no trend: the table says it
        sec.appendChild(window.kgCharts.scatter(points, {
          title: (g.metric || "values") + " over time", better: g.ranked ? g.direction : null,
          format: (v) => String(Math.round(v * 1000) / 1000) + (g.unit === "percent" ? "%" : g.unit === "ratio" ? "×" : "") }));
      }
      box.appendChild(sec);
    }
  }
  if (data.leaderboard) drawLeaderboard(data.leaderboard);

  // -- a paper's related papers, each with why: the specific things both have, and how alike the texts are --
  function drawRelated(items) {
    const box = $("kg-related");
    if (!items.length) return;
    box.appendChild(el("div", "kg-timeline-title", "Related papers"));
    const list = el("ol", "kg-related-list");
    for (const r of items) {
      const li = el("li", "kg-related-item");
      const url = data.link_base ? new URL(data.link_base.replace(/\/+$/, "") + "/paper/" + encodeURIComponent(r.paper.id),
        location.href) : null;
      const t = el(url ? "a" : "span", "kg-related-title", r.paper.title);
      if (url) t.href = url.href;
      li.appendChild(t);
      li.appendChild(el("div", "kg-related-why", r.why));
      list.appendChild(li);
    }
    box.appendChild(list);
  }
  if (data.related) drawRelated(data.related);

  // -- search: by name or alias; exact match first, then a prefix, then anywhere in a name --
  function norm(s) {
    return String(s).normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, " ").trim();
  }
  function singular(k) { return k.replace(/(\w\w)s$/, "$1"); }
  const index = new Map();  // key -> id; nodes arrive best-known first, so they claim shared keys
  const keyed = [];
  for (const n of data.nodes) {
    for (const name of [n.name].concat(n.aliases || [])) {
      const k = norm(name);
      if (!k) continue;
      keyed.push([k, n.id]);
      if (!index.has(k)) index.set(k, n.id);
      if (!index.has(singular(k))) index.set(singular(k), n.id);
    }
  }
  const datalist = $("kg-names");
  const seenNames = new Set();
  for (const n of data.nodes.slice(0, 2000)) {
    for (const name of [n.name].concat(n.aliases || [])) {
      if (seenNames.has(name)) continue;
      seenNames.add(name);
      const o = document.createElement("option");
      o.value = name;
      datalist.appendChild(o);
    }
  }

  function find(q) {
    const k = norm(q);
    if (!k) return null;
    const exact = index.get(k) || index.get(singular(k));
    if (exact) return exact;
    const prefix = keyed.find(([key]) => key.startsWith(k));
    if (prefix) return prefix[1];
    const inside = keyed.find(([key]) => key.includes(k));
    return inside ? inside[1] : null;
  }

  const hiddenTypes = new Set();
  let network = null;

  function search(q) {
    const msg = $("kg-search-msg");
    const id = find(q);
    if (id === null) {
      msg.textContent = "No node named “" + q + "” in this view.";
      msg.className = "kg-miss";
      if (data.link_base && String(q).trim()) {
        // Served: the papers of the whole graph by meaning and words (the search page), one click away.
        const a = el("a", "kg-search-all", " Search all papers for “" + q + "” →");
        a.href = new URL(data.link_base.replace(/\/+$/, "") + "/search?q=" + encodeURIComponent(q), location.href).href;
        msg.appendChild(a);
      }
      return null;
    }
    const node = nodes.get(id);
    if (hiddenTypes.has(node.kg_type)) setTypeVisible(node.kg_type, true);
    network.selectNodes([id]);
    network.focus(id, { scale: Math.max(network.getScale(), 1.2), animation: { duration: 400, easingFunction: "easeInOutQuad" } });
    msg.textContent = "Found " + node.name + " (" + node.kg_type + ")";
    msg.className = "";
    return id;
  }
  $("kg-search-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    search($("kg-search").value);
  });

  // -- legend and type filter --
  const boxes = {};
  function setTypeVisible(type, visible) {
    if (visible) hiddenTypes.delete(type); else hiddenTypes.add(type);
    if (boxes[type]) boxes[type].checked = visible;
    nodes.update(nodes.getIds({ filter: (n) => n.kg_type === type }).map((id) => ({ id: id, hidden: !visible })));
  }
  const legend = $("kg-legend");
  for (const t of data.types) {
    const label = el("label", "kg-type");
    label.dataset.type = t.type;
    const box = document.createElement("input");
    box.type = "checkbox";
    box.checked = true;
    box.addEventListener("change", () => setTypeVisible(t.type, box.checked));
    boxes[t.type] = box;
    label.appendChild(box);
    label.appendChild(symbol(t.shape, t.color));
    label.appendChild(el("span", "kg-name", t.type));
    label.appendChild(el("span", "kg-count", t.count));
    legend.appendChild(label);
  }

  // -- links between views --
  function viewUrl(id) {
    if (!data.link_base) return null;
    const n = nodes.get(id);
    const kind = n.kg_type === "Paper" ? "paper" : "entity";
    const url = new URL(data.link_base.replace(/\/+$/, "") + "/" + kind + "/" + encodeURIComponent(id), location.href);
    return /^(https?|file):$/.test(url.protocol) ? url.href : null;
  }

  // -- the network: physics lays it out, then stops so a few thousand nodes stay responsive --
  const view = {
    nodes: nodes, edges: edges, ready: false, kind: data.kind, focusId: data.focus, counts: data.counts,
    search: search, find: find, setTypeVisible: setTypeVisible, viewUrl: viewUrl,
    drawn: () => ({ nodes: network.body.nodeIndices.length, edges: network.body.edgeIndices.length }),
    legendTypes: () => Array.from(legend.querySelectorAll(".kg-type")).map((e) => e.dataset.type),
    labels: () => shown.slice(),
  };
  network = new vis.Network($("kg-network"), { nodes: nodes, edges: edges }, data.options);
  view.network = network;
  window.kgView = view;

  function done() {
    network.setOptions({ physics: false });
    network.fit();
    if (data.focus !== null && nodes.get(data.focus)) network.selectNodes([data.focus]);
    $("kg-loading").hidden = true;
    view.ready = true;
    document.body.dataset.ready = "true";
  }
  network.on("stabilizationProgress", (p) => {
    $("kg-loading").textContent = "Laying out the graph… " + Math.round((100 * p.iterations) / p.total) + "%";
  });
  if (data.nodes.length === 0) done(); else network.once("stabilizationIterationsDone", done);

  network.on("click", (params) => {
    if (params.nodes.length !== 1 || params.nodes[0] === data.focus) return;
    const url = viewUrl(params.nodes[0]);
    if (!url) return;
    const src = params.event && params.event.srcEvent;
    if (src && (src.ctrlKey || src.metaKey)) window.open(url, "_blank", "noopener"); else location.assign(url);
  });
  network.on("afterDrawing", drawLabels);
  network.on("hoverNode", (p) => {
    $("kg-network").style.cursor = data.link_base ? "pointer" : "default";
    hovered = p.node;
    network.redraw();
  });
  network.on("blurNode", () => {
    $("kg-network").style.cursor = "default";
    hovered = null;
    network.redraw();
  });
})();
