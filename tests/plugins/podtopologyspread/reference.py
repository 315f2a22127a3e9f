"""kube-scheduler's PodTopologySpread read directly (every node, every pod, the topology maps
of v1.30 or v1.34), and the random clusters the plugin is compared with it on."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.labels import LabelSelector
from kubesched.api.node_affinity import RequiredNodeAffinity
from kubesched.api.objects import Node, Pod
from kubesched.api.taints import find_untolerated_taint
from kubesched.cache.snapshot import Snapshot
from kubesched.plugins import podtopologyspread as pts
from kubesched.plugins.tainttoleration import DO_NOT_SCHEDULE_EFFECTS
from tests.plugins.podtopologyspread.builders import (
    DNS,
    HOST,
    MISSING,
    SA,
    SKEW,
    ZONE,
    Verdict,
    listers_with,
    make_plugin,
    node,
    pod,
    service,
    spread,
)


# -- reference: kube-scheduler's algorithm read directly --------------------------------------------------
class RefPaths:
    def __init__(self) -> None:
        self.p: list[list[Any]] = [["", 2**31 - 1], ["", 2**31 - 1]]

    def update(self, value: str, num: int) -> None:
        p = self.p
        i = 0 if value == p[0][0] else 1 if value == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [value, num]
        elif num < p[1][1]:
            p[1] = [value, num]


def ref_constraints(plugin: pts.PodTopologySpread, incoming: Pod, action: str) -> list[dict[str, Any]]:
    if incoming.topology_spread_constraints:
        raw, default_sel = incoming.topology_spread_constraints, None
    else:
        raw = tuple(c for c in plugin.default_constraints)
        if not any(c.when_unsatisfiable == action for c in raw):
            return []
        default_sel = pts.default_selector(incoming, plugin.handle.listers)
        if default_sel.empty:
            return []
    out = []
    for c in raw:
        if c.when_unsatisfiable != action:
            continue
        sel = c.selector if default_sel is None else default_sel
        extra = {k: incoming.labels[k] for k in c.match_label_keys if k in incoming.labels}
        if extra and sel is not None and default_sel is None:
            base = LabelSelector.from_dict({"matchLabels": extra})
            assert base is not None
            sel = LabelSelector(base.requirements + sel.requirements)
        out.append(
            {
                "key": c.topology_key,
                "skew": c.max_skew,
                "sel": sel,
                "min": c.min_domains or 1,
                "aff": c.node_affinity_policy != "Ignore",
                "taint": c.node_taints_policy == "Honor",
            }
        )
    return out


def ref_match(c: dict[str, Any], labels: Mapping[str, str]) -> bool:
    return c["sel"] is not None and c["sel"].matches(labels)


def ref_count(pods: Sequence[Pod], c: dict[str, Any], ns: str) -> int:
    if c["sel"] is None or c["sel"].empty:
        return 0
    return sum(1 for p in pods if p.meta.deletion_timestamp is None and p.namespace == ns and ref_match(c, p.labels))


def ref_included(c: dict[str, Any], incoming: Pod, n: Node) -> bool:
    if c["aff"] and not RequiredNodeAffinity.of(incoming).matches(n):
        return False
    return not (c["taint"] and find_untolerated_taint(n.taints, incoming.tolerations, DO_NOT_SCHEDULE_EFFECTS))


def has_keys(n: Node, cs: Sequence[dict[str, Any]]) -> bool:
    return all(c["key"] in n.labels for c in cs)


def ref_slot(c: dict[str, Any], i: int, version: str) -> Any:
    """What a constraint's counts are keyed by: its topology key (v1.30) or itself (v1.34)."""
    return c["key"] if version == "1.30" else i


