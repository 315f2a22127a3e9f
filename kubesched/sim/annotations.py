"""Per-pod result annotations: what every plugin said about a pod, written onto the pod itself.

The keys and JSON shapes follow kube-scheduler-simulator's annotations (``filter-result``,
``score-result``, ``finalscore-result``, ``selected-node``, ``result-history`` …) under our own
``kubesched.io/`` prefix, so a person who knows that tool can read a simulated pod at a glance.
Values are JSON text, as annotation values must be strings.

Everything here is derived from :class:`~kubesched.recording.trace.AttemptRecord` values, which keep the
first rejecting Filter plugin per node (the runtime stops there, as kube-scheduler does), the
weighted scores, and, in ``details``, the raw scores and the PostFilter / Reserve / Permit / Bind
outcomes when they were recorded.

Per-node maps grow with the cluster, so they are written in full only for clusters of up to
:data:`NODE_LIMIT` nodes. Above that, ``filter-result`` counts nodes per Filter plugin and verdict
(``{plugin: {"passed": n, reason: n}}``), ``score-result`` and ``finalscore-result`` hold the
:data:`TOP_NODES` best-scoring nodes, and ``result-detail`` says so; the trace keeps every node.
:class:`AnnotationRecorder` keeps just that per attempt while the simulation runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.recording import Attempt, Recorder
from kubesched.recording.attempt import NameOrder
from kubesched.recording.trace import AttemptRecord

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
#: Present on the summarised annotations of a big cluster: what was left out.
RESULT_DETAIL = PREFIX + "result-detail"

#: Clusters with more nodes than this get summarised annotations (counts and the best nodes).
NODE_LIMIT = 100
#: How many of the best-scoring nodes summarised annotations keep.
TOP_NODES = 10

#: What each extender said, {extender: verdict} per verb (as kube-scheduler-simulator records them).
EXTENDER_RESULTS = {verb: f"{PREFIX}extender-{verb}-result" for verb in ("filter", "prioritize", "preempt", "bind")}

PASSED = "passed"

#: ``details`` keys recorded by schedule_one.py -> annotation key.
_DETAIL_KEYS = {"reserve": RESERVE_RESULT, "permit": PERMIT_RESULT, "bind": BIND_RESULT}


#: kube-scheduler-simulator's own prefix (``--annotation-prefix``): its keys, every one on every attempt.
SIMULATOR_PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
SUCCESS = "success"
PREEMPTION_VICTIM = "preemption victim"


@dataclass(frozen=True, slots=True)
class ProfilePlugins:
    """What the annotations need to know about a profile: plugins per extension point in run order, weights."""

    filter: Sequence[str] = ()
    score_weights: Mapping[str, int] = field(default_factory=dict)
    pre_filter: Sequence[str] = ()
    post_filter: Sequence[str] = ()
    pre_score: Sequence[str] = ()
    reserve: Sequence[str] = ()
    permit: Sequence[str] = ()
    pre_bind: Sequence[str] = ()
    bind: Sequence[str] = ()


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


def filter_verdict_counts(
    counts: Mapping[tuple[str, str], int], feasible: int, filter_plugins: Sequence[str]
) -> dict[str, dict[str, int]]:
    """{plugin: {"passed": n, reason: n}}: the per-node ``filter-result`` counted instead of listed.

    ``counts`` maps (rejecting plugin, verdict) to a number of nodes. A node reaches a Filter plugin
    when no plugin before it rejected it, so a plugin's "passed" counts the feasible nodes plus those
    rejected by later plugins. Rejections by plugins that are not Filter plugins (a PreFilter's, a
    PreFilterResult's) are listed after the Filter plugins.
    """
    rejected: dict[str, int] = {}
    for (plugin, _), n in counts.items():
        rejected[plugin] = rejected.get(plugin, 0) + n
    out: dict[str, dict[str, int]] = {}
    for i, plugin in enumerate(filter_plugins):
        entry: dict[str, int] = {}
        passed = feasible + sum(rejected.get(p, 0) for p in filter_plugins[i + 1 :])
        if passed:
            entry[PASSED] = passed
        entry.update(sorted((verdict, n) for (p, verdict), n in counts.items() if p == plugin))
        if entry:
            out[plugin] = entry
    for (plugin, verdict), n in sorted(counts.items()):
        if plugin not in filter_plugins:
            out.setdefault(plugin, {})[verdict] = n
    return out


def attempt_annotations(
    record: AttemptRecord,
    profile: ProfilePlugins,
    filter_counts: Mapping[str, Mapping[str, int]] | None = None,
    result_detail: str | None = None,
) -> dict[str, str]:
    """The annotations of one attempt, each value a JSON string (``selected-node`` is plain text).

    ``filter_counts`` (see :func:`filter_verdict_counts`) replaces the per-node ``filter-result`` and
    ``result_detail`` becomes ``result-detail``, for the summarised annotations of a big cluster.
    """
    out = {
        FILTER_RESULT: _json(filter_result(record, profile.filter) if filter_counts is None else filter_counts),
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
    if result_detail is not None:
        out[RESULT_DETAIL] = result_detail
    return out


def _until_failure(plugins: Sequence[str], failed: Mapping[str, Any] | None) -> dict[str, str]:
    """{plugin: "success"} for the plugins of a point, ending at the one that failed (with its message)."""
    out: dict[str, str] = {}
    for name in plugins:
        if failed and name in failed:
            out[name] = str(failed[name])
            return out
        out[name] = SUCCESS
    for name, message in (failed or {}).items():
        out[str(name)] = str(message)
    return out


def simulator_attempt_annotations(
    record: AttemptRecord, profile: ProfilePlugins, prefix: str = SIMULATOR_PREFIX
) -> dict[str, str]:
    """One attempt in kube-scheduler-simulator's full form: every key present, "{}" where a point did not run.

    Shapes as its result store writes them: ``prefilter-result-status`` and ``prescore-result``,
    ``reserve-result``, ``permit-result``, ``prebind-result``, ``bind-result`` map plugin -> "success" or
    the failure message; ``postfilter-result`` maps node -> {plugin: "preemption victim"} for the node
    preemption nominated; scores are strings. ``prefilter-result`` (PreFilterResult node sets) and
    ``permit-result-timeout`` are not recorded here and stay "{}".
    """
    rejected_plugins = {str(e.get("plugin")) for e in record.filter.values()}
    prefilter_reject = next(
        (
            p
            for p in rejected_plugins
            if p in profile.pre_filter
            and p not in profile.filter
            and len(record.filter)
            and all(str(e.get("plugin")) == p for e in record.filter.values())
        ),
        None,
    )
    prefilter_failed = None
    if prefilter_reject is not None:
        entry = next(iter(record.filter.values()))
        prefilter_failed = {prefilter_reject: ", ".join(str(r) for r in entry.get("reasons") or [])}
    ran_filters = not prefilter_reject
    post_filter: dict[str, dict[str, str]] = {}
    if record.result != "Scheduled" and record.filter and profile.post_filter:
        post_filter = {node: {} for node in sorted(record.filter)}
        if record.nominated_node:
            plugin = next(iter(record.details.get("postfilter") or {}), "") or profile.post_filter[0]
            post_filter[record.nominated_node] = {plugin: PREEMPTION_VICTIM}
    scored = bool(record.scores)
    scheduled = record.result == "Scheduled" and bool(record.node)
    chose_node = bool(record.node) or "reserve" in record.details or "permit" in record.details
    failed_reserve = record.details.get("reserve")
    failed_permit = record.details.get("permit")
    failed_bind = record.details.get("bind")
    reached_bind = chose_node and not failed_reserve and not failed_permit
    values: dict[str, Any] = {
        "prefilter-result-status": _until_failure(profile.pre_filter, prefilter_failed),
        "prefilter-result": {},
        "filter-result": filter_result(record, profile.filter) if ran_filters else {},
        "postfilter-result": post_filter,
        "prescore-result": _until_failure(profile.pre_score, None) if scored else {},
        "score-result": score_result(record, profile.score_weights),
        "finalscore-result": final_score_result(record),
        "reserve-result": _until_failure(profile.reserve, failed_reserve) if chose_node else {},
        "permit-result": _until_failure(profile.permit, failed_permit) if chose_node and not failed_reserve else {},
        "permit-result-timeout": {},
        "prebind-result": _until_failure(profile.pre_bind, None) if reached_bind and (scheduled or failed_bind) else {},
        "bind-result": _until_failure(profile.bind[:1], failed_bind)
        if reached_bind and (scheduled or failed_bind)
        else {},
    }
    out = {prefix + key: _json(value) for key, value in values.items()}
    out[prefix + "selected-node"] = record.node or ""
    return out


def pod_annotations(
    records: Iterable[AttemptRecord], profiles: Mapping[str, ProfilePlugins], prefix: str = PREFIX
) -> dict[str, str]:
    """The annotations for one pod: its last attempt's results, and every attempt in ``result-history``.

    ``profiles`` maps a profile (scheduler name) to what its plugins are. With kube-scheduler-simulator's
    prefix the keys and shapes are that tool's (:func:`simulator_attempt_annotations`); with any other
    prefix, ours under that prefix.
    """
    if prefix == SIMULATOR_PREFIX:
        history = [simulator_attempt_annotations(r, profiles.get(r.profile, ProfilePlugins()), prefix) for r in records]
    else:
        history = [
            _with_prefix(attempt_annotations(r, profiles.get(r.profile, ProfilePlugins())), prefix) for r in records
        ]
    if not history:
        return {}
    out = dict(history[-1])
    out[prefix + "result-history"] = _json(history)
    return out


def _with_prefix(annotations: Mapping[str, str], prefix: str) -> dict[str, str]:
    return {prefix + key[len(PREFIX) :]: value for key, value in annotations.items()}


class _Kept:
    """What the annotations of one attempt need: the record (cut to the best nodes in a big cluster)
    and, in a big cluster, the filter verdict counts."""

    __slots__ = ("counts", "feasible", "nodes", "record")

    def __init__(
        self, record: AttemptRecord, counts: dict[tuple[str, str], int] | None = None, feasible: int = 0, nodes: int = 0
    ) -> None:
        self.record = record
        self.counts = counts
        self.feasible = feasible
        self.nodes = nodes

    def annotations(self, profile: ProfilePlugins, top: int) -> dict[str, str]:
        if self.counts is None:
            return attempt_annotations(self.record, profile)
        scored = len(self.record.total)
        detail = (
            f"{self.nodes} nodes: filter-result counts nodes per plugin and verdict; score-result and "
            f"finalscore-result show the {min(top, scored)} best-scoring nodes; the trace has every node"
        )
        return attempt_annotations(
            self.record, profile, filter_verdict_counts(self.counts, self.feasible, profile.filter), detail
        )


class AnnotationRecorder(Recorder):
    """Keeps, per pod, what its annotations need, attempt by attempt, while the simulation runs.

    In a cluster of up to ``node_limit`` nodes that is the full record; above it, the ``top`` best
    nodes' scores and the filter verdict counts, so memory does not grow with nodes x attempts.
    """

    enabled = True
    raw_scores = True

    def __init__(self, node_limit: int = NODE_LIMIT, top: int = TOP_NODES) -> None:
        self.node_limit = node_limit
        self.top = top
        self._by_pod: dict[str, list[_Kept]] = {}
        self._order = NameOrder()

    def finished(self, attempt: Attempt) -> None:
        nodes = len(attempt.names) if attempt.names is not None else 0
        if nodes > self.node_limit:
            kept = _Kept(
                attempt.top_record(self.top, self._order), attempt.filter_counts(), attempt.feasible_count(), nodes
            )
        else:
            kept = _Kept(attempt.to_record())
        self._by_pod.setdefault(attempt.pod, []).append(kept)

    def pods(self) -> list[str]:
        return list(self._by_pod)

    def pod_annotations(self, pod: str, profiles: Mapping[str, ProfilePlugins], prefix: str = PREFIX) -> dict[str, str]:
        """The annotations of ``pod`` (``ns/name``): last attempt on top, every attempt in ``result-history``.

        Under kube-scheduler-simulator's prefix the keys and shapes are that tool's, built from the kept
        records (in a big cluster those hold the best nodes only)."""
        kept = self._by_pod.get(pod, ())
        if not kept:
            return {}
        if prefix == SIMULATOR_PREFIX:
            history = [
                simulator_attempt_annotations(k.record, profiles.get(k.record.profile, ProfilePlugins()), prefix)
                for k in kept
            ]
        else:
            history = [
                _with_prefix(k.annotations(profiles.get(k.record.profile, ProfilePlugins()), self.top), prefix)
                for k in kept
            ]
        out = dict(history[-1])
        out[prefix + "result-history"] = _json(history)
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
