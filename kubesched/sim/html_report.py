"""``simulate --report FILE.html``: one self-contained page that shows what the simulation decided and why.

The page holds, with no network needed to open it: for every resource some pod requests, how full
the nodes of each pool are (:mod:`kubesched.sim.node_pools`: the spread over a pool's nodes, the pool's
total, and each pool's nodes one click away); pending pods and utilisation over the run; why pods
stayed unschedulable, by plugin; the preemptions; and a pod picker that shows any pod's decision
(:mod:`kubesched.sim.html_decisions`).

Size and speed at a thousand nodes: plotly.js and the page's data are gzip-compressed and base64-encoded
in the page (the browser unpacks them with DecompressionStream), charts carry one trace per pool or
per line, never per node, and the series hold a bounded number of points. The series over the run is
the summary's own (``result.series``, over virtual seconds) whenever the summary shows it (a timed run,
or one whose pods completed), so the page and the text quote the same numbers; otherwise it steps per
scheduling attempt, the simulation's own clock of decisions.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import html
import itertools
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.recording.attempt import Attempt
from kubesched.recording.trace import SCHEDULED
from kubesched.sim.device_use import DeviceInventory, class_columns
from kubesched.sim.html_decisions import NodeIndex, Texts, page_decisions
from kubesched.sim.html_page import PAGE, SCRIPT, STYLE
from kubesched.sim.node_pools import ClusterUsage, cluster_usage, natural_sorted, pool_stats
from kubesched.sim.pools import natural_key
from kubesched.sim.report import (
    PendingPod,
    format_over_time,
    pending_pods,
    preemptions,
    shows_over_time,
    workload_pods,
)
from kubesched.util.extras import require_extra
from kubesched.util.gc_tuning import long_lived_heap

if TYPE_CHECKING:
    from kubesched.sim.simulate import SimulationResult

#: Points of the per-attempt series drawn at most (a point stands for several attempts beyond that).
MAX_POINTS = 2000
#: Names shown before a list collapses into "… and N more".
SHOWN = 5
#: Bars of the unschedulable-reasons chart at most (pods with the same rejections share a bar).
MAX_REASON_BARS = 30
#: Resources shown in binary units (bytes), and cpu in cores; the others are counts.
BYTES = (MEMORY, EPHEMERAL_STORAGE)
GIB = 1 << 30
COLORS = ("#2f6fb0", "#b05a2f", "#3c8d40", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d")


def _attempts(result: SimulationResult) -> Sequence[Attempt]:
    """The columnar attempts behind ``result.records`` (read without building a record per attempt)."""
    return getattr(result.records, "attempts", ())


def _objects(result: SimulationResult, kind: str) -> list[Mapping[str, Any]]:
    """The cluster's objects of ``kind`` after the run, read in place (no copies: the page only reads them)."""
    if result.cluster is not None:
        return list(result.cluster.objects(kind))
    return []


# -- the series over the run ---------------------------------------------------------------------------
def time_series(result: SimulationResult) -> dict[str, Any] | None:
    """The summary's samples over virtual time (None when the summary shows none: see
    :func:`~kubesched.sim.report.shows_over_time`): pods pending (the most at once until the next
    sample) and, per resource, requested as % of the cluster's allocatable at that moment."""
    samples = result.series
    if samples is None or not shows_over_time(result):
        return None
    percent = {}
    for name, requested in samples.requested.items():
        allocatable = samples.allocatable.get(name) or []
        if any(allocatable) and any(requested):
            percent[name] = [round(100 * r / a, 2) if a else 0.0 for r, a in zip(requested, allocatable, strict=True)]
    return {
        "seconds": list(samples.times),
        "pending": list(samples.pending),
        "percent": {k: percent[k] for k in _resource_sort(percent)},
    }


