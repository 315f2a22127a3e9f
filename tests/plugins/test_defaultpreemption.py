"""DefaultPreemption: policy functions, victim selection and whole PostFilter runs, in v1.30 and v1.34
(asynchronous preemption: the PreEnqueue gate, the job off the loop, on a simulated cluster too).

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
from kubesched.framework.interfaces import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    PostFilterPlugin,
    PostFilterResult,
    PreEnqueuePlugin,
    QueueingHint,
)
from kubesched.framework.status import Code, Status, unresolvable, unschedulable
from kubesched.plugins import defaultpreemption
from kubesched.plugins.defaultpreemption import (
    CANDIDATE_KEY,
    NO_VICTIMS_MSG,
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    QUEUE_SKIP,
    VICTIMS_KEY,
    WAITING_FOR_PREEMPTION_MSG,
    AsyncDefaultPreemption,
    DefaultPreemption,
    filter_pods_with_pdb_violation,
    first_offset,
)
from tests.corpus import CORPUS
from tests.factories import as_handle, make_node, make_snapshot
from tests.framework.test_preemption import T0, FakeCluster, FakeHandle, FakeNominator, mk_pod, pdb_dict

CONFORMANCE = CORPUS


def plugin(handle: FakeHandle, args: Any = None, **kw: Any) -> DefaultPreemption:
    kw.setdefault("offset_fn", first_offset)
    return defaultpreemption.new(args, as_handle(handle), **kw)


def test_plugin_shape_1_30() -> None:
    pl = plugin(FakeHandle(make_snapshot([]), version="1.30"))
    assert pl.name == "DefaultPreemption"
    assert isinstance(pl, PostFilterPlugin)
    assert not isinstance(pl, PreEnqueuePlugin)
    assert not hasattr(pl, "events_to_register")
    assert (pl.min_candidate_nodes_percentage, pl.min_candidate_nodes_absolute) == (10, 100)


@pytest.mark.parametrize(
    ("gates", "events"),
    [
        pytest.param(None, (ClusterEvent("Pod", ActionType.DELETE),), id="async preemption on (default)"),
        pytest.param("SchedulerAsyncPreemption=false", (), id="async preemption off"),
    ],
)
def test_plugin_shape_1_34(gates: str | None, events: tuple[ClusterEvent, ...]) -> None:
    pl = plugin(FakeHandle(make_snapshot([]), gates=gates))
    assert isinstance(pl, AsyncDefaultPreemption)
    assert isinstance(pl, PostFilterPlugin) and isinstance(pl, PreEnqueuePlugin)
    assert tuple(getattr(e, "event", e) for e in pl.events_to_register()) == events
    assert (pl.preempting is not None) == bool(events)
    assert pl.is_pod_schedulable_after_pod_deletion(mk_pod("p"), mk_pod("gone"), None) == QUEUE_SKIP
    for registration in pl.events_to_register():  # the queue runs that hint: the other rejectors decide
        assert isinstance(registration, ClusterEventWithHint) and registration.queueing_hint_fn is not None
        assert registration.queueing_hint_fn(mk_pod("p"), mk_pod("gone"), None) is QueueingHint.QUEUE_SKIP


# -- GetOffsetAndNumCandidates ------------------------------------------------------------------------
class Args:
    def __init__(self, pct: int, abs_: int) -> None:
        self.min_candidate_nodes_percentage = pct
        self.min_candidate_nodes_absolute = abs_


@pytest.mark.parametrize(
    ("pct", "abs_", "nodes", "want"),
    [
        pytest.param(10, 100, 10, 10, id="defaults, few nodes: all"),
        pytest.param(10, 100, 5000, 500, id="defaults, many nodes: 10%"),
        pytest.param(10, 100, 1500, 150, id="defaults: 10% above absolute"),
        pytest.param(10, 100, 999, 100, id="defaults: absolute above 10%"),
        pytest.param(40, 0, 10, 4, id="percentage only"),
        pytest.param(0, 0, 10, 0, id="zero"),
        pytest.param(50, 3, 5, 3, id="integer division 2 -> absolute 3"),
        pytest.param(100, 1000, 7, 7, id="capped at node count"),
    ],
)
def test_calculate_num_candidates(pct: int, abs_: int, nodes: int, want: int) -> None:
    pl = plugin(FakeHandle(make_snapshot([])), Args(pct, abs_))
    assert pl.calculate_num_candidates(nodes) == want
    assert pl.get_offset_and_num_candidates(nodes) == (0, want)


def test_random_offset_uses_injected_rng() -> None:
    handle = FakeHandle(make_snapshot([]))
    a = defaultpreemption.new(None, as_handle(handle), rng=random.Random(7))
    b = defaultpreemption.new(None, as_handle(handle), rng=random.Random(7))
    offs = [a.get_offset_and_num_candidates(10)[0] for _ in range(20)]
    assert offs == [b.get_offset_and_num_candidates(10)[0] for _ in range(20)]
    assert all(0 <= o < 10 for o in offs) and len(set(offs)) > 1


# -- PodEligibleToPreemptOthers -----------------------------------------------------------------------
PREEMPTED_CONDITION = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}


@pytest.mark.parametrize(
    ("pod", "nominated_status", "node_pods", "want"),
    [
        pytest.param(mk_pod("p", priority=10), None, [], (True, ""), id="no nomination"),
        pytest.param(
            mk_pod("p", priority=10, spec={"preemptionPolicy": "Never"}),
            None,
            [],
            (False, NOT_ELIGIBLE_NEVER),
            id="policy Never",
        ),
        pytest.param(
            mk_pod("p", priority=10, nominated="n"),
            None,
            [mk_pod("t", priority=1, node="n", deleting=True, conditions=[PREEMPTED_CONDITION])],
            (False, NOT_ELIGIBLE_TERMINATING),
            id="terminating lower-priority victim on nominated node",
        ),
        pytest.param(
            mk_pod("p", priority=10, nominated="n"),
            unresolvable("gone"),
            [mk_pod("t", priority=1, node="n", deleting=True, conditions=[PREEMPTED_CONDITION])],
            (True, ""),
            id="nominated node now unresolvable",
        ),
        pytest.param(
            mk_pod("p", priority=10, nominated="n"),
            unschedulable("Insufficient cpu"),
            [mk_pod("t", priority=1, node="n", deleting=True, conditions=[PREEMPTED_CONDITION])],
            (False, NOT_ELIGIBLE_TERMINATING),
            id="nominated node merely unschedulable",
        ),
        pytest.param(
            mk_pod("p", priority=10, nominated="n"),
            None,
            [mk_pod("t", priority=1, node="n", deleting=True)],
            (True, ""),
            id="terminating for another reason",
        ),
        pytest.param(
            mk_pod("p", priority=10, nominated="n"),
            None,
            [mk_pod("t", priority=1, node="n", deleting=True, conditions=[{**PREEMPTED_CONDITION, "status": "False"}])],
            (True, ""),
            id="condition False",
        ),
        pytest.param(
            mk_pod("p", priority=10, nominated="n"),
            None,
            [mk_pod("t", priority=10, node="n", deleting=True, conditions=[PREEMPTED_CONDITION])],
            (True, ""),
            id="terminating pod not lower priority",
        ),
        pytest.param(mk_pod("p", priority=10, nominated="gone"), None, [], (True, ""), id="nominated node missing"),
    ],
)
def test_pod_eligible_to_preempt_others(
    pod: Pod, nominated_status: Status | None, node_pods: list[Pod], want: tuple[bool, str]
) -> None:
    pl = plugin(FakeHandle(make_snapshot([make_node("n")], node_pods)))
    assert pl.pod_eligible_to_preempt_others(pod, nominated_status) == want


# -- filterPodsWithPDBViolation -----------------------------------------------------------------------
def _pdbs(*raw: dict) -> list[PodDisruptionBudget]:
    return [PodDisruptionBudget.from_dict(r) for r in raw]


WEB = {"matchLabels": {"app": "web"}}


@pytest.mark.parametrize(
    ("pods", "pdbs", "want_violating"),
    [
        pytest.param(["a", "b", "c"], _pdbs(pdb_dict("x", WEB, 1)), ["b", "c"], id="budget consumed in order"),
        pytest.param(
            ["a", "b"], _pdbs(pdb_dict("x", WEB, 0, disrupted=["a"])), ["b"], id="already disrupted pods do not count"
        ),
        pytest.param(["a", "b"], _pdbs(pdb_dict("x", WEB, 5)), [], id="enough budget"),
        pytest.param(["a"], _pdbs(pdb_dict("x", {}, 0)), [], id="empty selector matches nothing"),
        pytest.param(["a"], _pdbs(pdb_dict("x", WEB, 0, namespace="other")), [], id="other namespace"),
        pytest.param(
            ["a", "b"], _pdbs(pdb_dict("x", WEB, 1), pdb_dict("y", WEB, 0)), ["a", "b"], id="any matching PDB exhausted"
        ),
    ],
)
def test_filter_pods_with_pdb_violation(
    pods: list[str], pdbs: list[PodDisruptionBudget], want_violating: list[str]
) -> None:
    objs = [mk_pod(n, labels={"app": "web"}) for n in pods]
    violating, non_violating = filter_pods_with_pdb_violation(objs, pdbs)
    assert [p.name for p in violating] == want_violating
    assert [p.name for p in non_violating] == [n for n in pods if n not in want_violating]


def test_pod_without_labels_never_violates() -> None:
    violating, _ = filter_pods_with_pdb_violation(
        [mk_pod("a")], _pdbs(pdb_dict("x", {"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, 0))
    )
    assert violating == []


# -- SelectVictimsOnNode ------------------------------------------------------------------------------
def _select(
    node_pods: Sequence[Pod],
    pod: Pod,
    pdbs: Sequence[PodDisruptionBudget] = (),
    cpu: str = "4",
    version: str | None = None,
) -> tuple[list[str], int, Status | None, FakeHandle]:
    snap = make_snapshot([make_node("n", cpu=cpu)], node_pods)
    handle = FakeHandle(snap, version=version)
    pl = plugin(handle)
    info = snap.node_infos[0]
    before = [p.name for p in info.pods]
    victims, violations, status = pl.select_victims_on_node(CycleState(), pod, info.snapshot(), pdbs)
    assert [p.name for p in info.pods] == before  # the snapshot's NodeInfo is untouched
    return [v.name for v in victims], violations, status, handle


def test_select_victims_none_lower_priority() -> None:
    victims, n, status, _ = _select([mk_pod("a", priority=10, cpu="4", node="n")], mk_pod("p", priority=10, cpu="1"))
    assert victims == [] and n == 0
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS_MSG,))


def test_select_victims_still_does_not_fit() -> None:
    victims, _, status, _ = _select([mk_pod("a", priority=1, cpu="1", node="n")], mk_pod("p", priority=10, cpu="5"))
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
        ("remove", "low-old", "n"),
        ("remove", "low-new", "n"),
        ("remove", "mid", "n"),
    ]


GUARDED_AND_FREE = [
    mk_pod("guarded-a", priority=1, cpu="1", node="n", start=T0 + timedelta(5), labels={"app": "web"}),
    mk_pod("guarded-b", priority=1, cpu="1", node="n", start=T0 + timedelta(6), labels={"app": "web"}),
    mk_pod("free", priority=3, cpu="1", node="n", start=T0),
    mk_pod("free2", priority=3, cpu="1", node="n", start=T0 + timedelta(1)),
]


@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_select_victims_pdb_violators_reprieved_first_and_counted(version: str) -> None:
    # No budget: both guarded pods violate; they get first chance to stay.
    victims, n, status, _ = _select(
        GUARDED_AND_FREE, mk_pod("p", priority=10, cpu="2"), _pdbs(pdb_dict("x", WEB, 0)), version=version
    )
    assert status is None
    assert victims == ["free", "free2"] and n == 0


@pytest.mark.parametrize(
    ("version", "cpu", "allowed", "want"),
    [
        # 1.30: the violating victims first, then the others, each group by importance.
        pytest.param("1.30", "3", 0, ["guarded-b", "free", "free2"], id="1.30 no budget"),
        pytest.param("1.30", "4", 1, ["guarded-b", "free", "free2", "guarded-a"], id="1.30 one disruption"),
        # 1.34: with victims of both kinds, all of them by importance (priority, then start time).
        pytest.param("1.34", "3", 0, ["free", "free2", "guarded-b"], id="1.34 no budget"),
        pytest.param("1.34", "4", 1, ["free", "free2", "guarded-a", "guarded-b"], id="1.34 one disruption"),
    ],
)
def test_victim_order_with_budget_violations(version: str, cpu: str, allowed: int, want: list[str]) -> None:
    victims, n, status, _ = _select(
        GUARDED_AND_FREE, mk_pod("p", priority=10, cpu=cpu), _pdbs(pdb_dict("x", WEB, allowed)), version=version
    )
    assert status is None and victims == want and n == 1


# -- PostFilter end to end ----------------------------------------------------------------------------
def test_post_filter_success_writes_victims() -> None:
    pods = [
        mk_pod("a", priority=1, cpu="2", node="n1", start=T0),
        mk_pod("b", priority=1, cpu="2", node="n2", start=T0),
        mk_pod("c", priority=1, cpu="1", node="n2", start=T0),
    ]
    preemptor = mk_pod("p", priority=10, cpu="3")
    handle = FakeHandle(
        make_snapshot([make_node("n1", cpu="4"), make_node("n2", cpu="4")], pods), FakeCluster([*pods, preemptor])
    )
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
    handle = FakeHandle(
        make_snapshot([make_node("n1"), make_node("n2"), make_node("n3", cpu="0")], pods), FakeCluster([*pods, pod])
    )
    result, status = plugin(handle).post_filter(CycleState(), pod, handle.filter_all(pod))
    assert result == PostFilterResult("")
    assert status == Status(
        Code.UNSCHEDULABLE,
        (
            "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
            "2 Preemption is not helpful for scheduling.",
        ),
    )


def test_post_filter_uses_latest_pod_from_cluster() -> None:
    # The queued copy has no nomination; the cluster says it is nominated to n where a victim terminates.
    dying = mk_pod("t", priority=1, cpu="4", node="n", deleting=True, conditions=[PREEMPTED_CONDITION])
    queued = mk_pod("p", priority=10, cpu="1")
    cluster = FakeCluster([dying, queued])
    cluster.patch_pod_status("default", "p", nominated_node_name="n")
    handle = FakeHandle(make_snapshot([make_node("n")], [dying]), cluster)
    _, status = plugin(handle).post_filter(CycleState(), queued, handle.filter_all(queued))
    assert status == Status(Code.UNSCHEDULABLE, (f"preemption: {NOT_ELIGIBLE_TERMINATING}",))


@pytest.mark.parametrize(
    ("version", "gates", "want"),
    [
        pytest.param("1.30", None, (True, ""), id="1.30: only by its condition"),
        pytest.param(
            "1.30",
            "PodDisruptionConditions=false",
            (False, NOT_ELIGIBLE_TERMINATING),
            id="1.30 without PodDisruptionConditions: any deletion",
        ),
        pytest.param("1.34", None, (True, ""), id="1.34: only by its condition"),
    ],
)
def test_terminating_victim_without_condition(version: str, gates: str | None, want: tuple[bool, str]) -> None:
    dying = mk_pod("t", priority=1, node="n", deleting=True)
    pod = mk_pod("p", priority=10, nominated="n")
    pl = plugin(FakeHandle(make_snapshot([make_node("n")], [dying]), version=version, gates=gates))
    assert pl.pod_eligible_to_preempt_others(pod, None) == want


# -- asynchronous preemption (v1.34) ------------------------------------------------------------------
class Jobs:
    """A handle's ``run_async``: keeps the jobs, for the test to step through."""

    def __init__(self) -> None:
        self.jobs: list[Any] = []

    def __call__(self, job: Any) -> None:
        self.jobs.append(job)


