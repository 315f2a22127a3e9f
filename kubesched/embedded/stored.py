"""What the embedded API server stores: JSON-shaped objects that are never changed in place once stored,
and the helpers that copy them or make their next versions.

A write stores a fresh dict and may share, with the version it replaces, every part it leaves as it is:
queued watch events point at stored states, and copies are made only when something leaves the cluster.
"""

from __future__ import annotations

import copy
from typing import Any

#: A stored object's key: (namespace or "", name).
Key = tuple[str, str]
_LEAVES = frozenset((str, int, float, bool, type(None)))  # JSON's immutable leaves, by exact type


def copy_json(value: Any) -> Any:
    """Deep copy of JSON-shaped data (dicts, lists, scalars), several times faster than deepcopy.

    Stored objects are plain API data, mostly leaves: a dict is copied whole at C speed and only its
    containers are copied again, a list is rebuilt with its leaves as they are. Subclasses of dict and
    list come back as plain ones; anything else falls back to :func:`copy.deepcopy`.
    """
    kind = type(value)
    if kind is dict:
        copied = value.copy()
        for key, item in value.items():
            if type(item) not in _LEAVES:
                copied[key] = copy_json(item)
        return copied
    if kind is list:
        return [item if type(item) in _LEAVES else copy_json(item) for item in value]
    if kind in _LEAVES:
        return value
    if isinstance(value, dict):
        return {k: v if type(v) in _LEAVES else copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _LEAVES else copy_json(v) for v in value]
    if isinstance(value, (str, int, float, bool)):
        return value
    return copy.deepcopy(value)


def key_of(obj: dict[str, Any]) -> Key:
    """Where ``obj`` is stored in its kind's bucket."""
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


def shallow_status_copy(current: dict[str, Any]) -> dict[str, Any]:
    """A new version of a stored object that shares everything but its top level, metadata and status.

    Stored objects are never changed in place, so a write that only touches status (and replaces
    spec wholesale, as binding does) can share the rest with the version it replaces.
    """
    new = dict(current)
    new["metadata"] = dict(current["metadata"])
    new["status"] = dict(current.get("status") or {})
    return new


def merge_conditions(
    existing: list[dict[str, Any]], patch: list[dict[str, Any]], now: str, *, replace: bool
) -> list[dict[str, Any]]:
    """Conditions keyed by type: patched fields win (or the whole condition when ``replace``), and
    lastTransitionTime moves only when the status changes (podutil.UpdatePodCondition's rule)."""
    merged = [dict(c) for c in existing]
    by_type = {c.get("type"): i for i, c in enumerate(merged)}
    for cond in patch:
        i = by_type.get(cond.get("type"))
        if i is None:
            new = dict(cond)
            if not new.get("lastTransitionTime"):
                new["lastTransitionTime"] = now
            by_type[new.get("type")] = len(merged)
            merged.append(new)
            continue
        old = merged[i]
        new = dict(cond) if replace else {**old, **cond}
        if old.get("status") == new.get("status"):
            new["lastTransitionTime"] = old.get("lastTransitionTime")
        elif not cond.get("lastTransitionTime"):
            new["lastTransitionTime"] = now
        merged[i] = new
    return merged
