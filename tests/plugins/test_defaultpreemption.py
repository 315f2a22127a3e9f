"""DefaultPreemption (v1.30): policy functions, victim selection and whole PostFilter runs.

The conformance replays at the bottom re-run the preempt-* scenarios of the conformance corpus with
the fake filters of tests.framework.test_preemption (cpu/memory fit, nodeSelector) and compare the
FailedScheduling message, the nominated node and the victims of every attempt with golden.json.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
import yaml

from kubesched.api.disruption_budget import PodDisruptionBudget
from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import fit_error_message
from kubesched.framework.interfaces import PostFilterPlugin, PostFilterResult
from kubesched.framework.status import Code, Status, unresolvable, unschedulable
from kubesched.plugins import defaultpreemption
from kubesched.plugins.defaultpreemption import (
    CANDIDATE_KEY,
    NO_VICTIMS_MSG,
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    VICTIMS_KEY,
    DefaultPreemption,
    filter_pods_with_pdb_violation,
    first_offset,
)
from tests.corpus import CORPUS
from tests.factories import make_node, make_snapshot
from tests.framework.test_preemption import T0, FakeCluster, FakeHandle, FakeNominator, mk_pod, pdb_dict

CONFORMANCE = CORPUS


def plugin(handle: FakeHandle, args: Any = None, **kw: Any) -> DefaultPreemption:
    kw.setdefault("offset_fn", first_offset)
    return defaultpreemption.new(args, handle, **kw)  # type: ignore[arg-type]


def test_plugin_shape() -> None:
    pl = plugin(FakeHandle(make_snapshot([])))
    assert pl.name == "DefaultPreemption"
    assert isinstance(pl, PostFilterPlugin)
    assert not hasattr(pl, "events_to_register")
    assert (pl.min_candidate_nodes_percentage, pl.min_candidate_nodes_absolute) == (10, 100)


# -- GetOffsetAndNumCandidates ------------------------------------------------------------------------
class Args:
    def __init__(self, pct: int, abs_: int) -> None:
        self.min_candidate_nodes_percentage = pct
        self.min_candidate_nodes_absolute = abs_


@pytest.mark.parametrize(("pct", "abs_", "nodes", "want"), [
    pytest.param(10, 100, 10, 10, id="defaults, few nodes: all"),
    pytest.param(10, 100, 5000, 500, id="defaults, many nodes: 10%"),
    pytest.param(10, 100, 1500, 150, id="defaults: 10% above absolute"),
    pytest.param(10, 100, 999, 100, id="defaults: absolute above 10%"),
    pytest.param(40, 0, 10, 4, id="percentage only"),
    pytest.param(0, 0, 10, 0, id="zero"),
    pytest.param(50, 3, 5, 3, id="integer division 2 -> absolute 3"),
    pytest.param(100, 1000, 7, 7, id="capped at node count"),
])
def test_calculate_num_candidates(pct: int, abs_: int, nodes: int, want: int) -> None:
    pl = plugin(FakeHandle(make_snapshot([])), Args(pct, abs_))
    assert pl.calculate_num_candidates(nodes) == want
    assert pl.get_offset_and_num_candidates(nodes) == (0, want)


def test_random_offset_uses_injected_rng() -> None:
    handle = FakeHandle(make_snapshot([]))
    a = defaultpreemption.new(None, handle, rng=random.Random(7))  # type: ignore[arg-type]
    b = defaultpreemption.new(None, handle, rng=random.Random(7))  # type: ignore[arg-type]
    offs = [a.get_offset_and_num_candidates(10)[0] for _ in range(20)]
    assert offs == [b.get_offset_and_num_candidates(10)[0] for _ in range(20)]
    assert all(0 <= o < 10 for o in offs) and len(set(offs)) > 1


# -- PodEligibleToPreemptOthers -----------------------------------------------------------------------
PREEMPTED_CONDITION = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}


@pytest.mark.parametrize(("pod", "nominated_status", "node_pods", "want"), [
    pytest.param(mk_pod("p", priority=10), None, [], (True, ""), id="no nomination"),
    pytest.param(mk_pod("p", priority=10, spec={"preemptionPolicy": "Never"}), None, [],
                 (False, NOT_ELIGIBLE_NEVER), id="policy Never"),
    pytest.param(mk_pod("p", priority=10, nominated="n"), None,
                 [mk_pod("t", priority=1, node="n", deleting=True, conditions=[PREEMPTED_CONDITION])],
                 (False, NOT_ELIGIBLE_TERMINATING), id="terminating lower-priority victim on nominated node"),
    pytest.param(mk_pod("p", priority=10, nominated="n"), unresolvable("gone"),
                 [mk_pod("t", priority=1, node="n", deleting=True, conditions=[PREEMPTED_CONDITION])],
                 (True, ""), id="nominated node now unresolvable"),
    pytest.param(mk_pod("p", priority=10, nominated="n"), unschedulable("Insufficient cpu"),
                 [mk_pod("t", priority=1, node="n", deleting=True, conditions=[PREEMPTED_CONDITION])],
                 (False, NOT_ELIGIBLE_TERMINATING), id="nominated node merely unschedulable"),
    pytest.param(mk_pod("p", priority=10, nominated="n"), None,
                 [mk_pod("t", priority=1, node="n", deleting=True)], (True, ""),
                 id="terminating for another reason"),
    pytest.param(mk_pod("p", priority=10, nominated="n"), None,
                 [mk_pod("t", priority=1, node="n", deleting=True, conditions=[
                     {**PREEMPTED_CONDITION, "status": "False"}])], (True, ""), id="condition False"),
    pytest.param(mk_pod("p", priority=10, nominated="n"), None,
                 [mk_pod("t", priority=10, node="n", deleting=True, conditions=[PREEMPTED_CONDITION])],
                 (True, ""), id="terminating pod not lower priority"),
    pytest.param(mk_pod("p", priority=10, nominated="gone"), None, [], (True, ""),
                 id="nominated node missing"),
])
def test_pod_eligible_to_preempt_others(pod: Pod, nominated_status: Status | None, node_pods: list[Pod],
                                        want: tuple[bool, str]) -> None:
    pl = plugin(FakeHandle(make_snapshot([make_node("n")], node_pods)))
    assert pl.pod_eligible_to_preempt_others(pod, nominated_status) == want


# -- filterPodsWithPDBViolation -----------------------------------------------------------------------
def _pdbs(*raw: dict) -> list[PodDisruptionBudget]:
    return [PodDisruptionBudget.from_dict(r) for r in raw]


WEB = {"matchLabels": {"app": "web"}}


@pytest.mark.parametrize(("pods", "pdbs", "want_violating"), [
    pytest.param(["a", "b", "c"], _pdbs(pdb_dict("x", WEB, 1)), ["b", "c"], id="budget consumed in order"),
    pytest.param(["a", "b"], _pdbs(pdb_dict("x", WEB, 0, disrupted=["a"])), ["b"],
                 id="already disrupted pods do not count"),
    pytest.param(["a", "b"], _pdbs(pdb_dict("x", WEB, 5)), [], id="enough budget"),
    pytest.param(["a"], _pdbs(pdb_dict("x", {}, 0)), [], id="empty selector matches nothing"),
    pytest.param(["a"], _pdbs(pdb_dict("x", WEB, 0, namespace="other")), [], id="other namespace"),
    pytest.param(["a", "b"], _pdbs(pdb_dict("x", WEB, 1), pdb_dict("y", WEB, 0)), ["a", "b"],
                 id="any matching PDB exhausted"),
])
def test_filter_pods_with_pdb_violation(pods: list[str], pdbs: list[PodDisruptionBudget],
                                        want_violating: list[str]) -> None:
    objs = [mk_pod(n, labels={"app": "web"}) for n in pods]
    violating, non_violating = filter_pods_with_pdb_violation(objs, pdbs)
    assert [p.name for p in violating] == want_violating
    assert [p.name for p in non_violating] == [n for n in pods if n not in want_violating]


def test_pod_without_labels_never_violates() -> None:
    violating, _ = filter_pods_with_pdb_violation([mk_pod("a")], _pdbs(pdb_dict("x", {"matchExpressions": [
        {"key": "app", "operator": "DoesNotExist"}]}, 0)))
    assert violating == []


# -- SelectVictimsOnNode ------------------------------------------------------------------------------
def _select(node_pods: Sequence[Pod], pod: Pod, pdbs: Sequence[PodDisruptionBudget] = (), cpu: str = "4"
            ) -> tuple[list[str], int, Status | None, FakeHandle]:
    snap = make_snapshot([make_node("n", cpu=cpu)], node_pods)
    handle = FakeHandle(snap)
    pl = plugin(handle)
    info = snap.node_infos[0]
    before = [p.name for p in info.pods]
    victims, violations, status = pl.select_victims_on_node(CycleState(), pod, info.snapshot(), pdbs)
    assert [p.name for p in info.pods] == before  # the snapshot's NodeInfo is untouched
    return [v.name for v in victims], violations, status, handle


def test_select_victims_none_lower_priority() -> None:
    victims, n, status, _ = _select([mk_pod("a", priority=10, cpu="4", node="n")],
                                    mk_pod("p", priority=10, cpu="1"))
    assert victims == [] and n == 0
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS_MSG,))


def test_select_victims_still_does_not_fit() -> None:
    victims, _, status, _ = _select([mk_pod("a", priority=1, cpu="1", node="n")],
                                    mk_pod("p", priority=10, cpu="5"))
    assert victims == [] and status == unschedulable("Insufficient cpu")


def test_select_victims_reprieves_most_important_first() -> None:
    pods = [
        mk_pod("low-old", priority=1, cpu="1", node="n", start=T0),
        mk_pod("low-new", priority=1, cpu="1", node="n", start=T0 + timedelta(1)),
        mk_pod("mid", priority=5, cpu="1", node="n", start=T0 + timedelta(2)),
        mk_pod("high", priority=20, cpu="1", node="n", start=T0),
    ]
    victims, n, status, handle = _select(pods, mk_pod("p", priority=10, cpu="2"), cpu="5")
    assert status is None and n == 0
    # high stays (not lower priority); mid, then low-old are reprieved; low-new must go.
    assert victims == ["low-new"]
    assert [c for c in handle.prefilter_calls if c[0] == "remove"][:3] == [
        ("remove", "low-old", "n"), ("remove", "low-new", "n"), ("remove", "mid", "n")]


def test_select_victims_pdb_violators_reprieved_first_and_counted() -> None:
    pods = [
        mk_pod("guarded-a", priority=1, cpu="1", node="n", start=T0 + timedelta(5), labels={"app": "web"}),
        mk_pod("guarded-b", priority=1, cpu="1", node="n", start=T0 + timedelta(6), labels={"app": "web"}),
        mk_pod("free", priority=3, cpu="1", node="n", start=T0),
        mk_pod("free2", priority=3, cpu="1", node="n", start=T0 + timedelta(1)),
    ]
    # No budget: both guarded pods violate; they get first chance to stay.
    victims, n, status, _ = _select(pods, mk_pod("p", priority=10, cpu="2"), _pdbs(pdb_dict("x", WEB, 0)))
    assert status is None
    assert victims == ["free", "free2"] and n == 0
    victims, n, status, _ = _select(pods, mk_pod("p", priority=10, cpu="3"), _pdbs(pdb_dict("x", WEB, 0)))
    assert victims == ["guarded-b", "free", "free2"] and n == 1
    # One disruption allowed: guarded-a (first in victim order) uses it up, guarded-b violates.
    victims, n, status, _ = _select(pods, mk_pod("p", priority=10, cpu="4"), _pdbs(pdb_dict("x", WEB, 1)))
    assert victims == ["guarded-b", "free", "free2", "guarded-a"] and n == 1


# -- PostFilter end to end ----------------------------------------------------------------------------
def test_post_filter_success_writes_victims() -> None:
    pods = [mk_pod("a", priority=1, cpu="2", node="n1", start=T0), mk_pod("b", priority=1, cpu="2", node="n2",
            start=T0), mk_pod("c", priority=1, cpu="1", node="n2", start=T0)]
    preemptor = mk_pod("p", priority=10, cpu="3")
    handle = FakeHandle(make_snapshot([make_node("n1", cpu="4"), make_node("n2", cpu="4")], pods),
                        FakeCluster([*pods, preemptor]))
    state = CycleState()
    result, status = plugin(handle).post_filter(state, preemptor, handle.filter_all(preemptor))
    assert status is None and result == PostFilterResult("n1")
    assert state.read(VICTIMS_KEY) == ["default/a"]
    assert state.read(CANDIDATE_KEY).name == "n1"
    assert handle.cluster.deleted == ["default/a"]


def test_post_filter_not_eligible_message() -> None:
    pod = mk_pod("p", priority=10, cpu="8", spec={"preemptionPolicy": "Never"})
    handle = FakeHandle(make_snapshot([make_node("n")]), FakeCluster([pod]))
    state = CycleState()
    result, status = plugin(handle).post_filter(state, pod, handle.filter_all(pod))
    assert result is None
    assert status == Status(Code.UNSCHEDULABLE, ("preemption: not eligible due to preemptionPolicy=Never.",))
    assert VICTIMS_KEY not in state


def test_post_filter_mixed_failure_message() -> None:
    pods = [mk_pod("a", priority=20, cpu="4", node="n1"), mk_pod("b", priority=20, cpu="4", node="n2")]
    pod = mk_pod("p", priority=10, cpu="1", spec={"nodeSelector": {"kubernetes.io/hostname": "n1"}})
    handle = FakeHandle(make_snapshot([make_node("n1"), make_node("n2"), make_node("n3", cpu="0")], pods),
                        FakeCluster([*pods, pod]))
    result, status = plugin(handle).post_filter(CycleState(), pod, handle.filter_all(pod))
    assert result == PostFilterResult("")
    assert status == Status(Code.UNSCHEDULABLE, (
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling.",))


def test_post_filter_uses_latest_pod_from_cluster() -> None:
    # The queued copy has no nomination; the cluster says it is nominated to n where a victim terminates.
    dying = mk_pod("t", priority=1, cpu="4", node="n", deleting=True, conditions=[PREEMPTED_CONDITION])
    queued = mk_pod("p", priority=10, cpu="1")
    cluster = FakeCluster([dying, queued])
    cluster.patch_pod_status("default", "p", nominated_node_name="n")
    handle = FakeHandle(make_snapshot([make_node("n")], [dying]), cluster)
    _, status = plugin(handle).post_filter(CycleState(), queued, handle.filter_all(queued))
    assert status == Status(Code.UNSCHEDULABLE, (f"preemption: {NOT_ELIGIBLE_TERMINATING}",))


# -- conformance replays ------------------------------------------------------------------------------
def _load(scenario: str) -> tuple[list[Node], list[Pod], dict[str, Pod], dict[str, Any]]:
    """Nodes, bound pods and pending pods as the reference cluster had them (uids, timestamps)."""
    docs = list(yaml.safe_load_all((CONFORMANCE / scenario / "scenario.yaml").read_text()))
    nodes, bound, pending = [], [], {}
    for i, doc in enumerate(docs):
        meta = doc.setdefault("metadata", {})
        meta["uid"] = f"uid-{i}"
        stamp = (T0 + timedelta(seconds=i)).isoformat().replace("+00:00", "Z")
        meta["creationTimestamp"] = stamp
        if doc["kind"] == "Node":
            nodes.append(Node.from_dict(doc))
        elif doc["kind"] == "Pod":
            if doc["spec"].get("nodeName"):
                doc.setdefault("status", {}).setdefault("startTime", stamp)
                bound.append(Pod.from_dict(doc))
            else:
                pending[f"{meta.get('namespace', 'default')}/{meta['name']}"] = Pod.from_dict(doc)
    golden = json.loads((CONFORMANCE / scenario / "golden.json").read_text())
    return nodes, bound, pending, golden


def _with(pod: Pod, *, node: str | None = None, nominated: str | None = None) -> Pod:
    raw = json.loads(json.dumps(pod.raw, default=str))
    if node is not None:
        raw["spec"]["nodeName"] = node
    if nominated is not None:
        raw.setdefault("status", {})["nominatedNodeName"] = nominated
    return Pod.from_dict(raw)


@pytest.mark.parametrize("scenario", ["preempt-basic", "preempt-fewest-victims", "preempt-impossible",
                                      "preempt-policy-never"])
def test_conformance_replay(scenario: str) -> None:
    if not (CONFORMANCE / scenario).is_dir():
        pytest.skip("conformance corpus not available")
    nodes, bound, pending, golden = _load(scenario)
    cluster = FakeCluster([*bound, *pending.values()])
    nominator = FakeNominator()
    for attempt in golden["attempts"]:
        pod = Pod.from_dict(cluster.get("Pod", *attempt["pod"].split("/")))
        alive = [Pod.from_dict(raw) for raw in cluster.pods.values() if raw["spec"].get("nodeName")]
        handle = FakeHandle(make_snapshot(nodes, alive), cluster, nominator)
        statuses = handle.filter_all(pod)
        feasible = sorted(n.name for n in nodes if n.name not in statuses)
        assert feasible == attempt["feasible"], attempt
        if attempt["result"] == "Scheduled":
            cluster.add(_with(pod, node=attempt["node"]))
            nominator.delete(pod)
            continue
        state = CycleState()
        result, status = plugin(handle).post_filter(state, pod, statuses)
        message = fit_error_message(len(nodes), statuses)
        if status is not None:
            message += f" {status.message}"
        assert message == attempt["message"], attempt["pod"]
        if "nominatedNode" in attempt:
            assert status is None and result is not None
            assert result.nominated_node_name == attempt["nominatedNode"]
            assert sorted(state.read(VICTIMS_KEY)) == sorted(attempt["victims"])
            nominated = _with(pod, nominated=result.nominated_node_name)
            cluster.add(nominated)
            nominator.add(nominated, result.nominated_node_name)
        else:
            assert VICTIMS_KEY not in state
    assert sorted(cluster.deleted) == sorted(golden.get("deleted", []))


def _random_preemption_scenario(seed: int) -> list[dict[str, Any]]:
    """Nodes full of pods of mixed priorities and sizes (some under a budget), then preemptors."""
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{v}"}, "value": v}
        for v in (1, 5, 10, 100)]
    objs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                 "metadata": {"name": "guard", "namespace": "default"},
                 "spec": {"minAvailable": rng.randint(1, 3), "selector": {"matchLabels": {"app": "guarded"}}}})
    for n in range(rng.randint(2, 5)):
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{n}"},
                     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": str(rng.randint(3, 6))}}})
        for i in range(rng.randint(1, 5)):
            objs.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": f"e{n}-{i}", "namespace": "default",
                                      "labels": {"app": rng.choice(["guarded", "free"])}},
                         "spec": {"nodeName": f"n{n}", "priorityClassName": rng.choice(["p1", "p5", "p10"]),
                                  "containers": [{"name": "c", "image": "x", "resources": {"requests": {
                                      "cpu": rng.choice(["500m", "1", "1500m"])}}}]},
                         "status": {"phase": "Running",
                                    "startTime": f"2024-01-01T00:00:{rng.randint(0, 59):02d}Z"}})
    for i in range(rng.randint(1, 4)):
        objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"hi-{i}", "namespace": "default"},
                     "spec": {"priorityClassName": rng.choice(["p10", "p100"]),
                              "containers": [{"name": "c", "image": "x", "resources": {"requests": {
                                  "cpu": rng.choice(["1", "2", "3"])}}}]}})
    return objs


@pytest.mark.parametrize("seed", range(16))
def test_arithmetic_reprieve_matches_the_framework_path(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The arithmetic shortcuts (reprieve loop, the check after removing every lower-priority pod,
    nominated-node rechecks) must give exactly what the generic framework path gives. Both are taken
    only through Framework.arithmetic_filters, so answering None there turns them all off."""
    from kubesched.framework.runtime import Framework
    from kubesched.sim.simulate import simulate

    objs = _random_preemption_scenario(seed)
    fast = simulate(objs, seed=0, tie_break="name", burst=True)
    monkeypatch.setattr(Framework, "arithmetic_filters", lambda *a, **k: None)
    slow = simulate(objs, seed=0, tie_break="name", burst=True)
    assert fast.attempts == slow.attempts
    assert fast.final == slow.final and fast.deleted == slow.deleted
