"""The simulation summary: scheduled count, pending pods with their reason, per-node utilisation."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.sim.report import format_summary, group_warnings, pending_pods
from kubesched.sim.simulate import SimulationResult, simulate
from kubesched.sim.usage import format_bytes, format_cpu, node_usage
from tests.factories import node_dict, pod_dict


def _pod(name: str, **kw: Any) -> dict[str, Any]:
    """A pending or bound pod as a manifest states it: priority comes from admission, never the spec."""
    obj = pod_dict(name, **kw)
    obj["spec"].pop("priority", None)
    return obj


PRIORITY_CLASS = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "vip"},
    "value": 1000,
}


@pytest.fixture(scope="module")
def result() -> SimulationResult:
    """n1 (2 cpu) takes `fits`; `huge` fits nowhere; `vip` preempts `low` from n2; `gpu` wants a GPU."""
    return simulate(
        [
            PRIORITY_CLASS,
            node_dict("n1", cpu="2", memory="4Gi"),
            node_dict("n2", cpu="1", memory="2Gi", extra={"example.com/gpu": "1"}),
            _pod("low", cpu="1", memory="1Gi", node_name="n2"),
            _pod("fits", cpu="1500m", memory="1Gi", spec={"nodeSelector": {"kubernetes.io/hostname": "n1"}}),
            _pod("huge", cpu="8"),
            _pod("vip", cpu="1", spec={"priorityClassName": "vip", "nodeSelector": {"kubernetes.io/hostname": "n2"}}),
        ],
        tie_break="name",
    )


def test_scheduled_pod_is_counted_and_pending_pod_carries_its_last_message(result: SimulationResult) -> None:
    assert result.final["default/fits"] == "n1"
    pending = {p.pod: p for p in pending_pods(result)}
    assert set(pending) == {"default/huge"}
    last = [s for s in result.summaries if s.pod == "default/huge"][-1]
    assert pending["default/huge"].reason == last.message
    assert pending["default/huge"].reason.startswith("0/2 nodes are available:")
    text = format_summary(result)
    assert text.splitlines()[0].startswith("Scheduled 2/3 pending pods")
    assert f"  default/huge: {last.message}" in text


def test_preemption_victim_is_reported_with_its_preemptor(result: SimulationResult) -> None:
    assert result.deleted == ["default/low"]
    assert "  default/low: preempted by default/vip on n2" in format_summary(result)


def test_node_usage_sums_requests_of_bound_pods(result: SimulationResult) -> None:
    usage = {u.name: u for u in node_usage(result)}
    assert (usage["n1"].cpu_requested, usage["n1"].cpu_allocatable) == (1500, 2000)
    assert (usage["n1"].memory_requested, usage["n1"].memory_allocatable) == (1 << 30, 4 << 30)
    assert (usage["n1"].pods, usage["n2"].pods) == (1, 1)
    assert usage["n2"].cpu_requested == 1000  # vip replaced low
    assert usage["n2"].extended == {"example.com/gpu": (0, 1)}
    assert usage["n1"].extended == {}


def test_usage_table_shows_requested_over_allocatable(result: SimulationResult) -> None:
    lines = format_summary(result).splitlines()
    header = next(line for line in lines if line.startswith("NODE"))
    assert header.split() == ["NODE", "CPU", "CPU%", "MEMORY", "MEM%", "PODS", "example.com/gpu"]
    n1 = next(line for line in lines if line.startswith("n1 "))
    assert n1.split() == ["n1", "1.5/2", "75%", "1Gi/4Gi", "25%", "1/110", "-"]


def test_verbose_lists_placements(result: SimulationResult) -> None:
    assert "default/fits  -> n1" in format_summary(result, verbose=True)
    assert "-> n1" not in format_summary(result)


def test_pod_for_an_unknown_profile_is_pending_as_never_attempted() -> None:
    res = simulate([node_dict("n1"), _pod("other", spec={"schedulerName": "nobody"})])
    assert [(p.pod, p.reason) for p in pending_pods(res)] == [
        ("default/other", "never attempted: its schedulerName matches no profile")
    ]


def test_gated_pod_names_its_gates() -> None:
    res = simulate([node_dict("n1"), _pod("gated", spec={"schedulingGates": [{"name": "example.com/wait"}]})])
    assert [p.reason for p in pending_pods(res)] == ["waiting for scheduling gates ['example.com/wait']"]


def test_not_implemented_plugin_warnings_fold_into_one_line_per_profile() -> None:
    def left_out(profile: str, plugin: str) -> str:
        return (
            f'profile "{profile}": plugin {plugin} is not implemented in kubesched yet; '
            "it is left out of the effective plugin set"
        )

    warnings = [
        left_out("a", "VolumeZone"),
        "something else",
        left_out("a", "InterPodAffinity"),
        left_out("b", "VolumeZone"),
    ]
    assert group_warnings(warnings) == [
        'profile "a": not implemented in kubesched yet, left out: VolumeZone, InterPodAffinity',
        "something else",
        'profile "b": not implemented in kubesched yet, left out: VolumeZone',
    ]


@pytest.mark.parametrize(
    ("milli", "want"), [(0, "0"), (250, "0.25"), (1500, "1.5"), (4000, "4"), (7910, "7.91"), (1, "0.001")]
)
def test_format_cpu(milli: int, want: str) -> None:
    assert format_cpu(milli) == want


@pytest.mark.parametrize(
    ("value", "want"), [(0, "0"), (512, "512"), (1 << 20, "1Mi"), (1536 << 20, "1.5Gi"), (200 << 30, "200Gi")]
)
def test_format_bytes(value: int, want: str) -> None:
    assert format_bytes(value) == want
