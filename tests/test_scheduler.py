"""The scheduler's wiring (kubesched.scheduler): profiles, queue and handlers joined, and who observes attempts."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.clock import VirtualClock
from kubesched.config import load_config
from kubesched.config.features import feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.metrics import MetricsObserver
from kubesched.recording import (
    FullRecorder,
    NullRecorder,
    Observers,
    OutcomeStream,
    Recorders,
    RecordingObserver,
    SummaryRecorder,
)
from kubesched.scheduler import WATCHED_KINDS, Scheduler, watched_kinds
from tests.factories import node_dict, pod_dict
from tests.fakeplugins import Harness, config_dict, profile_with


def scheduler(config: dict[str, Any] | None = None, version: str | None = None) -> Scheduler:
    features = feature_gates(version)
    return Scheduler(EmbeddedCluster(features=features), load_config(config, features=features), clock=VirtualClock())


#: What DynamicResources registers events for: v1.34's scheduler watches them (DRA is on there).
DRA_KINDS = ("DeviceClass", "ResourceClaim", "ResourceSlice")


def _pod(name: str, scheduler_name: str) -> Pod:
    return Pod.from_dict(pod_dict(name, spec={"schedulerName": scheduler_name}))


def test_unknown_scheduler_name_never_reaches_a_profile() -> None:
    h = Harness(objects=[node_dict("n1")])
    assert h.scheduler.framework_for(_pod("x", "nope")) is None
    assert h.scheduler.framework_for(_pod("y", "default-scheduler")) is not None


def test_tie_break_must_be_known() -> None:
    with pytest.raises(ValueError, match="tie_break"):
        Harness(tie_break="first")


def test_plugins_that_register_other_kinds_get_them_watched() -> None:
    coscheduling = profile_with(
        {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
        }
    )
    assert scheduler(config_dict(coscheduling)).watched_kinds == (*WATCHED_KINDS, *sorted((*DRA_KINDS, "PodGroup")))
    assert scheduler().watched_kinds == (*WATCHED_KINDS, *DRA_KINDS)


def test_dra_objects_are_watched_where_dynamic_resources_runs() -> None:
    assert scheduler(version="1.30").watched_kinds == watched_kinds(feature_gates("1.30"))
    off = Scheduler(
        EmbeddedCluster(),
        load_config(None, features=feature_gates(settings={"DynamicResourceAllocation": False})),
        clock=VirtualClock(),
    )
    assert off.watched_kinds == WATCHED_KINDS


def test_volume_attachments_are_watched_from_v1_34() -> None:
    assert "VolumeAttachment" in watched_kinds(feature_gates("1.34"))
    assert watched_kinds(feature_gates("1.30")) == tuple(k for k in WATCHED_KINDS if k != "VolumeAttachment")


def test_the_metrics_alone_observe_attempts_until_something_records() -> None:
    sched = scheduler()
    assert isinstance(sched.observer, MetricsObserver) and isinstance(sched.recorder, NullRecorder)
    sched.add_recorder(NullRecorder())
    assert isinstance(sched.observer, MetricsObserver)
    summary = SummaryRecorder()
    sched.add_recorder(summary)
    assert sched.recorder is summary
    assert isinstance(sched.observer, Observers)
    metrics, recording = sched.observer.observers
    assert isinstance(metrics, MetricsObserver) and isinstance(recording, RecordingObserver)
    assert recording.recorder is summary and not sched.observer.raw_scores


def test_added_recorders_share_one_recording_observer() -> None:
    sched = scheduler()
    stream, full = OutcomeStream(), FullRecorder()
    sched.add_recorder(stream)
    sched.add_recorder(full)
    sched.add_recorder(SummaryRecorder())
    recorders = sched.recorder
    assert isinstance(recorders, Recorders) and recorders.recorders[:2] == [stream, full]
    assert isinstance(sched.observer, Observers) and sched.observer.raw_scores
    assert [type(o) for o in sched.observer.observers] == [MetricsObserver, RecordingObserver]
    sched.recorder = NullRecorder()
    assert isinstance(sched.observer, MetricsObserver)


# -- jobs off the scheduling loop (asynchronous preemption) -------------------------------------------
def _job(log: list[str], name: str, steps: int) -> Any:
    for i in range(steps):
        log.append(f"{name}{i}")
        yield
    log.append(f"{name}-end")


def test_a_job_runs_one_step_per_call_so_its_writes_are_seen_in_between() -> None:
    sched = scheduler()
    log: list[str] = []
    sched.run_async(_job(log, "j", 2))
    sched.submit(lambda: log.append("bind"))
    assert sched.run_pending_tasks() == 1 and log == ["j0"]
    # The job went back to the end of the queue: the binding task runs first, then the job's next step.
    assert sched.run_pending_tasks() == 2 and log == ["j0", "bind", "j1"]
    assert sched.has_pending_tasks() and not sched.idle()
    assert sched.run_pending_tasks() == 1 and log[-1] == "j-end"
    assert not sched.has_pending_tasks() and sched.run_pending_tasks() == 0


def test_with_an_executor_a_job_runs_whole_in_one_task() -> None:
    tasks: list[Any] = []
    sched = Scheduler(EmbeddedCluster(), load_config(None), clock=VirtualClock(), executor=tasks.append)
    log: list[str] = []
    sched.run_async(_job(log, "j", 3))
    assert len(tasks) == 1 and log == []
    tasks[0]()
    assert log == ["j0", "j1", "j2", "j-end"]
    assert not sched.has_pending_tasks()
