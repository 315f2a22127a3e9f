"""VolumeBinding, table-style after kube-scheduler's volume_binding_test.go and binder_test.go."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.features import feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PreFilterResult
from kubesched.framework.pending import PendingStatus
from kubesched.framework.status import Code, Status
from kubesched.plugins import volumebinding as vb
from kubesched.plugins.volumebinding import binder
from tests.factories import as_handle, make_node, make_pod, make_snapshot
from tests.plugins.storage import Handle, batch_status, claim_volume, pv_dict, pvc_dict, rows, sc_dict

UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NODES = ("n1", "n2", "n3")


def setup(
    *objs: dict[str, Any],
    zones: dict[str, str] | None = None,
    version: str = "1.34",
    gates: dict[str, bool] | None = None,
) -> tuple[Any, Any, Handle]:
    nodes = [make_node(n, labels={"topology.kubernetes.io/zone": (zones or {}).get(n, "z")}) for n in NODES]
    snap = make_snapshot(nodes)
    handle = Handle(snapshot=snap, features=feature_gates(version, gates)).add(*objs)
    return vb.new(None, as_handle(handle)), snap, handle


def pod(*claims: str) -> Any:
    return make_pod("p", spec={"volumes": [claim_volume(c, f"v{i}") for i, c in enumerate(claims)]})


LOCAL_PV_CASES = [
    (
        "bound claim on a local pv pins its node",
        ["c"],
        [pvc_dict("c", volume="pv", bound=True), pv_dict("pv", hosts=["n2"], claim=("default", "c"))],
        (PreFilterResult(frozenset({"n2"})), None),
    ),
    (
        "two local pvs on different nodes: empty set",
        ["a", "b"],
        [
            pvc_dict("a", volume="pa", bound=True),
            pv_dict("pa", hosts=["n1"]),
            pvc_dict("b", volume="pb", bound=True),
            pv_dict("pb", hosts=["n2"]),
        ],
        (PreFilterResult(frozenset()), None),
    ),
]

PRE_FILTER_CASES = [
    ("no claims: skip", [], [], (None, Status(Code.SKIP))),
    ("missing claim", ["c"], [], (None, Status(UNRESOLVABLE, ('persistentvolumeclaim "c" not found',)))),
    (
        "unbound immediate claim",
        ["c"],
        [pvc_dict("c", sc="imm"), sc_dict("imm", mode="Immediate")],
        (None, Status(UNRESOLVABLE, (vb.ERR_UNBOUND_IMMEDIATE,))),
    ),
    (
        "unbound claim without class is immediate",
        ["c"],
        [pvc_dict("c", sc="")],
        (None, Status(UNRESOLVABLE, (vb.ERR_UNBOUND_IMMEDIATE,))),
    ),
    (
        "bound claim on a network pv: all nodes",
        ["c"],
        [pvc_dict("c", volume="pv", bound=True), pv_dict("pv")],
        (None, None),
    ),
    ("wait-for-first-consumer claim", ["c"], [pvc_dict("c", sc="wffc"), sc_dict("wffc")], (None, None)),
]


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize(("name", "claims", "objs", "want"), PRE_FILTER_CASES, ids=[c[0] for c in PRE_FILTER_CASES])
def test_pre_filter(
    name: str, claims: list[str], objs: list[dict[str, Any]], want: tuple[Any, Any], version: str
) -> None:
    plugin, _, _ = setup(*objs, version=version)
    assert plugin.pre_filter(CycleState(), pod(*claims)) == want


@pytest.mark.parametrize(("name", "claims", "objs", "want"), LOCAL_PV_CASES, ids=[c[0] for c in LOCAL_PV_CASES])
def test_pre_filter_local_pvs_narrow_the_nodes_in_v1_30_only(
    name: str, claims: list[str], objs: list[dict[str, Any]], want: tuple[Any, Any]
) -> None:
    plugin, _, _ = setup(*objs, version="1.30")
    assert plugin.pre_filter(CycleState(), pod(*claims)) == want
    # v1.34 returns no PreFilterResult: every node goes through Filter, which names the PV's affinity.
    plugin, snap, _ = setup(*objs, version="1.34")
    state = CycleState()
    assert plugin.pre_filter(state, pod(*claims)) == (None, None)
    assert want[0] is not None
    for info in snap.node_infos:
        status = plugin.filter(state, pod(*claims), info)
        assert status == (
            None
            if info.name in want[0].node_names
            else Status(UNRESOLVABLE, (binder.ERR_REASON_NODE_AFFINITY_MISMATCH,))
        )


def test_lost_and_deleting_claims() -> None:
    lost = pvc_dict("c", volume="gone", bound=True)
    lost["status"]["phase"] = "Lost"
    plugin, _, _ = setup(lost)
    assert plugin.pre_filter(CycleState(), pod("c"))[1] == Status(
        UNRESOLVABLE, ('persistentvolumeclaim "c" bound to non-existent persistentvolume "gone"',)
    )
    deleting = pvc_dict("d", sc="wffc")
    deleting["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    plugin, _, _ = setup(deleting, sc_dict("wffc"))
    assert plugin.pre_filter(CycleState(), pod("d"))[1] == Status(
        UNRESOLVABLE, ('persistentvolumeclaim "d" is being deleted',)
    )


BIND = binder.ERR_REASON_BIND_CONFLICT
NODE = {"1.30": binder.ERR_REASON_NODE_CONFLICT, "1.34": binder.ERR_REASON_NODE_AFFINITY_MISMATCH}
ZONE_A = [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a"]}]}]

FILTER_CASES = [
    (
        "bound pv affinity matches",
        ["c"],
        [pvc_dict("c", volume="pv", bound=True), pv_dict("pv", hosts=["n1"], claim=("default", "c"))],
        {"n1": None},
    ),
    (
        "wffc: smallest matching pv on the node",
        ["c"],
        [
            pvc_dict("c", sc="local", size="80Gi"),
            sc_dict("local", provisioner="kubernetes.io/no-provisioner"),
            pv_dict("small", sc="local", size="50Gi", hosts=["n1"]),
            pv_dict("big", sc="local", size="100Gi", hosts=["n2"]),
        ],
        {"n1": (BIND,), "n2": None, "n3": (BIND,)},
    ),
    (
        "wffc: access modes must be offered",
        ["c"],
        [
            pvc_dict("c", sc="local", modes=["ReadWriteMany"]),
            sc_dict("local", provisioner="kubernetes.io/no-provisioner"),
            pv_dict("pv", sc="local", hosts=["n1"]),
        ],
        {"n1": (BIND,)},
    ),
    (
        "wffc: class must match",
        ["c"],
        [
            pvc_dict("c", sc="local"),
            sc_dict("local", provisioner="kubernetes.io/no-provisioner"),
            pv_dict("pv", sc="other", hosts=["n1"]),
        ],
        {"n1": (BIND,)},
    ),
    (
        "wffc: dynamic provisioning limited by allowedTopologies",
        ["c"],
        [pvc_dict("c", sc="gp3"), sc_dict("gp3", topologies=ZONE_A)],
        {"n1": None, "n2": (BIND,)},
    ),
    (
        "wffc: selected node elsewhere",
        ["c"],
        [pvc_dict("c", sc="gp3", annotations={"volume.kubernetes.io/selected-node": "n2"}), sc_dict("gp3")],
        {"n1": (BIND,), "n2": None},
    ),
]


@pytest.mark.parametrize(("name", "claims", "objs", "want"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter(
    name: str, claims: list[str], objs: list[dict[str, Any]], want: dict[str, tuple[str, ...] | None]
) -> None:
    plugin, snap, _ = setup(*objs, zones={"n1": "a", "n2": "b", "n3": "b"})
    state = CycleState()
    p = pod(*claims)
    assert plugin.pre_filter(state, p)[1] is None
    batch = plugin.filter_nodes(state, p, snap, rows(len(NODES)))
    for node, reasons in want.items():
        expected = None if reasons is None else Status(UNRESOLVABLE, reasons)
        row = snap.index[node]
        assert plugin.filter(state, p, snap.node_infos[row]) == expected, node
        assert batch_status(batch, row) == expected, node


@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_bound_pv_affinity_conflict_in_batch(version: str) -> None:
    plugin, snap, _ = setup(
        pvc_dict("c", volume="pv", bound=True),
        pv_dict("pv", claim=("default", "c"), source={"csi": {"driver": "d", "volumeHandle": "h"}}, labels={}),
        version=version,
    )
    # A zone affinity (not hostname) leaves every node to Filter.
    raw = plugin.handle.listers.get("PersistentVolume", "", "pv")
    zoned = {
        **raw,
        "spec": {
            **raw["spec"],
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z"]}
                            ]
                        }
                    ]
                }
            },
        },
    }
    plugin.handle.listers.apply("MODIFIED", "PersistentVolume", zoned)
    state = CycleState()
    p = pod("c")
    plugin.pre_filter(state, p)
    other = make_snapshot([make_node("far", labels={"topology.kubernetes.io/zone": "y"})])
    conflict = Status(UNRESOLVABLE, (NODE[version],))
    assert batch_status(plugin.filter_nodes(state, p, other, rows(1)), 0) == conflict
    assert plugin.filter(state, p, other.node_infos[0]) == conflict
    assert batch_status(plugin.filter_nodes(state, p, snap, rows(3)), 0) is None


def test_reserve_assumes_and_unreserve_restores() -> None:
    plugin, snap, _ = setup(
        pvc_dict("c", sc="local"),
        pvc_dict("c2", sc="local"),
        sc_dict("local", provisioner="kubernetes.io/no-provisioner"),
        pv_dict("pv", sc="local", hosts=["n1"]),
    )
    state = CycleState()
    p = pod("c")
    plugin.pre_filter(state, p)
    assert plugin.filter(state, p, snap.node_infos[snap.index["n1"]]) is None
    assert plugin.reserve(state, p, "n1") is None
    assumed = plugin.binder.pv_cache.get("pv")
    assert assumed is not None and assumed.claim_ref is not None and assumed.claim_ref.name == "c"
    # A second pod's cycle no longer sees the volume as available.
    n1 = snap.node_infos[snap.index["n1"]]
    p2 = make_pod("p2", spec={"volumes": [claim_volume("c2")]})
    state2 = CycleState()
    plugin.pre_filter(state2, p2)
    assert plugin.filter(state2, p2, n1) == Status(UNRESOLVABLE, (BIND,))
    plugin.unreserve(state, p, "n1")
    assert plugin.binder.pv_cache.get("pv").claim_ref is None
    state3 = CycleState()
    plugin.pre_filter(state3, p2)
    assert plugin.filter(state3, p2, n1) is None


def test_pre_bind_writes_bindings_and_waits_for_the_controller() -> None:
    cluster = EmbeddedCluster(synchronous=True)
    for obj in (
        pvc_dict("c", sc="local"),
        sc_dict("local", provisioner="kubernetes.io/no-provisioner"),
        pv_dict("pv", sc="local", hosts=["n1"]),
    ):
        obj["metadata"].pop("resourceVersion", None)
        cluster.create(obj)
    cluster.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}], "volumes": [claim_volume("c")]},
        }
    )
    nodes = [make_node("n1")]
    handle = Handle(snapshot=make_snapshot(nodes), cluster=cluster)
    for kind in ("PersistentVolume", "PersistentVolumeClaim", "StorageClass"):
        for obj in cluster.list(kind)[0]:
            handle.listers.apply("ADDED", kind, obj)
    plugin = vb.new({"bindTimeoutSeconds": 3}, as_handle(handle))
    p = make_pod("p", node_name="n1", spec={"volumes": [claim_volume("c")]})
    state = CycleState()
    plugin.pre_filter(state, p)
    assert plugin.filter(state, p, handle.snapshot.node_infos[0]) is None
    plugin.reserve(state, p, "n1")
    pending = plugin.pre_bind(state, p, "n1")
    assert isinstance(pending, PendingStatus)
    # The PV's claimRef went through the cluster.
    assert cluster.get("PersistentVolume", None, "pv")["spec"]["claimRef"]["name"] == "c"
    outcomes: list[Status | None] = []
    pending.on_done(outcomes.append)
    # Nobody completes the binding: the poll gives up after bindTimeoutSeconds.
    while handle.timers and not outcomes:
        _, callback = handle.timers.pop(0)
        callback()
    assert outcomes == [Status(Code.ERROR, ("binding volumes: context deadline exceeded",))]


def test_pre_bind_with_everything_bound_is_immediate() -> None:
    plugin, snap, _ = setup(pvc_dict("c", volume="pv", bound=True), pv_dict("pv", claim=("default", "c")))
    state = CycleState()
    p = pod("c")
    plugin.pre_filter(state, p)
    plugin.filter(state, p, snap.node_infos[0])
    assert plugin.reserve(state, p, "n1") is None
    assert plugin.pre_bind(state, p, "n1") is None


def test_a_pod_without_volumes_is_skipped_with_a_state_reserve_and_pre_bind_read() -> None:
    plugin, _, _ = setup()
    state = CycleState()
    p = pod()
    assert plugin.pre_filter(state, p) == (None, Status(Code.SKIP))
    assert plugin.reserve(state, p, "n1") is None
    assert plugin.pre_bind(state, p, "n1") is None


def test_score_is_skipped_without_volume_capacity_priority() -> None:
    plugin, snap, _ = setup()
    assert plugin.pre_score(CycleState(), pod(), snap.all_nodes()) == Status(Code.SKIP)


def _with_vac(obj: dict[str, Any], vac: str) -> dict[str, Any]:
    obj["spec"]["volumeAttributesClassName"] = vac
    return obj


VAC_OBJS = [
    sc_dict("local", provisioner="kubernetes.io/no-provisioner"),
    _with_vac(pv_dict("fast", sc="local", size="50Gi", hosts=["n1"]), "gold"),
    pv_dict("plain", sc="local", size="100Gi", hosts=["n2"]),
]


@pytest.mark.parametrize(
    ("name", "claim_vac", "version", "gates", "want"),
    [
        # VolumeAttributesClass (GA in v1.34): the claim's class must equal the volume's ("" for none).
        ("gold claim takes the gold volume only", "gold", "1.34", None, {"n1": None, "n2": (BIND,)}),
        ("plain claim takes the plain volume only", "", "1.34", None, {"n1": (BIND,), "n2": None}),
        # Gate off (v1.30's default, or turned off in v1.34): the class is not looked at.
        ("v1.30 ignores the class", "gold", "1.30", None, {"n1": None, "n2": None}),
        ("gate off ignores the class", "", "1.34", {"VolumeAttributesClass": False}, {"n1": None, "n2": None}),
    ],
)
def test_filter_volume_attributes_class(
    name: str, claim_vac: str, version: str, gates: dict[str, bool] | None, want: dict[str, tuple[str, ...] | None]
) -> None:
    claim = _with_vac(pvc_dict("c", sc="local", size="10Gi"), claim_vac) if claim_vac else pvc_dict("c", sc="local")
    plugin, snap, _ = setup(claim, *VAC_OBJS, version=version, gates=gates)
    state = CycleState()
    p = pod("c")
    assert plugin.pre_filter(state, p)[1] is None
    batch = plugin.filter_nodes(state, p, snap, rows(len(NODES)))
    for node, reasons in want.items():
        expected = None if reasons is None else Status(UNRESOLVABLE, reasons)
        row = snap.index[node]
        assert plugin.filter(state, p, snap.node_infos[row]) == expected, node
        assert batch_status(batch, row) == expected, node
