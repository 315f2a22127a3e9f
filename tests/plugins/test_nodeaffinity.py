from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
import yaml

from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterPlugin,
    BatchScorePlugin,
    ClusterEvent,
    NodeScore,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
)
from kubesched.framework.status import Code, Status
from kubesched.plugins import nodeaffinity
from tests.factories import NO_HANDLE, make_node, make_pod, make_snapshot
from tests.plugins.queueing import V130
from tests.plugins.test_helper import (
    CONFORMANCE,
    LABEL_KEYS,
    LABEL_VALUES,
    check_filter_conformance,
    check_score_conformance,
    random_nodes,
    scenario_available,
)

NAME = "NodeAffinity"
POD_REASON = "node(s) didn't match Pod's node affinity/selector"
ENFORCED_REASON = "node(s) didn't match scheduler-enforced node affinity"


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def name_field(op: str, value: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": op, "values": [value]}


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    selector = {"nodeSelectorTerms": list(terms)}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}


def preferred(*weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "preference": term} for w, term in weighted
            ]
        }
    }


def pod_with(spec: dict[str, Any]) -> Any:
    return make_pod("p", spec=spec)


# -- Filter (kube-scheduler's TestNodeAffinity table, in spirit) -----------------------------------------
FILTER_CASES: list[tuple[str, dict[str, Any], dict[str, str], str, str | None]] = [
    ("no selector", {}, {}, "n", None),
    ("missing labels", {"nodeSelector": {"foo": "bar"}}, {}, "n", POD_REASON),
    ("same labels", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, "n", None),
    ("node has more labels", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar", "baz": "blah"}, "n", None),
    ("value differs", {"nodeSelector": {"foo": "bar"}}, {"foo": "baz"}, "n", POD_REASON),
    (
        "In matches",
        {"affinity": required({"matchExpressions": [expr("foo", "In", "bar", "value2")]})},
        {"foo": "bar"},
        "n",
        None,
    ),
    (
        "Gt matches",
        {"affinity": required({"matchExpressions": [expr("kernel-version", "Gt", "0204")]})},
        {"kernel-version": "0206.0"},
        "n",
        POD_REASON,
    ),
    (
        "Gt integer",
        {"affinity": required({"matchExpressions": [expr("kernel-version", "Gt", "204")]})},
        {"kernel-version": "206"},
        "n",
        None,
    ),
    ("Lt on missing label", {"affinity": required({"matchExpressions": [expr("v", "Lt", "5")]})}, {}, "n", POD_REASON),
    (
        "NotIn matches missing",
        {"affinity": required({"matchExpressions": [expr("mem", "NotIn", "DDR")]})},
        {},
        "n",
        None,
    ),
    (
        "NotIn rejects listed",
        {"affinity": required({"matchExpressions": [expr("mem", "NotIn", "DDR")]})},
        {"mem": "DDR"},
        "n",
        POD_REASON,
    ),
    (
        "Exists",
        {"affinity": required({"matchExpressions": [expr("GPU", "Exists")]})},
        {"GPU": "NVIDIA-GRID-K1"},
        "n",
        None,
    ),
    (
        "DoesNotExist on present",
        {"affinity": required({"matchExpressions": [expr("GPU", "DoesNotExist")]})},
        {"GPU": "x"},
        "n",
        POD_REASON,
    ),
    (
        "AND within a term",
        {"affinity": required({"matchExpressions": [expr("foo", "In", "bar"), expr("a", "Exists")]})},
        {"foo": "bar"},
        "n",
        POD_REASON,
    ),
    (
        "OR across terms",
        {
            "affinity": required(
                {"matchExpressions": [expr("foo", "In", "nope")]}, {"matchExpressions": [expr("diffkey", "In", "w")]}
            )
        },
        {"diffkey": "w"},
        "n",
        None,
    ),
    ("empty terms list matches nothing", {"affinity": required()}, {"foo": "bar"}, "n", POD_REASON),
    ("empty term matches nothing", {"affinity": required({})}, {"foo": "bar"}, "n", POD_REASON),
    ("empty matchExpressions", {"affinity": required({"matchExpressions": []})}, {}, "n", POD_REASON),
    (
        "nodeSelector AND affinity",
        {"nodeSelector": {"foo": "bar"}, "affinity": required({"matchExpressions": [expr("x", "Exists")]})},
        {"x": "1"},
        "n",
        POD_REASON,
    ),
    ("matchFields name In", {"affinity": required({"matchFields": [name_field("In", "node1")]})}, {}, "node1", None),
    (
        "matchFields name In other",
        {"affinity": required({"matchFields": [name_field("In", "node1")]})},
        {},
        "node2",
        POD_REASON,
    ),
    ("matchFields NotIn", {"affinity": required({"matchFields": [name_field("NotIn", "node1")]})}, {}, "node2", None),
    (
        "matchFields and labels ANDed",
        {
            "affinity": required(
                {"matchFields": [name_field("In", "node1")], "matchExpressions": [expr("foo", "In", "bar")]}
            )
        },
        {"foo": "baz"},
        "node1",
        POD_REASON,
    ),
    (
        "matchFields or labels across terms",
        {
            "affinity": required(
                {"matchFields": [name_field("In", "node1")]}, {"matchExpressions": [expr("foo", "In", "bar")]}
            )
        },
        {"foo": "bar"},
        "node2",
        None,
    ),
]


@pytest.mark.parametrize(("name", "spec", "labels", "node_name", "want"), FILTER_CASES)
def test_filter(name: str, spec: dict[str, Any], labels: dict[str, str], node_name: str, want: str | None) -> None:
    plugin = nodeaffinity.new(None, NO_HANDLE)
    pod = pod_with(spec)
    node = make_node(node_name, labels=labels)
    for run_pre_filter in (True, False):
        state = CycleState()
        if run_pre_filter:
            _, pf_status = plugin.pre_filter(state, pod)
            if pf_status is not None and pf_status.code is Code.SKIP:
                assert want is None
                continue
        status = plugin.filter(state, pod, NodeInfo(node))
        if want is None:
            assert status is None
        else:
            assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))
        batch = plugin.filter_nodes(state, pod, make_snapshot([node]), np.array([0]))
        got = None if batch.status_index[0] < 0 else batch.statuses[batch.status_index[0]]
        assert got == status


