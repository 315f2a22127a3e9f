"""The admission pre-check: what the API server would refuse is refused before the run, by the server's rules."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cluster.protocol import ApiError
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.scenario.admission import ScenarioPriorityClasses, check_admission
from kubesched.scenario.manifests import Manifest, ManifestError
from kubesched.sim.simulate import simulate
from tests.factories import node_dict, pod_dict
from tests.scenario.builders import classless_pod, priority_class

# ---------------------------------------------------------------------------------------------------------
# What priority admission would refuse during the run is refused before it


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(
            classless_pod("p", spec={"priorityClassName": "gold"}),
            'spec.priorityClassName: Not found: no PriorityClass with name "gold" in the scenario',
            id="unknown-class",
        ),
        pytest.param(
            pod_dict("p", priority=5, spec={"priorityClassName": "high"}),
            "spec.priority: Forbidden: the integer value of priority (5) must not be provided in pod spec; "
            "priority admission controller computed 1000",
            id="contradicting-priority",
        ),
        pytest.param(
            pod_dict("p", priority=0, spec={"preemptionPolicy": "Never"}),
            "spec.preemptionPolicy: Forbidden: the string value of PreemptionPolicy (Never)",
            id="contradicting-policy",
        ),
    ],
)
def test_pods_priority_admission_would_refuse_fail_before_the_run(pod: dict[str, Any], want: str) -> None:
    progress: list[int] = []
    with pytest.raises(ManifestError) as info:
        simulate(
            [priority_class("high", 1000), node_dict("n"), pod_dict("first"), pod],
            progress=lambda done, total: progress.append(done),
        )
    assert str(info.value).startswith("<objects>: document 4 (Pod default/p): " + want)
    assert progress == []  # nothing was scheduled and then thrown away


def test_system_classes_and_the_global_default_are_known_before_the_run() -> None:
    critical = classless_pod("critical", spec={"priorityClassName": "system-cluster-critical"})
    given = pod_dict("given", priority=5)  # the global default gives 5
    result = simulate([node_dict("n"), critical, given, priority_class("base", 5, default=True)])
    assert result.final == {"default/critical": "n", "default/given": "n"}


def test_an_object_defined_twice_is_refused_before_the_run() -> None:
    with pytest.raises(
        ManifestError,
        match=r"^<objects>: document 4 \(Pod default/p\): metadata\.name: Duplicate "
        r"value: Pod default/p is already defined in <objects>: document 2",
    ):
        simulate([node_dict("n"), pod_dict("p"), pod_dict("q"), pod_dict("p", namespace="default")])
    # The same name in another namespace, or of another kind, is another object.
    assert simulate([node_dict("p"), pod_dict("p"), pod_dict("p", namespace="other")]).final == {
        "default/p": "p",
        "other/p": "p",
    }


# ---------------------------------------------------------------------------------------------------------
# The pre-check and the API server decide alike: one rule, two callers

NEVER = {"preemptionPolicy": "Never"}
AGREEMENT = [
    pytest.param([], classless_pod("p"), 0, id="no-class-no-default"),
    pytest.param([priority_class("base", 5, default=True)], classless_pod("p"), 5, id="global-default"),
    pytest.param(
        [priority_class("a", 7, default=True)],
        classless_pod("p", spec={"priorityClassName": ""}),
        7,
        id="empty-name-takes-the-default",
    ),
    pytest.param(
        [priority_class("high", 1000)], classless_pod("p", spec={"priorityClassName": "high"}), 1000, id="named-class"
    ),
    pytest.param(
        [], classless_pod("p", spec={"priorityClassName": "system-node-critical"}), 2000001000, id="system-class"
    ),
    pytest.param(
        [priority_class("high", 1000)],
        pod_dict("p", priority=1000, spec={"priorityClassName": "high"}),
        1000,
        id="given-priority-agrees",
    ),
    pytest.param([], classless_pod("p", spec={"priorityClassName": "gold"}), None, id="unknown-class"),
    pytest.param(
        [priority_class("high", 1000)],
        pod_dict("p", priority=5, spec={"priorityClassName": "high"}),
        None,
        id="given-priority-contradicts",
    ),
    pytest.param(
        [priority_class("base", 5, default=True)],
        pod_dict("p", priority=0),
        None,
        id="given-priority-contradicts-the-default",
    ),
    pytest.param([], classless_pod("p", spec=NEVER), None, id="given-policy-contradicts"),
    pytest.param(
        [{**priority_class("calm", 3), **NEVER}],
        classless_pod("p", spec={"priorityClassName": "calm", **NEVER}),
        3,
        id="given-policy-agrees",
    ),
]


@pytest.mark.parametrize(("classes", "pod", "want"), AGREEMENT)
def test_the_pre_check_refuses_what_the_api_server_refuses(
    classes: list[dict[str, Any]], pod: dict[str, Any], want: int | None
) -> None:
    manifests = [Manifest("s.yaml", i + 1, obj) for i, obj in enumerate([*classes, pod])]
    cluster = EmbeddedCluster()
    for pc in classes:
        cluster.create(pc)
    if want is None:
        with pytest.raises(ManifestError):
            check_admission(manifests)
        with pytest.raises(ApiError) as info:
            cluster.create(pod)
        assert info.value.code == 403
        return
    check_admission(manifests)
    assert cluster.create(pod)["spec"]["priority"] == want


def test_the_pre_check_reads_classes_wherever_they_are_in_the_scenario() -> None:
    pod = Manifest("a.yaml", 1, classless_pod("p", spec={"priorityClassName": "high"}))
    classes = ScenarioPriorityClasses([pod, Manifest("z.yaml", 1, priority_class("high", 1000))])
    classes.check_pod(pod)  # no error: the class comes later in the files, but exists
    with pytest.raises(
        ManifestError,
        match=r"^a\.yaml: document 1 \(Pod default/p\): spec\.priorityClassName: "
        r'Not found: no PriorityClass with name "high" in the scenario$',
    ):
        ScenarioPriorityClasses([pod]).check_pod(pod)