def run_series(
    result: SimulationResult,
    resources: Sequence[str] = (CPU, MEMORY),
    *,
    pods: Sequence[Pod] | None = None,
    nodes: Sequence[Node] | None = None,
    max_points: int = MAX_POINTS,
) -> dict[str, Any]:
    """After each attempt: pods pending (attempted and not bound, and those never attempted), and per
    resource the requests of bound pods as % of the cluster's allocatable.

    Requests are read from the pods left after the run; a pod deleted by then (a preemption victim,
    a finished pod) no longer has them, so it does not count towards the utilisation lines. Past
    ``max_points`` attempts one point stands for several: the most pending and used among them.
    """
    by_key = {pod.key: pod for pod in (pods if pods is not None else _parsed_pods(result))}
    if nodes is None:
        nodes = [Node.from_dict(raw) for raw in _objects(result, "Node")]
    resources = [r for r in resources if r != PODS]
    allocatable = {r: sum(n.allocatable.get(r, 0) for n in nodes) or 1 for r in resources}
    simulated = set(result.final)
    # Load at the start: bound pods the run did not place; pods never attempted wait throughout.
    used = {
        r: sum(p.requests.get(r, 0) for k, p in by_key.items() if p.node_name and k not in simulated) for r in resources
    }
    deleted = set(result.deleted)
    waiting = sum(1 for k in result.never_attempted if not result.final.get(k) and k not in deleted)
    points = _peaks(_replay(result, by_key, resources, used, allocatable, waiting), max_points)
    return {
        "attempt": [p[0] for p in points],
        "pod": [p[1] for p in points],
        "pending": [p[2] for p in points],
        "percent": {r: [p[3][j] for p in points] for j, r in enumerate(resources)},
    }


def _replay(
    result: SimulationResult,
    by_key: Mapping[str, Pod],
    resources: Sequence[str],
    used: dict[str, int],
    allocatable: Mapping[str, int],
    waiting: int,
) -> list[tuple[int, str, int, list[float]]]:
    """One point per attempt, in order: the attempt, its pod, the pods pending after it and the % of
    allocatable requested per resource; ``used`` (the load at the start) is updated as pods bind and
    victims go."""
    arrived: set[str] = set()
    bound: set[str] = set()
    points: list[tuple[int, str, int, list[float]]] = []

    def add(key: str, sign: int) -> None:
        pod = by_key.get(key)
        if pod is not None:
            for r in resources:
                used[r] += sign * pod.requests.get(r, 0)

    for i, attempt in enumerate(_attempts(result), start=1):
        arrived.add(attempt.pod)
        for victim in attempt.victims or ():
            if victim in bound:
                add(victim, -1)
            bound.discard(victim)
            arrived.discard(victim)
        if attempt.result == SCHEDULED and attempt.pod not in bound:
            bound.add(attempt.pod)
            add(attempt.pod, 1)
        points.append(
            (
                i,
                attempt.pod,
                waiting + len(arrived) - len(bound),
                [round(100 * used[r] / allocatable[r], 2) for r in resources],
            )
        )
    return points