ADDED = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "foo")]}]
    },
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [expr("foo", "In", "bar")]}}
    ],
}


@pytest.mark.parametrize(
    ("name", "spec", "labels", "want"),
    [
        ("added affinity matches", {}, {"zone": "foo"}, None),
        ("added affinity fails first", {"nodeSelector": {"x": "y"}}, {"zone": "bar"}, ENFORCED_REASON),
        ("added passes, pod fails", {"nodeSelector": {"x": "y"}}, {"zone": "foo"}, POD_REASON),
        ("both pass", {"nodeSelector": {"x": "y"}}, {"zone": "foo", "x": "y"}, None),
    ],
)
def test_filter_with_added_affinity(name: str, spec: dict[str, Any], labels: dict[str, str], want: str | None) -> None:
    plugin = nodeaffinity.new({"addedAffinity": ADDED}, NO_HANDLE)
    pod = pod_with(spec)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod)
    assert status is None  # never Skip: the added selector always applies
    node = make_node("n", labels=labels)
    status = plugin.filter(state, pod, NodeInfo(node))
    assert status == (None if want is None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,)))
    batch = plugin.filter_nodes(state, pod, make_snapshot([node]), np.array([0]))
    assert (None if batch.status_index[0] < 0 else batch.statuses[batch.status_index[0]]) == status


