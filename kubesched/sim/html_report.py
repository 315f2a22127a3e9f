"""``simulate --report FILE.html``: one self-contained page that shows what the simulation decided and why.

The page holds, with no network needed to open it: requested against allocatable per node and
resource; pending pods and cluster utilisation over the run; the reasons pods stayed unschedulable,
by plugin; the preemptions; and a pod picker that shows any pod's decision (filter verdicts, raw,
normalised and weighted scores per plugin, the winner and the ties).

Plots are plotly figures with plotly.js inlined once (``include_plotlyjs`` is not used per figure),
so the file is large (about 5 MB) but complete. The series over the run follow virtual time when the
run was timed (pods arriving at ``kubesched.io/arrival``: the samples of ``result.series``), and step per
scheduling attempt otherwise, the simulation's own clock of decisions.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubesched.api.objects import Pod
from kubesched.api.resources import CPU, MEMORY
from kubesched.recording.trace import SCHEDULED, AttemptRecord
from kubesched.sim.report import node_usage, pending_pods, preemptions, workload_pods

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from kubesched.sim.simulate import SimulationResult

#: A decision over more than twice this many nodes keeps this many best scored and rejected ones.
KEEP_NODES = 25
GIB = 1 << 30


def _figure_html(fig: go.Figure, div_id: str) -> str:
    return str(fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                           config={"displaylogo": False, "responsive": True}))


def usage_figure(result: SimulationResult) -> go.Figure:
    """Requested (bars) against allocatable (outline) per node: cpu cores, memory GiB, pods."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    usage = node_usage(result)
    names = [u.name + (" (cordoned)" if u.unschedulable else "") for u in usage]
    panels = [
        ("cpu (cores)", [u.cpu_requested / 1000 for u in usage], [u.cpu_allocatable / 1000 for u in usage]),
        ("memory (GiB)", [u.memory_requested / GIB for u in usage], [u.memory_allocatable / GIB for u in usage]),
        ("pods", [u.pods for u in usage], [u.pods_allocatable for u in usage]),
    ]
    fig = make_subplots(rows=1, cols=3, subplot_titles=[p[0] for p in panels], horizontal_spacing=0.06)
    for col, (_, requested, allocatable) in enumerate(panels, start=1):
        fig.add_trace(go.Bar(x=names, y=allocatable, name="allocatable", marker_color="#d9e2ec",
                             showlegend=col == 1, legendgroup="alloc", hovertemplate="%{x}: %{y:.2f} allocatable"),
                      row=1, col=col)
        fig.add_trace(go.Bar(x=names, y=requested, name="requested", marker_color="#2f6fb0",
                             showlegend=col == 1, legendgroup="req", hovertemplate="%{x}: %{y:.2f} requested"),
                      row=1, col=col)
    fig.update_layout(barmode="overlay", height=400, margin={"t": 70, "b": 90, "l": 40, "r": 10},
                      legend={"orientation": "h", "y": 1.12, "yanchor": "bottom", "x": 0})
    return fig


def run_series(result: SimulationResult) -> dict[str, list[Any]]:
    """After each attempt: pods pending, and cpu and memory requested as % of the cluster's allocatable.

    Requests are read from the pods left after the run; a pod deleted by then (a preemption victim,
    a finished pod) no longer has them, so it does not count towards the utilisation lines.
    """
    pods = {pod.key: pod for pod in map(Pod.from_dict, result.pods())}
    usage = node_usage(result)
    alloc_cpu = sum(u.cpu_allocatable for u in usage) or 1
    alloc_mem = sum(u.memory_allocatable for u in usage) or 1
    simulated = set(result.final)
    # Load at the start: bound pods the run did not place.
    cpu = sum(p.requests.get(CPU, 0) for k, p in pods.items() if p.node_name and k not in simulated)
    mem = sum(p.requests.get(MEMORY, 0) for k, p in pods.items() if p.node_name and k not in simulated)
    arrived: set[str] = set()
    bound: set[str] = set()
    series: dict[str, list[Any]] = {"attempt": [], "pod": [], "pending": [], "cpu": [], "memory": []}
    for i, record in enumerate(result.records, start=1):
        arrived.add(record.pod)
        for victim in record.victims or ():
            pod = pods.get(victim)
            if victim in bound and pod is not None:
                cpu -= pod.requests.get(CPU, 0)
                mem -= pod.requests.get(MEMORY, 0)
            bound.discard(victim)
            arrived.discard(victim)
        if record.result == SCHEDULED and record.pod not in bound:
            bound.add(record.pod)
            pod = pods.get(record.pod)
            if pod is not None:
                cpu += pod.requests.get(CPU, 0)
                mem += pod.requests.get(MEMORY, 0)
        series["attempt"].append(i)
        series["pod"].append(record.pod)
        series["pending"].append(len(arrived - bound))
        series["cpu"].append(round(100 * cpu / alloc_cpu, 2))
        series["memory"].append(round(100 * mem / alloc_mem, 2))
    return series