class RefFilterState:
    def __init__(self, plugin: pts.PodTopologySpread, incoming: Pod, snapshot: Snapshot, version: str) -> None:
        self.cs = ref_constraints(plugin, incoming, "DoNotSchedule")
        self.slots = [ref_slot(c, i, version) for i, c in enumerate(self.cs)]
        self.pairs: dict[tuple[Any, str], int] = {}
        for info in snapshot.node_infos:
            n = info.node
            assert n is not None
            if not has_keys(n, self.cs):
                continue
            per_node: dict[tuple[Any, str], int] = {}
            for c, slot in zip(self.cs, self.slots, strict=True):
                if ref_included(c, incoming, n):
                    per_node[(slot, n.labels[c["key"]])] = ref_count(info.pods, c, incoming.namespace)
            for pair, k in per_node.items():
                self.pairs[pair] = self.pairs.get(pair, 0) + k
        self.domains = Counter(slot for slot, _ in self.pairs)
        self.paths = {slot: RefPaths() for slot in self.slots}
        for (slot, value), k in self.pairs.items():
            self.paths[slot].update(value, k)

    def update(self, incoming: Pod, other: Pod, n: Node, delta: int) -> None:
        if other.namespace != incoming.namespace or not has_keys(n, self.cs):
            return
        for c, slot in zip(self.cs, self.slots, strict=True):
            if not ref_match(c, other.labels) or not ref_included(c, incoming, n):
                continue
            pair = (slot, n.labels[c["key"]])
            self.pairs[pair] = self.pairs.get(pair, 0) + delta
            self.paths[slot].update(pair[1], self.pairs[pair])

    def filter(self, incoming: Pod, n: Node) -> Verdict:
        for c, slot in zip(self.cs, self.slots, strict=True):
            value = n.labels.get(c["key"])
            if value is None:
                return MISSING
            if slot not in self.domains:
                continue
            low = 0 if self.domains[slot] < c["min"] else self.paths[slot].p[0][1]
            if self.pairs.get((slot, value), 0) + int(ref_match(c, incoming.labels)) - low > c["skew"]:
                return SKEW
        return None


def reference_scores(
    plugin: pts.PodTopologySpread, incoming: Pod, snapshot: Snapshot, filtered: Sequence[str], version: str
) -> dict[str, int] | None:
    cs = ref_constraints(plugin, incoming, "ScheduleAnyway")
    if not cs:
        return None
    slots = [ref_slot(c, i, version) for i, c in enumerate(cs)]
    require_all = bool(incoming.topology_spread_constraints) or not plugin.system_defaulted
    infos = [snapshot.node_infos[snapshot.index[name]] for name in filtered]
    ignored: set[str] = set()
    counts: dict[tuple[Any, str], int] = {}
    sizes = [0] * len(cs)
    for info in infos:
        n = info.node
        assert n is not None
        if require_all and not has_keys(n, cs):
            ignored.add(n.name)
            continue
        for i, c in enumerate(cs):
            if c["key"] == HOST:
                continue
            pair = (slots[i], n.labels.get(c["key"], ""))
            if pair not in counts:
                counts[pair] = 0
                sizes[i] += 1
    weights = [
        pts.go_log(float((len(infos) - len(ignored) if c["key"] == HOST else sizes[i]) + 2)) for i, c in enumerate(cs)
    ]
    for info in snapshot.node_infos:
        n = info.node
        assert n is not None
        if require_all and not has_keys(n, cs):
            continue
        for c, slot in zip(cs, slots, strict=True):
            if not ref_included(c, incoming, n):
                continue
            pair = (slot, n.labels.get(c["key"], ""))
            if pair in counts:
                counts[pair] += ref_count(info.pods, c, incoming.namespace)
    raw: dict[str, int] = {}
    for info in infos:
        n = info.node
        assert n is not None
        if n.name in ignored:
            raw[n.name] = 0
            continue
        total = 0.0
        for c, w, slot in zip(cs, weights, slots, strict=True):
            if c["key"] in n.labels:
                cnt = (
                    ref_count(info.pods, c, incoming.namespace)
                    if c["key"] == HOST
                    else counts[(slot, n.labels[c["key"]])]
                )
                total += float(cnt) * w + float(c["skew"] - 1)
        whole = math.floor(total)
        raw[n.name] = whole + (1 if total - whole >= 0.5 else 0)  # math.Round, half away from zero
    return ref_normalize(raw, ignored)


def ref_normalize(raw: dict[str, int], ignored: set[str]) -> dict[str, int]:
    """NormalizeScore: fewer is better, scaled over the nodes that were not ignored."""
    valid = [s for name, s in raw.items() if name not in ignored]
    high, low = max([0, *valid]), min(valid, default=0)
    out = {}
    for name, s in raw.items():
        if name in ignored:
            out[name] = 0
        elif high == 0:
            out[name] = 100
        else:
            out[name] = 100 * (high + low - s) // high
    return out


