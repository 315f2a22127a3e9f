"""What the InterPodAffinity tests build (pods with affinity terms, the plugin, runs of it that
assert the batch and per-node forms agree), and kube-scheduler's rules read directly with the
random clusters the plugin is compared with them on."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.api.objects import Node, Pod
from kubesched.cache.snapshot import Snapshot
from kubesched.cluster.listers import Listers
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    NodeScore,
)
from kubesched.framework.status import Code, Status
from kubesched.plugins import interpodaffinity
from kubesched.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
    InterPodAffinity,
)
from tests.factories import as_handle, make_node, make_pod

HOST = "kubernetes.io/hostname"
ZONE = "zone"
RACK = "rack"

AFF = ("Unschedulable" + "AndUnresolvable", ERR_REASON_AFFINITY)
ANTI = ("Unschedulable", ERR_REASON_ANTI_AFFINITY)
EXIST = ("Unschedulable", ERR_REASON_EXISTING_ANTI_AFFINITY)


# -- helpers -------------------------------------------------------------------------------------------
@dataclass
class FakeHandle:
    snapshot: Snapshot
    listers: Listers = field(default_factory=Listers)
    features: FeatureGates = field(default_factory=feature_gates)


def listers_with(namespaces: Mapping[str, Mapping[str, str]]) -> Listers:
    listers = Listers()
    for name, labels in namespaces.items():
        listers.apply(
            "ADDED",
            "Namespace",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels)}},
        )
    return listers


def term(
    key: str,
    labels: Mapping[str, str] | None = None,
    *,
    exprs: list[dict[str, Any]] | None = None,
    namespaces: list[str] | None = None,
    ns_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    t: dict[str, Any] = {"topologyKey": key}
    if labels is not None or exprs is not None:
        sel: dict[str, Any] = {}
        if labels is not None:
            sel["matchLabels"] = dict(labels)
        if exprs is not None:
            sel["matchExpressions"] = exprs
        t["labelSelector"] = sel
    if namespaces is not None:
        t["namespaces"] = namespaces
    if ns_selector is not None:
        t["namespaceSelector"] = ns_selector
    return t


def weighted(weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": t}


def affinity(
    *,
    req: list[dict[str, Any]] | None = None,
    anti: list[dict[str, Any]] | None = None,
    pref: list[dict[str, Any]] | None = None,
    pref_anti: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if req is not None or pref is not None:
        block: dict[str, Any] = {}
        if req is not None:
            block["requiredDuringSchedulingIgnoredDuringExecution"] = req
        if pref is not None:
            block["preferredDuringSchedulingIgnoredDuringExecution"] = pref
        out["podAffinity"] = block
    if anti is not None or pref_anti is not None:
        block = {}
        if anti is not None:
            block["requiredDuringSchedulingIgnoredDuringExecution"] = anti
        if pref_anti is not None:
            block["preferredDuringSchedulingIgnoredDuringExecution"] = pref_anti
        out["podAntiAffinity"] = block
    return out


def pod(
    name: str,
    labels: Mapping[str, str] | None = None,
    *,
    node: str = "",
    ns: str = "default",
    aff: dict[str, Any] | None = None,
) -> Pod:
    spec = {"affinity": aff} if aff else None
    return make_pod(name, namespace=ns, labels=labels, node_name=node, spec=spec)


def plugin_for(
    snapshot: Snapshot, listers: Listers | None = None, version: str = "1.34", **args: Any
) -> InterPodAffinity:
    raw = {
        k: v
        for k, v in (
            ("hardPodAffinityWeight", args.get("hard")),
            ("ignorePreferredTermsOfExistingPods", args.get("ignore")),
        )
        if v is not None
    }
    handle = FakeHandle(snapshot, listers or Listers(), feature_gates(version))
    return interpodaffinity.new(raw or None, as_handle(handle))


def verdict(status: Status | None) -> tuple[str, str] | None:
    if status is None:
        return None
    return (status.code.label, status.message)


def run_filter(plugin: InterPodAffinity, snapshot: Snapshot, incoming: Pod) -> list[tuple[str, str] | None] | str:
    """Per-node verdicts (checked equal to the batch form), or "skip" when PreFilter skipped."""
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming)
    if status is not None:
        assert status.code is Code.SKIP
        return "skip"
    per_node = [verdict(plugin.filter(state, incoming, info)) for info in snapshot.node_infos]
    batch = plugin.filter_nodes(state, incoming, snapshot, np.arange(len(snapshot)))
    batch_v = [None if i < 0 else verdict(batch.statuses[i]) for i in batch.status_index.tolist()]
    assert batch_v == per_node
    return per_node


def run_score(
    plugin: InterPodAffinity, snapshot: Snapshot, incoming: Pod, rows: list[int] | None = None
) -> tuple[list[int], list[int]] | str:
    """(raw, normalized) per node (per-node and batch forms checked equal), or "skip"."""
    state = CycleState()
    nodes = snapshot.nodes(np.arange(len(snapshot)) if rows is None else np.asarray(rows, dtype=np.int64))
    status = plugin.pre_score(state, incoming, nodes)
    if status is not None:
        assert status.code is Code.SKIP
        return "skip"
    raw = []
    for info in nodes:
        value, st = plugin.score(state, incoming, info)
        assert st is None
        raw.append(value)
    scores = [NodeScore(info.name, r) for info, r in zip(nodes, raw, strict=True)]
    assert plugin.normalize_score(state, incoming, scores) is None
    batch_raw = plugin.score_nodes(state, incoming, nodes)
    assert batch_raw.tolist() == raw
    batch_norm = plugin.normalize_scores(state, incoming, batch_raw.copy())
    assert batch_norm.tolist() == [s.score for s in scores]
    return raw, [s.score for s in scores]


def zone_nodes() -> list[Node]:
    return [
        make_node("n1", labels={ZONE: "z1", RACK: "r1"}),
        make_node("n2", labels={ZONE: "z1", RACK: "r2"}),
        make_node("n3", labels={ZONE: "z2", RACK: "r3"}),
        make_node("n4", labels={RACK: "r4"}),  # no zone
    ]


# -- randomised comparison with a direct reading of the rules ------------------------------------------------
NAMESPACES = {"default": {"team": "a", "env": "prod"}, "ns1": {"team": "b", "env": "prod"}, "ns2": {"team": "a"}}
ALL_NAMESPACES = (*NAMESPACES, "ghost")  # ghost: pods live there but the listers do not know it
KEYS = (HOST, ZONE, RACK, "missing")


def random_selector(rng: random.Random) -> dict[str, Any] | None:
    roll = rng.random()
    if roll < 0.08:
        return None
    if roll < 0.15:
        return {}
    if roll < 0.65:
        return {"matchLabels": {"app": rng.choice("abc")}}
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
    key = rng.choice(["app", "tier"])
    expr: dict[str, Any] = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        expr["values"] = rng.sample(["a", "b", "c", "x", "y"], rng.randint(1, 2))
    sel: dict[str, Any] = {"matchExpressions": [expr]}
    if rng.random() < 0.3:
        sel["matchLabels"] = {"tier": rng.choice("xy")}
    return sel


def random_term(rng: random.Random) -> dict[str, Any]:
    t: dict[str, Any] = {"topologyKey": rng.choice(KEYS)}
    sel = random_selector(rng)
    if sel is not None:
        t["labelSelector"] = sel
    roll = rng.random()
    if roll < 0.15:
        t["namespaces"] = rng.sample(ALL_NAMESPACES, rng.randint(1, 2))
    elif roll < 0.25:
        t["namespaceSelector"] = {}
    elif roll < 0.4:
        t["namespaceSelector"] = rng.choice(
            [
                {"matchLabels": {"team": "a"}},
                {"matchLabels": {"env": "prod"}},
                {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]},
                {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["a"]}]},
            ]
        )
        if rng.random() < 0.3:
            t["namespaces"] = [rng.choice(ALL_NAMESPACES)]
    return t


def random_affinity(rng: random.Random, p: float) -> dict[str, Any] | None:
    if rng.random() > p:
        return None

    def terms(n_max: int) -> list[dict[str, Any]] | None:
        n = rng.choice([0, 0, 1, 1, 2][: n_max + 1])
        return [random_term(rng) for _ in range(n)] if n else None

    def weighted_terms() -> list[dict[str, Any]] | None:
        n = rng.choice([0, 0, 1, 2])
        return [weighted(rng.randint(1, 100), random_term(rng)) for _ in range(n)] if n else None

    out = affinity(req=terms(4), anti=terms(4), pref=weighted_terms(), pref_anti=weighted_terms())
    if out and rng.random() < 0.1:  # a pod carrying the same term twice
        block = out.get("podAntiAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        if block:
            block.append(dict(block[0]))
    return out or {"podAffinity": {}}


def random_labels(rng: random.Random) -> dict[str, str]:
    labels = {}
    if rng.random() < 0.8:
        labels["app"] = rng.choice("abc")
    if rng.random() < 0.5:
        labels["tier"] = rng.choice("xy")
    return labels


def random_cluster(rng: random.Random) -> tuple[list[Node], list[Pod]]:
    nodes = []
    for i in range(rng.randint(3, 14)):
        labels = {}
        if rng.random() < 0.8:
            labels[ZONE] = f"z{rng.randint(1, 3)}"
        if rng.random() < 0.7:
            labels[RACK] = f"r{rng.randint(1, 5)}"
        nodes.append(make_node(f"node-{i}", labels=labels))
    pods = []
    for j in range(rng.randint(0, 25)):
        pods.append(
            pod(
                f"e{j}",
                random_labels(rng),
                node=rng.choice(nodes).name,
                ns=rng.choice(ALL_NAMESPACES),
                aff=random_affinity(rng, 0.6),
            )
        )
    return nodes, pods


@dataclass(frozen=True)
class RefTerm:
    namespaces: frozenset[str] | None
    selector: Any
    key: str

    def matches(self, p: Pod) -> bool:
        if self.namespaces is not None and p.namespace not in self.namespaces:
            return False
        return self.selector is not None and self.selector.matches(p.labels)


def ref_resolve(t: Any, version: str) -> RefTerm:
    """The incoming pod's term with its namespaceSelector unrolled over the known namespaces (and, in
    v1.34, also matched against no labels)."""
    sel = t.namespace_selector
    if sel is not None and (not sel.requirements or (version == "1.34" and sel.matches({}))):
        return RefTerm(None, t.selector, t.topology_key)
    namespaces = set(t.namespaces)
    if t.namespace_selector is not None:
        namespaces |= {ns for ns, labels in NAMESPACES.items() if t.namespace_selector.matches(labels)}
    return RefTerm(frozenset(namespaces), t.selector, t.topology_key)


def ref_filter(nodes: list[Node], placed: list[tuple[Pod, Node]], incoming: Pod, version: str) -> list[Any] | str:
    """kube-scheduler's PreFilter + Filter, read directly: every pod on every node."""
    ns_labels = NAMESPACES.get(incoming.namespace)
    req = [ref_resolve(t, version) for t in incoming.pod_affinity.required_affinity]
    anti = [ref_resolve(t, version) for t in incoming.pod_affinity.required_anti_affinity]
    existing: Counter[tuple[str, str]] = Counter()
    aff_counts: Counter[tuple[str, str]] = Counter()
    anti_counts: Counter[tuple[str, str]] = Counter()
    for other, node in placed:
        for own in other.pod_affinity.required_anti_affinity:
            if own.matches(incoming, ns_labels) and own.topology_key in node.labels:
                existing[(own.topology_key, node.labels[own.topology_key])] += 1
        if req and all(t.matches(other) for t in req):
            for t in req:
                if t.key in node.labels:
                    aff_counts[(t.key, node.labels[t.key])] += 1
        for t in anti:
            if t.matches(other) and t.key in node.labels:
                anti_counts[(t.key, node.labels[t.key])] += 1
    if not existing and not req and not anti:
        return "skip"
    self_match = bool(req) and all(t.matches(incoming) for t in req)
    out: list[Any] = []
    for node in nodes:
        labels = node.labels
        ok = all(t.key in labels for t in req)
        exist = all(t.key in labels and aff_counts[(t.key, labels[t.key])] > 0 for t in req)
        if not (ok and (exist or (not aff_counts and self_match))):
            out.append(AFF)
        elif any(t.key in labels and anti_counts[(t.key, labels[t.key])] > 0 for t in anti):
            out.append(ANTI)
        elif any(existing[(k, v)] > 0 for k, v in labels.items()):
            out.append(EXIST)
        else:
            out.append(None)
    return out


