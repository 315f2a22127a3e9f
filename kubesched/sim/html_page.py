"""The HTML report's page: its frame, style and script (the data comes from :mod:`kubesched.sim.html_report`).

plotly.js and the data arrive gzip-compressed and base64-encoded in two inert ``<script>`` elements;
the script unpacks both with the browser's DecompressionStream, runs plotly.js, draws the charts,
fills each pool's node table and the pod picker, then marks the page: ``<html data-report="ready"
data-plots="N">`` once every chart is drawn, ``data-report="error"`` with the message in ``#js-errors``
if anything failed. Lists longer than a handful show their first names and "… and N more", with the
whole list in a collapsed ``<details>``.
"""

from __future__ import annotations

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{style}</style>
<script>window.__errors = []; window.addEventListener("error", function (e) {{ window.__errors.push(String(e.message));
var el = document.getElementById("js-errors"); if (el) el.textContent = window.__errors.join("\\n"); }});</script>
</head><body>
<h1>{title}</h1><pre id=js-errors></pre>
{body}
<script type="application/octet-stream" id="plotly-js">{plotly}</script>
<script type="application/octet-stream" id="report-data">{data}</script>
<script>{script}</script>
</body></html>
"""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em 2em; color: #1f2933; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #d9e2ec; }
h3 { font-size: 1em; margin: 1em 0 0.3em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #d9e2ec; padding: 2px 8px; text-align: left; vertical-align: top; }
th { background: #f0f4f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.selected td { background: #e3f8e8; font-weight: 600; } tr.tie td { background: #fff8e1; }
.lead { font-size: 1.05em; } #js-errors { color: #b00020; white-space: pre-wrap; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 0.5em; }
details.more { margin-top: 0.2em; max-width: 70em; } details.more > summary { color: #2f6fb0; cursor: pointer; }
details.pool { margin: 0.2em 0; } details.pool > summary { cursor: pointer; font-weight: 600; }
td.bar { min-width: 4em; }
pre.over-time { background: #f0f4f8; padding: 0.5em; font-size: 0.85em; }
"""

