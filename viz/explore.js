/* kg explore pages: the trends of a store and the landscape of a task or dataset, drawn from the JSON the
   page embeds. Every string from the data is set as text (textContent), never parsed as HTML. */
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("kg-data").textContent);
  const $ = (id) => document.getElementById(id);
  const charts = window.kgCharts;
  const TYPE_COLOR = { method: "#f28e2b", model: "#e15759", dataset: "#59a14f", task: "#b07aa1",
                       metric: "#edc948", concept: "#76b7b2" };

  const el = charts.el, plural = charts.plural;
  function pct(x) { return (100 * x).toFixed(x < 0.001 && x > 0 ? 3 : 2) + "%"; }

  // Links to the other views of this server (or none, for a page written to a file).
  function link(kind, id, text) {
    if (!data.link_base) return el("span", "kg-name", text);
    const a = el("a", "kg-name", text);
    const url = new URL(data.link_base.replace(/\/+$/, "") + "/" + kind + "/" + encodeURIComponent(id), location.href);
    if (/^(https?|file):$/.test(url.protocol)) a.href = url.href;
    return a;
  }

  function typeDot(type) {
    const s = el("span", "kg-dot");
    s.style.background = TYPE_COLOR[type] || "#bab0ac";
    s.title = type;
    return s;
  }

  const view = { kind: data.kind, ready: false, charts: () => document.querySelectorAll("svg.kg-chart, svg.kg-spark").length };
  window.kgExplore = view;
  $("kg-title").textContent = data.title;
  document.title = data.title + " · kg";
  $("kg-note").textContent = data.note || "";

  // -- trends ------------------------------------------------------------------------------------------
  function trendTable(title, items, t) {
    const sec = el("section", "kg-section");
    sec.dataset.list = title.split(" ")[0].toLowerCase();
    sec.appendChild(el("h2", null, title + " (" + items.length + ")"));
    if (!items.length) { sec.appendChild(el("p", "kg-muted", "None.")); return sec; }
    const table = el("table", "kg-table");
    const head = el("tr");
    for (const h of ["entity", "type", t.before.label, t.after.label, "share", "score", "papers per " + t.bucket]) {
      head.appendChild(el("th", null, h));
    }
    table.appendChild(head);
    for (const it of items) {
      const tr = el("tr");
      tr.dataset.id = it.entity.id;
      const name = el("td", "kg-entity");
      name.appendChild(typeDot(it.entity.type));
      name.appendChild(link("entity", it.entity.id, it.entity.name));
      tr.appendChild(name);
      tr.appendChild(el("td", "kg-muted", it.entity.type));
      tr.appendChild(el("td", "kg-num", it.before));
      tr.appendChild(el("td", "kg-num", it.after));
      tr.appendChild(el("td", "kg-num", pct(it.before_share) + " → " + pct(it.after_share)));
      tr.appendChild(el("td", "kg-num " + (it.score > 0 ? "kg-up" : "kg-down"), (it.score > 0 ? "+" : "") + it.score.toFixed(2)));
      const sp = el("td");
      sp.appendChild(charts.spark(it.series, { color: TYPE_COLOR[it.entity.type] || "#4e79a7",
        title: it.entity.name + ": " + t.buckets.map((b, i) => b + " " + it.series[i]).join(", ") }));
      tr.appendChild(sp);
      table.appendChild(tr);
    }
    sec.appendChild(table);
    return sec;
  }

  function drawTrends(t) {
    const main = $("kg-main");
    if (t.buckets.length) {
      const box = el("div", "kg-overall");
      box.appendChild(el("div", "kg-muted", "All papers per " + t.bucket + ", " + t.buckets[0] + " – " + t.buckets[t.buckets.length - 1]));
      box.appendChild(charts.bars(t.totals, t.buckets, { width: 520, height: 80, color: "#9aa4ae", title: "papers per " + t.bucket }));
      main.appendChild(box);
    }
    if (!t.before) { main.appendChild(el("p", "kg-muted", t.note)); return; }
    $("kg-note").textContent = t.before.label + " (" + plural(t.before.papers, "paper") + ") → " + t.after.label + " (" +
      plural(t.after.papers, "paper") + ")" + (t.type ? " · " + t.type + " entities" : "") + " · ranked with ≥ " +
      plural(t.min_count, "paper") + " in one period; score = ln of the share ratio, one paper added to each count" +
      (t.note ? " · " + t.note : "");
    main.appendChild(trendTable("Rising", t.rising, t));
    main.appendChild(trendTable("Falling", t.falling, t));
    main.appendChild(trendTable("New in " + t.after.label, t.new, t));
  }

  // The period boxes show, greyed, the periods the page compares (typed in, they compare others), each box
  // wide enough for its period.
  function periodPlaceholders(t) {
    const form = $("kg-form");
    if (!form || !t.before) return;
    for (const [name, period] of [["from", t.before], ["to", t.after]]) {
      const input = form.elements[name];
      input.placeholder = period.label;
      input.style.width = Math.max(10, period.label.length + 2, input.value.length + 2) + "ch";
    }
  }

  // The filter form rebuilds the page's URL (the page may submit no form: its policy says form-action 'none').
  function wireForm(fields) {
    const form = $("kg-form");
    if (!form) return;
    const q = data.query || {};
    for (const k of fields) if (form.elements[k] && q[k] !== null && q[k] !== undefined) form.elements[k].value = q[k];
    if (!data.link_base) { form.hidden = true; return; }
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const url = new URL(location.href);
      for (const k of fields) {
        const v = form.elements[k].value.trim();
        if (v) url.searchParams.set(k, v); else url.searchParams.delete(k);
      }
      location.assign(url.href);
    });
  }

  // -- landscape -------------------------------------------------------------------------------------
  function drawLandscape(ls) {
    const main = $("kg-main");
    const byKey = new Map(ls.cells.map((c) => [c.row + "\u0000" + c.column, c]));
    const top = Math.max(1, ...ls.cells.map((c) => c.count));
    const metricName = new Map(ls.metrics.map((m) => [m.entity.id, m.entity.name]));
    const wrap = el("div", "kg-matrix-wrap");
    const table = el("table", "kg-matrix");
    const head = el("tr");
    head.appendChild(el("th", "kg-corner", "methods and models ↓ · " + ls.column_type + "s →"));
    for (const c of ls.columns) {
      const th = el("th", "kg-col");
      th.dataset.id = c.entity.id;
      th.title = c.entity.name + " · " + c.entity.type + " · " + plural(c.papers, "paper");
      th.appendChild(link("entity", c.entity.id, c.entity.name));
      th.appendChild(el("div", "kg-muted", plural(c.papers, "paper")));
      head.appendChild(th);
    }
    table.appendChild(head);
    for (const r of ls.rows) {
      const tr = el("tr");
      const th = el("th", "kg-row");
      th.dataset.id = r.entity.id;
      th.title = r.entity.name + " · " + r.entity.type + " · " + plural(r.papers, "paper");
      th.appendChild(typeDot(r.entity.type));
      th.appendChild(link("entity", r.entity.id, r.entity.name));
      th.appendChild(el("span", "kg-muted kg-count", " " + r.papers));
      tr.appendChild(th);
      for (const c of ls.columns) {
        const cell = byKey.get(r.entity.id + "\u0000" + c.entity.id);
        const td = el("td", "kg-cell");
        if (cell) {
          const b = el("button", "kg-cell-btn", cell.count);
          b.type = "button";
          b.style.background = "rgba(78, 121, 167, " + (0.15 + 0.75 * cell.count / top).toFixed(3) + ")";
          if (cell.count / top > 0.5) b.style.color = "#fff";
          if (cell.papers.some((p) => p.stated)) b.classList.add("kg-stated");
          b.title = r.entity.name + " × " + c.entity.name + ": " + plural(cell.count, "paper");
          b.addEventListener("click", () => select(r.entity.id, c.entity.id));
          td.appendChild(b);
        }
        tr.appendChild(td);
      }
      table.appendChild(tr);
    }
    wrap.appendChild(table);
    main.appendChild(wrap);
    if (ls.metrics.length) {
      const m = el("p", "kg-metrics");
      m.appendChild(el("strong", null, "Metrics: "));
      m.appendChild(document.createTextNode(ls.metrics.map((x) => x.entity.name + " (" + x.papers + ")").join(", ")));
      main.appendChild(m);
    }
    const names = new Map([...ls.rows, ...ls.columns].map((a) => [a.entity.id, a.entity.name]));

    function select(row, col) {
      const cell = byKey.get(row + "\u0000" + col);
      const panel = $("kg-detail");
      panel.replaceChildren();
      if (!cell) return null;
      panel.appendChild(el("h2", null, names.get(row) + " × " + names.get(col)));
      panel.appendChild(el("p", "kg-muted", plural(cell.count, "paper") + (cell.papers.length < cell.count
        ? ", the first " + cell.papers.length + " shown" : "") +
        (cell.metrics.length ? " · metrics: " + cell.metrics.map((m) => metricName.get(m)).join(", ") : "")));
      for (const p of cell.papers) {
        const d = el("div", "kg-paper");
        d.dataset.id = p.id;
        const t = el("div", "kg-paper-title");
        t.appendChild(link("paper", p.id, p.title));
        if (p.year) t.appendChild(el("span", "kg-muted", " · " + p.year));
        if (p.stated) t.appendChild(el("span", "kg-badge", "states the relation"));
        d.appendChild(t);
        for (const ev of p.evidence) d.appendChild(el("blockquote", "kg-quote", ev.sentence));
        panel.appendChild(d);
      }
      return cell.papers.length;
    }
    view.select = select;
    if (ls.cells.length) {
      const best = ls.cells.slice().sort((a, b) => b.count - a.count)[0];
      select(best.row, best.column);
    }
  }

  // -- search: each hit links to its view; a paper quotes the sentence closest to the query -------------------
  function drawSearch(hits) {
    const main = $("kg-main");
    const list = el("ol", "kg-hits");
    for (const h of hits) {
      const li = el("li", "kg-hit");
      const head = el("div", "kg-hit-head");
      if (h.kind === "entity") head.appendChild(typeDot(h.type));
      head.appendChild(link(h.kind === "paper" ? "paper" : "entity", h.id, h.name));
      head.appendChild(el("span", "kg-hit-meta", " " + h.type + " · " + Number(h.score).toFixed(2) +
        (h.kind === "entity" && h.matched !== h.name ? " · as " + h.matched : "")));
      li.appendChild(head);
      if (h.sentence) li.appendChild(el("blockquote", "kg-hit-quote", h.sentence));
      list.appendChild(li);
    }
    main.appendChild(list);
    view.hits = () => list.querySelectorAll(".kg-hit").length;
  }

  if (data.kind === "trends") {
    wireForm(["type", "from", "to", "min_count"]);
    periodPlaceholders(data.trends);
    drawTrends(data.trends);
  }
  else if (data.kind === "search") { wireForm(["q"]); drawSearch(data.hits); }
  else drawLandscape(data.landscape);
  view.ready = true;
  document.body.dataset.ready = "true";
})();
