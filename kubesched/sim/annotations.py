"""Per-pod result annotations: what every plugin said about a pod, written onto the pod itself.

The keys and JSON shapes follow kube-scheduler-simulator's annotations (``filter-result``,
``score-result``, ``finalscore-result``, ``selected-node``, ``result-history`` …) under our own
``kubesched.io/`` prefix, so a person who knows that tool can read a simulated pod at a glance.
Values are JSON text, as annotation values must be strings.

Everything here is derived from :class:`~kubesched.trace.AttemptRecord` values, which keep the
first rejecting Filter plugin per node (the runtime stops there, as kube-scheduler does), the
weighted scores, and, in ``details``, the raw scores and the PostFilter / Reserve / Permit / Bind
outcomes when they were recorded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.trace import AttemptRecord

PREFIX = "kubesched.io/"
FILTER_RESULT = PREFIX + "filter-result"
SCORE_RESULT = PREFIX + "score-result"
FINAL_SCORE_RESULT = PREFIX + "finalscore-result"
POST_FILTER_RESULT = PREFIX + "postfilter-result"
RESERVE_RESULT = PREFIX + "reserve-result"
PERMIT_RESULT = PREFIX + "permit-result"
BIND_RESULT = PREFIX + "bind-result"
SELECTED_NODE = PREFIX + "selected-node"
RESULT_HISTORY = PREFIX + "result-history"
#: What each extender said, {extender: verdict} per verb (as kube-scheduler-simulator records them).
EXTENDER_RESULTS = {verb: f"{PREFIX}extender-{verb}-result" for verb in ("filter", "prioritize", "preempt", "bind")}

PASSED = "passed"

#: ``details`` keys recorded by schedule_one.py -> annotation key.
_DETAIL_KEYS = {"reserve": RESERVE_RESULT, "permit": PERMIT_RESULT, "bind": BIND_RESULT}


@dataclass(frozen=True, slots=True)
class ProfilePlugins:
    """What the annotations need to know about a profile: Filter plugins in run order, Score weights."""

    filter: Sequence[str] = ()
    score_weights: Mapping[str, int] = field(default_factory=dict)


def filter_result(record: AttemptRecord, filter_plugins: Sequence[str]) -> dict[str, dict[str, str]]:
    """{node: {plugin: "passed" | reason}} for every node the attempt evaluated.

    A feasible node passed every Filter plugin. A rejected node passed the plugins before the one
    that rejected it; the later ones never ran, so they are absent (as in kube-scheduler-simulator).
    A PreFilter rejection (the plugin is not a Filter plugin) is shown alone on every node.
    """
    out: dict[str, dict[str, str]] = {}
    for node in record.feasible:
        out[node] = dict.fromkeys(filter_plugins, PASSED)
    for node, entry in record.filter.items():
        plugin = str(entry.get("plugin") or "")
        reasons = entry.get("reasons") or []
        reason = ", ".join(str(r) for r in reasons) or str(entry.get("code") or "")
        result: dict[str, str] = {}
        if plugin in filter_plugins:
            for name in filter_plugins:
                if name == plugin:
                    break
                result[name] = PASSED
        result[plugin] = reason
        out[node] = result
    return dict(sorted(out.items()))


def score_result(record: AttemptRecord, score_weights: Mapping[str, int]) -> dict[str, dict[str, str]]:
    """{node: {plugin: score}} as the Score plugins gave it, before the profile's weights.

    That is the raw score (before NormalizeScore) from ``details["score"]`` ({plugin: {node:
    raw}}) when the runtime recorded it; otherwise the normalised score, recovered exactly as the
    final score divided by the plugin's weight. Empty when the attempt scored nothing (one
    feasible node, or a failure).
    """
    raw: Mapping[str, Mapping[str, Any]] = record.details.get("score") or {}
    if raw:
        out: dict[str, dict[str, str]] = {}
        for plugin, by_node in sorted(raw.items()):
            for node, value in by_node.items():
                out.setdefault(node, {})[plugin] = str(int(value))
        return dict(sorted(out.items()))
    return {
        node: {p: str(v // (score_weights.get(p) or 1)) for p, v in sorted(scores.items())}
        for node, scores in sorted(record.scores.items())
    }


def final_score_result(record: AttemptRecord) -> dict[str, dict[str, str]]:
    """{node: {plugin: normalised score * weight}}, the numbers that decided the node."""
    return {node: {p: str(v) for p, v in sorted(scores.items())} for node, scores in sorted(record.scores.items())}


def attempt_annotations(record: AttemptRecord, profile: ProfilePlugins) -> dict[str, str]:
    """The annotations of one attempt, each value a JSON string (``selected-node`` is plain text)."""
    out = {
        FILTER_RESULT: _json(filter_result(record, profile.filter)),
        SCORE_RESULT: _json(score_result(record, profile.score_weights)),
        FINAL_SCORE_RESULT: _json(final_score_result(record)),
        POST_FILTER_RESULT: _json(record.details.get("postfilter") or {}),
    }
    for detail, key in _DETAIL_KEYS.items():
        if detail in record.details:
            out[key] = _json({str(k): str(v) for k, v in record.details[detail].items()})
    for verb, verdicts in (record.details.get("extender") or {}).items():
        if verb in EXTENDER_RESULTS:
            out[EXTENDER_RESULTS[verb]] = _json(verdicts)
    out[SELECTED_NODE] = record.node or ""
    return out


def pod_annotations(records: Iterable[AttemptRecord], profiles: Mapping[str, ProfilePlugins]) -> dict[str, str]:
    """The annotations for one pod: its last attempt's results, and every attempt in ``result-history``.

    ``profiles`` maps a profile (scheduler name) to what its plugins are.
    """
    history = [attempt_annotations(r, profiles.get(r.profile, ProfilePlugins())) for r in records]
    if not history:
        return {}
    out = dict(history[-1])
    out[RESULT_HISTORY] = _json(history)
    return out


def annotate(pod: dict[str, Any], annotations: Mapping[str, str]) -> dict[str, Any]:
    """``pod`` with ``annotations`` merged into its metadata (in place; returned for convenience)."""
    if annotations:
        meta = pod.setdefault("metadata", {})
        merged = dict(meta.get("annotations") or {})
        merged.update(annotations)
        meta["annotations"] = merged
    return pod


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=False, separators=(",", ":"))