# -- PreFilter -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "spec", "want_result", "want_status"),
    [
        ("nothing to do", {}, None, Status(Code.SKIP)),
        ("empty nodeSelector map still filters", {"nodeSelector": {}}, None, None),
        ("nodeSelector", {"nodeSelector": {"a": "b"}}, None, None),
        ("labels only", {"affinity": required({"matchExpressions": [expr("a", "Exists")]})}, None, None),
        (
            "one name",
            {"affinity": required({"matchFields": [name_field("In", "node1")]})},
            PreFilterResult(frozenset({"node1"})),
            None,
        ),
        (
            "names unioned across terms",
            {
                "affinity": required(
                    {"matchFields": [name_field("In", "node1")]}, {"matchFields": [name_field("In", "node2")]}
                )
            },
            PreFilterResult(frozenset({"node1", "node2"})),
            None,
        ),
        (
            "a term without names lets all nodes in",
            {
                "affinity": required(
                    {"matchFields": [name_field("In", "node1")]}, {"matchExpressions": [expr("a", "Exists")]}
                )
            },
            None,
            None,
        ),
        ("NotIn does not pin", {"affinity": required({"matchFields": [name_field("NotIn", "node1")]})}, None, None),
        (
            "intersection within a term",
            {"affinity": required({"matchFields": [name_field("In", "node1"), name_field("In", "node1")]})},
            PreFilterResult(frozenset({"node1"})),
            None,
        ),
        (
            "conflicting names in every term",
            {"affinity": required({"matchFields": [name_field("In", "node1"), name_field("In", "node2")]})},
            None,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("pod affinity terms conflict",)),
        ),
        ("no terms", {"affinity": required()}, None, None),
    ],
)
def test_pre_filter(
    name: str, spec: dict[str, Any], want_result: PreFilterResult | None, want_status: Status | None
) -> None:
    plugin = nodeaffinity.new(None, NO_HANDLE)
    assert plugin.pre_filter(CycleState(), pod_with(spec)) == (want_result, want_status)


def test_pre_filter_not_skipped_with_added_required() -> None:
    plugin = nodeaffinity.new({"addedAffinity": ADDED}, NO_HANDLE)
    assert plugin.pre_filter(CycleState(), pod_with({})) == (None, None)
    only_preferred = {
        "preferredDuringSchedulingIgnoredDuringExecution": ADDED["preferredDuringSchedulingIgnoredDuringExecution"]
    }
    plugin = nodeaffinity.new({"addedAffinity": only_preferred}, NO_HANDLE)
    assert plugin.pre_filter(CycleState(), pod_with({})) == (None, Status(Code.SKIP))


# -- Score -----------------------------------------------------------------------------------------------
NODE_LABELS = [
    {"foo": "bar"},
    {"foo": "bar", "key": "value"},
    {"foo": "bar", "key": "value", "az": "az1"},
]
PREF_3 = preferred(
    (2, {"matchExpressions": [expr("foo", "In", "bar")]}),
    (4, {"matchExpressions": [expr("key", "In", "value")]}),
    (5, {"matchExpressions": [expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")]}),
)


@pytest.mark.parametrize(
    ("name", "spec", "args", "want_raw", "want"),
    [
        (
            "all match one term",
            {"affinity": preferred((2, {"matchExpressions": [expr("foo", "In", "bar")]}))},
            None,
            [2, 2, 2],
            [100, 100, 100],
        ),
        (
            "none match",
            {"affinity": preferred((2, {"matchExpressions": [expr("x", "In", "y")]}))},
            None,
            [0, 0, 0],
            [0, 0, 0],
        ),
        ("weights add up", {"affinity": PREF_3}, None, [2, 6, 11], [18, 54, 100]),
        ("empty preference ignored", {"affinity": preferred((7, {}))}, None, [0, 0, 0], [0, 0, 0]),
        (
            "added preferred counts",
            {},
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 5, "preference": {"matchExpressions": [expr("key", "Exists")]}}
                    ]
                }
            },
            [0, 5, 5],
            [0, 100, 100],
        ),
        (
            "added plus pod",
            {"affinity": preferred((3, {"matchExpressions": [expr("az", "Exists")]}))},
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 5, "preference": {"matchExpressions": [expr("key", "Exists")]}}
                    ]
                }
            },
            [0, 5, 8],
            [0, 62, 100],
        ),
        (
            "matchFields preference",
            {"affinity": preferred((9, {"matchFields": [name_field("In", "n1")]}))},
            None,
            [0, 9, 0],
            [0, 100, 0],
        ),
    ],
)
def test_score(name: str, spec: dict[str, Any], args: Any, want_raw: list[int], want: list[int]) -> None:
    plugin = nodeaffinity.new(args, NO_HANDLE)
    pod = pod_with(spec)
    snap = make_snapshot([make_node(f"n{i}", labels=labels) for i, labels in enumerate(NODE_LABELS)])
    nodes = snap.all_nodes()
    state = CycleState()
    assert plugin.pre_score(state, pod, nodes) is None
    raw = [plugin.score(state, pod, info)[0] for info in nodes]
    assert raw == want_raw
    scores = [NodeScore(info.name, s) for info, s in zip(nodes, raw, strict=True)]
    plugin.normalize_score(state, pod, scores)
    assert [s.score for s in scores] == want
    batch_raw = plugin.score_nodes(state, pod, nodes)
    assert batch_raw.tolist() == want_raw
    assert plugin.normalize_scores(state, pod, batch_raw).tolist() == want


