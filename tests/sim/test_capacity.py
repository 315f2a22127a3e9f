"""capacity(): replicas of a template scheduled one by one until the first that does not fit."""

from __future__ import annotations

import pytest

from kubesched.scenario.manifests import ManifestError
from kubesched.sim.capacity import capacity
from kubesched.sim.simulate import SimulationError
from tests.sim.scenarios import node, pod


def test_counts_replicas_per_node_and_stops_with_the_failed_scheduling_text() -> None:
    scenario = [node("n1", cpu="2"), node("n2", cpu="1"), pod("existing", cpu="1", node_name="n1")]
    result = capacity(scenario, pod("probe", cpu="400m"), tie_break="name")
    # n1 has 1 cpu free (2 replicas), n2 has 1 cpu (2 replicas).
    assert result.replicas == 4
    assert result.placements == {"n1": 2, "n2": 2}
    assert result.stop_reason.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert result.to_dict() == {"replicas": 4, "placements": {"n1": 2, "n2": 2}, "stopReason": result.stop_reason}


def test_pending_pods_of_the_scenario_are_placed_first() -> None:
    without = capacity([node("n1", cpu="2")], pod("probe", cpu="500m"))
    with_pending = capacity([node("n1", cpu="2"), pod("web", cpu="1")], pod("probe", cpu="500m"))
    assert (without.replicas, with_pending.replicas) == (4, 2)


def test_max_limits_the_replicas() -> None:
    result = capacity([node("n1", cpu="8")], pod("probe", cpu="500m"), max_replicas=3)
    assert result.replicas == 3
    assert result.stop_reason == "reached the limit of 3 replicas"


@pytest.mark.parametrize(
    ("version", "reason"),
    [("1.34", "1 node(s) had untolerated taint(s)"), ("1.30", "1 node(s) had untolerated taint {gpu: yes}")],
)
def test_the_reason_names_the_filter_that_blocks(version: str, reason: str) -> None:
    tainted = node("n1", taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}])
    result = capacity([tainted], pod("probe"), emulated_version=version)
    assert result.replicas == 0
    assert reason in result.stop_reason


@pytest.mark.parametrize(
    "template",
    [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {}},
    ],
)
def test_bad_templates_are_refused(template) -> None:
    with pytest.raises(SimulationError):
        capacity([node("n1")], template)


def test_the_template_is_admitted_against_the_scenarios_priority_classes() -> None:
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 10}
    probe = pod("probe")
    probe["spec"]["priorityClassName"] = "high"
    assert capacity([node("n1", cpu="1"), high], probe).replicas == 2
    with pytest.raises(
        ManifestError,
        match=r"^template \(Pod default/probe\): spec\.priorityClassName: Not found: "
        r'no PriorityClass with name "high" in the scenario$',
    ):
        capacity([node("n1", cpu="1")], probe)


def test_a_template_that_does_not_parse_is_refused_before_the_run() -> None:
    with pytest.raises(ManifestError, match=r"^template \(Pod default/probe\): spec\.containers\[0\]\.resources"):
        capacity([node("n1")], pod("probe", cpu="-1"))


def test_a_replica_whose_name_is_taken_is_an_error_naming_it() -> None:
    with pytest.raises(SimulationError, match=r"^template: replica default/probe-1: .*already exists"):
        capacity([node("n1", cpu="4"), pod("probe-1", cpu="100m", node_name="n1")], pod("probe"))
