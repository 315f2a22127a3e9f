"""Tests for the generic preemption evaluator (kubesched.framework.preemption).

Also home of :class:`FakeHandle` / :class:`FakeCluster`, the small stand-ins the DefaultPreemption
tests use: filters are a cpu/memory fit check plus a nodeSelector check, counting nominated pods of
higher or equal priority as kube-scheduler's RunFilterPluginsWithNominatedPods does.
"""

from __future__ import annotations

import builtins
import copy
import random
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubesched.api.disruption_budget import PodDisruptionBudget
from kubesched.api.objects import Node, Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.snapshot import Snapshot
from kubesched.cluster.protocol import ApiError, NotFound
from kubesched.config.features import feature_gates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import fit_error_message
from kubesched.framework.extender import Victims
from kubesched.framework.interfaces import PostFilterResult
from kubesched.framework.preemption import (
    MAX_INT32,
    NOT_HELPFUL_MSG,
    Candidate,
    Evaluator,
    clock_reading,
    default_score_funcs,
    earliest_pod_start_time,
    more_important_pod,
    nodes_where_preemption_might_help,
    pick_one_node_for_preemption,
)
from kubesched.framework.status import Code, Status, unresolvable, unschedulable
from kubesched.util.gosort import go_sort_slice
from tests.factories import as_handle, make_node, make_snapshot, pod_dict

NOW = datetime(2024, 6, 1, tzinfo=UTC)
T0 = datetime(2024, 1, 1, tzinfo=UTC)


# -- fakes --------------------------------------------------------------------------------------------
class FakeCluster:
    """Pods and PDBs as dicts; records every write (``writes``: in order, ``("patch"|"delete", name)``)."""

    def __init__(self, pods: Sequence[Pod] = (), pdbs: Sequence[dict] = ()) -> None:
        self.pods: dict[tuple[str, str], dict] = {(p.namespace, p.name): copy.deepcopy(dict(p.raw)) for p in pods}
        self.pdbs = [copy.deepcopy(p) for p in pdbs]
        self.patches: list[tuple[str, str, Any, Any]] = []
        self.deleted: list[str] = []
        self.events: list[dict] = []
        self.writes: list[tuple[str, str]] = []
        #: Pod name -> what deleting it raises.
        self.delete_errors: dict[str, Exception] = {}
        #: Called with the pod's name before each delete (to look at the world at that moment).
        self.on_delete: Any = None

    def add(self, pod: Pod) -> None:
        self.pods[(pod.namespace, pod.name)] = copy.deepcopy(dict(pod.raw))

    def get(self, kind: str, namespace: str | None, name: str) -> dict:
        assert kind == "Pod"
        try:
            return copy.deepcopy(self.pods[(namespace or "", name)])
        except KeyError:
            raise NotFound.of("pods", name) from None

    def list(self, kind: str, namespace: str | None = None) -> tuple[builtins.list[dict], str]:
        assert kind == "PodDisruptionBudget"
        return copy.deepcopy(self.pdbs), "1"

    def delete(self, kind: str, namespace: str | None, name: str, *, uid: str | None = None) -> dict:
        if self.on_delete is not None:
            self.on_delete(name)
        self.writes.append(("delete", name))
        if name in self.delete_errors:
            raise self.delete_errors[name]
        obj = self.pods.pop((namespace or "", name))
        self.deleted.append(f"{namespace}/{name}")
        return obj

    def patch_pod_status(
        self,
        namespace: str,
        name: str,
        *,
        conditions: builtins.list[dict] | None = None,
        nominated_node_name: Any = ...,
        reply: bool = True,
    ) -> dict:
        self.writes.append(("patch", name))
        self.patches.append((namespace, name, conditions, nominated_node_name))
        obj = self.pods[(namespace, name)]
        status = obj.setdefault("status", {})
        if conditions:
            status["conditions"] = [*(status.get("conditions") or []), *conditions]
        if nominated_node_name is not ...:
            if nominated_node_name:
                status["nominatedNodeName"] = nominated_node_name
            else:
                status.pop("nominatedNodeName", None)
        return copy.deepcopy(obj)

    def record_event(self, event: dict) -> None:
        self.events.append(event)