SCRIPT = r"""
(function () {
  "use strict";
  var root = document.documentElement;
  function fail(err) {
    window.__errors.push(String(err && err.message ? err.message : err));
    document.getElementById("js-errors").textContent = window.__errors.join("\n");
    root.dataset.report = "error";
  }
  function unpack(id) {
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("This browser cannot unpack the report: it needs DecompressionStream " +
        "(Chrome or Edge 80, Firefox 113, Safari 16.4 or newer)."));
    }
    var text = atob(document.getElementById(id).textContent.trim());
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function expand(runs) {
    var out = [], at = 0;
    for (var i = 0; i + 1 < runs.length; i += 2) {
      at += runs[i];
      for (var k = 0; k < runs[i + 1]; k++) out.push(at + k);
      at += runs[i + 1];
    }
    return out;
  }
  function count(runs) {
    var n = 0;
    for (var i = 1; i < runs.length; i += 2) n += runs[i];
    return n;
  }
  // The first few names, then "... and N more" opening onto the whole list.
  function names(items, shown) {
    shown = shown || 5;
    var span = el("span", (items.length > shown ? items.length + ": " : "") + items.slice(0, shown).join(", "));
    if (items.length > shown) {
      var more = span.appendChild(el("details", null, "more"));
      more.appendChild(el("summary", "\u2026 and " + (items.length - shown) + " more"));
      more.appendChild(el("div", items.join(", ")));
    }
    return span;
  }
  function table(header, rows, rowClass) {
    var t = el("table"), head = el("tr");
    header.forEach(function (h) { head.appendChild(el("th", h)); });
    t.appendChild(el("thead")).appendChild(head);
    var body = t.appendChild(el("tbody"));
    rows.forEach(function (row, i) {
      var tr = body.appendChild(el("tr", null, rowClass ? rowClass(i) : ""));
      row.forEach(function (c) {
        if (c instanceof Node) { tr.appendChild(el("td")).appendChild(c); return; }
        tr.appendChild(el("td", c === null || c === undefined ? "-" : c, typeof c === "number" ? "num" : ""));
      });
    });
    return t;
  }
  function amount(resource, value) {
    if (resource === "cpu") return String(Math.round(value) / 1000);
    if (resource === "memory" || resource === "ephemeral-storage") {
      var units = [["Ti", 1099511627776], ["Gi", 1073741824], ["Mi", 1048576], ["Ki", 1024]];
      for (var i = 0; i < units.length; i++) {
        if (value >= units[i][1]) {
          var v = value / units[i][1];
          return (v >= 100 || v === Math.floor(v) ? v.toFixed(0) : v.toFixed(1)) + units[i][0];
        }
      }
    }
    return String(value);
  }

  function fillPools(data) {
    var u = data.usage;
    u.pools.forEach(function (pool, p) {
      var box = document.querySelector('.pool-nodes[data-pool="' + p + '"]');
      if (!box) return;
      var header = ["node"];
      u.resources.forEach(function (r) { header.push(r, r + " %"); });
      var rows = pool[1].map(function (i) {
        var row = [data.nodes[u.node[i]] + (u.cordoned[i] ? " (cordoned)" : "")];
        u.resources.forEach(function (r, c) {
          var req = u.requested[i][c], alloc = u.allocatable[i][c];
          row.push(alloc || req ? amount(r, req) + "/" + amount(r, alloc) : "-");
          var pct = alloc ? Math.round(100 * req / alloc) : null;
          var cell = el("span", pct === null ? "-" : pct + "%");
          row.push(cell);
        });
        return row;
      });
      var t = table(header, rows);
      t.querySelectorAll("tbody tr").forEach(function (tr) {
        for (var c = 2; c < tr.children.length; c += 2) {
          var td = tr.children[c], pct = parseFloat(td.textContent);
          td.className = "num bar";
          if (!isNaN(pct)) td.style.background = "linear-gradient(90deg, #cfe0f3 " + Math.min(pct, 100) +
            "%, transparent " + Math.min(pct, 100) + "%)";
        }
      });
      box.appendChild(t);
    });
  }

  function showDecision(data, out, pod, d) {
    var N = data.nodes, T = data.texts;
    out.innerHTML = "";
    if (!d) { out.appendChild(el("p", "No attempt recorded.")); return; }
    out.appendChild(el("p", pod + ", attempt " + d.a + " (profile " + T[d.p] + "): " + d.r +
      (d.n !== undefined ? " on " + N[d.n] : "")));
    if (d.m) out.appendChild(el("p", d.m));
    var ties = d.t ? expand(d.t) : [];
    if (ties.length > 1) {
      var p = out.appendChild(el("p", "Tied for the best total (one chosen at random, as kube-scheduler does): "));
      p.appendChild(names(ties.map(function (i) { return N[i]; }), 8));
    }
    if (d.nn) out.appendChild(el("p", "Nominated node: " + d.nn));
    if (d.v) { var v = out.appendChild(el("p", "Victims: ")); v.appendChild(names(d.v)); }
    var feasible = d.f ? count(d.f) : 0;
    if (d.s && d.s.length) {
      var plugins = d.sp.map(function (i) { return T[i]; });
      var best = d.k || d.s.length;
      out.appendChild(el("h3", feasible + " feasible of " + d.e + " nodes evaluated; " +
        (best < feasible ? "the best " + best + " by total" : "by total") + (d.k ? " and the chosen node" : "") +
        " (scores: raw / normalised / weighted)"));
      var tieSet = {};
      ties.forEach(function (i) { tieSet[i] = true; });
      var rows = d.s.map(function (row) {
        return [N[row[0]], row[1]].concat(plugins.map(function (_, k) {
          var raw = row[2][k], weighted = row[3][k], w = d.w[k];
          return (raw === null ? "-" : raw) + " / " + (w ? Math.floor(weighted / w) : "-") + " / " + weighted;
        }));
      });
      out.appendChild(table(["node", "total"].concat(plugins), rows, function (i) {
        var n = d.s[i][0];
        return n === d.n ? "selected" : (tieSet[n] ? "tie" : "");
      }));
      if (feasible > d.s.length) {
        var all = out.appendChild(el("p", "All feasible nodes: "));
        all.appendChild(names(expand(d.f).map(function (i) { return N[i]; })));
      }
    }
    if (d.x) {
      var rejected = d.x.reduce(function (n, x) { return n + count(x[2]); }, 0);
      out.appendChild(el("h3", rejected + " nodes rejected"));
      out.appendChild(table(["plugin", "reason", "nodes", "which"], d.x.map(function (x) {
        return [T[x[0]], T[x[1]], count(x[2]), names(expand(x[2]).map(function (i) { return N[i]; }))];
      })));
    }
  }

  function fillPicker(data) {
    var podPicker = document.getElementById("pod-picker");
    var attemptPicker = document.getElementById("attempt-picker");
    var out = document.getElementById("decision");
    var byPod = {};
    data.decisions.forEach(function (entry) {
      byPod[entry[0]] = entry[1];
      var o = el("option", entry[0]); o.value = entry[0]; podPicker.appendChild(o);
    });
    function show() {
      var list = byPod[podPicker.value] || [];
      showDecision(data, out, podPicker.value, list[Number(attemptPicker.value)] || list[list.length - 1]);
    }
    function fillAttempts() {
      var list = byPod[podPicker.value] || [];
      attemptPicker.innerHTML = "";
      list.forEach(function (d, i) { var o = el("option", d.a); o.value = i; attemptPicker.appendChild(o); });
      attemptPicker.value = String(list.length - 1);
      show();
    }
    podPicker.addEventListener("change", fillAttempts);
    attemptPicker.addEventListener("change", show);
    if (byPod[data.first]) podPicker.value = data.first;
    if (data.decisions.length) fillAttempts();
  }

  Promise.all([unpack("plotly-js"), unpack("report-data")]).then(function (texts) {
    var code = document.createElement("script");
    code.textContent = texts[0];
    document.head.appendChild(code);
    var data = JSON.parse(texts[1]);
    fillPools(data);
    fillPicker(data);
    var config = {displaylogo: false, responsive: true};
    return Promise.all(data.figures.map(function (f) {
      return Plotly.newPlot(f.id, f.data, f.layout, config);
    }));
  }).then(function (plots) {
    root.dataset.plots = String(plots.length);
    if (root.dataset.report !== "error") root.dataset.report = "ready";
  }).catch(fail);
})();
"""