def _peaks(points: list[tuple[int, str, int, list[float]]], limit: int) -> list[tuple[int, str, int, list[float]]]:
    """At most ``limit`` points: consecutive ones merged, keeping the first's attempt and pod and the
    largest values; the last point stays as it is (the state at the end)."""
    if len(points) <= limit or limit < 2:
        return points
    size = -(-(len(points) - 1) // (limit - 1))
    out = []
    for start in range(0, len(points) - 1, size):
        group = points[start : min(start + size, len(points) - 1)]
        out.append(
            (
                group[0][0],
                group[0][1],
                max(p[2] for p in group),
                [max(values) for values in zip(*(p[3] for p in group), strict=True)],
            )
        )
    return [*out, points[-1]]


def timeline_figure(series: Mapping[str, Any]) -> dict[str, Any]:
    """Pending pods (left axis) and % of allocatable requested per resource (right axis), against
    virtual seconds (:func:`time_series`) or attempts (:func:`run_series`)."""
    timed = "seconds" in series
    x = series["seconds"] if timed else series["attempt"]
    pending: dict[str, Any] = {
        "type": "scatter",
        "x": x,
        "y": series["pending"],
        "name": "pending pods",
        "mode": "lines",
        "line": {"shape": "hv", "color": "#1f2933"},
    }
    if timed:
        pending["hovertemplate"] = "%{x:.0f}s: up to %{y} pending<extra></extra>"
    else:
        pending["customdata"] = series["pod"]
        pending["hovertemplate"] = "attempt %{x} (%{customdata}): %{y} pending<extra></extra>"
    data = [pending]
    for (name, values), color in zip(series["percent"].items(), itertools.cycle(COLORS), strict=False):
        data.append(
            {
                "type": "scatter",
                "x": x,
                "y": values,
                "name": f"{name} requested %",
                "mode": "lines",
                "yaxis": "y2",
                "line": {"shape": "hv", "color": color, "dash": "dot"},
            }
        )
    title = "virtual seconds" if timed else "scheduling attempt"
    top = max([100.0, *(max(values, default=0) for values in series["percent"].values())])
    layout = {
        "height": 340,
        "margin": {"t": 40, "b": 50, "l": 50, "r": 50},
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        "xaxis": {"title": {"text": title}},
        "yaxis": {"title": {"text": "pending pods"}, "rangemode": "tozero"},
        "yaxis2": {
            "title": {"text": "% of allocatable"},
            "overlaying": "y",
            "side": "right",
            "range": [0, top],
            "dtick": 25,
            "showgrid": False,
        },
    }
    return {"data": data, "layout": layout}


# -- pools ---------------------------------------------------------------------------------------------
def unit(resource: str) -> tuple[str, float]:
    """How a resource is shown: (unit, scheduler units per shown unit)."""
    if resource == CPU:
        return "cores", 1000.0
    if resource in BYTES:
        return "GiB", float(GIB)
    return "", 1.0


def pool_figure(usage: ClusterUsage, column: int) -> dict[str, Any]:
    """One resource: each pool's spread of node utilisation (a box: min, quartiles, max) and the pool's
    total requested as % of its allocatable (a marker)."""
    resource = usage.resources[column]
    stats = pool_stats(usage, column)
    name, scale = unit(resource)
    pools = [s.pool for s in stats]
    spread = {
        "type": "box",
        "name": "nodes",
        "x": pools,
        "q1": [s.q1 for s in stats],
        "median": [s.median for s in stats],
        "q3": [s.q3 for s in stats],
        "mean": [s.mean for s in stats],
        "lowerfence": [s.minimum for s in stats],
        "upperfence": [s.maximum for s in stats],
        "marker": {"color": "#2f6fb0"},
        "boxpoints": False,
        "hoverinfo": "y",
    }
    totals = [
        f"{s.pool}: {_amount(s.requested / scale)} of {_amount(s.allocatable / scale)} {name} requested "
        f"over {s.nodes} nodes"
        for s in stats
    ]
    total = {
        "type": "scatter",
        "mode": "markers",
        "name": "pool total",
        "x": pools,
        "y": [round(s.total_percent, 2) for s in stats],
        "text": totals,
        "hovertemplate": "%{text} (%{y:.0f}%)<extra></extra>",
        "marker": {"symbol": "diamond", "size": 10, "color": "#b05a2f"},
    }
    top = max([100.0, *(s.maximum for s in stats)])
    layout: dict[str, Any] = {
        "title": {"text": resource, "x": 0, "font": {"size": 14}},
        "height": 300,
        "showlegend": True,
        "margin": {"t": 40, "b": 60, "l": 50, "r": 10},
        "legend": {"orientation": "h", "y": 1.12, "x": 0.4},
        "xaxis": {"type": "category", "automargin": True},
        "yaxis": {"title": {"text": "% of allocatable"}, "range": [0, top * 1.05]},
    }
    if not stats:
        layout["annotations"] = [
            {
                "text": f"pods request {resource}, but no node offers it",
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
            }
        ]
    return {"data": [spread, total], "layout": layout}


def _amount(value: float) -> str:
    return f"{value:.0f}" if value >= 100 or value == int(value) else f"{value:.2f}".rstrip("0").rstrip(".")


def pools_section(usage: ClusterUsage) -> list[str]:
    """The pools' table, a chart per resource, and each pool's nodes in a collapsed section."""
    grouping = (
        f"Nodes grouped by label <code>{html.escape(usage.label)}</code> into {len(usage.pools)} pools"
        if usage.label
        else "One pool: no node carries a node-pool or zone label"
    )
    out = [
        "<h2>Requested and allocatable per pool</h2>",
        f"<p>{grouping} (<code>--group-by LABEL</code> chooses another). Each chart shows, per pool, "
        "how full its nodes are (box: min, quartiles, max of requested as % of allocatable, over the "
        "nodes that offer the resource) and the pool's total (diamond).</p>",
    ]
    header = ["POOL", "NODES", *(f"{r} ({unit(r)[0]})" if unit(r)[0] else r for r in usage.resources)]
    rows = []
    stats = [{s.pool: s for s in pool_stats(usage, c)} for c in range(len(usage.resources))]
    for pool in usage.pools:
        cordoned = int(usage.cordoned[pool.rows].sum())
        cells = [html.escape(pool.name), f"{len(pool.rows)}" + (f" ({cordoned} cordoned)" if cordoned else "")]
        for c, resource in enumerate(usage.resources):
            s = stats[c].get(pool.name)
            scale = unit(resource)[1]
            cells.append(
                f"<b>{s.total_percent:.0f}%</b> ({_amount(s.requested / scale)} of "
                f"{_amount(s.allocatable / scale)})<br><small>nodes: min {s.minimum:.0f}%, median "
                f"{s.median:.0f}%, max {s.maximum:.0f}%</small>"
                if s
                else "-"
            )
        rows.append(cells)
    out.append(_table(header, rows))
    out.append(
        "<div class=charts>"
        + "".join(
            f'<div class=chart id="plot-resource-{c}" data-resource="{html.escape(r)}"></div>'
            for c, r in enumerate(usage.resources)
        )
        + "</div>"
    )
    out.append("<h3>Nodes of each pool</h3>")
    out.extend(
        f"<details class=pool><summary>{html.escape(pool.name)}: {len(pool.rows)} nodes</summary>"
        f'<div class=pool-nodes data-pool="{i}"></div></details>'
        for i, pool in enumerate(usage.pools)
    )
    return out


def usage_data(usage: ClusterUsage, nodes: NodeIndex) -> dict[str, Any]:
    """What the pools' node tables are drawn from (scheduler units: cpu millicores, bytes)."""
    return {
        "resources": usage.resources,
        "node": [nodes.get(n) for n in usage.nodes],
        "cordoned": usage.cordoned.astype(int).tolist(),
        "requested": usage.requested.astype(int).tolist(),
        "allocatable": usage.allocatable.astype(int).tolist(),
        "pools": [[pool.name, pool.rows.tolist()] for pool in usage.pools],
    }


# -- why pods stayed pending ---------------------------------------------------------------------------
def rejection_counts(result: SimulationResult, pending: Sequence[PendingPod] | None = None) -> dict[str, Counter[str]]:
    """For each pod left pending: nodes rejected per plugin in its last attempt."""
    last: dict[str, Attempt] = {}
    for attempt in _attempts(result):
        last[attempt.pod] = attempt
    out: dict[str, Counter[str]] = {}
    for left in pending if pending is not None else pending_pods(result):
        found = last.get(left.pod)
        if found is not None:
            counts: Counter[str] = Counter()
            for (plugin, _), n in found.filter_counts().items():
                counts[plugin] += n
            out[left.pod] = counts
    return out


def reasons_figure(counts: Mapping[str, Counter[str]]) -> dict[str, Any]:
    """Nodes rejected per plugin: one bar per set of pods rejected alike (``pod and N more``), the
    largest sets first, at most :data:`MAX_REASON_BARS` bars."""
    groups: dict[tuple[tuple[str, int], ...], list[str]] = {}
    for pod in natural_sorted(counts):
        groups.setdefault(tuple(sorted(counts[pod].items())), []).append(pod)
    ordered = sorted(groups.items(), key=lambda g: -len(g[1]))
    left_out = sum(len(pods) for _, pods in ordered[MAX_REASON_BARS:])
    ordered = ordered[:MAX_REASON_BARS]
    labels = [pods[0] + (f" and {len(pods) - 1} more" if len(pods) > 1 else "") for _, pods in ordered]
    plugins = sorted({p for c in counts.values() for p in c})
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": plugin,
            "y": labels,
            "x": [dict(key).get(plugin, 0) for key, _ in ordered],
            "hovertemplate": f"{plugin}: %{{x}} nodes<extra>%{{y}}</extra>",
        }
        for plugin in plugins
    ]
    title = "nodes rejected" + (f" ({left_out} more pods, rejected in other ways: see the table)" if left_out else "")
    layout = {
        "barmode": "stack",
        "height": max(240, 70 + 28 * len(labels)),
        "xaxis": {"title": {"text": title}},
        "margin": {"t": 40, "b": 50, "l": 10, "r": 10},
        "yaxis": {"automargin": True, "autorange": "reversed"},
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
    }
    return {"data": data, "layout": layout}