class FakeNominator:
    def __init__(self) -> None:
        self.by_node: dict[str, list[Pod]] = {}

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        return list(self.by_node.get(node_name, []))

    def nominations(self) -> dict[str, tuple[Pod, ...]]:
        return {node: tuple(pods) for node, pods in self.by_node.items() if pods}

    def add(self, pod: Pod, node: str) -> None:
        self.delete(pod)
        self.by_node.setdefault(node, []).append(pod)

    def delete(self, pod: Pod) -> None:
        for pods in self.by_node.values():
            pods[:] = [p for p in pods if p.uid != pod.uid]


class FakeWaitingPod:
    def __init__(self) -> None:
        self.rejected: tuple[str, str] | None = None

    def reject(self, plugin: str, message: str) -> None:
        self.rejected = (plugin, message)


def fits(pod: Pod, info: NodeInfo) -> Status | None:
    """A NodeResourcesFit-like cpu/memory check and a NodeAffinity-like nodeSelector check."""
    node = info.node
    assert node is not None
    if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return unresolvable("node(s) didn't match Pod's node affinity/selector")
    reasons = []
    for res in ("cpu", "memory"):
        want = pod.requests.get(res, 0)
        if want and info.requested.get(res, 0) + want > info.allocatable.get(res, 0):
            reasons.append(f"Insufficient {res}")
    return unschedulable(*reasons) if reasons else None


class FakeHandle:
    def __init__(
        self,
        snapshot: Snapshot,
        cluster: FakeCluster | None = None,
        nominator: FakeNominator | None = None,
        now: datetime = NOW,
        *,
        version: str | None = None,
        gates: str | None = None,
    ) -> None:
        """``version`` and ``gates`` are the emulated version (the newest by default) and its gate settings."""
        self.features = feature_gates(version, gates)
        self.snapshot = snapshot
        self.cluster = cluster or FakeCluster()
        self.nominator = nominator or FakeNominator()
        self.now = now
        self.parallelism = 16
        self.waiting: dict[str, FakeWaitingPod] = {}
        self.prefilter_calls: list[tuple[str, str, str]] = []
        self.extenders: list[Any] = []
        self.extra: dict[str, Any] = {}
        #: No filter here declares a capability: victims are chosen by the general procedure.
        self.node_only_filters: frozenset[str] = frozenset()

    @property
    def clock(self) -> Any:
        return lambda: self.now

    @property
    def listers(self) -> Any:
        """PDBs as the scheduler's lister holds them (the fake cluster's)."""
        cluster = self.cluster

        class _Listers:
            def list(self, kind: str, namespace: str | None = None) -> list[dict]:
                return cluster.list(kind, namespace)[0]

        return _Listers()

    def get_waiting_pod(self, uid: str) -> FakeWaitingPod | None:
        return self.waiting.get(uid)

    def arithmetic_filters(self, state: CycleState) -> None:
        return None

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        self.prefilter_calls.append(("add", pod_to_add.name, node_info.name))
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        self.prefilter_calls.append(("remove", pod_to_remove.name, node_info.name))
        return None

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        nominated = [
            p
            for p in self.nominator.nominated_pods_for_node(node_info.name)
            if p.priority >= pod.priority and p.uid != pod.uid
        ]
        if nominated:
            with_nominated = node_info.snapshot()
            for p in nominated:
                with_nominated.add_pod(p)
            status = fits(pod, with_nominated)
            if status is not None:
                return status
        return fits(pod, node_info)

    def filter_all(self, pod: Pod) -> dict[str, Status]:
        """Statuses of the nodes that reject ``pod`` (what the framework hands PostFilter)."""
        out = {}
        for info in self.snapshot.node_infos:
            status = self.run_filter_plugins_with_nominated_pods(CycleState(), pod, info)
            if status is not None:
                out[info.name] = status
        return out


def mk_pod(
    name: str,
    *,
    priority: int = 0,
    cpu: str | None = None,
    node: str = "",
    start: datetime | None = None,
    labels: Mapping[str, str] | None = None,
    nominated: str = "",
    spec: Mapping[str, Any] | None = None,
    namespace: str = "default",
    deleting: bool = False,
    conditions: Sequence[dict] = (),
) -> Pod:
    raw = pod_dict(name, cpu=cpu, node_name=node, priority=priority, labels=labels, spec=spec, namespace=namespace)
    status = raw["status"]
    if start is not None:
        status["startTime"] = start.isoformat()
    if nominated:
        status["nominatedNodeName"] = nominated
    if conditions:
        status["conditions"] = list(conditions)
    if deleting:
        raw["metadata"]["deletionTimestamp"] = "2024-01-02T00:00:00Z"
    return Pod.from_dict(raw)


