/* accel-drc report script: builds the findings table and the board markers from the embedded
   JSON, and wires filters, sorting, grouping, selection and the board's pan and zoom.
   All user text is inserted as text (escaped for innerHTML, textContent elsewhere). No request
   of any kind is made: no fetch, no XHR, no image or font loads. */
(function () {
  "use strict";
  var t0 = performance.now();
  var api = { ready: false, interactive: false, complete: false, tInteractive: 0, tReady: 0, tComplete: 0, tScriptStart: 0, shown: 0 };
  window.__accelDrc = api;

  var data = JSON.parse(document.getElementById("report-data").textContent);
  var F = data.fields, texts = data.texts, REFS = data.refs || {};
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
  /* a waived finding KiCad's own exclusion list set aside (check --kicad-drc) reads as such,
     not as a waiver of the config */
  function excludedInKicad(r) { var w = g(r, "waiver"); return !!(w && w.origin === "kicad"); }
  function statusLabel(r) {
    var st = g(r, "status");
    return st === "waived" && excludedInKicad(r) ? "excluded in KiCad" : (ST_LABEL[st] || st);
  }

  /* The order a reviewer acts on (results.rank): error violations, error cannot-verify,
     warnings, info, waived last; a stable sort keeps each check's own order.  The table opens
     in it, so the first screen shows the failing findings whatever order the data came in. */
  var rankPos = new Int32Array(N), order0 = [];
  (function () {
    var key = new Array(N);
    for (var k = 0; k < N; k++) {
      var st = g(rows[k], "status"), sv = SEV_ORDER[g(rows[k], "severity")], so = ST_ORDER[st];
      key[k] = (st === "waived" ? 100 : 0) + (sv === undefined ? 3 : sv) * 10 + (so === undefined ? 3 : so);
      order0.push(k);
    }
    order0.sort(function (a, b) { return key[a] - key[b] || a - b; });
    for (var j = 0; j < N; j++) rankPos[order0[j]] = j;
  })();

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
  var SI_UNITS = { "\u03a9": 1, "ohm": 1, "Hz": 1, "F": 1, "H": 1, "A": 1, "V": 1, "W": 1, "s": 1 };
  var PREFIX = [[1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""], [1e-3, "m"], [1e-6, "\u00b5"], [1e-9, "n"], [1e-12, "p"]];
  function withUnit(v, u) {
    if (typeof v === "number" && u && SI_UNITS[u] && v !== 0 && isFinite(v)) {
      /* 0.002747 Ω -> 2.747 mΩ: engineering prefixes for electrical units */
      var a = Math.abs(v), p = PREFIX[PREFIX.length - 1];
      for (var j = 0; j < PREFIX.length; j++) { if (a >= PREFIX[j][0] * 0.9995) { p = PREFIX[j]; break; } }
      return String(Number((v / p[0]).toPrecision(4))) + " " + p[1] + u;
    }
    var s = fmt(v);
    return (v === null || v === undefined || !u) ? s : s + " " + u;
  }

  /* ---------------------------------------------------------------- table rows */
  var tbody = document.getElementById("findings-body");
  var rowEls = new Array(N);

  /* Rows are built in two steps: an empty row (its data attributes only) for every finding up
     front, so counting, filtering, sorting and keyboard moves work at once; the cells of a row
     are filled when it comes near the view, when it is selected, and in the background until
     every row is complete.  Parsing 10,000 full rows at once costs seconds on a slow machine. */
  var filled = new Uint8Array(N), nFilled = 0;

  function skeletonHtml(r) {
    return '<tr class="f" tabindex="-1" data-i="' + Number(g(r, "i")) + '" data-rule="' + esc(g(r, "rule")) +
      '" data-status="' + esc(g(r, "status")) + '" data-severity="' + esc(g(r, "severity")) +
      '" role="row" aria-selected="false"></tr>';
  }
  function cellsHtml(r) {
    var sev = g(r, "severity"), st = g(r, "status");
    var why = texts[g(r, "why")] || "", src = texts[g(r, "source")] || "";
    var items = g(r, "items") || [];
    var x = g(r, "x"), y = g(r, "y");
    var pos = g(r, "whole") ? '<span class="nopos">the whole layer ' + esc(g(r, "layer")) + '</span> <a href="#board" class="goto">show on board</a>'
      : (x === null || x === undefined) ? '<span class="nopos">not on the board view</span>'
      : "(" + Number(x).toFixed(2) + ", " + Number(y).toFixed(2) + ') mm <a href="#board" class="goto">show on board</a>';
    var dec = g(r, "declare");
    return '<td role="cell" class="sev-' + esc(sev) + '"><span class="badge b-' + esc(sev) + '"><span aria-hidden="true">' +
      (SEV_ICON[sev] || "") + "</span> " + esc(sev) + "</span></td>" +
      '<td role="cell"><span class="badge b-' + esc(st) + (excludedInKicad(r) ? " b-excluded" : "") +
      '"><span aria-hidden="true">' + (ST_ICON[st] || "") + "</span> " + esc(statusLabel(r)) + "</span></td>" +
      '<td role="cell"><code>' + esc(g(r, "rule")) + '</code><div class="muted">' + esc(g(r, "check")) + "</div></td>" +
      '<td role="cell">' + esc(g(r, "net") || "\u2014") + "</td>" +
      '<td role="cell">' + esc(g(r, "layer") || "\u2014") +
      (g(r, "slayers") ? '<div class="muted">+ ' + esc(g(r, "slayers").join(", ")) + "</div>" : "") + "</td>" +
      '<td role="cell" class="num">' + esc(withUnit(g(r, "measured"), g(r, "unit"))) + "</td>" +
      '<td role="cell" class="num">' + esc(withUnit(g(r, "limit"), g(r, "unit"))) + "</td>" +
      '<td role="cell"><div class="msg">' + esc(g(r, "message")) + "</div>" +
      (why || src ? '<div class="why">' + esc(why) + (src ? " \u00b7 source: " + esc(src) : "") + "</div>" : "") +
      (dec ? '<div class="why">declare: ' + esc(dec) + "</div>" : "") +
      '<div class="items">' + pos + (items.length ? " \u00b7 items: " + esc(items.slice(0, 3).join(", ")) +
        (items.length > 3 ? " \u2026 and " + (items.length - 3) + " more (all in the panel and the JSON)" : "") : "") +
      "</div></td>";
  }
  function fill(k) {
    if (filled[k] || !rowEls[k]) return;
    filled[k] = 1;
    nFilled++;
    rowEls[k].innerHTML = cellsHtml(rows[k]);
    if (observer) observer.unobserve(rowEls[k]);
  }
  var observer = null;

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
  var sized = false;
  function setVB(v) {
    vb = v;
    svg.setAttribute("viewBox", v.map(function (n) { return n.toFixed(4); }).join(" "));
    /* reading the size forces a layout of the board view: only once it has been laid out */
    if (sized) svg.style.setProperty("--u", String(unitPerPx()));
  }
  if ("ResizeObserver" in window) {
    new ResizeObserver(function () {
      sized = svg.clientWidth > 0;
      if (sized) svg.style.setProperty("--u", String(unitPerPx()));
    }).observe(svg);
  } else {
    sized = true;
  }

  function buildMarkers() {
    /* one string parsed once is several times faster than 10,000 createElementNS calls; the
       tooltip (<title>) is added on first hover, not up front */
    var parts = [], idxs = [];
    for (var k = 0; k < N; k++) {
      var r = rows[k], x = g(r, "x"), y = g(r, "y");
      if (x === null || x === undefined) continue;
      parts.push('<circle class="mk sev-' + esc(g(r, "severity")) + " st-" + esc(g(r, "status")) +
        '" cx="' + Number(x) + '" cy="' + Number(y) + '" data-i="' + Number(g(r, "i")) + '"/>');
      idxs.push(k);
    }
    mk.insertAdjacentHTML("beforeend", parts.join(""));
    /* many markers: draw them smaller so dense areas stay readable */
    svg.style.setProperty("--mr", idxs.length > 2000 ? "4.5" : idxs.length > 300 ? "5.5" : "7");
    var el = mk.firstElementChild;
    for (var j = 0; j < idxs.length && el; j++) { markerEls[idxs[j]] = el; el = el.nextElementSibling; }
  }
  mk.addEventListener("mouseover", function (e) {
    var t = e.target;
    if (!t || !t.getAttribute || t.getAttribute("data-i") === null || t.firstChild) return;
    var r = rows[Number(t.getAttribute("data-i"))];
    var title = document.createElementNS(NS, "title");
    title.textContent = g(r, "severity") + " \u00b7 " + g(r, "rule") + ": " + g(r, "message");
    t.appendChild(title);
  });

  /* ---------------------------------------------------------------- drawings of findings */
  /* Beyond a marker, some findings are drawn: the via field under a hot part with its θ and
     the part's outline, the breaks in a trace's reference plane (on the board, under the
     markers), and a skew group's delays against its limit (in the panel).  Each from
     data.drawings, the numbers the check put in its finding, never recomputed
     (report/drawings.py). */
  var DRAW = data.drawings || [], drawOf = {}, drawEls = {};
  function n3(v) { return v === null || v === undefined ? "\u2014" : String(Number(Number(v).toPrecision(3))); }
  function thermalLabel(d) {
    return (d.part ? d.part + ": " : "") + "\u03b8 " + n3(d.theta) + " \u00b0C/W" +
      (d.limit !== null && d.limit !== undefined ? " (max " + n3(d.limit) + ")" : "") +
      " \u00b7 " + d.n + " via" + (d.n === 1 ? "" : "s") +
      (d.rise !== null && d.rise !== undefined ? " \u00b7 +" + n3(d.rise) + " \u00b0C at " + n3(d.power) + " W" : "");
  }
  function thermalSvg(d, r) {
    var b = d.box, out = ['<g class="dr dr-thermal st-' + esc(g(r, "status")) + '" data-i="' + Number(d.i) +
      '" data-theta="' + Number(d.theta) + '" data-n="' + Number(d.n) + '" data-limit="' + esc(d.limit) + '">',
      '<rect class="dr-box" x="' + Number(b[0]) + '" y="' + Number(b[1]) + '" width="' + Number(b[2] - b[0]) +
      '" height="' + Number(b[3] - b[1]) + '"/>'];
    for (var j = 0; j < d.vias.length; j++) {
      out.push('<circle class="dr-via" cx="' + Number(d.vias[j][0]) + '" cy="' + Number(d.vias[j][1]) + '"/>');
    }
    out.push('<text class="dr-label" x="' + Number(b[0]) + '" y="' + Number(b[1]) + '">' + esc(thermalLabel(d)) + "</text></g>");
    return out.join("");
  }
  function breaksSvg(d, r) {
    var out = ['<g class="dr dr-breaks sev-' + esc(g(r, "severity")) + '" data-i="' + Number(d.i) + '" data-count="' + d.breaks.length + '">'];
    for (var j = 0; j < d.breaks.length; j++) {
      var b = d.breaks[j];
      out.push('<line class="dr-break k-' + esc(b[4]) + '" x1="' + Number(b[0]) + '" y1="' + Number(b[1]) + '" x2="' + Number(b[2]) +
        '" y2="' + Number(b[3]) + '" data-len="' + Number(b[5]) + '" data-layer="' + esc(b[6]) + '" data-ref="' + esc(b[7]) + '"/>');
    }
    out.push("</g>");
    return out.join("");
  }
  function stitchLabel(d) {
    return "return via within " + n3(d.limit) + " mm: " + (d.nearest === null || d.nearest === undefined
      ? "none on the board" : "nearest " + n3(d.nearest) + " mm");
  }
  function stitchSvg(d, r) {
    var x = Number(d.c[0]), y = Number(d.c[1]);
    var out = ['<g class="dr dr-stitch sev-' + esc(g(r, "severity")) + '" data-i="' + Number(d.i) + '" data-limit="' +
      Number(d.limit) + '" data-nearest="' + esc(d.nearest) + '">',
      '<circle class="dr-reach" cx="' + x + '" cy="' + y + '" r="' + Number(d.limit) + '"/>'];
    if (d.nearest !== null && d.nearest !== undefined) {
      out.push('<circle class="dr-nearest" cx="' + x + '" cy="' + y + '" r="' + Number(d.nearest) + '"/>');
    }
    out.push('<text class="dr-label" x="' + (x - Number(d.limit)) + '" y="' + (y - Number(d.limit)) + '">' +
      esc(stitchLabel(d)) + "</text></g>");
    return out.join("");
  }
  /* a crosstalk victim's coupled runs: the victim's stretch, the aggressor's beside it and the
     band between them (the coupled cross-section), each with its layer, aggressor and gap */
  function xtalkSvg(d, r) {
    var out = ['<g class="dr dr-xtalk sev-' + esc(g(r, "severity")) + '" data-i="' + Number(d.i) + '" data-count="' + d.runs.length + '">'];
    for (var j = 0; j < d.runs.length; j++) {
      var c = d.runs[j], P = c.slice(0, 8).map(Number);
      out.push('<g class="dr-run" data-layer="' + esc(c[8]) + '" data-aggressor="' + esc(c[9]) + '" data-gap="' + Number(c[10]) + '">' +
        '<polygon class="dr-xc" points="' + P[0] + "," + P[1] + " " + P[2] + "," + P[3] + " " + P[6] + "," + P[7] + " " + P[4] + "," + P[5] + '"/>' +
        '<line class="dr-xv" x1="' + P[0] + '" y1="' + P[1] + '" x2="' + P[2] + '" y2="' + P[3] + '"/>' +
        '<line class="dr-xa" x1="' + P[4] + '" y1="' + P[5] + '" x2="' + P[6] + '" y2="' + P[7] + '"/></g>');
    }
    out.push("</g>");
    return out.join("");
  }
  /* the box a drawing covers on the board (x0, y0, x1, y1 mm), for the zoom on selection */
  function drawExtent(d) {
    if (d.k === "thermal") return d.box;
    if (d.k === "stitch") {
      var R = Math.max(d.limit, d.nearest || 0);
      return [d.c[0] - R, d.c[1] - R, d.c[0] + R, d.c[1] + R];
    }
    var e = [Infinity, Infinity, -Infinity, -Infinity];
    if (d.k === "xtalk") {
      d.runs.forEach(function (c) {
        e = [Math.min(e[0], c[0], c[2], c[4], c[6]), Math.min(e[1], c[1], c[3], c[5], c[7]),
          Math.max(e[2], c[0], c[2], c[4], c[6]), Math.max(e[3], c[1], c[3], c[5], c[7])];
      });
      return e;
    }
    if (d.k !== "breaks") return null;
    d.breaks.forEach(function (b) {
      e = [Math.min(e[0], b[0], b[2]), Math.min(e[1], b[1], b[3]), Math.max(e[2], b[0], b[2]), Math.max(e[3], b[1], b[3])];
    });
    return e;
  }
  function buildDrawings() {
    var parts = [];
    DRAW.forEach(function (d) {
      var r = rows[d.i];
      if (!r) return;
      drawOf[d.i] = d;
      if (d.k === "thermal") parts.push(thermalSvg(d, r));
      else if (d.k === "breaks") parts.push(breaksSvg(d, r));
      else if (d.k === "stitch") parts.push(stitchSvg(d, r));
      else if (d.k === "xtalk") parts.push(xtalkSvg(d, r));
    });
    api.drawings = DRAW.length;
    if (!parts.length) return;
    var dg = document.createElementNS(NS, "g");
    dg.setAttribute("id", "drawings");
    dg.setAttribute("class", "drawings");
    dg.setAttribute("data-layer", "drawings");
    svg.insertBefore(dg, mk);
    dg.insertAdjacentHTML("beforeend", parts.join(""));
    for (var el = dg.firstElementChild; el; el = el.nextElementSibling) drawEls[Number(el.getAttribute("data-i"))] = el;
  }
  /* a skew group's members as bars of their delay against the reference, the limit dashed */
  function skewSvg(d) {
    var W = 272, L = 100, R = 52, H = 17, top = 18;
    var all = [[d.ref[0], d.ref[1], -1]].concat(d.members.map(function (m, j) { return [m[0], m[1], j]; }));
    var span = d.limit * 1.25;
    all.forEach(function (m) { span = Math.max(span, Math.abs(m[1] - d.ref[1]) * 1.1); });
    var mid = L + (W - L - R) / 2, k = (W - L - R) / 2 / span, h = top + all.length * H + 4;
    var lx = [mid - d.limit * k, mid + d.limit * k];
    var out = ['<svg class="skew-bars" width="' + W + '" height="' + h + '" viewBox="0 0 ' + W + " " + h + '" data-i="' + Number(d.i) +
      '" data-limit="' + Number(d.limit) + '" data-ref-ps="' + Number(d.ref[1]) + '" role="img" aria-label="delay of each member against ' +
      esc(d.ref[0]) + ", limit \u00b1" + esc(n3(d.limit)) + ' ps">',
      '<line class="sk-axis" x1="' + mid + '" y1="' + (top - 4) + '" x2="' + mid + '" y2="' + (h - 2) + '"/>',
      '<line class="sk-limit" x1="' + lx[0] + '" y1="' + (top - 4) + '" x2="' + lx[0] + '" y2="' + (h - 2) + '"/>',
      '<line class="sk-limit" x1="' + lx[1] + '" y1="' + (top - 4) + '" x2="' + lx[1] + '" y2="' + (h - 2) + '"/>',
      '<text class="sk-t" x="' + lx[1] + '" y="10" text-anchor="middle">+' + esc(n3(d.limit)) + " ps</text>",
      '<text class="sk-t" x="' + lx[0] + '" y="10" text-anchor="middle">\u2212' + esc(n3(d.limit)) + " ps</text>"];
    all.forEach(function (m, row) {
      var y = top + row * H, delta = m[1] - d.ref[1], x = delta < 0 ? mid + delta * k : mid;
      var over = Math.abs(delta) > d.limit + 1e-9;
      var cls = "skew-bar" + (m[2] < 0 ? " ref" : "") + (m[2] === d.me ? " me" : "") + (over ? " over" : "");
      var name = String(m[0]);
      out.push('<text class="sk-n" x="' + (L - 4) + '" y="' + (y + 11) + '" text-anchor="end">' + esc(name.length > 16 ? "\u2026" + name.slice(-15) : name) + "</text>",
        '<rect class="' + cls + '" x="' + x + '" y="' + (y + 2) + '" width="' + Math.max(Math.abs(delta) * k, 1) + '" height="' + (H - 5) +
        '" data-name="' + esc(name) + '" data-ps="' + Number(m[1]) + '"><title>' + esc(name) + ": " + esc(n3(m[1])) + " ps" +
        (m[2] < 0 ? " (reference)" : ", " + (delta >= 0 ? "+" : "") + esc(n3(delta)) + " ps to " + esc(d.ref[0])) + "</title></rect>",
        '<text class="sk-v" x="' + (W - 2) + '" y="' + (y + 11) + '" text-anchor="end">' + (m[2] < 0 ? esc(n3(m[1])) + " ps" : (delta >= 0 ? "+" : "") + esc(n3(delta))) + "</text>");
    });
    out.push("</svg>");
    return out.join("");
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

  /* A finding about a whole layer (its copper weight, say) has no point: the board view shows
     that layer alone, its copper outlined, at the whole-board zoom; any other selection ends it. */
  var hlGroup = null;
  function highlightLayer(name) {
    if (hlGroup) { hlGroup.classList.remove("hl"); hlGroup = null; }
    svg.classList.remove("focus-layer");
    if (!name) return;
    for (var k = 0; k < data.layers.length; k++) {
      var L = data.layers[k];
      if (L.name !== name && L.user !== name) continue;
      hlGroup = svg.querySelector('g.cu[data-layer="' + L.index + '"]');
      break;
    }
    if (!hlGroup) return;
    showLayer(name);
    hlGroup.classList.add("hl");
    svg.classList.add("focus-layer");
    if (cross) cross.setAttribute("d", "");
  }

  var cross = null;
  function zoomTo(x, y, ext) {
    var span = Math.max(Math.min(home[2], home[3]) / 12, 4);
    var cw = svg.clientWidth || 800, ch = svg.clientHeight || 560;
    var cx = x, cy = y;
    if (ext && isFinite(ext[0])) {
      /* a drawing (a via field, a run of plane breaks): all of it in view */
      span = Math.max(span, (ext[2] - ext[0]) * 1.3, (ext[3] - ext[1]) * 1.3);
      cx = (ext[0] + ext[2]) / 2; cy = (ext[1] + ext[3]) / 2;
    }
    var w = span * Math.max(1, cw / ch), h = span * Math.max(1, ch / cw);
    setVB([cx - w / 2, cy - h / 2, w, h]);
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
  /* a source with each [id] of a cited reference as a link to the References section */
  function citeRow(dl, k, text) {
    if (!text) return;
    var dt = document.createElement("dt"); dt.textContent = k;
    var dd = document.createElement("dd");
    var re = /\[([^\[\]\s]+)\]/g, last = 0, m, cited = [];
    while ((m = re.exec(text))) {
      if (!Object.prototype.hasOwnProperty.call(REFS, m[1])) continue;
      dd.appendChild(document.createTextNode(text.slice(last, m.index)));
      var a = document.createElement("a");
      a.href = "#ref-" + m[1]; a.className = "cite"; a.title = REFS[m[1]]; a.textContent = m[0];
      dd.appendChild(a);
      last = re.lastIndex;
      if (cited.indexOf(m[1]) < 0) cited.push(m[1]);
    }
    dd.appendChild(document.createTextNode(text.slice(last)));
    dl.appendChild(dt); dl.appendChild(dd);
    cited.forEach(function (id) { dlRow(dl, "Reference", "[" + id + "] " + REFS[id]); });
  }
  function showDetail(r) {
    detail.textContent = "";
    var h = document.createElement("h3");
    h.textContent = (SEV_ICON[g(r, "severity")] || "") + " " + g(r, "severity") + " \u00b7 " + statusLabel(r);
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
    dlRow(dl, "Also against", (g(r, "slayers") || []).join(", "));
    var x = g(r, "x");
    dlRow(dl, "Position", g(r, "whole") ? "the whole layer " + g(r, "layer") + " (highlighted on the board view)"
      : x === null || x === undefined ? "not on the board view" : "(" + x.toFixed(3) + ", " + g(r, "y").toFixed(3) + ") mm");
    dlRow(dl, "Items", (g(r, "items") || []).join(", "));
    dlRow(dl, "Why", texts[g(r, "why")]);
    citeRow(dl, "Source", texts[g(r, "source")]);
    dlRow(dl, "Declare", g(r, "declare"));
    var w = g(r, "waiver");
    if (w && excludedInKicad(r)) dlRow(dl, "Excluded", w.reason || "excluded in KiCad (.kicad_pro)");
    else if (w) dlRow(dl, "Waiver", JSON.stringify(w));
    detail.appendChild(dl);
    var d = drawOf[g(r, "i")];
    if (d && d.k === "skew") {
      /* the bars right under the message: they are the finding at a glance */
      var box = document.createElement("div"); box.className = "skew-wrap";
      box.innerHTML = skewSvg(d); /* numbers and escaped names only */
      detail.insertBefore(box, dl);
    } else if (d && d.k === "thermal") {
      dlRow(dl, "Drawn", "the part's pads' box and the " + d.n + " vias counted, labelled " + thermalLabel(d));
    } else if (d && d.k === "stitch") {
      dlRow(dl, "Drawn", "the reach around the via (dashed, " + n3(d.limit) + " mm) and the nearest return via's distance (solid): " +
        stitchLabel(d) + "; " + d.change + ", reference " + d.refs);
    } else if (d && d.k === "xtalk") {
      dlRow(dl, "Drawn", d.runs.length + " coupled stretch" + (d.runs.length === 1 ? "" : "es") + " of " + d.victim +
        " (solid) beside its aggressors (dashed), the coupled band between (" +
        d.runs.map(function (c) { return c[9] + " on " + c[8] + " at " + n3(c[10]) + " mm"; }).slice(0, 4).join("; ") +
        (d.runs.length > 4 ? "; …" : "") + ")");
    } else if (d && d.k === "breaks") {
      dlRow(dl, "Drawn", d.breaks.length + " break" + (d.breaks.length === 1 ? "" : "s") + " in the reference plane (" +
        d.breaks.map(function (b) { return n3(b[5]) + " mm " + b[4] + " on " + b[6] + " over " + b[7]; }).slice(0, 4).join("; ") +
        (d.breaks.length > 4 ? "; …" : "") + ")");
    }
    var ev = g(r, "evidence");
    if (ev) {
      var pre = document.createElement("pre");
      pre.textContent = JSON.stringify(ev, null, 1);
      var eh = document.createElement("h3"); eh.textContent = "Evidence";
      detail.appendChild(eh); detail.appendChild(pre);
    }
  }

  /* Bring row k into the table's own scroll box and keep it there while the layout settles:
     rows above it fill lazily, the detail panel and the board view re-lay out, and any of these
     can push the row out again a few frames later (seen in CI as a row half below the box).
     Re-check every frame until the row has stayed put for 10 frames (at most ~2 s); stop at once
     if the reader scrolls the table (scrollTop no longer what we set) or selects another row, so
     the page never fights the reader. */
  var settleId = 0;
  function settleInWrap(k, row) {
    var wrap = document.getElementById("table-wrap");
    var id = ++settleId, frames = 0, still = 0, lastTop = null, setTop = null;
    function step() {
      if (id !== settleId || selected !== k) return;
      if (setTop !== null && Math.abs(wrap.scrollTop - setTop) > 1) return; /* the reader scrolled */
      var wr = wrap.getBoundingClientRect(), rr = row.getBoundingClientRect();
      if (rr.top < wr.top || rr.bottom > wr.bottom) {
        wrap.scrollTop += rr.top - wr.top - (wrap.clientHeight - rr.height) / 2;
        rr = row.getBoundingClientRect();
        still = 0;
      } else if (lastTop !== null && Math.abs(rr.top - lastTop) < 0.5) {
        still++;
      } else {
        still = 0;
      }
      setTop = wrap.scrollTop;
      lastTop = rr.top;
      if (still < 10 && ++frames < 120) requestAnimationFrame(step);
    }
    step();
  }

  function select(k, opts) {
    opts = opts || {};
    if (k < 0 || k >= N) return;
    if (selected >= 0) {
      var pr = rowEls[selected], pm = markerEls[selected], pd = drawEls[selected];
      if (pr) { pr.classList.remove("sel"); pr.setAttribute("aria-selected", "false"); }
      if (pm) { pm.classList.remove("sel"); pm.removeAttribute("data-selected"); }
      if (pd) pd.classList.remove("sel");
    }
    selected = k;
    var r = rows[k], row = rowEls[k], m = markerEls[k];
    fill(k);
    if (row) {
      if (row.hidden) { clearFilters(); }
      row.classList.add("sel");
      row.setAttribute("aria-selected", "true");
      setRoving(row);
      if (opts.scroll === "wrap") {
        /* from a marker: bring the row into the table's own scroll box, leave the page where
           it is (the reader is looking at the board) */
        settleInWrap(k, row);
      } else if (opts.scroll) {
        row.scrollIntoView({ block: "nearest" });
        /* rows laid out lazily can move once they render: settle, then again */
        requestAnimationFrame(function () { row.scrollIntoView({ block: "nearest" }); });
      }
      if (opts.focus) row.focus({ preventScroll: !opts.scroll });
    }
    highlightLayer(g(r, "whole") ? g(r, "layer") : null);
    if (g(r, "whole") && opts.zoom !== false) setVB(home.slice());
    var dr = drawEls[k];
    if (dr) {
      dr.classList.add("sel");
      dr.parentNode.appendChild(dr);
      /* a plane break is read against its plane: show the reference layers it names */
      if (drawOf[k].k === "breaks") drawOf[k].breaks.forEach(function (b) { showLayer(b[7]); });
      /* coupled runs are read on their copper: show the layers they run on */
      if (drawOf[k].k === "xtalk") drawOf[k].runs.forEach(function (c) { showLayer(c[8]); });
    }
    if (m) {
      m.classList.add("sel");
      m.setAttribute("data-selected", "true");
      mk.appendChild(m); /* draw it on top of its neighbours */
      showLayer(g(r, "layer"));
      if (opts.zoom !== false) zoomTo(g(r, "x"), g(r, "y"), drawOf[k] ? drawExtent(drawOf[k]) : null);
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
    if (fLayer.value && g(r, "layer") !== fLayer.value) {
      /* a finding also counts against the stack-up layers its evidence names (a dielectric):
         the stack-up badges count those, so the filter matches them too */
      var sl = g(r, "slayers");
      if (!sl || sl.indexOf(fLayer.value) < 0) return false;
    }
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
      var de = drawEls[k];
      if (de) de.style.display = ok ? "" : "none";
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
    return rankPos[a] - rankPos[b];
  }
  var groupRows = [];
  function reorder() {
    if (!api.ready) { pending = true; return; }
    var o = order0.slice();
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
    if (row) fill(Number(row.getAttribute("data-i")));
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
    if (k < 0) return;
    var toBoard = e.target.classList && e.target.classList.contains("goto");
    if (toBoard) e.preventDefault();
    select(k, { zoom: true, focus: !toBoard });
    if (toBoard) document.getElementById("board").scrollIntoView({ block: "start" });
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
      select(Number(t.getAttribute("data-i")), { zoom: false, scroll: "wrap" });
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

  /* stack-up "findings against this layer" badges filter the table by that layer */
  document.querySelectorAll("a[data-filter-layer]").forEach(function (a) {
    a.addEventListener("click", function (e) {
      e.preventDefault();
      clearFilters();
      fLayer.value = a.getAttribute("data-filter-layer");
      applyFilters();
      document.getElementById("findings").scrollIntoView();
    });
  });
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

  /* ---------------------------------------------------------------- printing */
  /* Paper cannot be clicked: before printing, open every collapsed <details> (cannot-verify
     groups after the third) and fill every row not filled yet; after printing, close again
     what was closed, so the page looks as the reader left it. */
  var printOpened = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (d) { d.open = true; printOpened.push(d); });
    while (bgNext < N) fillBatch(200); /* what the background fill has not reached yet */
    for (var k = 0; k < N; k++) fill(k);
  });
  window.addEventListener("afterprint", function () {
    printOpened.forEach(function (d) { d.open = false; });
    printOpened = [];
  });

  /* ---------------------------------------------------------------- first render, in chunks */
  setVB(home.slice());
  svg.style.setProperty("--u", String(home[2] / 900));
  function buildRows() {
    var parts = new Array(N);
    for (var k = 0; k < N; k++) parts[k] = skeletonHtml(rows[order0[k]]);
    tbody.insertAdjacentHTML("beforeend", parts.join(""));
    var el = tbody.firstElementChild;
    for (var j = 0; j < N && el; j++) { rowEls[order0[j]] = el; el = el.nextElementSibling; }
  }
  function watchRows() {
    if (!("IntersectionObserver" in window)) { for (var k = 0; k < N; k++) fill(k); return; }
    observer = new IntersectionObserver(function (entries) {
      for (var e = 0; e < entries.length; e++) {
        if (entries[e].isIntersecting) fill(Number(entries[e].target.getAttribute("data-i")));
      }
    }, { root: document.getElementById("table-wrap"), rootMargin: "800px 0px" });
    for (var k = 0; k < N; k++) if (!filled[k]) observer.observe(rowEls[k]);
  }
  var bgNext = 0, scratch = document.createElement("template");
  function fillBatch(n) {
    /* parse the cells of n rows in one go and move them into their rows: one parser run per
       batch instead of one per row */
    var ks = [], parts = [];
    while (bgNext < N && ks.length < n) {
      var k = order0[bgNext++];
      if (filled[k] || !rowEls[k]) continue;
      ks.push(k);
      parts.push("<tr>" + cellsHtml(rows[k]) + "</tr>");
    }
    if (!ks.length) return;
    scratch.innerHTML = "<table><tbody>" + parts.join("") + "</tbody></table>";
    var src = scratch.content.querySelector("tbody").firstElementChild;
    for (var j = 0; j < ks.length && src; j++) {
      var next = src.nextElementSibling, row = rowEls[ks[j]];
      if (!filled[ks[j]]) {
        while (src.firstChild) row.appendChild(src.firstChild);
        filled[ks[j]] = 1;
        nFilled++;
        if (observer) observer.unobserve(row);
      }
      src = next;
    }
  }
  function backgroundFill() {
    var until = performance.now() + 12; /* short slices keep the page responsive */
    while (bgNext < N && performance.now() < until) fillBatch(100);
    if (bgNext < N) { setTimeout(backgroundFill, 0); return; }
    if (observer) { observer.disconnect(); observer = null; }
    api.complete = true;
    api.tComplete = performance.now();
  }

  buildRows();
  /* the cannot-verify groups' Copy buttons: the accel-drc.yaml block to the clipboard; where
     the clipboard API is missing or refused (file:// in some browsers) the block is selected
     for Ctrl+C instead */
  function selectText(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  function copyYaml(btn) {
    var box = btn.closest(".declare-yaml");
    var pre = box.querySelector("pre.yaml"), state = box.querySelector(".copy-state");
    var text = pre.textContent;
    function fallback() {
      selectText(pre);
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      state.textContent = ok ? "copied" : "selected: press Ctrl+C";
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { state.textContent = "copied"; }, fallback);
    } else {
      fallback();
    }
  }
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest && ev.target.closest("button.copy-yaml");
    if (btn) copyYaml(btn);
  });

  for (var k0 = 0; k0 < Math.min(N, 40); k0++) fill(order0[k0]);
  buildDrawings();
  buildMarkers();
  order = order0.slice();
  if (N) setRoving(rowEls[order0[0]]);
  api.ready = true;
  applyFilters();
  watchRows();
  api.interactive = true;
  api.tInteractive = performance.now(); /* ms since navigation start */
  api.tReady = api.tInteractive;
  api.tScriptStart = t0;
  document.documentElement.setAttribute("data-report-ready", "1");
  /* time to interactive as a user sees it: the first frame is painted and the main thread is
     free to handle a click (a task queued after that frame runs) */
  requestAnimationFrame(function () {
    setTimeout(function () { api.tPainted = performance.now(); }, 0);
  });
  setTimeout(backgroundFill, 50);
})();
