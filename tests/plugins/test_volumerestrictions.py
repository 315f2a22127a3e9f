"""VolumeRestrictions, table-style after kube-scheduler's volume_restrictions_test.go."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.features import feature_gates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins import volumerestrictions as vr
from tests.factories import as_handle, make_node, make_pod, make_snapshot
from tests.plugins.storage import Handle, batch_status, claim_volume, pvc_dict, rows

DISK = Status(Code.UNSCHEDULABLE, (vr.ERR_REASON_DISK_CONFLICT,))
RWOP = "rwop"
#: The ReadWriteOncePod conflict by version: v1.34 reworded it.
RWOP_BY_VERSION = {
    "1.30": Status(Code.UNSCHEDULABLE, (vr.ERR_REASON_RWOP_CONFLICT,)),
    "1.34": Status(Code.UNSCHEDULABLE, (vr.ERR_REASON_RWOP_IN_USE,)),
}


def gce(pd: str, ro: bool = False) -> dict[str, Any]:
    return {"name": "d", "gcePersistentDisk": {"pdName": pd, "readOnly": ro}}


def ebs(vol: str, ro: bool = False) -> dict[str, Any]:
    return {"name": "d", "awsElasticBlockStore": {"volumeID": vol, "readOnly": ro}}


def rbd(monitors: list[str], pool: str, image: str, ro: bool = False) -> dict[str, Any]:
    return {"name": "d", "rbd": {"monitors": monitors, "pool": pool, "image": image, "readOnly": ro}}


def iscsi(iqn: str, ro: bool = False) -> dict[str, Any]:
    return {"name": "d", "iscsi": {"targetPortal": "p", "iqn": iqn, "lun": 0, "readOnly": ro}}


DISK_CASES = [
    ("nothing", None, gce("a"), None),
    ("gce same disk rw", gce("a"), gce("a"), DISK),
    ("gce other disk", gce("a"), gce("b"), None),
    ("gce same disk both read-only", gce("a", True), gce("a", True), None),
    ("gce one read-only", gce("a"), gce("a", True), DISK),
    ("ebs same volume even read-only", ebs("v", True), ebs("v", True), DISK),
    ("ebs other volume", ebs("v"), ebs("w"), None),
    ("rbd overlapping monitors same image", rbd(["a", "b"], "p", "i"), rbd(["b", "c"], "p", "i"), DISK),
    ("rbd disjoint monitors", rbd(["a"], "p", "i"), rbd(["b"], "p", "i"), None),
    ("rbd read-only both", rbd(["a"], "p", "i", True), rbd(["a"], "p", "i", True), None),
    ("iscsi same iqn", iscsi("iqn.1"), iscsi("iqn.1"), DISK),
    ("iscsi same iqn read-only", iscsi("iqn.1", True), iscsi("iqn.1", True), None),
]


@pytest.mark.parametrize(("name", "existing", "wanted", "want"), DISK_CASES, ids=[c[0] for c in DISK_CASES])
def test_disk_conflicts(
    name: str, existing: dict[str, Any] | None, wanted: dict[str, Any], want: Status | None
) -> None:
    node = make_node("n")
    pods = [make_pod("e", node_name="n", spec={"volumes": [existing]})] if existing else []
    snap = make_snapshot([node], pods)
    plugin = vr.new(None, as_handle(Handle(snapshot=snap)))
    pod = make_pod("p", spec={"volumes": [wanted]})
    state = CycleState()
    assert plugin.pre_filter(state, pod) == (None, None)
    assert plugin.filter(state, pod, snap.node_infos[0]) == want
    assert batch_status(plugin.filter_nodes(state, pod, snap, rows(1)), 0) == want


RWOP_CASES = [
    ("rwop claim unused", ["ReadWriteOncePod"], False, None),
    ("rwop claim used by a scheduled pod", ["ReadWriteOncePod"], True, RWOP),
    ("rwo claim shared freely", ["ReadWriteOnce"], True, None),
]


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize(("name", "modes", "used", "expect"), RWOP_CASES, ids=[c[0] for c in RWOP_CASES])
def test_read_write_once_pod(name: str, modes: list[str], used: bool, expect: str | None, version: str) -> None:
    want = None if expect is None else RWOP_BY_VERSION[version]
    nodes = [make_node("n1"), make_node("n2")]
    pods = [make_pod("user", node_name="n1", spec={"volumes": [claim_volume("c")]})] if used else []
    snap = make_snapshot(nodes, pods)
    handle = Handle(snapshot=snap, features=feature_gates(version)).add(
        pvc_dict("c", modes=modes, volume="pv", bound=True)
    )
    plugin = vr.new(None, as_handle(handle))
    pod = make_pod("p", spec={"volumes": [claim_volume("c")]})
    state = CycleState()
    _, status = plugin.pre_filter(state, pod)
    if want is None:
        # Nothing to check: no restricted disk and no conflicting claim.
        assert status == Status(Code.SKIP)
        return
    assert status is None
    # Every node is rejected, the one running the other user included.
    for info in snap.node_infos:
        assert plugin.filter(state, pod, info) == want
    batch = plugin.filter_nodes(state, pod, snap, rows(len(nodes)))
    assert [batch_status(batch, k) for k in range(len(nodes))] == [want] * len(nodes)
    # Preemption removing the user frees the claim (PreFilter extensions).
    victim = pods[0]
    assert plugin.remove_pod(state, pod, victim, snap.node_infos[0]) is None
    assert plugin.filter(state, pod, snap.node_infos[0]) is None
    assert plugin.add_pod(state, pod, victim, snap.node_infos[0]) is None
    assert plugin.filter(state, pod, snap.node_infos[0]) == want


def test_missing_claim_is_unresolvable() -> None:
    plugin = vr.new(None, as_handle(Handle(snapshot=make_snapshot([make_node("n")]))))
    pod = make_pod("p", spec={"volumes": [claim_volume("nope")]})
    _, status = plugin.pre_filter(CycleState(), pod)
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ('persistentvolumeclaim "nope" not found',))


def test_pods_without_volumes_skip() -> None:
    plugin = vr.new(None, as_handle(Handle(snapshot=make_snapshot([make_node("n")]))))
    assert plugin.pre_filter(CycleState(), make_pod("p")) == (None, Status(Code.SKIP))