def test_pre_score_skip() -> None:
    nodes = make_snapshot([make_node("n")]).all_nodes()
    plugin = nodeaffinity.new(None, NO_HANDLE)
    assert plugin.pre_score(CycleState(), pod_with({}), nodes) == Status(Code.SKIP)
    assert plugin.pre_score(CycleState(), pod_with({"affinity": required({})}), nodes) == Status(Code.SKIP)
    # An explicitly empty preferred list is not "no preferred terms" (a non-nil Go slice).
    no_terms: dict[str, Any] = {"preferredDuringSchedulingIgnoredDuringExecution": []}
    empty_list = {"affinity": {"nodeAffinity": no_terms}}
    assert plugin.pre_score(CycleState(), pod_with(empty_list), nodes) is None
    with_added = nodeaffinity.new({"addedAffinity": ADDED}, NO_HANDLE)
    assert with_added.pre_score(CycleState(), pod_with({}), nodes) is None


def test_score_without_pre_score() -> None:
    plugin = nodeaffinity.new(None, NO_HANDLE)
    pod = pod_with({"affinity": PREF_3})
    info = NodeInfo(make_node("n", labels=NODE_LABELS[2]))
    assert plugin.score(CycleState(), pod, info) == (11, None)


def test_protocols_and_events() -> None:
    plugin = nodeaffinity.new(None, NO_HANDLE)
    for proto in (PreFilterPlugin, BatchFilterPlugin, PreScorePlugin, BatchScorePlugin):
        assert isinstance(plugin, proto)
    assert plugin.pre_filter_extensions() is None
    # v1.30's registrations (v1.34's, with hints: test_nodeaffinity_hints.py)
    assert tuple(nodeaffinity.new(None, V130).events_to_register()) == (
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),
    )


def test_factory_accepts_typed_args() -> None:
    from kubesched.config.pluginargs import NodeAffinityArgs

    plugin = nodeaffinity.new(NodeAffinityArgs(added_affinity=ADDED), NO_HANDLE)
    assert plugin.added_selector is not None
    assert plugin.added_preferred is not None and len(plugin.added_preferred) == 1
    assert nodeaffinity.new(NodeAffinityArgs(), NO_HANDLE).added_selector is None


# -- batch == per-node on random clusters -------------------------------------------------------------------
def _random_requirement(rng: random.Random, names: list[str]) -> tuple[str, dict[str, Any]]:
    """("label" | "field", requirement dict)."""
    if rng.random() < 0.12:
        return "field", name_field(rng.choice(["In", "NotIn"]), rng.choice([*names, "ghost"]))
    key = rng.choice([*LABEL_KEYS, "absent"])
    values = LABEL_VALUES.get(key, ("q",))
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
    if op in ("In", "NotIn"):
        return "label", expr(key, op, *rng.sample([*values, "zz"], rng.randint(1, 2)))
    if op in ("Gt", "Lt"):
        return "label", expr(key, op, str(rng.choice([0, 2, 7, 10])))
    return "label", expr(key, op)


