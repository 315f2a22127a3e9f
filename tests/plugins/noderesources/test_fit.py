"""NodeResourcesFit: PreFilter / Filter (per node and batch), the Fits helper, factory and events."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from kubesched.api.objects import Node, Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.config.errors import ConfigError
from kubesched.config.features import feature_gates
from kubesched.config.pluginargs import NodeResourcesFitArgs, ScoringStrategy
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterPlugin,
    BatchScorePlugin,
    ClusterEvent,
    EnqueueExtensions,
    PreFilterPlugin,
    PreScorePlugin,
)
from kubesched.framework.status import Code, Status
from kubesched.plugins.noderesources import fit
from tests.factories import NO_HANDLE, make_snapshot, pod_dict
from tests.plugins.noderesources.builders import node, pod
from tests.plugins.queueing import V130

GPU = "example.com/gpu"
FPGA = "vendor.io/fpga"


@dataclass
class FilterCase:
    name: str
    pod: Pod
    node: Node
    existing: list[Pod] = field(default_factory=list)
    want: tuple[str, ...] = ()
    args: NodeResourcesFitArgs = field(default_factory=NodeResourcesFitArgs)
    #: v1.34: the node offers less than the pod asks for, so the rejection is unresolvable.
    unresolvable: bool = False


def _on(n: Node, *pods: Pod) -> list[Pod]:
    return [
        pod(
            f"{n.name}-existing-{i}",
            dict(p.raw["spec"]["containers"][0].get("resources", {}).get("requests", {})),
            node_name=n.name,
        )
        for i, p in enumerate(pods)
    ]


N = node("n1", cpu="10", memory="20", pods=32, extra={GPU: "5"})
FILTER_CASES = [
    FilterCase("no resources requested always fits", pod("p"), N, _on(N, pod("e", {"cpu": "10", "memory": "20"}))),
    FilterCase(
        "too many resources fails",
        pod("p", {"cpu": "1", "memory": "1"}),
        N,
        _on(N, pod("e", {"cpu": "10", "memory": "20"})),
        ("Insufficient cpu", "Insufficient memory"),
    ),
    FilterCase(
        "fits exactly", pod("p", {"cpu": "5", "memory": "10"}), N, _on(N, pod("e", {"cpu": "5", "memory": "10"}))
    ),
    FilterCase(
        "cpu only insufficient",
        pod("p", {"cpu": "6", "memory": "1"}),
        N,
        _on(N, pod("e", {"cpu": "5", "memory": "5"})),
        ("Insufficient cpu",),
    ),
    FilterCase(
        "memory only insufficient",
        pod("p", {"cpu": "1", "memory": "16"}),
        N,
        _on(N, pod("e", {"cpu": "5", "memory": "5"})),
        ("Insufficient memory",),
    ),
    FilterCase(
        "init container cpu counts",
        pod("p", {"cpu": "1"}, init=[{"cpu": "8"}]),
        N,
        _on(N, pod("e", {"cpu": "5"})),
        ("Insufficient cpu",),
    ),
    FilterCase(
        "init container below app sum fits",
        pod("p", {"cpu": "3"}, init=[{"cpu": "2"}]),
        N,
        _on(N, pod("e", {"cpu": "7"})),
    ),
    FilterCase(
        "overhead counts",
        pod("p", {"cpu": "5"}, overhead={"cpu": "500m"}),
        N,
        _on(N, pod("e", {"cpu": "5"})),
        ("Insufficient cpu",),
    ),
    FilterCase("extended resource fits", pod("p", {GPU: "1"}), N, _on(N, pod("e", {GPU: "4"}))),
    FilterCase(
        "extended resource capacity enforced",
        pod("p", {GPU: "2"}),
        N,
        _on(N, pod("e", {GPU: "4"})),
        (f"Insufficient {GPU}",),
    ),
    FilterCase(
        "extended resource allocatable enforced",
        pod("p", {GPU: "6"}),
        N,
        want=(f"Insufficient {GPU}",),
        unresolvable=True,
    ),
    FilterCase(
        "extended resource missing on node", pod("p", {FPGA: "1"}), N, want=(f"Insufficient {FPGA}",), unresolvable=True
    ),
    FilterCase("zero extended request is not checked", pod("p", {FPGA: "0", "cpu": "1"}), N),
    FilterCase(
        "ignored extended resource", pod("p", {FPGA: "1"}), N, args=NodeResourcesFitArgs(ignored_resources=(FPGA,))
    ),
    FilterCase(
        "ignored resource group",
        pod("p", {FPGA: "1", GPU: "9"}),
        N,
        args=NodeResourcesFitArgs(ignored_resource_groups=("vendor.io",)),
        want=(f"Insufficient {GPU}",),
        unresolvable=True,
    ),
    FilterCase(
        "hugepages are not ignorable by group",
        pod("p", {"hugepages-2Mi": "2Mi"}),
        N,
        args=NodeResourcesFitArgs(ignored_resource_groups=("hugepages-2Mi",)),
        want=("Insufficient hugepages-2Mi",),
        unresolvable=True,
    ),
    FilterCase(
        "ephemeral storage",
        pod("p", {"ephemeral-storage": "10"}),
        node("n1", extra={"ephemeral-storage": "20"}),
        _on(node("n1"), pod("e", {"ephemeral-storage": "15"})),
        ("Insufficient ephemeral-storage",),
    ),
    FilterCase("too many pods", pod("p"), node("n1", pods=1), _on(N, pod("e")), ("Too many pods",)),
    FilterCase(
        "reasons in kube-scheduler order",
        pod("p", {"cpu": "1", "memory": "30", GPU: "9", FPGA: "1", "ephemeral-storage": "1"}),
        node("n1", pods=1),
        _on(N, pod("e", {"cpu": "10"})),
        (
            "Too many pods",
            "Insufficient cpu",
            "Insufficient memory",
            "Insufficient ephemeral-storage",
            f"Insufficient {GPU}",
            f"Insufficient {FPGA}",
        ),
        unresolvable=True,
    ),
    FilterCase("cpu beyond allocatable", pod("p", {"cpu": "11"}), N, want=("Insufficient cpu",), unresolvable=True),
    FilterCase(
        "memory beyond allocatable, cpu short",
        pod("p", {"cpu": "2", "memory": "21"}),
        N,
        _on(N, pod("e", {"cpu": "9"})),
        ("Insufficient cpu", "Insufficient memory"),
        unresolvable=True,
    ),
    FilterCase(
        "ephemeral storage beyond allocatable",
        pod("p", {"ephemeral-storage": "30"}),
        node("n1", extra={"ephemeral-storage": "20"}),
        want=("Insufficient ephemeral-storage",),
        unresolvable=True,
    ),
    FilterCase("pod slots never unresolvable", pod("p"), node("n1", pods=0), want=("Too many pods",)),
]


def _check_filter(case: FilterCase, version: str = "1.34") -> None:
    plugin = fit.NodeResourcesFit(case.args, features=feature_gates(version))
    snapshot = make_snapshot([case.node], case.existing)
    state = CycleState()
    assert plugin.pre_filter(state, case.pod) == (None, None)
    status = plugin.filter(state, case.pod, snapshot.node_infos[0])
    code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if case.unresolvable and version == "1.34" else Code.UNSCHEDULABLE
    want = Status(code, case.want) if case.want else None
    assert status == want
    batch = plugin.filter_nodes(state, case.pod, snapshot, np.arange(1))
    got = None if batch.status_index[0] == -1 else batch.statuses[batch.status_index[0]]
    assert got == want
    assert got is None or got.code is code


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.name)
def test_filter(case: FilterCase, version: str) -> None:
    """v1.30 always rejects as Unschedulable; v1.34 as unresolvable where the node is too small."""
    _check_filter(case, version)


def test_filter_without_prefilter_state_is_an_error() -> None:
    plugin = fit.new(None, NO_HANDLE)
    snapshot = make_snapshot([node("n1")])
    status = plugin.filter(CycleState(), pod("p"), snapshot.node_infos[0])
    assert status is not None and status.code is Code.ERROR
    assert status.message == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'
    batch = plugin.filter_nodes(CycleState(), pod("p"), snapshot, np.arange(1))
    assert batch.statuses[batch.status_index[0]].code is Code.ERROR


def test_batch_filter_shares_statuses_per_combination() -> None:
    nodes = [node(f"n{i}", cpu=str(1 + i % 3), memory=str(10 * (1 + i % 2)), pods=1 + i % 2) for i in range(12)]
    existing = [pod(f"e{i}", {"cpu": "1"}, node_name=f"n{i}") for i in range(0, 12, 4)]
    snapshot = make_snapshot(nodes, existing)
    plugin = fit.new(None, NO_HANDLE)
    p = pod("p", {"cpu": "2", "memory": "15"})
    state = CycleState()
    plugin.pre_filter(state, p)
    result = plugin.filter_nodes(state, p, snapshot, np.arange(len(nodes)))
    assert len(result.statuses) == len({s.reasons for s in result.statuses})
    for k, info in enumerate(snapshot.node_infos):
        want = plugin.filter(state, p, info)
        got = None if result.status_index[k] == -1 else result.statuses[result.status_index[k]]
        assert got == want, info.name


def test_batch_filter_subset_of_nodes() -> None:
    nodes = [node("a", cpu="1"), node("b", cpu="4"), node("c", cpu="1")]
    snapshot = make_snapshot(nodes)
    plugin = fit.new(None, NO_HANDLE)
    p = pod("p", {"cpu": "2"})
    state = CycleState()
    plugin.pre_filter(state, p)
    result = plugin.filter_nodes(state, p, snapshot, np.array([2, 1]))
    assert result.status_index[1] == -1
    assert result.statuses[result.status_index[0]].reasons == ("Insufficient cpu",)


def test_fits_request_reports_amounts() -> None:
    snapshot = make_snapshot([node("n1", cpu="2", pods=1)], [pod("e", {"cpu": "1500m"}, node_name="n1")])
    info = snapshot.node_infos[0]
    got = fit.fits_request({"cpu": 1000, "memory": 0}, info)
    assert got == [
        fit.InsufficientResource("pods", "Too many pods", 1, 1, 1),
        fit.InsufficientResource("cpu", "Insufficient cpu", 1000, 1500, 2000),
    ]
    assert fit.fits(pod("q", {"cpu": "500m"}), info) == got[:1]
    assert fit.fits_request({GPU: 1}, info, ignored_extended_resources={GPU}) == got[:1]
    assert fit.fits_request({GPU: 1}, info, ignored_resource_groups={"example.com"}) == got[:1]


def test_plugin_protocols_and_events() -> None:
    plugin = fit.new(None, NO_HANDLE)
    assert plugin.name == "NodeResourcesFit"
    for proto in (PreFilterPlugin, BatchFilterPlugin, PreScorePlugin, BatchScorePlugin, EnqueueExtensions):
        assert isinstance(plugin, proto)
    assert plugin.pre_filter_extensions() is None
    assert plugin.score_extensions() is None
    # v1.30's registrations (v1.34's, with hints: tests/plugins/noderesources/test_fit_hints.py)
    assert list(fit.new(None, V130).events_to_register()) == [
        ClusterEvent("Pod", ActionType.DELETE),
        ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE),
    ]


def test_factory_accepts_mapping_and_rejects_bad_args() -> None:
    plugin = fit.new({"scoringStrategy": {"type": "MostAllocated"}}, NO_HANDLE)
    assert plugin.scorer.name == "MostAllocated"
    with pytest.raises(ConfigError):
        fit.new(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type="Bogus")), NO_HANDLE)
    with pytest.raises(ValueError):
        fit.build_score_function(ScoringStrategy(type="Bogus"))


@pytest.mark.parametrize(
    ("gates", "rejected"), [(None, False), ({"SidecarContainers": False}, True)], ids=["gate on", "gate off"]
)
def test_sidecars_need_their_gate(gates: dict[str, bool] | None, rejected: bool) -> None:
    """v1.30 with SidecarContainers off refuses a pod with a restartable init container outright."""
    plugin = fit.NodeResourcesFit(NodeResourcesFitArgs(), features=feature_gates("1.30", gates))
    sidecar = {"name": "s", "image": "img", "restartPolicy": "Always"}
    p = Pod.from_dict(pod_dict("p", spec={"initContainers": [sidecar]}))
    _, status = plugin.pre_filter(CycleState(), p)
    want = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (fit.SIDECARS_DISABLED,)) if rejected else None
    assert status == want


def test_fit_checks_the_spec_of_a_pod_being_scheduled() -> None:
    """A status reporting larger container resources counts once the pod runs, not for its own fit."""
    raw = pod_dict("p", requests={"cpu": "1"})
    raw["status"] = {
        "containerStatuses": [
            {"name": "c", "resources": {"requests": {"cpu": "3"}}, "allocatedResources": {"cpu": "3"}}
        ]
    }
    p = Pod.from_dict(raw)
    assert (p.spec_requests["cpu"], p.requests["cpu"]) == (1000, 3000)
    snapshot = make_snapshot([node("n1", cpu="2")])
    plugin = fit.new(None, NO_HANDLE)
    state = CycleState()
    plugin.pre_filter(state, p)
    assert plugin.filter(state, p, snapshot.node_infos[0]) is None
    assert fit.fits(p, snapshot.node_infos[0]) == []
    assert NodeInfo(snapshot.node_infos[0].node, [p]).requested["cpu"] == 3000


def test_pods_of_one_spec_share_the_pre_filter_state_and_others_get_their_own() -> None:
    """PreFilter's state is kept per parsed spec_requests mapping, which pods of one spec share."""
    plugin = fit.NodeResourcesFit(NodeResourcesFitArgs(ignored_resources=("example.com/ignored",)))
    first, second = pod("a", {"cpu": "1", "memory": "1Gi"}), pod("b", {"cpu": "1", "memory": "1Gi"})
    other = pod("c", {"cpu": "2", "example.com/ignored": "1", "example.com/gpu": "1"})
    states = []
    for p in (first, second, other):
        state = CycleState()
        assert plugin.pre_filter(state, p) == (None, None)
        states.append(state.read(fit.PRE_FILTER_STATE_KEY))
    assert first.spec_requests is second.spec_requests and states[0] is states[1]
    assert states[0].checks == (("cpu", 1000), ("memory", 1 << 30))
    assert states[2].checks == (("cpu", 2000), ("example.com/gpu", 1))
    assert states[2].requests is other.spec_requests
