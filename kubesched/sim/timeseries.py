"""What a timed simulation looked like over virtual time, kept from watch events.

Running totals (pending pods, requested and allocatable per resource) change only on pod and node
events, so each event costs a few additions; the totals are copied into a row at most once per sampling
interval of virtual time. When rows pile up past ``max_points`` the interval doubles and pairs of rows
merge into one, so a day of cluster time and a minute of it both end up a few thousand rows long.
Creation-to-bound latency is one float per bound pod.

A row holds requested and allocatable as they were at its time, and the most pods pending at any moment
until the next row: a burst that comes and goes between two samples still shows, so the summary's
"most pods pending" and the report's chart, which read the same rows, both see it. Merging two rows
keeps the first one's time and totals and the larger pending count; the last row is never merged, so
it always holds the state at the end.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from kubesched.api.errors import ObjectError
from kubesched.api.resources import parse_resource_list, pod_requests, scheduler_resources
from kubesched.cluster.protocol import WatchEvent

#: The resources every summary shows, even when nothing requests them.
BASE_RESOURCES = ("cpu", "memory")


def _requests(spec: Mapping[str, Any], memo: dict[Any, dict[str, int]]) -> dict[str, int]:
    """The effective request of a pod with ``spec`` in scheduler units (cpu in millicores); {} if
    unreadable. Pods of one shape list the same quantities: ``memo`` keeps the answer per shape
    (answers are only read)."""
    return _kept(memo, _request_key(spec), _parse_requests, spec)


def _request_key(spec: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What a pod's request is computed from, as a hashable key; None when it is not plain strings."""
    parts: list[Any] = []
    for kind in _CONTAINER_LISTS:
        containers = spec.get(kind)
        if containers is None:
            continue
        if type(containers) is not list:
            return None
        for c in containers:
            if type(c) is not dict:
                return None
            resources = c.get("resources")
            if resources is None:
                requests: tuple[tuple[Any, str], ...] | None = ()
            elif type(resources) is not dict:
                return None
            else:
                listed = resources.get("requests")
                requests = () if listed is None else _plain(listed)
                if requests is None:
                    return None
            parts.append((kind, c.get("restartPolicy"), requests))
    overhead = spec.get("overhead")
    if overhead is not None:
        if (plain := _plain(overhead)) is None:
            return None
        parts.append(("overhead", plain))
    return tuple(parts)


_CONTAINER_LISTS = ("containers", "initContainers")


def _plain(quantities: Any) -> tuple[tuple[Any, str], ...] | None:
    """A resource list's items when it is a dict of strings (a key for a memo); None otherwise."""
    if type(quantities) is not dict:
        return None
    items = tuple(quantities.items())
    for _, value in items:
        if type(value) is not str:
            return None
    return items


def _kept(
    memo: dict[Any, dict[str, int]], key: Any, parse: Callable[[Any], dict[str, int]], source: Any
) -> dict[str, int]:
    """``parse(source)``, kept in ``memo`` under ``key`` (None: not kept); the memo starts over when full."""
    if key is None:
        return parse(source)
    known = memo.get(key)
    if known is None:
        known = parse(source)
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        memo[key] = known
    return known


def _parse_requests(spec: Mapping[str, Any]) -> dict[str, int]:
    try:
        containers = [
            parse_resource_list((c.get("resources") or {}).get("requests"), "") for c in spec.get("containers") or []
        ]
        inits = [
            (parse_resource_list((c.get("resources") or {}).get("requests"), ""), c.get("restartPolicy") == "Always")
            for c in spec.get("initContainers") or []
        ]
        overhead = parse_resource_list(spec.get("overhead"), "")
    except (ObjectError, AttributeError, TypeError):
        return {}
    return scheduler_resources(pod_requests(containers, inits, overhead))


def _allocatable(obj: Mapping[str, Any], memo: dict[Any, dict[str, int]]) -> dict[str, int]:
    """A node's allocatable in scheduler units; {} if unreadable. Nodes of one machine type list the
    same quantities: ``memo`` keeps the answer per list (the answers are only read, never changed)."""
    status = obj.get("status") or {}
    raw = status.get("allocatable") or status.get("capacity")
    return _kept(memo, _plain(raw), _parse_allocatable, raw)


def _parse_allocatable(raw: Any) -> dict[str, int]:
    try:
        return scheduler_resources(parse_resource_list(raw, ""))
    except (ObjectError, AttributeError, TypeError):
        return {}


#: The phases of a pod that holds no resources.
_FINISHED = ("Succeeded", "Failed")
#: How many allocatable lists (or pod shapes) :func:`_allocatable` (:func:`_requests`) keeps answers for.
_MEMO_SIZE = 256