def time_series(result: SimulationResult) -> dict[str, list[Any]] | None:
    """A timed run's samples over virtual time: pods pending, and cpu and memory requested as % of the
    cluster's allocatable at that moment; None for an untimed run (its series is the attempts')."""
    samples = result.series
    if samples is None or not result.timed or len(samples.times) < 2:
        return None

    def percent(resource: str) -> list[float]:
        requested = samples.requested.get(resource) or [0] * len(samples.times)
        allocatable = samples.allocatable.get(resource) or [0] * len(samples.times)
        return [round(100 * r / a, 2) if a else 0.0 for r, a in zip(requested, allocatable, strict=True)]

    return {"seconds": list(samples.times), "pending": list(samples.pending), "cpu": percent(CPU),
            "memory": percent(MEMORY)}


def timeline_figure(series: Mapping[str, list[Any]]) -> go.Figure:
    """Pending pods and utilisation against virtual seconds (:func:`time_series`) or against the
    attempts (:func:`run_series`)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(specs=[[{"secondary_y": True}]])
    if "seconds" in series:
        x, title = series["seconds"], "virtual seconds"
        pending = go.Scatter(x=x, y=series["pending"], name="pending pods", mode="lines", line_shape="hv",
                             hovertemplate="%{x:.0f}s: %{y} pending")
    else:
        x, title = series["attempt"], "scheduling attempt"
        pending = go.Scatter(x=x, y=series["pending"], name="pending pods", mode="lines", line_shape="hv",
                             customdata=series["pod"], hovertemplate="attempt %{x} (%{customdata}): %{y} pending")
    fig.add_trace(pending, secondary_y=False)
    for key, color in (("cpu", "#2f6fb0"), ("memory", "#b05a2f")):
        fig.add_trace(go.Scatter(x=x, y=series[key], name=f"{key} requested %", mode="lines", line_shape="hv",
                                 line={"color": color, "dash": "dot"}), secondary_y=True)
    fig.update_xaxes(title_text=title, dtick=1 if title == "scheduling attempt" and len(x) <= 20 else None)
    fig.update_yaxes(title_text="pending pods", secondary_y=False, rangemode="tozero")
    fig.update_yaxes(title_text="% of allocatable", secondary_y=True, range=[0, 100], tickmode="linear", dtick=25,
                     showgrid=False)
    fig.update_layout(height=340, margin={"t": 40, "b": 50, "l": 50, "r": 50},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0})
    return fig


def rejection_counts(result: SimulationResult) -> dict[str, Counter[str]]:
    """For each pod left pending: nodes rejected per plugin in its last attempt."""
    last: dict[str, AttemptRecord] = {}
    for record in result.records:
        last[record.pod] = record
    out: dict[str, Counter[str]] = {}
    for pending in pending_pods(result):
        found = last.get(pending.pod)
        if found is not None:
            out[pending.pod] = Counter(str(e.get("plugin")) for e in found.filter.values())
    return out


def reasons_figure(counts: Mapping[str, Counter[str]]) -> go.Figure:
    import plotly.graph_objects as go

    plugins = sorted({p for c in counts.values() for p in c})
    pods = list(counts)
    fig = go.Figure([go.Bar(name=plugin, y=pods, x=[counts[p].get(plugin, 0) for p in pods], orientation="h",
                            hovertemplate=f"{plugin}: %{{x}} nodes<extra>%{{y}}</extra>") for plugin in plugins])
    fig.update_layout(barmode="stack", height=max(240, 70 + 28 * len(pods)), xaxis_title="nodes rejected",
                      margin={"t": 40, "b": 50, "l": 10, "r": 10},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
                      yaxis={"automargin": True})
    return fig


def decision(record: AttemptRecord, keep: int = KEEP_NODES) -> dict[str, Any]:
    """One attempt as the page's picker renders it: verdicts sorted as ``explain`` sorts them.

    Above ``2 * keep`` evaluated nodes only the best ``keep`` scored and the first ``keep`` rejected
    nodes are kept, with counts of the rest by plugin, so a report on thousands of nodes stays small.
    """
    totals = record.total
    feasible = sorted(record.feasible, key=lambda n: (-totals.get(n, 0), n))
    rejected = sorted(record.filter)
    omitted = 0
    if len(feasible) + len(rejected) > 2 * keep:
        omitted = max(0, len(feasible) - keep) + max(0, len(rejected) - keep)
        feasible, rejected = feasible[:keep], rejected[:keep]
    raw: Mapping[str, Mapping[str, int]] = record.details.get("score") or {}
    weights: Mapping[str, int] = record.details.get("weights") or {}
    rows = []
    for node in feasible:
        scores = []
        for plugin, weighted in sorted((record.scores.get(node) or {}).items()):
            weight = weights.get(plugin)
            scores.append([plugin, (raw.get(plugin) or {}).get(node), weighted // weight if weight else None,
                           weight, weighted])
        rows.append({"node": node, "total": totals.get(node), "scores": scores})
    def reason(entry: Mapping[str, Any]) -> str:
        return ", ".join(str(r) for r in entry.get("reasons") or []) or str(entry.get("code") or "")

    return {
        "attempt": record.attempt, "profile": record.profile, "result": record.result, "node": record.node,
        "message": record.message, "ties": record.ties, "nominated": record.nominated_node,
        "victims": record.victims or [], "omitted": omitted,
        "rejectedBy": dict(Counter(str(e.get("plugin")) for e in record.filter.values())),
        "feasible": rows,
        "rejected": [[n, str(record.filter[n].get("plugin")), reason(record.filter[n])] for n in rejected],
    }


def decisions(result: SimulationResult) -> dict[str, list[dict[str, Any]]]:
    """Every pod's attempts, in the picker's shape (:func:`decision`)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for record in result.records:
        out.setdefault(record.pod, []).append(decision(record))
    return out


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render(result: SimulationResult) -> str:
    """The whole page as one HTML string."""
    from plotly.offline import get_plotlyjs

    scheduled = sum(1 for n in result.final.values() if n)
    pending = pending_pods(result)
    counts = rejection_counts(result)
    victims = preemptions(result)
    sections = [
        f"<p class=lead>Scheduled <b>{scheduled}/{len(result.final)}</b> pending pods in "
        f"{len(result.records)} attempts ({result.virtual_seconds:.1f}s of virtual time); "
        f"{len(pending)} left pending, {len(result.deleted)} preempted.</p>",
        "<h2>Requested and allocatable per node</h2>", _figure_html(usage_figure(result), "plot-usage"),
        "<h2>Pending pods and utilisation over the run</h2>",
        _figure_html(timeline_figure(time_series(result) or run_series(result)), "plot-timeline"),
    ]
    workloads = workload_pods(result)
    if workloads:
        sections += ["<h2>Workloads</h2>", _table(["WORKLOAD", "SCHEDULED", "PENDING"], [
            [w.workload, f"{w.scheduled}/{w.total}", ", ".join(k.split("/", 1)[1] for k in w.pending)]
            for w in workloads])]
    sections.append("<h2>Why pods stayed unschedulable</h2>")
    if counts:
        sections.append(_figure_html(reasons_figure(counts), "plot-reasons"))
        sections.append(_table(["POD", "REASON"], [[p.pod, p.reason] for p in pending]))
    else:
        sections.append("<p>Every pod was scheduled.</p>")
    sections.append("<h2>Preemptions</h2>")
    sections.append(_table(["VICTIM", "PREEMPTOR", "NODE"], [[v, by, node] for v, (by, node) in victims.items()])
                    if victims else "<p>No pod was preempted.</p>")
    sections.append('<h2>Decisions</h2><p><label>Pod <select id=pod-picker></select></label> '
                    '<label>attempt <select id=attempt-picker></select></label></p><div id=decision></div>')
    data = json.dumps(decisions(result), separators=(",", ":")).replace("</", "<\\/")
    first = json.dumps(pending[0].pod if pending else "")
    return _PAGE.format(title="kubesched simulation report", body="\n".join(sections), plotly=get_plotlyjs(),
                        data=data, first=first, script=_SCRIPT)