def _random_term(rng: random.Random, names: list[str]) -> dict[str, Any]:
    term: dict[str, list[dict[str, Any]]] = {}
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        kind, req = _random_requirement(rng, names)
        term.setdefault("matchFields" if kind == "field" else "matchExpressions", []).append(req)
    return term


def _random_spec(rng: random.Random, names: list[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if rng.random() < 0.4:
        keys = rng.sample(LABEL_KEYS, rng.randint(0, 2))
        spec["nodeSelector"] = {k: rng.choice(LABEL_VALUES[k]) for k in keys}
    node_affinity: dict[str, Any] = {}
    if rng.random() < 0.7:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [_random_term(rng, names) for _ in range(rng.randint(0, 3))]
        }
    if rng.random() < 0.7:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "preference": _random_term(rng, names)} for _ in range(rng.randint(0, 4))
        ]
    if node_affinity:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    return spec


def test_batch_equals_per_node_on_random_clusters() -> None:
    rng = random.Random(1234)
    for trial in range(150):
        nodes = random_nodes(rng, rng.randint(1, 25))
        names = [n.name for n in nodes]
        snap = make_snapshot(nodes)
        args = None
        if rng.random() < 0.3:
            added = _random_spec(rng, names).get("affinity", {}).get("nodeAffinity")
            args = {"addedAffinity": added} if added else None
        plugin = nodeaffinity.new(args, NO_HANDLE)
        pod = make_pod(f"p{trial}", spec=_random_spec(rng, names))
        rows = np.array(sorted(rng.sample(range(len(snap)), rng.randint(1, len(snap)))))
        for run_pre in (False, True):
            state = CycleState()
            if run_pre:
                plugin.pre_filter(state, pod)
            batch = plugin.filter_nodes(state, pod, snap, rows)
            for k, row in enumerate(rows.tolist()):
                want = plugin.filter(state, pod, snap.node_infos[row])
                idx = int(batch.status_index[k])
                assert (None if idx < 0 else batch.statuses[idx]) == want, (trial, row)
            node_list = snap.nodes(rows)
            if run_pre:
                plugin.pre_score(state, pod, node_list)
            per_node = [NodeScore(i.name, plugin.score(state, pod, i)[0]) for i in node_list]
            raw = plugin.score_nodes(state, pod, node_list)
            assert raw.tolist() == [s.score for s in per_node], trial
            plugin.normalize_score(state, pod, per_node)
            assert plugin.normalize_scores(state, pod, raw).tolist() == [s.score for s in per_node]


# -- conformance ------------------------------------------------------------------------------------
def _factory(scenario: str) -> Any:
    args = None
    config = CONFORMANCE / scenario / "config.yaml"
    if config.is_file():
        for profile in yaml.safe_load(config.read_text()).get("profiles", []):
            for entry in profile.get("pluginConfig") or []:
                if entry["name"] == NAME:
                    args = entry["args"]
    return lambda _snapshot: nodeaffinity.new(args, NO_HANDLE)


NA_SCENARIOS = [
    "na-added-affinity",
    "na-matchfields-nodename",
    "na-nodeselector",
    "na-preferred-weights",
    "na-required-operators",
    "na-terms-or-vs-and",
    "smoke",
]


@pytest.mark.parametrize("scenario", NA_SCENARIOS)
def test_conformance_filter(scenario: str) -> None:
    if not scenario_available(scenario):
        pytest.skip("conformance corpus not available")
    assert check_filter_conformance(scenario, _factory(scenario), NAME) > 0


@pytest.mark.parametrize("scenario", NA_SCENARIOS)
def test_conformance_score(scenario: str) -> None:
    if not scenario_available(scenario):
        pytest.skip("conformance corpus not available")
    # Default weight 2: pw-c's best sum 90 normalises to 100 and shows as 200; pw-a's 80 -> 88 -> 176.
    check_score_conformance(scenario, _factory(scenario), NAME, 2)