class FixedPolicy:
    """A policy whose victim selection is scripted per node (for evaluator-only tests)."""

    def __init__(
        self, results: Mapping[str, tuple[list[Pod], int, Status | None]], offset: int = 0, num: int = 100
    ) -> None:
        self.results = results
        self.offset = offset
        self.num = num
        self.visited: list[str] = []

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.offset, min(self.num, num_nodes)

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def pod_eligible_to_preempt_others(self, pod: Pod, status: Status | None) -> tuple[bool, str]:
        return True, ""

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget]
    ) -> tuple[list[Pod], int, Status | None]:
        self.visited.append(node_info.name)
        return self.results[node_info.name]

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> None:
        return None


# -- MoreImportantPod / GetEarliestPodStartTime -------------------------------------------------------
def test_more_important_pod() -> None:
    hi = mk_pod("hi", priority=10, start=T0 + timedelta(hours=1))
    lo = mk_pod("lo", priority=5, start=T0)
    old = mk_pod("old", priority=5, start=T0 - timedelta(hours=1))
    unstarted = mk_pod("unstarted", priority=5)
    unstarted2 = mk_pod("unstarted2", priority=5)
    assert more_important_pod(hi, lo, NOW) and not more_important_pod(lo, hi, NOW)
    assert more_important_pod(old, lo, NOW) and not more_important_pod(lo, old, NOW)
    assert more_important_pod(lo, unstarted, NOW) and not more_important_pod(unstarted, lo, NOW)
    # Two pods without start time: each call reads the clock twice, the second reading is later.
    assert more_important_pod(unstarted, unstarted2, NOW) and more_important_pod(unstarted2, unstarted, NOW)


def test_victim_sort_order_matches_go() -> None:
    pods = [
        mk_pod("u1", priority=1),
        mk_pod("s1", priority=1, start=T0),
        mk_pod("u2", priority=1),
        mk_pod("h", priority=3),
        mk_pod("s0", priority=1, start=T0 - timedelta(1)),
        mk_pod("u3", priority=1),
    ]
    go_sort_slice(pods, lambda a, b: more_important_pod(a, b, NOW))
    # Unstarted equals come out reversed (insertion sort with an always-true less among them).
    assert [p.name for p in pods] == ["h", "s0", "s1", "u3", "u2", "u1"]


@pytest.mark.parametrize(
    ("pods", "want"),
    [
        pytest.param([], None, id="no victims"),
        pytest.param([("a", 1, 3)], T0 + timedelta(3), id="one"),
        pytest.param([("a", 5, 3), ("b", 5, 1), ("c", 1, 0)], T0 + timedelta(1), id="earliest of top priority"),
        pytest.param([("a", 1, 0), ("b", 5, 4), ("c", 5, 2)], T0 + timedelta(2), id="top priority not first"),
        pytest.param([("a", 5, None), ("b", 5, 2)], T0 + timedelta(2), id="unstarted counts as now"),
    ],
)
def test_earliest_pod_start_time(pods: list[tuple[str, int, int | None]], want: datetime | None) -> None:
    victims = Victims([mk_pod(n, priority=p, start=None if d is None else T0 + timedelta(d)) for n, p, d in pods])
    assert earliest_pod_start_time(victims, NOW) == want


# -- pickOneNodeForPreemption -------------------------------------------------------------------------
def V(*pods: tuple[int, int | None], pdb: int = 0) -> Victims:
    return Victims(
        [mk_pod(f"v{i}", priority=p, start=None if d is None else T0 + timedelta(d)) for i, (p, d) in enumerate(pods)],
        pdb,
    )