def _async_setup(victims: int = 2) -> tuple[AsyncDefaultPreemption, FakeHandle, Pod, Jobs]:
    pods = [mk_pod(f"v{i}", priority=1, cpu="1", node="n", start=T0 + timedelta(i)) for i in range(victims)]
    preemptor = mk_pod("p", priority=10, cpu=str(victims))
    handle = FakeHandle(make_snapshot([make_node("n", cpu=str(victims))], pods), FakeCluster([*pods, preemptor]))
    jobs = Jobs()
    handle.extra["run_async"] = jobs
    pl = plugin(handle)
    assert isinstance(pl, AsyncDefaultPreemption)
    return pl, handle, preemptor, jobs


def test_pre_enqueue_waits_for_the_preemption() -> None:
    pl, handle, preemptor, jobs = _async_setup()
    assert pl.pre_enqueue(preemptor) is None
    state = CycleState()
    result, status = pl.post_filter(state, preemptor, handle.filter_all(preemptor))
    # The cycle succeeds at once: nominated, victims chosen, nothing deleted yet.
    assert status is None and result == PostFilterResult("n")
    assert state.read(VICTIMS_KEY) == ["default/v0", "default/v1"]
    assert handle.cluster.writes == [] and len(jobs.jobs) == 1
    assert pl.pre_enqueue(preemptor) == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (WAITING_FOR_PREEMPTION_MSG,))
    assert pl.pre_enqueue(mk_pod("other")) is None
    for _ in jobs.jobs[0]:
        pass
    assert pl.pre_enqueue(preemptor) is None
    assert handle.cluster.deleted == ["default/v0", "default/v1"]