def pending_section(
    result: SimulationResult, pending: Sequence[PendingPod], figures: list[dict[str, Any]]
) -> list[str]:
    """A chart of the nodes each plugin rejected, and the pods left pending grouped by reason."""
    out = ["<h2>Why pods stayed unschedulable</h2>"]
    if not pending:
        return [*out, "<p>Every pod was scheduled.</p>"]
    counts = rejection_counts(result, pending)
    if counts:
        figures.append({"id": "plot-reasons", **reasons_figure(counts)})
        out.append('<div id="plot-reasons"></div>')
    by_reason: dict[str, list[str]] = {}
    for p in pending:
        by_reason.setdefault(p.reason, []).append(p.pod)
    rows = sorted(by_reason.items(), key=lambda r: (-len(r[1]), r[0]))
    out.append(
        _table(["PODS", "REASON"], [[_names(natural_sorted(pods)), html.escape(reason)] for reason, pods in rows])
    )
    return out


# -- the rest of the page ------------------------------------------------------------------------------
def _names(items: Sequence[str], shown: int = SHOWN) -> str:
    """A list of names as HTML: all of a short one; the first few of a long one, "… and N more", and the
    whole list in a collapsed section."""
    text = html.escape(", ".join(items[:shown]))
    if len(items) <= shown:
        return text
    return (
        f"{len(items)}: {text} <details class=more><summary>… and {len(items) - shown} more</summary>"
        f"{html.escape(', '.join(items))}</details>"
    )