@pytest.mark.parametrize(
    ("victims", "want"),
    [
        pytest.param({"n1": V((1, 0), pdb=1), "n2": V((100, 0))}, "n2", id="fewest PDB violations"),
        pytest.param({"n1": V((10, 0)), "n2": V((5, 0), (5, 0), (5, 0))}, "n2", id="lowest top priority"),
        pytest.param({"n1": V((5, 0), (4, 0)), "n2": V((5, 0), (3, 0))}, "n2", id="smallest sum"),
        pytest.param(
            {"n1": V((-5, 0), (-5, 0)), "n2": V((-5, 0))},
            "n2",
            id="negative priorities: fewer victims has smaller shifted sum",
        ),
        pytest.param(
            {"n1": V((5, 0), (0, 0)), "n2": V((5, 0), (-1, 0), (1, 0))},
            "n1",
            id="sum with MaxInt32+1 offset prefers fewer pods",
        ),
        pytest.param({"n1": V((5, 1)), "n2": V((5, 3)), "n3": V((5, 2))}, "n2", id="latest start time"),
        pytest.param({"n1": V((5, 1)), "n2": V((5, 1))}, "n1", id="full tie: first"),
        pytest.param({"n2": V((5, 1)), "n1": V((5, 1))}, "n2", id="full tie: first in given order"),
    ],
)
def test_pick_one_node_for_preemption(victims: dict[str, Victims], want: str) -> None:
    assert pick_one_node_for_preemption(victims, None, NOW) == want


def test_pick_one_node_sum_uses_offset() -> None:
    v = {"n1": V((-MAX_INT32 - 1, 0), (-MAX_INT32 - 1, 0)), "n2": V((-MAX_INT32 - 1, 0))}
    # With the offset every victim adds 0: the sums tie, then fewer victims wins.
    assert pick_one_node_for_preemption(v, None, NOW) == "n2"


@pytest.mark.parametrize("seed", range(30))
def test_pick_one_node_by_default_is_the_default_score_funcs_in_turn(seed: int) -> None:
    rng = random.Random(seed)
    victims = {
        f"n{i}": V(
            *((rng.choice((-3, 0, 5)), rng.choice((None, 1, 2))) for _ in range(rng.randrange(1, 4))),
            pdb=rng.choice((0, 0, 1)),
        )
        for i in range(rng.randrange(1, 12))
    }
    want = pick_one_node_for_preemption(victims, default_score_funcs(victims, NOW), NOW)
    assert pick_one_node_for_preemption(victims, None, NOW) == want


def test_pick_one_node_custom_score_funcs() -> None:
    v = {"a": V((1, 0)), "b": V((1, 0)), "c": V((1, 0))}
    assert pick_one_node_for_preemption(v, [lambda n: {"a": 1, "b": 3, "c": 3}[n]], NOW) == "b"
    assert pick_one_node_for_preemption({}, None, NOW) == ""


# -- nodesWherePreemptionMightHelp / FitError ---------------------------------------------------------
def test_nodes_where_preemption_might_help() -> None:
    snap = make_snapshot([make_node(n) for n in ("a", "b", "c", "d", "e")])
    statuses = {
        "a": unschedulable("Insufficient cpu"),
        "b": unresolvable("node(s) didn't match Pod's node affinity/selector"),
        "d": Status(Code.ERROR, ("boom",)),
        "e": unschedulable("Too many pods"),
    }
    potential, not_helped = nodes_where_preemption_might_help(snap.node_infos, statuses)
    assert [n.name for n in potential] == ["a", "e"]
    assert sorted(not_helped) == ["b", "c"]  # c: absent from the map
    assert all(
        s.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE and s.reasons == (NOT_HELPFUL_MSG,) for s in not_helped.values()
    )


@pytest.mark.parametrize(
    ("n", "statuses", "want"),
    [
        pytest.param(
            3,
            {
                "a": unresolvable(NOT_HELPFUL_MSG),
                "b": unschedulable("No preemption victims found for incoming pod"),
                "c": unschedulable("No preemption victims found for incoming pod"),
            },
            "0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
            "2 No preemption victims found for incoming pod.",
            id="histogram sorted as strings",
        ),
        pytest.param(
            2,
            {"a": unschedulable("Insufficient cpu", "Insufficient memory"), "b": unschedulable("Insufficient cpu")},
            "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.",
            id="multi reasons",
        ),
        pytest.param(0, {}, "0/0 nodes are available:", id="empty"),
        pytest.param(
            12,
            {str(i): unschedulable("x") for i in range(10)} | {"y": unschedulable("y"), "z": unschedulable("y")},
            "0/12 nodes are available: 10 x, 2 y.",
            id="string order",
        ),
    ],
)
def test_fit_error_message(n: int, statuses: dict[str, Status], want: str) -> None:
    assert fit_error_message(n, statuses) == want