class TimeSeries:
    """Pending pods, requested / allocatable per resource, and creation-to-bound latency."""

    def __init__(self, interval: float = 1.0, max_points: int = 4096) -> None:
        self.interval = interval
        self.max_points = max_points
        self.times: list[float] = []
        self.pending: list[int] = []
        self.requested: dict[str, list[int]] = {r: [] for r in BASE_RESOURCES}
        self.allocatable: dict[str, list[int]] = {r: [] for r in BASE_RESOURCES}
        self.latencies = array("d")
        self._pending = 0
        self._requested: dict[str, int] = dict.fromkeys(BASE_RESOURCES, 0)
        self._allocatable: dict[str, int] = dict.fromkeys(BASE_RESOURCES, 0)
        self._created: dict[str, float] = {}
        self._bound: dict[str, dict[str, int]] = {}
        self._nodes: dict[str, dict[str, int]] = {}
        self._allocatable_memo: dict[Any, dict[str, int]] = {}
        self._requests_memo: dict[Any, dict[str, int]] = {}
        self._next = 0.0

    # -- events ------------------------------------------------------------------------------------------
    def node_event(self, event: WatchEvent) -> None:
        name = (event.obj.get("metadata") or {}).get("name", "")
        old = self._nodes.pop(name, None)
        if old:
            _add(self._allocatable, old, -1)
        if event.type != "DELETED":
            new = _allocatable(event.obj, self._allocatable_memo)
            self._nodes[name] = new
            _add(self._allocatable, new, 1)

    def pod_event(self, event: WatchEvent, now: float) -> None:
        obj = event.obj
        uid = str((obj.get("metadata") or {}).get("uid") or "")
        if event.type == "DELETED":
            requests = self._bound.pop(uid, None)
            if requests is not None:
                _add(self._requested, requests, -1)
            elif self._created.pop(uid, None) is not None:
                self._pending -= 1
            return
        if uid in self._bound or (obj.get("status") or {}).get("phase") in _FINISHED:
            return
        spec = obj.get("spec") or {}
        if not spec.get("nodeName"):
            if uid not in self._created:
                self._created[uid] = now
                self._pending += 1
                if self.pending and self._pending > self.pending[-1]:
                    self.pending[-1] = self._pending  # the row's peak
            return
        created = self._created.pop(uid, None)
        if created is not None:
            self._pending -= 1
            self.latencies.append(now - created)
        requests = _requests(spec, self._requests_memo)
        self._bound[uid] = requests
        _add(self._requested, requests, 1)

    # -- sampling ------------------------------------------------------------------------------------------
    def maybe_sample(self, now: float) -> None:
        if now >= self._next:
            self.sample(now)

    def sample(self, now: float) -> None:
        """Append the current totals as a row at ``now``."""
        self._next = (now // self.interval + 1) * self.interval
        self.times.append(now)
        self.pending.append(self._pending)
        for totals, columns in ((self._requested, self.requested), (self._allocatable, self.allocatable)):
            for name in totals.keys() - columns.keys():
                columns[name] = [0] * (len(self.times) - 1)
            for name, column in columns.items():
                column.append(totals.get(name, 0))
        if len(self.times) > self.max_points:
            self._thin()

    def _thin(self) -> None:
        """Double the interval: merge rows pairwise (see the module docstring), the last one left as it is."""
        self.interval *= 2
        self.times = _merge(self.times, None)
        self.pending = _merge(self.pending, max)
        for columns in (self.requested, self.allocatable):
            for name in columns:
                columns[name] = _merge(columns[name], None)

    # -- reading -------------------------------------------------------------------------------------------
    def latency_percentiles(self) -> dict[str, float]:
        """Creation-to-bound latency in seconds: p50, p95, p99 (empty when no pod was bound)."""
        if not self.latencies:
            return {}
        values = np.frombuffer(self.latencies, dtype=np.float64)
        p50, p95, p99 = np.percentile(values, [50, 95, 99])
        return {"p50": float(p50), "p95": float(p95), "p99": float(p99)}

    def utilisation(self) -> dict[str, dict[str, float]]:
        """Per resource: mean and peak of requested / allocatable over the sampled rows."""
        out: dict[str, dict[str, float]] = {}
        for name, requested in self.requested.items():
            allocatable = self.allocatable.get(name)
            if not allocatable or not any(allocatable):
                continue
            req = np.asarray(requested, dtype=np.float64)
            alloc = np.asarray(allocatable, dtype=np.float64)
            ratio = np.divide(req, alloc, out=np.zeros_like(req), where=alloc > 0)
            out[name] = {"mean": float(ratio.mean()), "peak": float(ratio.max())}
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready): the rows as columns, and the latency percentiles."""
        return {
            "interval": self.interval,
            "time": list(self.times),
            "pending": list(self.pending),
            "requested": {k: list(v) for k, v in self.requested.items()},
            "allocatable": {k: list(v) for k, v in self.allocatable.items()},
            "latency": self.latency_percentiles(),
            "bound": len(self.latencies),
        }


def _merge(column: list[Any], pick: Callable[[Any, Any], Any] | None) -> list[Any]:
    """Rows merged in pairs, all but the last: ``pick`` of each pair (None: the first), then the last row."""
    body, last = column[:-1], column[-1:]
    if pick is None:
        return body[::2] + last
    pairs = [pick(a, b) for a, b in zip(body[::2], body[1::2], strict=False)]
    return pairs + body[len(pairs) * 2 :] + last


def _add(totals: dict[str, int], amounts: Mapping[str, int], sign: int) -> None:
    for name, amount in amounts.items():
        totals[name] = totals.get(name, 0) + sign * amount
