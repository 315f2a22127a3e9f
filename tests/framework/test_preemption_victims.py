"""What happens to a preemption candidate's victims (kubesched.framework.preemption_victims).

PreemptPod per version (the DisruptionTarget condition and its observedGeneration, a victim already gone)
and the asynchronous job: its steps, its order, how a failure cancels the rest, the metrics and the
re-activation of the preemptor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.cluster.protocol import ApiError
from kubesched.framework.extender import Victims
from kubesched.framework.preemption import Candidate
from kubesched.framework.preemption_victims import (
    RESULT_ERROR,
    RESULT_SUCCESS,
    PreemptingPods,
    VictimPreemption,
    condition_changes,
    condition_observed_generation,
)
from tests.factories import as_handle, make_node, make_snapshot
from tests.framework.test_preemption import FakeCluster, FakeHandle, FakeNominator, FakeWaitingPod, mk_pod

MESSAGE = "default-scheduler: preempting to accommodate a higher priority pod"
CONDITION = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": MESSAGE}


def with_generation(pod: Pod, generation: int) -> Pod:
    raw = dict(pod.raw)
    raw["metadata"] = {**raw["metadata"], "generation": generation}
    return Pod.from_dict(raw)


class Metrics:
    def __init__(self) -> None:
        self.observed: list[str] = []

    def observe_preemption_goroutine(self, result: str, seconds: float) -> None:
        assert seconds >= 0
        self.observed.append(result)


def setup(
    victims: list[Pod], *, version: str | None = None, gates: str | None = None, nominated: Sequence[Pod] = ()
) -> tuple[VictimPreemption, FakeHandle, Pod, list[dict[str, Pod]], Metrics]:
    preemptor = mk_pod("p", priority=10)
    nominator = FakeNominator()
    for p in nominated:
        nominator.add(p, "n")
    handle = FakeHandle(
        make_snapshot([make_node("n")]),
        FakeCluster([preemptor, *victims, *nominated]),
        nominator,
        version=version,
        gates=gates,
    )
    activated: list[dict[str, Pod]] = []
    metrics = Metrics()
    handle.extra.update(activate=activated.append, metrics=metrics)
    return VictimPreemption("DefaultPreemption", as_handle(handle)), handle, preemptor, activated, metrics


# -- PreemptPod ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("version", "gates", "existing", "want"),
    [
        pytest.param(None, None, [], {**CONDITION, "observedGeneration": 3}, id="1.34: the pod's generation"),
        pytest.param(None, "PodObservedGenerationTracking=false", [], CONDITION, id="1.34 without tracking"),
        pytest.param(
            None,
            "PodObservedGenerationTracking=false",
            [{"type": "DisruptionTarget", "status": "False", "observedGeneration": 1}],
            {**CONDITION, "observedGeneration": 3},
            id="1.34 without tracking, the condition had one",
        ),
        pytest.param("1.30", None, [], CONDITION, id="1.30: none"),
    ],
)
def test_disruption_condition(
    version: str | None, gates: str | None, existing: list[dict[str, Any]], want: dict[str, Any]
) -> None:
    victim = with_generation(mk_pod("v", priority=1, node="n", conditions=existing), 3)
    vp, handle, preemptor, _, _ = setup([victim], version=version, gates=gates)
    vp.preempt_pod("n", preemptor, victim)
    assert handle.cluster.patches == [("default", "v", [want], ...)]
    assert handle.cluster.deleted == ["default/v"]
    assert handle.cluster.events[0]["note"] == f"Preempted by pod {preemptor.uid} on node n"


def test_1_30_without_pod_disruption_conditions_deletes_without_condition() -> None:
    victim = mk_pod("v", priority=1, node="n")
    vp, handle, preemptor, _, _ = setup([victim], version="1.30", gates="PodDisruptionConditions=false")
    vp.preempt_pod("n", preemptor, victim)
    assert handle.cluster.writes == [("delete", "v")]


@pytest.mark.parametrize(
    ("existing", "changes"),
    [
        pytest.param(None, True, id="new"),
        pytest.param(CONDITION, False, id="same"),
        pytest.param({**CONDITION, "observedGeneration": 1}, False, id="observedGeneration is not compared"),
        pytest.param({**CONDITION, "status": "False"}, True, id="status"),
        pytest.param({**CONDITION, "lastProbeTime": "2024-01-01T00:00:00Z"}, True, id="a probe time to drop"),
    ],
)
def test_condition_changes(existing: dict[str, Any] | None, changes: bool) -> None:
    pod = mk_pod("v", conditions=[existing] if existing else [])
    assert condition_changes(pod, CONDITION) is changes


def test_observed_generation_without_generation_is_zero() -> None:
    assert condition_observed_generation(mk_pod("v"), "DisruptionTarget", True) == 0


# -- the asynchronous job -----------------------------------------------------------------------------
def run_job(vp: VictimPreemption, candidate: Candidate, preemptor: Pod) -> tuple[int, PreemptingPods]:
    """Start the job through run_async and run it to the end; returns the steps it paused after."""
    jobs: list[Any] = []
    vp.handle.extra["run_async"] = jobs.append  # type: ignore[index]
    preempting = PreemptingPods()
    vp.prepare_candidate_async(candidate, preemptor, preempting)
    assert preemptor.uid in preempting and len(jobs) == 1
    return sum(1 for _ in jobs[0]), preempting


def test_job_withdraws_lower_nominations_first_then_preempts_in_order() -> None:
    victims = [mk_pod(f"v{i}", priority=1, node="n") for i in range(3)]
    lower = mk_pod("lower", priority=5, nominated="n")
    higher = mk_pod("higher", priority=20, nominated="n")
    vp, handle, preemptor, activated, metrics = setup(victims, nominated=[lower, higher])
    steps, preempting = run_job(vp, Candidate("n", Victims(victims)), preemptor)
    assert handle.cluster.writes == [
        ("patch", "lower"),
        ("patch", "v0"),
        ("delete", "v0"),
        ("patch", "v1"),
        ("delete", "v1"),
        ("patch", "v2"),
        ("delete", "v2"),
    ]
    assert steps == 3 and len(preempting) == 0
    assert activated == [] and metrics.observed == [RESULT_SUCCESS]


def test_job_without_victims() -> None:
    vp, handle, preemptor, activated, metrics = setup([])
    steps, preempting = run_job(vp, Candidate("n", Victims([])), preemptor)
    assert steps == 0 and len(preempting) == 0 and handle.cluster.writes == []
    assert metrics.observed == [RESULT_SUCCESS] and activated == []


def test_a_failure_cancels_the_rest_and_activates_the_preemptor() -> None:
    victims = [mk_pod(f"v{i}", priority=1, node="n") for i in range(3)]
    vp, handle, preemptor, activated, metrics = setup(victims)
    waiting = FakeWaitingPod()
    handle.waiting[victims[2].uid] = waiting
    handle.cluster.delete_errors["v0"] = ApiError("boom")
    _, preempting = run_job(vp, Candidate("n", Victims(victims)), preemptor)
    # v1 is never tried; the last victim, waiting at Permit, is still rejected (that needs no API call).
    assert handle.cluster.writes == [("patch", "v0"), ("delete", "v0")]
    assert waiting.rejected == ("DefaultPreemption", "preempted")
    assert len(preempting) == 0
    assert metrics.observed == [RESULT_ERROR]
    assert activated == [{"p": preemptor}]


def test_after_a_failure_the_last_victims_api_calls_fail() -> None:
    victims = [mk_pod(f"v{i}", priority=1, node="n") for i in range(2)]
    vp, handle, preemptor, activated, metrics = setup(victims)
    handle.cluster.delete_errors["v0"] = ApiError("boom")
    run_job(vp, Candidate("n", Victims(victims)), preemptor)
    assert handle.cluster.writes == [("patch", "v0"), ("delete", "v0")]
    assert "default/v1" not in handle.cluster.deleted and handle.cluster.events == []
    assert metrics.observed == [RESULT_ERROR] and activated == [{"p": preemptor}]


def test_a_failed_nomination_withdrawal_is_an_error_but_the_victims_go() -> None:
    victims = [mk_pod("v0", priority=1, node="n")]
    lower = mk_pod("lower", priority=5, nominated="n")
    vp, handle, preemptor, activated, metrics = setup(victims, nominated=[lower])
    del handle.cluster.pods[("default", "lower")]  # patching it fails
    run_job(vp, Candidate("n", Victims(victims)), preemptor)
    assert handle.cluster.deleted == ["default/v0"]
    assert metrics.observed == [RESULT_ERROR] and activated == [{"p": preemptor}]


def test_without_a_runner_the_job_runs_at_once() -> None:
    victims = [mk_pod("v0", priority=1, node="n")]
    vp, handle, preemptor, _, metrics = setup(victims)
    preempting = PreemptingPods()
    vp.prepare_candidate_async(Candidate("n", Victims(victims)), preemptor, preempting)
    assert handle.cluster.deleted == ["default/v0"] and len(preempting) == 0
    assert metrics.observed == [RESULT_SUCCESS]