# -- PodDisruptionBudget parsing ----------------------------------------------------------------------
def pdb_dict(
    name: str, selector: dict | None, allowed: int = 0, disrupted: Sequence[str] = (), namespace: str = "default"
) -> dict:
    spec = {} if selector is None else {"selector": selector}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": {"disruptionsAllowed": allowed, "disruptedPods": {p: "2024-01-01T00:00:00Z" for p in disrupted}},
    }


def test_pdb_selection() -> None:
    pod = mk_pod("p", labels={"app": "web"})
    assert PodDisruptionBudget.from_dict(pdb_dict("a", {"matchLabels": {"app": "web"}})).selects(pod)
    assert not PodDisruptionBudget.from_dict(pdb_dict("b", {})).selects(pod)  # empty: nothing
    assert not PodDisruptionBudget.from_dict(pdb_dict("c", None)).selects(pod)  # absent: nothing
    assert not PodDisruptionBudget.from_dict(
        pdb_dict("d", {"matchExpressions": [{"key": "app", "operator": "Bogus"}]})
    ).selects(pod)  # invalid: nothing
    assert not PodDisruptionBudget.from_dict(pdb_dict("e", {"matchLabels": {"app": "web"}}, namespace="other")).selects(
        pod
    )
    parsed = PodDisruptionBudget.from_dict(pdb_dict("f", {"matchLabels": {"app": "web"}}, 2, ["x"]))
    assert parsed.disruptions_allowed == 2 and parsed.disrupted_pods == frozenset({"x"})


# -- DryRunPreemption ---------------------------------------------------------------------------------
def _evaluator(nodes: Sequence[str], policy: FixedPolicy, handle: FakeHandle | None = None) -> Evaluator:
    handle = handle or FakeHandle(make_snapshot([make_node(n) for n in nodes]))
    return Evaluator("DefaultPreemption", as_handle(handle), CycleState(), policy)


def test_dry_run_wraps_from_offset_and_orders_non_violating_first() -> None:
    v = [mk_pod("v")]
    results: dict[str, tuple[list[Pod], int, Status | None]] = {
        "a": (v, 1, None),
        "b": ([], 0, unresolvable("No preemption victims found for incoming pod")),
        "c": (v, 0, None),
        "d": (v, 2, None),
    }
    policy = FixedPolicy(results, offset=2)
    ev = _evaluator("abcd", policy)
    infos = ev.handle.snapshot.node_infos
    cands, statuses, errors = ev.dry_run_preemption(mk_pod("p", priority=5), infos, [], 2, 4)
    assert policy.visited == ["c", "d", "a", "b"]
    assert [c.name for c in cands] == ["c", "d", "a"]
    assert list(statuses) == ["b"] and errors == []


def test_dry_run_stops_once_enough_with_a_non_violating_one() -> None:
    v = [mk_pod("v")]
    results: dict[str, tuple[list[Pod], int, Status | None]] = {n: (v, 0, None) for n in "abcde"}
    results["a"] = (v, 1, None)
    results["b"] = (v, 1, None)
    results["c"] = (v, 1, None)
    policy = FixedPolicy(results)
    ev = _evaluator("abcde", policy)
    cands, _, _ = ev.dry_run_preemption(mk_pod("p"), ev.handle.snapshot.node_infos, [], 0, 2)
    # a, b fill the violating list, c is dropped (full), d is the first non-violating: stop.
    assert policy.visited == ["a", "b", "c", "d"]
    assert [c.name for c in cands] == ["d", "a", "b"]


def test_dry_run_success_without_victims_is_an_error() -> None:
    policy = FixedPolicy({"a": ([], 0, None)})
    ev = _evaluator("a", policy)
    cands, statuses, errors = ev.dry_run_preemption(mk_pod("p"), ev.handle.snapshot.node_infos, [], 0, 1)
    assert cands == [] and errors == ['expected at least one victim pod on node "a"']
    assert statuses["a"].code is Code.ERROR


