"""The scheduling and binding cycles (kubesched.schedule_one), checked against schedule_one.go.

Messages, node sampling, Reserve / Permit / Bind failures and what they leave behind in the cache,
the queue and the cluster (FailedScheduling events, the PodScheduled condition).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.cycle import SchedulingCycle
from kubesched.framework.diagnosis import NodeToStatus, fit_error_message
from kubesched.framework.status import Code, Status, unresolvable
from kubesched.metrics import MetricsObserver
from kubesched.plugins import names
from kubesched.recording import Observers, RecordingObserver
from kubesched.schedule_one import NO_NODES_AVAILABLE
from tests.factories import node_dict, pod_dict
from tests.fakeplugins import (
    ErrorBinder,
    FailingReserve,
    Harness,
    LabelFilter,
    NameScore,
    PendingPreBind,
    PermitPlugin,
    PreFilterNodes,
    RecordingReserve,
    SkipBinder,
    StateKeeper,
    config_dict,
    profile_with,
    ref,
)

#: No PostFilter at all (DefaultPreemption, and in v1.34 DynamicResources, which adds its own text).
NO_PREEMPTION = {"postFilter": {"disabled": [{"name": "*"}]}}


def harness(
    plugins: dict[str, Any] | None = None,
    args: dict[str, Any] | None = None,
    nodes: int | list[dict[str, Any]] = 1,
    top: dict[str, Any] | None = None,
    profile: dict[str, Any] | None = None,
    version: str | None = None,
) -> Harness:
    objs = [node_dict(f"n{i + 1}") for i in range(nodes)] if isinstance(nodes, int) else nodes
    return Harness(
        config_dict(profile_with(plugins or {}, args, **(profile or {})), **(top or {})), objects=objs, version=version
    )


# -- messages -------------------------------------------------------------------------------------------
def _st(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


@pytest.mark.parametrize(
    ("num", "statuses", "pre", "post", "want"),
    [
        (
            3,
            {
                "a": _st("Insufficient cpu"),
                "b": _st("Insufficient cpu", "Insufficient memory"),
                "c": _st("node(s) had untolerated taint {x: y}"),
            },
            "",
            "",
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {x: y}, "
            "2 Insufficient cpu.",
        ),
        # Plain string order, as Go's sort.Strings: "10 ..." sorts before "9 ...".
        (
            19,
            {**{f"a{i}": _st("X") for i in range(10)}, **{f"b{i}": _st("Y") for i in range(9)}},
            "",
            "",
            "0/19 nodes are available: 10 X, 9 Y.",
        ),
        # The PreFilter message replaces the per-node histogram (every node carries the same status).
        (2, {"a": _st("pre"), "b": _st("pre")}, "pre", "", "0/2 nodes are available: pre."),
        (
            2,
            {"a": _st("Insufficient cpu")},
            "",
            "preemption: not eligible due to preemptionPolicy=Never.",
            "0/2 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
        ),
        (1, {"a": _st("pre")}, "pre", "preemption: x.", "0/1 nodes are available: pre. preemption: x."),
        (0, {}, "", "", "0/0 nodes are available:"),
        # Nodes a NodeToStatus does not list count under its absent-node status's reasons (v1.34)...
        (
            4,
            NodeToStatus({"a": _st("Insufficient cpu")}, absent=unresolvable("node(s) didn't satisfy plugin(s) [X]")),
            "",
            "",
            "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't satisfy plugin(s) [X].",
        ),
        # ...and not at all when it has none (the default, and every status before v1.34).
        (4, NodeToStatus({"a": _st("Insufficient cpu")}), "", "", "0/4 nodes are available: 1 Insufficient cpu."),
    ],
)
def test_fit_error_message(num: int, statuses: dict[str, Status], pre: str, post: str, want: str) -> None:
    assert fit_error_message(num, statuses, pre, post) == want


def test_no_nodes_leaves_the_pod_pending_until_a_node_arrives() -> None:
    h = harness(nodes=0)
    h.create(pod_dict("p"))
    h.step()
    assert h.records[-1].result == "Unschedulable"
    assert h.records[-1].message == NO_NODES_AVAILABLE
    cond = h.condition("p")
    assert cond
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", NO_NODES_AVAILABLE)
    # Unschedulable, but no plugin rejected it: the queue has no event to wait for (v1.34 backs it off
    # as an error).
    qpi = h.scheduler.queue.get_pod(h.pod("p")["metadata"]["uid"])
    assert qpi is not None and (qpi.unschedulable_plugins, qpi.pending_plugins) == (set(), set())
    h.create(node_dict("late"))
    h.clock.advance(10)
    h.scheduler.run_periodic()
    h.run()
    assert h.node_of("p") == "late"


def test_postfilter_message_is_appended_to_the_fit_error() -> None:
    h = harness(nodes=[node_dict("n1", cpu="1")])
    h.create(pod_dict("p", cpu="2"))
    h.step()
    # In v1.34 DynamicResources' PostFilter runs first and its text leads (a pod without claims); the node
    # is smaller than the pod, so preemption does not try it.
    assert h.records[-1].message == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
        "scheduling."
    )
    assert h.condition("p")["message"] == h.records[-1].message


# -- the diagnosis of a PreFilterResult (v1.34) ---------------------------------------------------------
NARROWED = {
    "preFilter": {"enabled": [{"name": ref(PreFilterNodes)}]},
    "filter": {"enabled": [{"name": ref(LabelFilter)}]},
    **NO_PREEMPTION,
}


@pytest.mark.parametrize(
    ("version", "message", "rejectors"),
    [
        (
            "1.34",
            f"0/3 nodes are available: 1 node(s) lacked label fake, 2 node(s) didn't satisfy plugin(s) "
            f"[{ref(PreFilterNodes)}].",
            {ref(PreFilterNodes), ref(LabelFilter)},
        ),
        ("1.30", "0/3 nodes are available: 1 node(s) lacked label fake.", {ref(LabelFilter)}),
    ],
)
def test_nodes_outside_a_prefilter_result_are_counted_from_v1_34(
    version: str, message: str, rejectors: set[str]
) -> None:
    h = harness(NARROWED, {ref(PreFilterNodes): {"nodes": ["n1"]}}, nodes=3, version=version)
    h.create(pod_dict("p"))
    h.step()
    assert h.records[-1].message == message
    assert h.condition("p")["message"] == message
    # The PreFilter plugin that narrowed the nodes is a rejector from v1.34: its events requeue the pod.
    qpi = h.scheduler.queue.get_pod(h.pod("p")["metadata"]["uid"])
    assert qpi is not None and qpi.unschedulable_plugins == rejectors


@pytest.mark.parametrize(
    ("version", "message", "rejectors"),
    [
        (
            "1.34",
            f"0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [{ref(PreFilterNodes)}].",
            {ref(PreFilterNodes)},
        ),
        # v1.30: no verdict and no rejector at all (the pod is retried from backoff, with no event to wait for).
        ("1.30", "0/2 nodes are available:", set()),
    ],
)
def test_a_prefilter_result_naming_only_missing_nodes(version: str, message: str, rejectors: set[str]) -> None:
    h = harness(NARROWED, {ref(PreFilterNodes): {"nodes": ["ghost"]}}, nodes=2, version=version)
    h.create(pod_dict("p"))
    h.step()
    assert (h.records[-1].result, h.records[-1].message) == ("Unschedulable", message)
    qpi = h.scheduler.queue.get_pod(h.pod("p")["metadata"]["uid"])
    assert qpi is not None and qpi.unschedulable_plugins == rejectors


# -- PostFilter -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("version", "post_filter_text", "preempted"),
    [
        # VolumeRestrictions' PreFilter stops the cycle before DynamicResources' PreFilter runs: its PostFilter
        # finds no state ("not found") and DefaultPreemption, after it, is never called.
        ("1.34", "not found", 0),
        ("1.30", "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.", 1),
    ],
)
def test_a_prefilter_that_stops_the_cycle_before_dynamic_resources(
    version: str, post_filter_text: str, preempted: int
) -> None:
    h = harness(nodes=2, version=version)
    claim = {"name": "data", "persistentVolumeClaim": {"claimName": "missing"}}
    h.create(pod_dict("p", spec={"volumes": [claim]}))
    h.step()
    record = h.records[-1]
    message = f'0/2 nodes are available: persistentvolumeclaim "missing" not found. {post_filter_text}'
    assert (record.result, record.message) == ("Unschedulable", message)
    cond = h.condition("p")
    assert (cond["reason"], cond["message"]) == ("Unschedulable", message)
    assert [e["message"] for e in h.events("p")] == [message]
    sample = h.scheduler.metrics.registry.get_sample_value
    assert (sample("scheduler_preemption_attempts_total") or 0) == preempted
    assert sample("scheduler_schedule_attempts_total", {"result": "unschedulable", "profile": "default-scheduler"}) == 1


# -- the PodScheduled condition -------------------------------------------------------------------------
@pytest.mark.parametrize(("version", "observed"), [("1.34", 1), ("1.30", None)])
def test_the_pod_scheduled_condition_records_the_generation_it_observed(version: str, observed: int | None) -> None:
    h = harness({"filter": {"enabled": [{"name": ref(LabelFilter)}]}, **NO_PREEMPTION}, nodes=1, version=version)
    h.create(pod_dict("p"))
    h.step()
    cond = h.condition("p")
    assert (cond["reason"], cond.get("observedGeneration")) == ("Unschedulable", observed)


def test_a_condition_equal_but_for_its_observed_generation_is_not_written_again() -> None:
    h = harness({"filter": {"enabled": [{"name": ref(LabelFilter)}]}, **NO_PREEMPTION}, nodes=1)
    h.create(pod_dict("p"))
    h.step()
    pod = h.pod("p")
    h.cluster.update({**pod, "spec": {**pod["spec"], "activeDeadlineSeconds": 60}})
    h.settle()
    assert h.pod("p")["metadata"]["generation"] == 2
    h.scheduler.queue.activate([Pod.from_dict(h.pod("p"))])
    h.step()
    assert len(h.records) == 2
    # The same status, reason and message: no write, the condition still names generation 1.
    assert h.condition("p")["observedGeneration"] == 1
    h.create(node_dict("n2"))
    h.clock.advance(10)  # past the backoff the new node moved it to
    h.scheduler.run_periodic()
    h.step()
    assert h.records[-1].message == "0/2 nodes are available: 2 node(s) lacked label fake."
    assert h.condition("p")["observedGeneration"] == 2


# -- Reserve --------------------------------------------------------------------------------------------
#: A plugin without events_to_register hears every event; in v1.34 that includes the rejected pod's own
#: status update (PodScheduled=False), which sends it to backoffQ; v1.30 ignores status-only updates.
@pytest.mark.parametrize(
    ("version", "mode", "result", "reason", "message", "queue"),
    [
        (
            "1.30",
            "reject",
            "Unschedulable",
            "Unschedulable",
            "0/1 nodes are available: 1 no room in the reservation book.",
            "unschedulable",
        ),
        (
            "1.34",
            "reject",
            "Unschedulable",
            "Unschedulable",
            "0/1 nodes are available: 1 no room in the reservation book.",
            "backoff",
        ),
        (
            "1.34",
            "error",
            "Error",
            "SchedulerError",
            f'running Reserve plugin "{ref(FailingReserve)}": reserve broke',
            "backoff",
        ),
    ],
)
def test_reserve_failure_unreserves_forgets_and_requeues(
    version: str, mode: str, result: str, reason: str, message: str, queue: str
) -> None:
    plugins = {"reserve": {"enabled": [{"name": ref(RecordingReserve)}, {"name": ref(FailingReserve)}]}}
    h = harness(plugins, {ref(FailingReserve): {"mode": mode}}, version=version)
    h.create(pod_dict("p", cpu="1"))
    h.step()
    rec = h.records[-1]
    assert (rec.result, rec.message) == (result, message)
    # Unreserve runs for every Reserve plugin, in reverse order.
    assert h.plugin(RecordingReserve).calls == [("reserve", "p", "n1"), ("unreserve", "p", "n1")]
    assert h.plugin(FailingReserve).calls == [("reserve", "p", "n1"), ("unreserve", "p", "n1")]
    # Forgotten: nothing is left assumed, no resources are held on the node.
    info = h.scheduler.update_snapshot().node_infos[0]
    assert len(info.pods) == 0
    assert h.node_of("p") is None
    assert h.where("p") == queue
    cond = h.condition("p")
    assert cond and (cond["reason"], cond["message"]) == (reason, message)


# -- Permit ---------------------------------------------------------------------------------------------
def permit_harness(mode: str = "wait", timeout: float = 10, version: str | None = None) -> Harness:
    plugins = {
        "permit": {"enabled": [{"name": ref(PermitPlugin)}]},
        "reserve": {"enabled": [{"name": ref(RecordingReserve)}]},
    }
    return harness(plugins, {ref(PermitPlugin): {"mode": mode, "timeout": timeout}}, nodes=1, version=version)


def _uid(h: Harness, name: str) -> str:
    return str(h.pod(name)["metadata"]["uid"])


def test_permit_wait_then_allow_binds() -> None:
    h = permit_harness()
    h.create(pod_dict("p", cpu="1"))
    h.step()
    uid = _uid(h, "p")
    fwk = h.scheduler.profiles["default-scheduler"]
    assert fwk.get_waiting_pod(uid) is not None
    assert h.node_of("p") is None
    assert h.records == []  # the attempt is not over yet
    # While waiting the pod is assumed: its resources count on the node.
    assert h.scheduler.update_snapshot().node_infos[0].requested.get("cpu") == 1000
    h.plugin(PermitPlugin).allow(uid)
    h.settle()
    assert h.node_of("p") == "n1"
    assert h.records[-1].result == "Scheduled"
    assert fwk.get_waiting_pod(uid) is None
    assert ("unreserve", "p", "n1") not in h.plugin(RecordingReserve).calls


def test_permit_reject_while_waiting() -> None:
    h = permit_harness()
    h.create(pod_dict("p", cpu="1"))
    h.step()
    h.plugin(PermitPlugin).reject(_uid(h, "p"))
    h.settle()
    assert h.node_of("p") is None
    assert h.records[-1].result == "Unschedulable"
    assert h.records[-1].message == "0/1 nodes are available: 1 gang incomplete."
    assert ("unreserve", "p", "n1") in h.plugin(RecordingReserve).calls
    assert h.scheduler.update_snapshot().node_infos[0].requested.get("cpu", 0) == 0


@pytest.mark.parametrize(("version", "queue"), [("1.30", "unschedulable"), ("1.34", "backoff")])
def test_permit_timeout_on_the_virtual_clock(version: str, queue: str) -> None:
    h = permit_harness(timeout=10, version=version)
    h.create(pod_dict("p"))
    h.step()
    h.clock.advance(9.999)
    h.settle()
    assert h.records == []
    h.clock.advance(0.001)
    h.settle()
    rec = h.records[-1]
    assert rec.result == "Unschedulable"
    assert rec.message == (
        f"0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin {ref(PermitPlugin)}."
    )
    assert h.condition("p")["reason"] == "Unschedulable"
    assert h.where("p") == queue  # v1.34: its own status update wakes a plugin registering every event
    assert ("unreserve", "p", "n1") in h.plugin(RecordingReserve).calls


@pytest.mark.parametrize(
    ("version", "mode", "result", "message", "queue"),
    [
        ("1.30", "reject", "Unschedulable", "0/1 nodes are available: 1 permit says no.", "unschedulable"),
        ("1.34", "reject", "Unschedulable", "0/1 nodes are available: 1 permit says no.", "backoff"),
        ("1.34", "error", "Error", f'running Permit plugin "{ref(PermitPlugin)}": permit broke', "backoff"),
    ],
)
def test_permit_rejects_in_the_scheduling_cycle(version: str, mode: str, result: str, message: str, queue: str) -> None:
    h = permit_harness(mode, version=version)
    h.create(pod_dict("p"))
    h.step()
    assert (h.records[-1].result, h.records[-1].message) == (result, message)
    assert h.plugin(RecordingReserve).calls == [("reserve", "p", "n1"), ("unreserve", "p", "n1")]
    assert h.where("p") == queue


# -- Bind -----------------------------------------------------------------------------------------------
#: The first backoff: 1 s; v1.34 (SchedulerPopFromBackoffQ) releases a pod at the whole second after it ends.
@pytest.mark.parametrize(("version", "wait"), [("1.30", 1), ("1.34", 2)])
def test_bind_error_forgets_requeues_with_backoff_and_reports(version: str, wait: int) -> None:
    plugins = {"bind": {"enabled": [{"name": ref(ErrorBinder)}], "disabled": [{"name": "*"}]}}
    h = harness(plugins, nodes=1, version=version)
    h.create(pod_dict("p", cpu="1"))
    h.step()
    message = f'running Bind plugin "{ref(ErrorBinder)}": binding exploded'
    rec = h.records[-1]
    assert (rec.result, rec.message) == ("Error", message)
    assert h.node_of("p") is None
    assert h.scheduler.update_snapshot().node_infos[0].requested.get("cpu", 0) == 0
    assert h.where("p") == "backoff"
    events = h.events("p")
    assert [(e["type"], e["reason"], e["message"]) for e in events] == [("Warning", "FailedScheduling", message)]
    cond = h.condition("p")
    assert cond
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "SchedulerError", message)
    # After the backoff the pod is tried again.
    assert h.run() == 0
    h.clock.advance(wait - 1)
    h.scheduler.run_periodic()
    assert h.run() == 0
    h.clock.advance(1)
    h.scheduler.run_periodic()
    assert h.run() == 1
    assert [r.attempt for r in h.records] == [1, 2]


def test_skipping_binder_hands_over_to_the_next() -> None:
    plugins = {
        "bind": {"enabled": [{"name": ref(SkipBinder)}, {"name": names.DEFAULT_BINDER}], "disabled": [{"name": "*"}]}
    }
    h = harness(plugins, nodes=1)
    h.create(pod_dict("p"))
    h.step()
    assert h.plugin(SkipBinder).calls == [("bind", "p", "n1")]
    assert h.node_of("p") == "n1"


def test_successful_binding_sets_pod_scheduled_true_and_confirms_the_assumed_pod() -> None:
    h = harness({"multiPoint": {"enabled": [{"name": ref(NameScore)}]}}, nodes=2)
    h.create(pod_dict("p", cpu="1"))
    h.step()
    assert h.node_of("p") == "n1"
    assert h.condition("p")["status"] == "True"
    pod = h.scheduler.current_pod(next(iter(h.scheduler.pods())))
    assert pod is not None and pod.node_name == "n1"
    assert not h.scheduler.cache.is_assumed(pod)
    assert h.where("p") is None


def test_failed_scheduling_event_and_condition_on_unschedulable() -> None:
    h = harness({"filter": {"enabled": [{"name": ref(LabelFilter)}]}, **NO_PREEMPTION}, nodes=2)
    h.create(pod_dict("p"))
    h.step()
    message = "0/2 nodes are available: 2 node(s) lacked label fake."
    assert [(e["type"], e["reason"], e["message"]) for e in h.events("p")] == [("Warning", "FailedScheduling", message)]
    cond = h.condition("p")
    assert cond and (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", message)
    assert h.where("p") == "unschedulable"


def test_successful_bind_records_a_scheduled_event() -> None:
    h = harness({}, nodes=1)
    h.create(pod_dict("p", cpu="1"))
    h.step()
    assert h.node_of("p") == "n1"
    assert [(e["type"], e["reason"], e["message"]) for e in h.events("p")] == [
        ("Normal", "Scheduled", "Successfully assigned default/p to n1")
    ]


# -- PreBind that waits -----------------------------------------------------------------------------
def pre_bind_harness() -> Harness:
    plugins = {
        "preBind": {"enabled": [{"name": ref(PendingPreBind)}]},
        "reserve": {"enabled": [{"name": ref(RecordingReserve)}]},
    }
    return harness(plugins, nodes=1)


def test_pre_bind_wait_does_not_block_scheduling_and_resumes_on_resolve() -> None:
    h = pre_bind_harness()
    h.create(pod_dict("a", cpu="1"), pod_dict("b", cpu="1"))
    h.step()
    h.step()
    plugin = h.plugin(PendingPreBind)
    # Both scheduling cycles ran while the first binding cycle waited.
    assert set(plugin.pending) == {"a", "b"}
    assert h.node_of("a") is None and h.scheduler.waiting_in_pre_bind
    plugin.pending["a"].resolve(None)
    h.settle()
    assert h.node_of("a") == "n1" and h.node_of("b") is None
    plugin.pending["b"].resolve(Status(Code.ERROR, ("binding volumes: context deadline exceeded",)))
    h.settle()
    assert h.node_of("b") is None
    assert ("unreserve", "b", "n1") in h.plugin(RecordingReserve).calls
    assert not h.scheduler.waiting_in_pre_bind
    assert "binding volumes: context deadline exceeded" in h.condition("b").get("message", "")


# -- the cycle object and the one observer ------------------------------------------------------------
class StepLog:
    """An observer noting every lifecycle step with the cycle it came with."""

    detailed = False
    raw_scores = False

    def __init__(self) -> None:
        self.steps: list[tuple[str, Any]] = []

    def __getattr__(self, step: str) -> Any:
        def report(cycle: Any, *args: Any) -> None:
            self.steps.append((step, cycle))

        return report

    def cycles(self) -> list[Any]:
        return list({id(c): c for _, c in self.steps}.values())

    def of(self, cycle: Any) -> list[str]:
        return [step for step, c in self.steps if c is cycle]


def test_one_cycle_object_carries_the_pod_from_scheduling_through_a_permit_wait_to_binding() -> None:
    plugins = {
        "reserve": {"enabled": [{"name": ref(StateKeeper)}]},
        "postBind": {"enabled": [{"name": ref(StateKeeper)}]},
        "permit": {"enabled": [{"name": ref(PermitPlugin)}]},
    }
    h = harness(plugins, {ref(PermitPlugin): {"mode": "wait"}})
    log = StepLog()
    h.scheduler.observer = Observers([log, h.scheduler.observer])
    h.create(pod_dict("p", cpu="1"))
    h.step()
    [cycle] = log.cycles()
    assert isinstance(cycle, SchedulingCycle)
    assert (cycle.pod.name, cycle.pod.node_name, cycle.host, cycle.assumed.node_name) == ("p", "", "n1", "n1")
    assert cycle.fwk is h.scheduler.profiles["default-scheduler"] and cycle.qpi.pod is cycle.pod
    assert (cycle.profile, cycle.attempts) == ("default-scheduler", 1)
    assert cycle.state.get(StateKeeper.MARK) == "p"
    assert "scheduled" not in log.of(cycle)  # waiting at Permit
    h.plugin(PermitPlugin).allow(_uid(h, "p"))
    h.settle()
    assert h.plugin(StateKeeper).calls == [("post_bind", "p", "p")]  # the state Reserve wrote, after the wait
    assert log.cycles() == [cycle]
    steps = log.of(cycle)
    assert steps[0] == "begin" and steps[-1] == "scheduled" and steps.count("scheduled") == 1


def test_each_lifecycle_step_reaches_the_metrics_and_the_recorder_once() -> None:
    h = harness(nodes=[node_dict("n1", cpu="2")])
    # The harness records: the scheduler's one observer is then the metrics, then the recording.
    observer = h.scheduler.observer
    assert isinstance(observer, Observers)
    assert [type(o) for o in observer.observers] == [MetricsObserver, RecordingObserver]
    log = StepLog()
    h.scheduler.observer = Observers([*observer.observers, log])
    h.create(pod_dict("fits", cpu="1"), pod_dict("huge", cpu="8"))
    h.run()
    by_pod = {c.pod.name: log.of(c) for c in log.cycles()}
    assert [s for s in by_pod["fits"] if s in ENDS] == ["begin", "scheduled"]
    assert [s for s in by_pod["huge"] if s in ENDS] == ["begin", "post_filtered", "failed"]
    sample = h.scheduler.metrics.registry.get_sample_value
    for result in ("scheduled", "unschedulable"):
        assert sample("scheduler_schedule_attempts_total", {"result": result, "profile": "default-scheduler"}) == 1
    assert sample("scheduler_preemption_attempts_total") == 1
    assert [(r.pod, r.result) for r in h.records] == [("default/fits", "Scheduled"), ("default/huge", "Unschedulable")]
    # The first PostFilter plugin that rejected is named with every rejection's text (v1.34: DynamicResources).
    assert h.records[1].details["postfilter"] == {
        "DynamicResources": "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is "
        "not helpful for scheduling."
    }


ENDS = ("begin", "post_filtered", "failed", "scheduled")