# -- random clusters ------------------------------------------------------------------------------------
_KEYS = (ZONE, HOST, "rack")
_SELECTORS: tuple[dict[str, Any] | None, ...] = (
    None,
    {},
    {"matchLabels": {"app": "a"}},
    {"matchLabels": {"app": "b"}},
    {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]},
    {"matchLabels": {"app": "a"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["x", "y"]}]},
)
_TAINTS = (
    {"key": "t1", "value": "v", "effect": "NoSchedule"},
    {"key": "t2", "effect": "NoExecute"},
    {"key": "t3", "effect": "PreferNoSchedule"},
)


def random_labels(rng: random.Random) -> dict[str, str]:
    labels = {}
    if rng.random() < 0.8:
        labels["app"] = rng.choice(("a", "b"))
    if rng.random() < 0.6:
        labels["tier"] = rng.choice(("x", "y", "z"))
    return labels


def random_cluster(rng: random.Random) -> tuple[list[Node], list[Pod]]:
    nodes = []
    for i in range(rng.randint(1, 14)):
        labels: dict[str, str] = {}
        if rng.random() < 0.85:
            labels[ZONE] = rng.choice(("z1", "z2", "z3", ""))
        if rng.random() < 0.7:
            labels["rack"] = rng.choice(("r1", "r2", "r3", "r4"))
        if rng.random() < 0.5:
            labels["pool"] = rng.choice(("a", "b"))
        if rng.random() < 0.5:
            labels[pts.ZONE_LABEL] = rng.choice(("za", "zb", ""))
        taints = rng.sample(_TAINTS, rng.choice((0, 0, 1, 2)))
        nodes.append(node(f"n{i}", labels, hostname=rng.random() < 0.9, taints=taints))
    pods = [
        pod(
            f"e{j}",
            random_labels(rng),
            on=rng.choice(nodes).name,
            ns=rng.choice(("default", "default", "ns1")),
            terminating=rng.random() < 0.15,
        )
        for j in range(rng.randint(0, 40))
    ]
    return nodes, pods


def random_incoming(rng: random.Random) -> Pod:
    constraints = []
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        when = rng.choice((DNS, SA))
        constraints.append(
            spread(
                rng.randint(1, 3),
                rng.choice(_KEYS),
                when,
                rng.choice(_SELECTORS),
                min_domains=rng.choice((None, None, 1, 2, 4)) if when == DNS else None,
                affinity_policy=rng.choice((None, "Honor", "Ignore")),
                taints_policy=rng.choice((None, "Honor", "Ignore")),
                match_label_keys=rng.choice((None, None, ["tier"], ["app", "tier"])),
            )
        )
    kw: dict[str, Any] = {}
    r = rng.random()
    if r < 0.25:
        kw["node_selector"] = {"pool": "a"}
    elif r < 0.4:
        kw["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "rack", "operator": "NotIn", "values": ["r1"]}]}
                    ]
                }
            }
        }
    if rng.random() < 0.4:
        kw["tolerations"] = [{"key": "t1", "operator": "Exists"}]
    return pod("incoming", random_labels(rng), spread=constraints, **kw)


def random_plugin(rng: random.Random, snapshot: Snapshot, version: str) -> pts.PodTopologySpread:
    listers = listers_with(
        *[
            service(f"s{i}", sel)
            for i, sel in enumerate(rng.sample(({"app": "a"}, {"tier": "x"}, {"app": "b"}, {}), rng.randint(0, 3)))
        ]
    )
    if rng.random() < 0.3:
        args = {
            "defaultingType": "List",
            "defaultConstraints": [
                spread(
                    rng.randint(1, 3),
                    k,
                    rng.choice((DNS, SA)),
                    taints_policy=rng.choice((None, "Honor")),
                    match_label_keys=rng.choice((None, ["tier"])),
                )
                for k in rng.sample(_KEYS, rng.randint(1, 3))
            ],
        }
        return make_plugin(snapshot, args, listers, version)
    return make_plugin(snapshot, None, listers, version)