def test_preempt_errors_and_no_candidates() -> None:
    err = Status(Code.ERROR, ("boom",))
    pod = mk_pod("p", priority=5)
    handle = FakeHandle(make_snapshot([make_node("a"), make_node("b")]), FakeCluster([pod]))
    ev = _evaluator("ab", FixedPolicy({"a": ([], 0, err), "b": ([], 0, err)}), handle)
    result, status = ev.preempt(pod, {"a": unschedulable("x"), "b": unschedulable("x")})
    assert result is None and status is not None and status.code is Code.ERROR and status.message == "boom"

    ev = _evaluator("ab", FixedPolicy({"a": ([], 0, unschedulable("Insufficient cpu"))}), handle)
    result, status = ev.preempt(pod, {"a": unschedulable("x")})
    assert result == PostFilterResult("")
    assert status == Status(
        Code.UNSCHEDULABLE,
        ("0/2 nodes are available: 1 Insufficient cpu, 1 Preemption is not helpful for scheduling.",),
    )


def test_preempt_pod_gone_is_an_error() -> None:
    handle = FakeHandle(make_snapshot([make_node("a")]), FakeCluster())
    ev = _evaluator("a", FixedPolicy({}), handle)
    result, status = ev.preempt(mk_pod("p"), {})
    assert result is None and status is not None and status.code is Code.ERROR


@pytest.mark.parametrize(
    ("version", "patches"),
    [
        pytest.param("1.30", [("default", "p", None, "")], id="1.30 clears the preemptor's nomination at once"),
        pytest.param("1.34", [], id="1.34 leaves it to the failure's status patch"),
    ],
)
def test_no_potential_nodes(version: str, patches: list[tuple[str, str, Any, Any]]) -> None:
    pod = mk_pod("p", priority=5, nominated="a")
    cluster = FakeCluster([pod])
    ev = _evaluator("a", FixedPolicy({}), FakeHandle(make_snapshot([make_node("a")]), cluster, version=version))
    result, status = ev.preempt(pod, {"a": unresolvable("nope")})
    assert result == PostFilterResult("")
    assert status is not None
    assert status.message == "0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    assert cluster.patches == patches


@pytest.mark.parametrize(
    ("version", "want"),
    [
        # 1.30 counts only the nodes it names: a node whose filters said something else is left out.
        pytest.param("1.30", "0/1 nodes are available: 1 Insufficient cpu.", id="1.30"),
        pytest.param(
            "1.34",
            "0/2 nodes are available: 1 Insufficient cpu, 1 Preemption is not helpful for scheduling.",
            id="1.34: every node counted",
        ),
    ],
)
def test_no_candidate_message_counts(version: str, want: str) -> None:
    pod = mk_pod("p", priority=5)
    handle = FakeHandle(make_snapshot([make_node("a"), make_node("b")]), FakeCluster([pod]), version=version)
    ev = _evaluator("ab", FixedPolicy({"a": ([], 0, unschedulable("Insufficient cpu"))}), handle)
    _, status = ev.preempt(pod, {"a": unschedulable("x"), "b": Status(Code.PENDING, ("waiting",))})
    assert status is not None and status.message == want


class AbsentStatuses(dict):
    """Statuses whose nodes without a verdict have one given status (v1.34's absent-nodes status)."""

    absent_nodes_status = unschedulable("from PreFilter")


@pytest.mark.parametrize(
    ("version", "statuses", "want"),
    [
        pytest.param("1.30", {}, None, id="1.30: a node without a verdict passed"),
        pytest.param("1.34", {}, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="1.34: unresolvable"),
        pytest.param("1.34", {"n": unschedulable("x")}, Code.UNSCHEDULABLE, id="1.34: its own verdict"),
        pytest.param("1.34", AbsentStatuses(), Code.UNSCHEDULABLE, id="1.34: the statuses' absent-nodes status"),
    ],
)
def test_nominated_node_status(version: str, statuses: dict[str, Status], want: Code | None) -> None:
    ev = _evaluator("n", FixedPolicy({}), FakeHandle(make_snapshot([make_node("n")]), version=version))
    status = ev.nominated_node_status(statuses, "n")
    assert (status.code if status is not None else None) == want


def test_absent_nodes_status_decides_the_potential_nodes() -> None:
    snap = make_snapshot([make_node(n) for n in "ab"])
    potential, not_helped = nodes_where_preemption_might_help(
        snap.node_infos, {"a": unresolvable("x")}, unschedulable("from PreFilter")
    )
    assert [n.name for n in potential] == ["b"] and list(not_helped) == ["a"]


