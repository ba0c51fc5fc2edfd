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
  const nodes = new vis.DataSet(data.nodes);
  const edges = new vis.DataSet(data.edges);

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
  network.on("hoverNode", () => { $("kg-network").style.cursor = data.link_base ? "pointer" : "default"; });
  network.on("blurNode", () => { $("kg-network").style.cursor = "default"; });
})();