def _table(header: list[str], rows: list[list[str]], collapse_after: int = 20) -> str:
    """A table of HTML cells whose rows past ``collapse_after`` sit in a collapsed second table."""
    head = "<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr></thead>"

    def body(part: list[list[str]]) -> str:
        return "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in part)

    out = f"<table>{head}<tbody>{body(rows[:collapse_after])}</tbody></table>"
    if len(rows) > collapse_after:
        out += (
            f"<details class=more><summary>… and {len(rows) - collapse_after} more rows</summary>"
            f"<table>{head}<tbody>{body(rows[collapse_after:])}</tbody></table></details>"
        )
    return out


def with_devices(usage: ClusterUsage, inventory: DeviceInventory, nodes: Sequence[Node]) -> ClusterUsage:
    """``usage`` with a column per DeviceClass (``devices: <class>``, before pods): devices allocated out of
    the devices each node reaches that match the class, at the end of the run."""
    labels = {n.name: n.labels for n in nodes}
    names, allocated, total = class_columns(inventory, [(n, labels.get(n, {})) for n in usage.nodes])
    if not names:
        return usage
    at = len(usage.resources) - (1 if usage.resources and usage.resources[-1] == PODS else 0)
    shape = (len(usage.nodes), len(names))

    def insert(values: np.ndarray, extra: list[list[int]]) -> np.ndarray:
        return np.concatenate(
            [values[:, :at], np.array(extra, dtype=np.float64).reshape(shape), values[:, at:]], axis=1
        )

    return dataclasses.replace(
        usage,
        resources=[*usage.resources[:at], *names, *usage.resources[at:]],
        requested=insert(usage.requested, allocated),
        allocatable=insert(usage.allocatable, total),
    )


def devices_section(inventory: DeviceInventory, nodes: Sequence[Node]) -> list[str]:
    """Per DeviceClass, over the cluster: devices allocated out of those matching it (each device once)."""
    use = inventory.class_use((n.name, n.labels) for n in nodes)
    if not use:
        return []
    rows = [
        [html.escape(name), f"<b>{100 * held / count:.0f}%</b> ({held} of {count})"]
        for name, (held, count) in use.items()
    ]
    return [
        "<h2>Devices</h2>",
        "<p>Devices (DRA) allocated at the end of the run, per DeviceClass: the devices of the cluster's "
        "ResourceSlices that match the class's selectors, and how many of them claims hold. The pools' "
        "table and charts above show the same per node as <code>devices: CLASS</code>.</p>",
        _table(["DEVICE CLASS", "ALLOCATED"], rows),
    ]


def _other_sections(
    result: SimulationResult, pending: Sequence[PendingPod], figures: list[dict[str, Any]]
) -> list[str]:
    out = []
    workloads = workload_pods(result)
    if workloads:
        out += [
            "<h2>Workloads</h2>",
            _table(
                ["WORKLOAD", "SCHEDULED", "PENDING"],
                [
                    [
                        html.escape(w.workload),
                        f"{w.scheduled}/{w.total}",
                        _names(natural_sorted(k.split("/", 1)[1] for k in w.pending)),
                    ]
                    for w in workloads
                ],
            ),
        ]
    out += pending_section(result, pending, figures)
    out.append("<h2>Preemptions</h2>")
    victims = preemptions(result)
    by_preemptor: dict[tuple[str, str], list[str]] = {}
    for victim, (by, node) in victims.items():
        by_preemptor.setdefault((by, node), []).append(victim)
    out.append(
        _table(
            ["PREEMPTOR", "NODE", "VICTIMS"],
            [
                [html.escape(by), html.escape(node), _names(natural_sorted(vs))]
                for (by, node), vs in sorted(by_preemptor.items(), key=lambda i: natural_key(i[0][0]))
            ],
        )
        if victims
        else "<p>No pod was preempted.</p>"
    )
    return out