# -- prepareCandidate ---------------------------------------------------------------------------------
def test_prepare_candidate_evicts_and_clears_lower_nominations() -> None:
    pod = mk_pod("p", priority=10, spec={"schedulerName": "my-sched"})
    v1 = mk_pod("v1", priority=1, node="n", start=T0)
    v2 = mk_pod("v2", priority=1, node="n", start=T0)
    already = mk_pod(
        "v3",
        priority=1,
        node="n",
        conditions=[
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": "my-sched: preempting to accommodate a higher priority pod",
            }
        ],
    )
    low_nom = mk_pod("low-nom", priority=5, nominated="n")
    low_unset = mk_pod("low-unset", priority=5)
    high_nom = mk_pod("high-nom", priority=10, nominated="n")
    cluster = FakeCluster([pod, v1, v2, already, low_nom, low_unset, high_nom])
    nominator = FakeNominator()
    for p in (low_nom, low_unset, high_nom):
        nominator.add(p, "n")
    handle = FakeHandle(make_snapshot([make_node("n")]), cluster, nominator)
    waiting = FakeWaitingPod()
    handle.waiting[v2.uid] = waiting
    ev = _evaluator("n", FixedPolicy({}), handle)
    status = ev.prepare_candidate(Candidate("n", Victims([v1, v2, already])), pod)
    assert status is None
    assert waiting.rejected == ("DefaultPreemption", "preempted")
    assert cluster.deleted == ["default/v1", "default/v3"]
    cond = {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": "my-sched: preempting to accommodate a higher priority pod",
    }
    assert cluster.patches == [("default", "v1", [cond], ...), ("default", "low-nom", None, "")]
    assert [e["note"] for e in cluster.events] == [f"Preempted by pod {pod.uid} on node n"] * 3
    ev0 = cluster.events[0]
    assert ev0["reason"] == "Preempted" and ev0["action"] == "Preempting" and ev0["type"] == "Normal"
    assert ev0["regarding"]["name"] == "v1" and ev0["related"]["name"] == "p"


@pytest.mark.parametrize(
    ("version", "error", "fails", "events"),
    [
        pytest.param("1.30", NotFound.of("pods", "v1"), True, 0, id="1.30: a victim already gone is an error"),
        pytest.param("1.34", NotFound.of("pods", "v1"), False, 0, id="1.34: already gone is preempted, no event"),
        pytest.param("1.34", ApiError("boom"), True, 0, id="1.34: another error fails"),
    ],
)
def test_prepare_candidate_delete_failure(version: str, error: Exception, fails: bool, events: int) -> None:
    pod = mk_pod("p", priority=10)
    v1 = mk_pod("v1", priority=1, node="n")
    cluster = FakeCluster([pod, v1])
    cluster.delete_errors["v1"] = error
    ev = _evaluator("n", FixedPolicy({}), FakeHandle(make_snapshot([make_node("n")]), cluster, version=version))
    status = ev.prepare_candidate(Candidate("n", Victims([v1])), pod)
    assert (status is not None and status.code is Code.ERROR) == fails
    assert len(cluster.events) == events


def test_select_candidate() -> None:
    ev = _evaluator("ab", FixedPolicy({}))
    assert ev.select_candidate([]) is None
    only = Candidate("a", V((5, 0)))
    assert ev.select_candidate([only]) is only
    best = ev.select_candidate([Candidate("a", V((5, 0))), Candidate("b", V((4, 0)))])
    assert best is not None and best.name == "b"


def test_fake_node_type() -> None:
    # Guard for the fakes: nodes built by the factories carry allocatable cpu in millicores.
    node: Node = make_node("x", cpu="2")
    assert node.allocatable["cpu"] == 2000


@pytest.mark.parametrize(
    ("clock", "starts", "want"),
    [
        pytest.param(NOW, [T0, None], NOW, id="clock after every start: the clock"),
        pytest.param(
            T0,
            [T0 + timedelta(seconds=40)],
            T0 + timedelta(seconds=40, microseconds=1),
            id="virtual clock behind a manifest start: just after it",
        ),
        pytest.param(T0, [None], T0, id="nobody started: the clock"),
    ],
)
def test_clock_reading_is_after_every_running_pod(
    clock: datetime, starts: list[datetime | None], want: datetime
) -> None:
    pods = [mk_pod(f"p{i}", priority=1, start=s) for i, s in enumerate(starts)]
    assert clock_reading(clock, pods) == want
    unstarted = mk_pod("unstarted", priority=1)
    for p in pods:
        if p.start_time is not None:
            assert more_important_pod(p, unstarted, clock_reading(clock, pods))
