"""VolumeZone, table-style after kube-scheduler's volume_zone_test.go."""

from __future__ import annotations

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins import volumezone as vz
from tests.factories import as_handle, make_node, make_pod, make_snapshot
from tests.plugins.storage import Handle, batch_status, claim_volume, pv_dict, pvc_dict, rows, sc_dict

ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (vz.ERR_REASON_CONFLICT,))

CASES = [
    ("pv zone matches node", {ZONE: "a"}, {ZONE: "a"}, None),
    ("pv zone differs", {ZONE: "a"}, {ZONE: "b"}, CONFLICT),
    ("multi-zone value", {ZONE: "a__c"}, {ZONE: "c"}, None),
    ("multi-zone value, other zone", {ZONE: "a__c"}, {ZONE: "b"}, CONFLICT),
    ("node without topology labels passes", {ZONE: "a"}, {}, None),
    ("node with only a region, pv zone", {ZONE: "a"}, {REGION: "r"}, CONFLICT),
    ("beta pv label against GA node label", {BETA_ZONE: "a"}, {ZONE: "a"}, None),
    ("beta pv label, GA node label differs", {BETA_ZONE: "a"}, {ZONE: "b"}, CONFLICT),
    ("beta pv label, beta node label", {BETA_ZONE: "a"}, {BETA_ZONE: "a", ZONE: "b"}, None),
    ("region matches", {REGION: "r1"}, {REGION: "r1", ZONE: "x"}, None),
    ("region differs", {REGION: "r1"}, {REGION: "r2"}, CONFLICT),
    ("malformed value ignored", {ZONE: "a____c"}, {ZONE: "b"}, None),
]


@pytest.mark.parametrize(("name", "pv_labels", "node_labels", "want"), CASES, ids=[c[0] for c in CASES])
def test_filter(name: str, pv_labels: dict[str, str], node_labels: dict[str, str], want: Status | None) -> None:
    node = make_node("n", labels=node_labels)
    snap = make_snapshot([node])
    handle = Handle(snapshot=snap).add(
        pv_dict("pv", labels=pv_labels, claim=("default", "c"), phase="Bound"), pvc_dict("c", volume="pv", bound=True)
    )
    plugin = vz.new(None, as_handle(handle))
    pod = make_pod("p", spec={"volumes": [claim_volume("c")]})
    state = CycleState()
    pre = plugin.pre_filter(state, pod)
    if pre[1] == Status(Code.SKIP):
        assert want is None
        return
    assert plugin.filter(state, pod, snap.node_infos[0]) == want
    assert batch_status(plugin.filter_nodes(state, pod, snap, rows(1)), 0) == want


PRE_FILTER_CASES = [
    ("missing claim", [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ('persistentvolumeclaim "c" not found',))),
    (
        "unbound, no class",
        [pvc_dict("c", sc="")],
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("PersistentVolumeClaim had no pv name and storageClass name",)),
    ),
    (
        "unbound, wait-for-first-consumer class is skipped",
        [pvc_dict("c", sc="wffc"), sc_dict("wffc")],
        Status(Code.SKIP),
    ),
    (
        "unbound, immediate class",
        [pvc_dict("c", sc="imm"), sc_dict("imm", mode="Immediate")],
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("PersistentVolume had no name",)),
    ),
    (
        "bound to a missing pv",
        [pvc_dict("c", volume="gone", bound=True)],
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ('persistentvolume "gone" not found',)),
    ),
    ("pv without topology labels", [pvc_dict("c", volume="pv", bound=True), pv_dict("pv")], Status(Code.SKIP)),
]


@pytest.mark.parametrize(("name", "objs", "want"), PRE_FILTER_CASES, ids=[c[0] for c in PRE_FILTER_CASES])
def test_pre_filter(name: str, objs: list[dict], want: Status) -> None:
    plugin = vz.new(None, as_handle(Handle().add(*objs)))
    pod = make_pod("p", spec={"volumes": [claim_volume("c")]})
    assert plugin.pre_filter(CycleState(), pod) == (None, want)