def test_the_last_victim_is_deleted_once_the_preemptor_is_no_longer_gated() -> None:
    pl, handle, preemptor, jobs = _async_setup(victims=3)
    gated_at_delete: dict[str, bool] = {}
    handle.cluster.on_delete = lambda name: gated_at_delete.setdefault(name, pl.pre_enqueue(preemptor) is not None)
    pl.post_filter(CycleState(), preemptor, handle.filter_all(preemptor))
    steps = 0
    for _ in jobs.jobs[0]:
        steps += 1
    assert gated_at_delete == {"v0": True, "v1": True, "v2": False}
    # The job pauses after each write but the last: the nominations, then each victim but the last.
    assert steps == 3
    assert [w for w in handle.cluster.writes if w[0] == "delete"] == [("delete", f"v{i}") for i in range(3)]


def test_async_preemption_off_preempts_in_the_cycle() -> None:
    pods = [mk_pod("v", priority=1, cpu="1", node="n")]
    preemptor = mk_pod("p", priority=10, cpu="1")
    handle = FakeHandle(
        make_snapshot([make_node("n", cpu="1")], pods),
        FakeCluster([*pods, preemptor]),
        gates="SchedulerAsyncPreemption=false",
    )
    jobs = Jobs()
    handle.extra["run_async"] = jobs
    pl = plugin(handle)
    _, status = pl.post_filter(CycleState(), preemptor, handle.filter_all(preemptor))
    assert status is None and handle.cluster.deleted == ["default/v"] and jobs.jobs == []
    assert isinstance(pl, AsyncDefaultPreemption) and pl.pre_enqueue(preemptor) is None