def ref_score(
    nodes: list[Node], placed: list[tuple[Pod, Node]], incoming: Pod, hard: int, ignore: bool, version: str
) -> tuple[list[int], list[int]] | str:
    """kube-scheduler's PreScore + Score + NormalizeScore, read directly."""
    aff = incoming.pod_affinity
    has_constraints = bool(aff.preferred_affinity or aff.preferred_anti_affinity)
    if ignore and not has_constraints:
        return "skip"
    ns_labels = NAMESPACES.get(incoming.namespace)
    pref = [(ref_resolve(w.term, version), w.weight) for w in aff.preferred_affinity]
    pref_anti = [(ref_resolve(w.term, version), w.weight) for w in aff.preferred_anti_affinity]
    topo: dict[str, dict[str, int]] = {}

    def add(key: str, node: Node, amount: int) -> None:
        if key in node.labels:
            per = topo.setdefault(key, {})
            per[node.labels[key]] = per.get(node.labels[key], 0) + amount

    for other, node in placed:
        if not has_constraints and not other.pod_affinity.declared:
            continue
        for t, w in pref:
            if t.matches(other):
                add(t.key, node, w)
        for t, w in pref_anti:
            if t.matches(other):
                add(t.key, node, -w)
        if hard > 0:
            for term_ in other.pod_affinity.required_affinity:
                if term_.matches(incoming, ns_labels):
                    add(term_.topology_key, node, hard)
        for wt in other.pod_affinity.preferred_affinity:
            if wt.term.matches(incoming, ns_labels):
                add(wt.term.topology_key, node, wt.weight)
        for wt in other.pod_affinity.preferred_anti_affinity:
            if wt.term.matches(incoming, ns_labels):
                add(wt.term.topology_key, node, -wt.weight)
    if not topo:
        return "skip"
    raw = [sum(per.get(n.labels[k], 0) for k, per in topo.items() if k in n.labels) for n in nodes]
    low, high = min(raw), max(raw)
    norm = [int(100.0 * (float(r - low) / float(high - low))) if high > low else 0 for r in raw]
    return raw, norm


def nodes_of(snapshot: Snapshot) -> list[Node]:
    return [info.node for info in snapshot.node_infos if info.node is not None]


def make_listers() -> Listers:
    return listers_with(NAMESPACES)
