/* accel-drc report script: builds the findings table and the board markers from the embedded
   JSON, and wires filters, sorting, grouping, selection and the board's pan and zoom.
   All user text is inserted as text (escaped for innerHTML, textContent elsewhere). No request
   of any kind is made: no fetch, no XHR, no image or font loads. */
(function () {
  "use strict";
  var t0 = performance.now();
  var api = { ready: false, interactive: false, tInteractive: 0, tReady: 0, tScriptStart: 0, shown: 0 };
  window.__accelDrc = api;

  var data = JSON.parse(document.getElementById("report-data").textContent);
  var F = data.fields, texts = data.texts;
  var idx = {};
  F.forEach(function (k, j) { idx[k] = j; });
  var rows = data.findings;
  var N = rows.length;
  api.count = N;

  function g(r, k) { return r[idx[k]]; }
  var SEV_ORDER = { error: 0, warning: 1, info: 2 };
  var ST_ORDER = { violation: 0, cannot_verify: 1, waived: 2 };
  var SEV_ICON = { error: "\u2716", warning: "\u26a0", info: "\u2139" };
  var ST_ICON = { violation: "\u25cf", cannot_verify: "?", waived: "\u2298" };
  var ST_LABEL = { violation: "violation", cannot_verify: "cannot verify", waived: "waived" };

  var ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  function esc(s) {
    if (s === null || s === undefined) return "";
    return String(s).replace(/[&<>"']/g, function (c) { return ESC[c]; });
  }
  function fmt(v) {
    if (v === null || v === undefined) return "\u2014";
    if (typeof v === "number") {
      if (v === 0) return "0";
      var a = Math.abs(v);
      if (a >= 1e5 || a < 1e-3) return v.toExponential(3).replace(/\.?0+e/, "e");
      return String(Number(v.toPrecision(4)));
    }
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (Array.isArray(v)) return v.map(fmt).join(", ");
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }
  function withUnit(v, u) {
    var s = fmt(v);
    return (v === null || v === undefined || !u) ? s : s + " " + u;
  }

  /* ---------------------------------------------------------------- table rows */
  var tbody = document.getElementById("findings-body");
  var rowEls = new Array(N);

  function rowHtml(r) {
    var i = g(r, "i"), sev = g(r, "severity"), st = g(r, "status");
    var why = texts[g(r, "why")] || "", src = texts[g(r, "source")] || "";
    var items = g(r, "items") || [];
    var x = g(r, "x"), y = g(r, "y");
    var pos = (x === null || x === undefined) ? '<span class="nopos">not on the board view</span>'
      : "(" + x.toFixed(2) + ", " + y.toFixed(2) + ") mm";
    var dec = g(r, "declare");
    return '<tr class="f" tabindex="-1" data-i="' + i + '" data-rule="' + esc(g(r, "rule")) +
      '" data-status="' + esc(st) + '" data-severity="' + esc(sev) + '" role="row" aria-selected="false">' +
      '<td role="cell" class="sev-' + esc(sev) + '"><span class="badge b-' + esc(sev) + '"><span aria-hidden="true">' +
      (SEV_ICON[sev] || "") + "</span> " + esc(sev) + "</span></td>" +
      '<td role="cell"><span class="badge b-' + esc(st) + '"><span aria-hidden="true">' + (ST_ICON[st] || "") +
      "</span> " + esc(ST_LABEL[st] || st) + "</span></td>" +
      '<td role="cell"><code>' + esc(g(r, "rule")) + '</code><div class="muted">' + esc(g(r, "check")) + "</div></td>" +
      '<td role="cell">' + esc(g(r, "net") || "\u2014") + "</td>" +
      '<td role="cell">' + esc(g(r, "layer") || "\u2014") + "</td>" +
      '<td role="cell" class="num">' + esc(withUnit(g(r, "measured"), g(r, "unit"))) + "</td>" +
      '<td role="cell" class="num">' + esc(withUnit(g(r, "limit"), g(r, "unit"))) + "</td>" +
      '<td role="cell"><div class="msg">' + esc(g(r, "message")) + "</div>" +
      (why || src ? '<div class="why">' + esc(why) + (src ? " \u00b7 source: " + esc(src) : "") + "</div>" : "") +
      (dec ? '<div class="why">declare: ' + esc(dec) + "</div>" : "") +
      '<div class="items">' + pos + (items.length ? " \u00b7 items: " + esc(items.join(", ")) : "") + "</div></td></tr>";
  }

  /* ---------------------------------------------------------------- board view */
  var svg = document.getElementById("board-svg");
  var mk = document.getElementById("markers");
  var markerEls = new Array(N);
  var NS = svg.namespaceURI; /* the SVG namespace, without writing a URL into the page */
  var home = (svg.getAttribute("data-home") || svg.getAttribute("viewBox") || "0 0 100 100")
    .split(/\s+/).map(Number);
  var vb = home.slice();

  function unitPerPx() {
    var cw = svg.clientWidth || 800, ch = svg.clientHeight || 560;
    return Math.max(vb[2] / cw, vb[3] / ch);
  }
  function setVB(v) {
    vb = v;
    svg.setAttribute("viewBox", v.map(function (n) { return n.toFixed(4); }).join(" "));
    svg.style.setProperty("--u", String(unitPerPx()));
  }

  function buildMarkers() {
    var frag = document.createDocumentFragment();
    for (var k = 0; k < N; k++) {
      var r = rows[k], x = g(r, "x"), y = g(r, "y");
      if (x === null || x === undefined) continue;
      var c = document.createElementNS(NS, "circle");
      c.setAttribute("cx", x);
      c.setAttribute("cy", y);
      c.setAttribute("class", "mk sev-" + g(r, "severity") + " st-" + g(r, "status"));
      c.setAttribute("data-i", g(r, "i"));
      var t = document.createElementNS(NS, "title");
      t.textContent = g(r, "severity") + " \u00b7 " + g(r, "rule") + ": " + g(r, "message");
      c.appendChild(t);
      markerEls[k] = c;
      frag.appendChild(c);
    }
    mk.appendChild(frag);
  }

  function showLayer(name) {
    if (!name) return;
    var inputs = document.querySelectorAll(".layer-toggles input[data-layer]");
    for (var k = 0; k < data.layers.length; k++) {
      var L = data.layers[k];
      if (L.name === name || L.user === name) {
        for (var m = 0; m < inputs.length; m++) {
          if (inputs[m].getAttribute("data-layer") === String(L.index) && !inputs[m].checked) {
            inputs[m].checked = true;
            toggleLayer(inputs[m]);
          }
        }
      }
    }
  }
  function toggleLayer(input) {
    var key = input.getAttribute("data-layer");
    var el = key === "markers" ? mk : svg.querySelector('g[data-layer="' + key + '"]');
    if (el) el.style.display = input.checked ? "" : "none";
  }

  var cross = null;
  function zoomTo(x, y) {
    var span = Math.max(Math.min(home[2], home[3]) / 12, 4);
    var cw = svg.clientWidth || 800, ch = svg.clientHeight || 560;
    var w = span * Math.max(1, cw / ch), h = span * Math.max(1, ch / cw);
    setVB([x - w / 2, y - h / 2, w, h]);
    if (!cross) {
      cross = document.createElementNS(NS, "path");
      cross.setAttribute("class", "crosshair");
      svg.appendChild(cross);
    }
    var a = span * 0.08, b = span * 0.03;
    cross.setAttribute("d", "M" + (x - a) + " " + y + "H" + (x - b) + "M" + (x + b) + " " + y + "H" + (x + a) +
      "M" + x + " " + (y - a) + "V" + (y - b) + "M" + x + " " + (y + b) + "V" + (y + a));
  }

  /* ---------------------------------------------------------------- selection + detail */
  var selected = -1;
  var detail = document.getElementById("detail");
  function dlRow(dl, k, v) {
    if (v === null || v === undefined || v === "" || (Array.isArray(v) && !v.length)) return;
    var dt = document.createElement("dt"); dt.textContent = k;
    var dd = document.createElement("dd"); dd.textContent = typeof v === "string" ? v : fmt(v);
    dl.appendChild(dt); dl.appendChild(dd);
  }
  function showDetail(r) {
    detail.textContent = "";
    var h = document.createElement("h3");
    h.textContent = (SEV_ICON[g(r, "severity")] || "") + " " + g(r, "severity") + " \u00b7 " + (ST_LABEL[g(r, "status")] || g(r, "status"));
    detail.appendChild(h);
    var p = document.createElement("p"); p.className = "msg"; p.textContent = g(r, "message");
    detail.appendChild(p);
    var dl = document.createElement("dl");
    dlRow(dl, "Rule", g(r, "rule"));
    dlRow(dl, "Check", g(r, "check"));
    dlRow(dl, "Measured", withUnit(g(r, "measured"), g(r, "unit")));
    dlRow(dl, "Limit", withUnit(g(r, "limit"), g(r, "unit")));
    dlRow(dl, "Net", g(r, "net"));
    dlRow(dl, "Layer", g(r, "layer"));
    var x = g(r, "x");
    dlRow(dl, "Position", x === null || x === undefined ? "not on the board view" : "(" + x.toFixed(3) + ", " + g(r, "y").toFixed(3) + ") mm");
    dlRow(dl, "Items", (g(r, "items") || []).join(", "));
    dlRow(dl, "Why", texts[g(r, "why")]);
    dlRow(dl, "Source", texts[g(r, "source")]);
    dlRow(dl, "Declare", g(r, "declare"));
    var w = g(r, "waiver");
    if (w) dlRow(dl, "Waiver", JSON.stringify(w));
    detail.appendChild(dl);
    var ev = g(r, "evidence");
    if (ev) {
      var pre = document.createElement("pre");
      pre.textContent = JSON.stringify(ev, null, 1);
      var eh = document.createElement("h3"); eh.textContent = "Evidence";
      detail.appendChild(eh); detail.appendChild(pre);
    }
  }

  function select(k, opts) {
    opts = opts || {};
    if (k < 0 || k >= N) return;
    if (selected >= 0) {
      var pr = rowEls[selected], pm = markerEls[selected];
      if (pr) { pr.classList.remove("sel"); pr.setAttribute("aria-selected", "false"); }
      if (pm) { pm.classList.remove("sel"); pm.removeAttribute("data-selected"); }
    }
    selected = k;
    var r = rows[k], row = rowEls[k], m = markerEls[k];
    if (row) {
      if (row.hidden) { clearFilters(); }
      row.classList.add("sel");
      row.setAttribute("aria-selected", "true");
      setRoving(row);
      if (opts.scroll) row.scrollIntoView({ block: "nearest" });
      if (opts.focus) row.focus({ preventScroll: !opts.scroll });
    }
    if (m) {
      m.classList.add("sel");
      m.setAttribute("data-selected", "true");
      mk.appendChild(m); /* draw it on top of its neighbours */
      showLayer(g(r, "layer"));
      if (opts.zoom !== false) zoomTo(g(r, "x"), g(r, "y"));
    }
    showDetail(r);
  }
  api.select = function (k) { select(k, { zoom: true, scroll: true }); };

  /* ---------------------------------------------------------------- filtering, sorting, grouping */
  var fSev = document.getElementById("f-sev"), fSt = document.getElementById("f-status");
  var fCheck = document.getElementById("f-check"), fLayer = document.getElementById("f-layer");
  var fNet = document.getElementById("f-net"), fText = document.getElementById("f-text");
  var fGroup = document.getElementById("f-group");
  var shownCount = document.getElementById("shown-count");
  var noFindings = document.getElementById("no-findings");
  var order = null; /* current row order (indexes) */
  var sortKey = null, sortDir = 1;

  function matches(r) {
    if (fSev.value && g(r, "severity") !== fSev.value) return false;
    if (fSt.value && g(r, "status") !== fSt.value) return false;
    if (fCheck.value && g(r, "check") !== fCheck.value) return false;
    if (fLayer.value && g(r, "layer") !== fLayer.value) return false;
    var n = fNet.value.trim().toLowerCase();
    if (n && String(g(r, "net") || "").toLowerCase().indexOf(n) < 0) return false;
    var t = fText.value.trim().toLowerCase();
    if (t) {
      var hay = (g(r, "message") + " " + g(r, "rule") + " " + (g(r, "items") || []).join(" ")).toLowerCase();
      if (hay.indexOf(t) < 0) return false;
    }
    return true;
  }
  var filterTimer = 0;
  var pending = false;
  function applyFilters() {
    if (!api.ready) { pending = true; return; }
    var shown = 0, firstVisible = null;
    var any = fSev.value || fSt.value || fCheck.value || fLayer.value || fNet.value.trim() || fText.value.trim();
    for (var k = 0; k < N; k++) {
      var ok = !any || matches(rows[k]);
      var row = rowEls[k];
      if (row && row.hidden === ok) row.hidden = !ok;
      var m = markerEls[k];
      if (m) m.style.display = ok ? "" : "none";
      if (ok) shown++;
    }
    if (order) {
      for (var j = 0; j < order.length; j++) {
        var rr = rowEls[order[j]];
        if (rr && !rr.hidden) { firstVisible = rr; break; }
      }
    }
    updateGroupHeaders();
    api.shown = shown;
    shownCount.textContent = "(" + shown + (shown === N ? "" : " of " + N) + ")";
    noFindings.hidden = shown > 0;
    if (firstVisible && (selected < 0 || !rowEls[selected] || rowEls[selected].hidden)) setRoving(firstVisible);
  }
  function scheduleFilter() {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(applyFilters, 120);
  }
  function clearFilters() {
    fSev.value = ""; fSt.value = ""; fCheck.value = ""; fLayer.value = ""; fNet.value = ""; fText.value = "";
    applyFilters();
  }

  function cmp(a, b) {
    var ra = rows[a], rb = rows[b], va, vb2;
    if (fGroup.checked) {
      va = g(ra, "rule"); vb2 = g(rb, "rule");
      if (va !== vb2) return va < vb2 ? -1 : 1;
    }
    if (sortKey) {
      if (sortKey === "severity") { va = SEV_ORDER[g(ra, "severity")]; vb2 = SEV_ORDER[g(rb, "severity")]; }
      else if (sortKey === "status") { va = ST_ORDER[g(ra, "status")]; vb2 = ST_ORDER[g(rb, "status")]; }
      else { va = g(ra, sortKey); vb2 = g(rb, sortKey); }
      var na = va === null || va === undefined, nb = vb2 === null || vb2 === undefined;
      if (na !== nb) return na ? 1 : -1; /* unknown last, whatever the direction */
      if (!na && va !== vb2) {
        if (typeof va === "number" && typeof vb2 === "number") return (va - vb2) * sortDir;
        va = String(va); vb2 = String(vb2);
        return (va < vb2 ? -1 : 1) * sortDir;
      }
    }
    return a - b;
  }
  var groupRows = [];
  function reorder() {
    if (!api.ready) { pending = true; return; }
    var o = [];
    for (var k = 0; k < N; k++) o.push(k);
    if (sortKey || fGroup.checked) o.sort(cmp);
    order = o;
    groupRows.forEach(function (gr) { gr.remove(); });
    groupRows = [];
    var frag = document.createDocumentFragment();
    var last = null, cur = null, ncol = 8;
    for (var j = 0; j < o.length; j++) {
      var r = rows[o[j]];
      if (fGroup.checked && g(r, "rule") !== last) {
        last = g(r, "rule");
        cur = document.createElement("tr");
        cur.className = "grp";
        cur.setAttribute("role", "row");
        cur.setAttribute("data-group", last);
        var th = document.createElement("th");
        th.colSpan = ncol; th.scope = "colgroup"; th.setAttribute("role", "rowheader");
        cur.appendChild(th);
        groupRows.push(cur);
        frag.appendChild(cur);
      }
      frag.appendChild(rowEls[o[j]]);
    }
    tbody.appendChild(frag);
    updateGroupHeaders();
  }
  function updateGroupHeaders() {
    if (!groupRows.length) return;
    var counts = {}, totals = {};
    for (var k = 0; k < N; k++) {
      var rule = g(rows[k], "rule");
      totals[rule] = (totals[rule] || 0) + 1;
      if (!rowEls[k].hidden) counts[rule] = (counts[rule] || 0) + 1;
    }
    groupRows.forEach(function (gr) {
      var rule = gr.getAttribute("data-group"), c = counts[rule] || 0, t = totals[rule] || 0;
      gr.firstChild.textContent = rule + " \u2014 " + c + (c === t ? "" : " of " + t) + " finding" + (t === 1 ? "" : "s");
      gr.hidden = c === 0;
    });
  }

  document.querySelectorAll("th button[data-sort]").forEach(function (b) {
    b.addEventListener("click", function () {
      var key = b.getAttribute("data-sort");
      if (sortKey === key) sortDir = -sortDir; else { sortKey = key; sortDir = 1; }
      document.querySelectorAll("th[aria-sort]").forEach(function (th) { th.setAttribute("aria-sort", "none"); });
      b.parentNode.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
      reorder();
    });
  });

  /* ---------------------------------------------------------------- keyboard: roving focus on rows */
  var roving = null;
  function setRoving(row) {
    if (roving === row) return;
    if (roving) roving.tabIndex = -1;
    roving = row;
    if (row) row.tabIndex = 0;
  }
  function visibleSibling(row, dir) {
    var r = dir > 0 ? row.nextElementSibling : row.previousElementSibling;
    while (r && (r.hidden || !r.classList.contains("f"))) r = dir > 0 ? r.nextElementSibling : r.previousElementSibling;
    return r;
  }
  function rowIndex(el) {
    var tr = el && el.closest ? el.closest("tr.f") : null;
    return tr ? Number(tr.getAttribute("data-i")) : -1;
  }
  tbody.addEventListener("click", function (e) {
    var k = rowIndex(e.target);
    if (k >= 0) select(k, { zoom: true, focus: true });
  });
  tbody.addEventListener("keydown", function (e) {
    var tr = e.target.closest ? e.target.closest("tr.f") : null;
    if (!tr) return;
    var next = null;
    if (e.key === "ArrowDown") next = visibleSibling(tr, 1);
    else if (e.key === "ArrowUp") next = visibleSibling(tr, -1);
    else if (e.key === "Home") { next = tbody.firstElementChild; if (next && (next.hidden || !next.classList.contains("f"))) next = visibleSibling(next, 1); }
    else if (e.key === "End") { next = tbody.lastElementChild; if (next && (next.hidden || !next.classList.contains("f"))) next = visibleSibling(next, -1); }
    else if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(rowIndex(tr), { zoom: true }); return; }
    else return;
    e.preventDefault();
    if (next) { setRoving(next); next.focus(); }
  });

  /* ---------------------------------------------------------------- board interactions */
  mk.addEventListener("click", function (e) {
    if (dragMoved) return;
    var t = e.target;
    if (t && t.getAttribute && t.getAttribute("data-i") !== null) {
      e.stopPropagation();
      select(Number(t.getAttribute("data-i")), { zoom: false, scroll: true });
    }
  });
  var drag = null, dragMoved = false;
  svg.addEventListener("pointerdown", function (e) {
    drag = { x: e.clientX, y: e.clientY, vb: vb.slice(), u: unitPerPx() };
    dragMoved = false;
  });
  svg.addEventListener("pointermove", function (e) {
    if (!drag) return;
    var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!dragMoved && Math.abs(dx) + Math.abs(dy) < 4) return;
    if (!dragMoved) { dragMoved = true; svg.classList.add("dragging"); try { svg.setPointerCapture(e.pointerId); } catch (err) { /* not captured: fine */ } }
    setVB([drag.vb[0] - dx * drag.u, drag.vb[1] - dy * drag.u, drag.vb[2], drag.vb[3]]);
  });
  function endDrag() { drag = null; svg.classList.remove("dragging"); setTimeout(function () { dragMoved = false; }, 0); }
  svg.addEventListener("pointerup", endDrag);
  svg.addEventListener("pointercancel", endDrag);
  function zoomAt(cx, cy, f) {
    setVB([cx - (cx - vb[0]) * f, cy - (cy - vb[1]) * f, vb[2] * f, vb[3] * f]);
  }
  svg.addEventListener("wheel", function (e) {
    e.preventDefault();
    var m = svg.getScreenCTM();
    if (!m) return;
    var p = svg.createSVGPoint(); p.x = e.clientX; p.y = e.clientY;
    var q = p.matrixTransform(m.inverse());
    zoomAt(q.x, q.y, e.deltaY > 0 ? 1.25 : 0.8);
  }, { passive: false });
  document.getElementById("zoom-in").addEventListener("click", function () { zoomAt(vb[0] + vb[2] / 2, vb[1] + vb[3] / 2, 0.7); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoomAt(vb[0] + vb[2] / 2, vb[1] + vb[3] / 2, 1 / 0.7); });
  document.getElementById("zoom-home").addEventListener("click", function () { setVB(home.slice()); });
  document.querySelectorAll(".layer-toggles input[data-layer]").forEach(function (inp) {
    inp.addEventListener("change", function () { toggleLayer(inp); });
  });
  window.addEventListener("resize", function () { svg.style.setProperty("--u", String(unitPerPx())); });

  document.querySelectorAll("a[data-goto]").forEach(function (a) {
    a.addEventListener("click", function (e) {
      e.preventDefault();
      select(Number(a.getAttribute("data-goto")), { zoom: true, scroll: true, focus: true });
      document.getElementById("findings").scrollIntoView();
    });
  });
  [fSev, fSt, fCheck, fLayer].forEach(function (s) { s.addEventListener("change", applyFilters); });
  [fNet, fText].forEach(function (s) { s.addEventListener("input", scheduleFilter); });
  fGroup.addEventListener("change", reorder);
  document.getElementById("f-clear").addEventListener("click", clearFilters);

  /* ---------------------------------------------------------------- first render, in chunks */
  setVB(home.slice());
  buildMarkers();
  var FIRST = 300, CHUNK = 2500, done = 0;
  function collect(from, to) {
    /* the rows just appended are the last (to - from) children of the body, in order */
    var el = tbody.lastElementChild;
    for (var k = to - 1; k >= from; k--) { rowEls[k] = el; el = el.previousElementSibling; }
  }
  function renderChunk(n) {
    var to = Math.min(N, done + n), parts = [];
    for (var k = done; k < to; k++) parts.push(rowHtml(rows[k]));
    tbody.insertAdjacentHTML("beforeend", parts.join(""));
    collect(done, to);
    done = to;
  }
  function finish() {
    if (N && !roving) setRoving(rowEls[0]);
    var o = []; for (var k = 0; k < N; k++) o.push(k); order = o;
    api.ready = true;
    if (pending && (sortKey || fGroup.checked)) reorder();
    applyFilters();
    api.tReady = performance.now(); /* ms since navigation start */
    document.documentElement.setAttribute("data-report-ready", "1");
  }
  renderChunk(FIRST);
  if (N) setRoving(rowEls[0]);
  shownCount.textContent = "(" + N + ")";
  noFindings.hidden = N > 0;
  api.interactive = true;
  api.tInteractive = performance.now();
  api.tScriptStart = t0;
  function pump() {
    if (done >= N) { finish(); return; }
    renderChunk(CHUNK);
    setTimeout(pump, 0);
  }
  if (done >= N) finish(); else setTimeout(pump, 0);
})();