def write_report(result: SimulationResult, path: str | Path) -> Path:
    """Write the page; it shows every attempt's decision, so the run must have kept full records."""
    if result.record != "full":
        from kubesched.scenario.pipeline import SimulationError

        raise SimulationError(f"the HTML report needs every attempt's full record: run simulate(..., record=\"full\"), "
                              f"not record={result.record!r}")
    out = Path(path)
    out.write_text(render(result), encoding="utf-8")
    return out


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em 2em; color: #1f2933; }}
h1 {{ font-size: 1.5em; }} h2 {{ font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #d9e2ec; }}
table {{ border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }}
th, td {{ border: 1px solid #d9e2ec; padding: 2px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f0f4f8; }} td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
tr.selected td {{ background: #e3f8e8; font-weight: 600; }} tr.tie td {{ background: #fff8e1; }}
.lead {{ font-size: 1.05em; }} #js-errors {{ color: #b00020; }}
</style>
<script>window.__errors = []; window.addEventListener("error", function (e) {{ window.__errors.push(String(e.message));
var el = document.getElementById("js-errors"); if (el) el.textContent = window.__errors.join("\\n"); }});</script>
<script>{plotly}</script>
</head><body>
<h1>{title}</h1><pre id=js-errors></pre>
{body}
<script>var DECISIONS = {data}; var FIRST_POD = {first};</script>
<script>{script}</script>
</body></html>
"""

_SCRIPT = r"""
(function () {
  var pods = Object.keys(DECISIONS).sort();
  var podPicker = document.getElementById("pod-picker");
  var attemptPicker = document.getElementById("attempt-picker");
  var out = document.getElementById("decision");
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function table(header, rows, rowClass) {
    var t = el("table"), head = el("tr");
    header.forEach(function (h) { head.appendChild(el("th", h)); });
    t.appendChild(el("thead")).appendChild(head);
    var body = t.appendChild(el("tbody"));
    rows.forEach(function (row, i) {
      var tr = body.appendChild(el("tr", null, rowClass ? rowClass(i) : ""));
      row.forEach(function (c) { tr.appendChild(el("td", c === null || c === undefined ? "-" : c,
        typeof c === "number" ? "num" : "")); });
    });
    return t;
  }
  function show() {
    var list = DECISIONS[podPicker.value] || [];
    var d = list[Number(attemptPicker.value)] || list[list.length - 1];
    out.innerHTML = "";
    if (!d) { out.appendChild(el("p", "No attempt recorded.")); return; }
    out.appendChild(el("p", podPicker.value + ", attempt " + d.attempt + " (profile " + d.profile + "): " +
      d.result + (d.node ? " on " + d.node : "")));
    if (d.message) out.appendChild(el("p", d.message));
    if (d.ties.length > 1) out.appendChild(el("p", "Tied for the best total: " + d.ties.join(", ") +
      " (one chosen at random, as kube-scheduler does)"));
    if (d.nominated) out.appendChild(el("p", "Nominated node: " + d.nominated));
    if (d.victims.length) out.appendChild(el("p", "Victims: " + d.victims.join(", ")));
    if (d.feasible.length) {
      var plugins = [];
      d.feasible.forEach(function (f) { f.scores.forEach(function (s) {
        if (plugins.indexOf(s[0]) < 0) plugins.push(s[0]); }); });
      plugins.sort();
      out.appendChild(el("h3", "Feasible nodes (scores: raw / normalised / weighted)"));
      var rows = d.feasible.map(function (f) {
        var by = {}; f.scores.forEach(function (s) {
          by[s[0]] = (s[1] === null ? "-" : s[1]) + " / " + (s[2] === null ? "-" : s[2]) + " / " + s[4]; });
        return [f.node, f.total].concat(plugins.map(function (p) { return by[p] || ""; }));
      });
      out.appendChild(table(["node", "total"].concat(plugins), rows, function (i) {
        var n = d.feasible[i].node;
        return n === d.node ? "selected" : (d.ties.indexOf(n) >= 0 ? "tie" : ""); }));
    }
    if (d.rejected.length) {
      out.appendChild(el("h3", "Rejected nodes"));
      out.appendChild(table(["node", "plugin", "reason"], d.rejected));
    }
    if (d.omitted) out.appendChild(el("p", d.omitted + " more nodes not shown (" +
      Object.keys(d.rejectedBy).map(function (p) { return p + ": " + d.rejectedBy[p]; }).join(", ") + " rejected)"));
  }
  function fillAttempts() {
    var list = DECISIONS[podPicker.value] || [];
    attemptPicker.innerHTML = "";
    list.forEach(function (d, i) { var o = el("option", d.attempt); o.value = i; attemptPicker.appendChild(o); });
    attemptPicker.value = String(list.length - 1);
    show();
  }
  pods.forEach(function (p) { var o = el("option", p); o.value = p; podPicker.appendChild(o); });
  podPicker.addEventListener("change", fillAttempts);
  attemptPicker.addEventListener("change", show);
  if (DECISIONS[FIRST_POD]) podPicker.value = FIRST_POD;
  if (pods.length) fillAttempts();
})();
"""