# -- asynchronous preemption on a simulated cluster ----------------------------------------------------
class SimulatedCluster:
    """A scheduler on an embedded cluster, stepped by hand: node ``full`` with two low-priority victims,
    node ``spare`` with room for a small pod, and a high-priority preemptor that needs all of ``full``."""

    def __init__(self, version: str) -> None:
        from kubesched.clock import VirtualClock
        from kubesched.config import load_config
        from kubesched.config.features import feature_gates
        from kubesched.embedded.apiserver import EmbeddedCluster
        from kubesched.scheduler import Scheduler
        from kubesched.sim.driver import Driver
        from tests.factories import node_dict, pod_dict

        features = feature_gates(version)
        self.clock = VirtualClock()
        self.cluster = EmbeddedCluster(clock=self.clock.now, features=features)
        for name, value in (("low", 1), ("high", 1000)):
            self.cluster.create(
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": name},
                    "value": value,
                }
            )
        self.cluster.create(node_dict("full", cpu="2"))
        self.cluster.create(node_dict("spare", cpu="1"))
        for name in ("v0", "v1"):
            self.cluster.create(
                pod_dict(name, cpu="1", node_name="full", priority=1, spec={"priorityClassName": "low"})
            )
        self.scheduler = Scheduler(
            self.cluster,
            load_config(
                {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                features=features,
            ),
            clock=self.clock,
            tie_break="name",
        )
        self.driver = Driver(self.cluster, self.scheduler, self.clock, detect_loops=False)
        self.driver.start()
        self.cluster.create(pod_dict("preemptor", cpu="2", priority=1000, spec={"priorityClassName": "high"}))
        self.cluster.create(pod_dict("small", cpu="500m", priority=1, spec={"priorityClassName": "low"}))
        self.cluster.deliver_pending()
        self.uid = self.pod("preemptor")["metadata"]["uid"]

    def pod(self, name: str) -> dict[str, Any]:
        return self.cluster.get("Pod", "default", name)

    def exists(self, name: str) -> bool:
        return any(p["metadata"]["name"] == name for p in self.cluster.list("Pod")[0])

    def goroutines(self, result: str) -> float | None:
        """scheduler_preemption_goroutines_execution_total{result} (None when absent)."""
        return self.scheduler.metrics.registry.get_sample_value(
            "scheduler_preemption_goroutines_execution_total", {"result": result}
        )

    def run_tasks(self) -> int:
        """Run queued tasks up to the next step of a job, and deliver what they wrote."""
        ran = self.scheduler.run_pending_tasks()
        self.cluster.deliver_pending()
        return ran


def test_1_34_the_loop_goes_on_while_the_victims_are_preempted() -> None:
    sim = SimulatedCluster("1.34")
    assert sim.scheduler.schedule_next()  # the preemptor: nominated, victims chosen
    assert sim.pod("preemptor")["status"]["nominatedNodeName"] == "full"
    assert sim.exists("v0") and sim.exists("v1")
    assert sim.scheduler.schedule_next()  # another pod is scheduled before any victim is gone
    assert sim.exists("v0") and sim.exists("v1")
    assert sim.run_tasks() == 1  # the job's first step: the nominations to the node (none)
    assert sim.scheduler.queue.queue_of(sim.uid) == "unschedulable"
    assert sim.run_tasks() == 2  # the small pod's binding, the job's next step: the first victim
    assert sim.pod("small")["spec"]["nodeName"] == "spare"
    assert not sim.exists("v0") and sim.exists("v1")
    # That deletion requeues the preemptor, but its PreEnqueue holds it back, even once any backoff is over.
    sim.clock.advance_to(sim.clock.now() + timedelta(seconds=11))
    assert sim.scheduler.queue.queue_of(sim.uid) == "gated"
    qpi = sim.scheduler.queue.get_pod(sim.uid)
    assert qpi is not None and qpi.gating_plugin == "DefaultPreemption"
    # The last deletion comes after the preemptor is unmarked: it is let through.
    assert sim.run_tasks() == 1 and not sim.exists("v1")
    assert sim.scheduler.queue.queue_of(sim.uid) in ("active", "backoff")
    assert not sim.scheduler.has_pending_tasks()
    sim.driver.settle()
    assert sim.pod("preemptor")["spec"]["nodeName"] == "full"
    assert sim.goroutines("success") == 1 and sim.goroutines("error") is None


def test_1_30_preempts_in_the_cycle() -> None:
    sim = SimulatedCluster("1.30")
    assert sim.scheduler.schedule_next()
    assert not sim.exists("v0") and not sim.exists("v1")
    assert sim.goroutines("success") is None
    sim.driver.settle()
    assert sim.pod("preemptor")["spec"]["nodeName"] == "full"


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


@pytest.mark.parametrize(
    "scenario", ["preempt-basic", "preempt-fewest-victims", "preempt-impossible", "preempt-policy-never"]
)
def test_conformance_replay(scenario: str) -> None:
    if not (CONFORMANCE / scenario).is_dir():
        pytest.skip("conformance corpus not available")
    nodes, bound, pending, golden = _load(scenario)
    cluster = FakeCluster([*bound, *pending.values()])
    nominator = FakeNominator()
    for attempt in golden["attempts"]:
        pod = Pod.from_dict(cluster.get("Pod", *attempt["pod"].split("/")))
        alive = [Pod.from_dict(raw) for raw in cluster.pods.values() if raw["spec"].get("nodeName")]
        handle = FakeHandle(make_snapshot(nodes, alive), cluster, nominator, version="1.30")
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
        for v in (1, 5, 10, 100)
    ]
    objs.append(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "guard", "namespace": "default"},
            "spec": {"minAvailable": rng.randint(1, 3), "selector": {"matchLabels": {"app": "guarded"}}},
        }
    )
    for n in range(rng.randint(2, 5)):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{n}"},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": str(rng.randint(3, 6))}},
            }
        )
        for i in range(rng.randint(1, 5)):
            objs.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"e{n}-{i}",
                        "namespace": "default",
                        "labels": {"app": rng.choice(["guarded", "free"])},
                    },
                    "spec": {
                        "nodeName": f"n{n}",
                        "priorityClassName": rng.choice(["p1", "p5", "p10"]),
                        "containers": [
                            {
                                "name": "c",
                                "image": "x",
                                "resources": {"requests": {"cpu": rng.choice(["500m", "1", "1500m"])}},
                            }
                        ],
                    },
                    "status": {"phase": "Running", "startTime": f"2024-01-01T00:00:{rng.randint(0, 59):02d}Z"},
                }
            )
    for i in range(rng.randint(1, 4)):
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"hi-{i}", "namespace": "default"},
                "spec": {
                    "priorityClassName": rng.choice(["p10", "p100"]),
                    "containers": [
                        {"name": "c", "image": "x", "resources": {"requests": {"cpu": rng.choice(["1", "2", "3"])}}}
                    ],
                },
            }
        )
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