def _resource_sort(names: Mapping[str, Any]) -> list[str]:
    first = [n for n in (CPU, MEMORY, EPHEMERAL_STORAGE) if n in names]
    return first + sorted(set(names) - set(first))


def _parsed_pods(result: SimulationResult) -> list[Pod]:
    return [Pod.from_dict(raw) for raw in _objects(result, "Pod")]


def _pack(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode("utf-8"), 6, mtime=0)).decode("ascii")


def render(result: SimulationResult, *, group_by: str | None = None) -> str:
    """The whole page as one HTML string; ``group_by`` names the node label that makes the pools."""
    # The simulation's objects stay as they are while the page is made: no collector passes over them.
    with long_lived_heap():
        return _render(result, group_by)


def _render(result: SimulationResult, group_by: str | None) -> str:
    require_extra("sim", "the HTML report", ("plotly",))
    from plotly.offline import get_plotlyjs

    attempts = _attempts(result)
    series_resources = [r for r, col in (result.series.requested.items() if result.series else ()) if any(col)]
    pods = _parsed_pods(result)
    cluster_nodes = [Node.from_dict(raw) for raw in _objects(result, "Node")]
    usage = cluster_usage(cluster_nodes, pods, group_by, also_requested=series_resources)
    devices = DeviceInventory.of_cluster(result.cluster) if result.cluster is not None else None
    if devices:
        usage = with_devices(usage, devices, cluster_nodes)
    nodes = NodeIndex.of_attempts(usage.nodes, attempts)
    texts = Texts()
    scheduled = sum(1 for n in result.final.values() if n)
    pending = pending_pods(result)
    figures = [{"id": f"plot-resource-{c}", **pool_figure(usage, c)} for c in range(len(usage.resources))]
    series = time_series(result) or run_series(result, usage.resources, pods=pods, nodes=cluster_nodes)
    figures.append({"id": "plot-timeline", **timeline_figure(series)})
    over_time = format_over_time(result) if shows_over_time(result) else []
    sections = [
        f"<p class=lead>Scheduled <b>{scheduled}/{len(result.final)}</b> pending pods in "
        f"{len(attempts)} attempts ({result.virtual_seconds:.1f}s of virtual time) on {len(usage.nodes)} nodes; "
        f"{len(pending)} left pending, {len(result.deleted)} preempted.</p>",
        *pools_section(usage),
        *(devices_section(devices, cluster_nodes) if devices else []),
        "<h2>Pending pods and utilisation over the run</h2>",
        '<div id="plot-timeline"></div>',
    ]
    if over_time:
        sections.append("<pre class=over-time>" + html.escape("\n".join(over_time)) + "</pre>")
    sections += _other_sections(result, pending, figures)
    sections.append(
        "<h2>Decisions</h2><p><label>Pod <select id=pod-picker></select></label> "
        "<label>attempt <select id=attempt-picker></select></label></p><div id=decision></div>"
    )
    decisions = page_decisions(attempts, nodes, texts)
    data = {
        "figures": figures,
        "nodes": nodes.names,
        "texts": texts.items,
        "usage": usage_data(usage, nodes),
        "decisions": decisions,
        "first": pending[0].pod if pending else "",
    }
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return PAGE.format(
        title="kubesched simulation report",
        style=STYLE,
        body="\n".join(sections),
        plotly=_pack(get_plotlyjs()),
        data=_pack(payload),
        script=SCRIPT,
    )


def write_report(result: SimulationResult, path: str | Path, *, group_by: str | None = None) -> Path:
    """Write the page; it shows every attempt's decision, so the run must have kept full records."""
    if result.record != "full":
        from kubesched.scenario.pipeline import SimulationError

        raise SimulationError(
            f'the HTML report needs every attempt\'s full record: run simulate(..., record="full"), '
            f"not record={result.record!r}"
        )
    out = Path(path)
    out.write_text(render(result, group_by=group_by), encoding="utf-8")
    return out
