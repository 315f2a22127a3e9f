"""NodeVolumeLimits and the in-tree disk limits, table-style after kube-scheduler's csi_test.go and
non_csi_test.go. Every case checks the per-node Filter and the batch form agree."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.config.features import feature_gates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.nodevolumelimits import csi, non_csi
from kubesched.plugins.nodevolumelimits.translation import csi_attach_limit_key
from tests.factories import as_handle, make_node, make_pod, make_snapshot
from tests.plugins.storage import (
    Handle,
    batch_status,
    claim_volume,
    csinode_dict,
    pv_dict,
    pvc_dict,
    rows,
    sc_dict,
    va_dict,
)

EXCEEDED = Status(Code.UNSCHEDULABLE, ("node(s) exceed max volume count",))
DRIVER = "ebs.csi.aws.com"


def csi_claims(*names: str, driver: str = DRIVER) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in names:
        out += [
            pvc_dict(n, volume=f"pv-{n}", bound=True),
            pv_dict(f"pv-{n}", source={"csi": {"driver": driver, "volumeHandle": f"h-{n}"}}),
        ]
    return out


def pod_with(name: str, *claims: str, node: str = "", extra: list[dict[str, Any]] | None = None) -> Any:
    vols = [claim_volume(c, f"v{i}") for i, c in enumerate(claims)] + list(extra or [])
    return make_pod(name, node_name=node, spec={"volumes": vols})


CSI_CASES = [
    ("under the limit", ["a"], ["b"], {DRIVER: 2}, None),
    ("at the limit", ["a", "b"], ["c"], {DRIVER: 2}, EXCEEDED),
    ("same volume counted once", ["a", "b"], ["a"], {DRIVER: 2}, None),
    ("no limit reported", ["a", "b"], ["c"], {DRIVER: None}, None),
    ("other driver's limit", ["a", "b"], ["c"], {"other.csi": 1}, None),
    ("two new volumes over", ["a"], ["b", "c"], {DRIVER: 2}, EXCEEDED),
]


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize(("name", "existing", "new", "limits", "want"), CSI_CASES, ids=[c[0] for c in CSI_CASES])
def test_csi_limits(
    name: str, existing: list[str], new: list[str], limits: dict[str, int | None], want: Status | None, version: str
) -> None:
    node = make_node("n")
    existing_pods = [pod_with(f"e{i}", c, node="n") for i, c in enumerate(existing)]
    snap = make_snapshot([node], existing_pods)
    handle = Handle(snapshot=snap, features=feature_gates(version)).add(
        *csi_claims(*{*existing, *new}), csinode_dict("n", drivers=limits)
    )
    plugin = csi.new(None, as_handle(handle))
    pod = pod_with("p", *new)
    state = CycleState()
    assert plugin.pre_filter(state, pod) == (None, None)
    assert plugin.filter(state, pod, snap.node_infos[0]) == want
    assert batch_status(plugin.filter_nodes(state, pod, snap, rows(1)), 0) == want


@pytest.mark.parametrize(("version", "want"), [("1.30", EXCEEDED), ("1.34", None)])
def test_csi_limit_from_node_allocatable_in_v1_30_only(version: str, want: Status | None) -> None:
    node = make_node("n", extra={csi_attach_limit_key(DRIVER): "1"})
    snap = make_snapshot([node], [pod_with("e", "a", node="n")])
    plugin = csi.new(None, as_handle(Handle(snapshot=snap, features=feature_gates(version)).add(*csi_claims("a", "b"))))
    pod = pod_with("p", "b")
    assert plugin.filter(CycleState(), pod, snap.node_infos[0]) == want
    assert batch_status(plugin.filter_nodes(CycleState(), pod, snap, rows(1)), 0) == want


VA_CASES = [
    # (name, attachments, pods' claims on the node, the new pod's claims, limit, v1.34 verdict)
    ("an attached volume no pod uses counts", [va_dict("va", pv="pv-x")], [], ["b"], 1, EXCEEDED),
    ("room for both", [va_dict("va", pv="pv-x")], [], ["b"], 2, None),
    ("a volume both attached and used counts once", [va_dict("va", pv="pv-a")], ["a"], ["b"], 2, None),
    ("the new pod's own volume is not matched against attachments", [va_dict("va", pv="pv-b")], [], ["b"], 1, EXCEEDED),
    ("another node's attachment", [va_dict("va", pv="pv-x", node="other")], [], ["b"], 1, None),
    ("an inline volume spec", [va_dict("va")], [], ["b"], 1, None),
    ("a PV that is gone", [va_dict("va", pv="pv-gone")], [], ["b"], 1, None),
    ("a PV that is not CSI", [va_dict("va", pv="nfs")], [], ["b"], 1, None),
    ("another driver's attachment", [va_dict("va", pv="pv-o", attacher="other.csi")], [], ["b"], 1, None),
]


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize(
    ("name", "attachments", "existing", "new", "limit", "want"), VA_CASES, ids=[c[0] for c in VA_CASES]
)
def test_volume_attachments_count_from_v1_34(
    name: str,
    attachments: list[dict[str, Any]],
    existing: list[str],
    new: list[str],
    limit: int,
    want: Status | None,
    version: str,
) -> None:
    snap = make_snapshot(
        [make_node("n"), make_node("other")], [pod_with(f"e{i}", c, node="n") for i, c in enumerate(existing)]
    )
    handle = Handle(snapshot=snap, features=feature_gates(version)).add(
        *csi_claims("a", "b", "x"),
        *csi_claims("o", driver="other.csi"),
        pv_dict("nfs", source={"nfs": {"server": "s", "path": "/"}}),
        csinode_dict("n", drivers={DRIVER: limit, "other.csi": 1}),
    )
    for va in attachments:
        # An attachment applied after the first filter must be seen too (the plugin's caches follow).
        plugin = csi.new(None, as_handle(handle))
        plugin.filter_nodes(CycleState(), pod_with("p", *new), snap, rows(2))
        handle.add(va)
    plugin = plugin if attachments else csi.new(None, as_handle(handle))
    pod = pod_with("p", *new)
    expected = want if version == "1.34" else None
    assert plugin.filter(CycleState(), pod, snap.node_infos[0]) == expected
    assert batch_status(plugin.filter_nodes(CycleState(), pod, snap, rows(2)), 0) == expected


def px(vol: str) -> dict[str, Any]:
    return {"name": f"px-{vol}", "portworxVolume": {"volumeID": vol}}


@pytest.mark.parametrize(
    ("version", "annotated", "want"),
    [
        # CSIMigrationPortworx is on in v1.34: portworx volumes count against pxd.portworx.com on nodes
        # whose CSINode lists the plugin as migrated.
        ("1.34", True, EXCEEDED),
        ("1.34", False, None),
        ("1.30", True, None),
    ],
)
def test_portworx_volumes_count_where_migrated(version: str, annotated: bool, want: Status | None) -> None:
    existing = make_pod("e", node_name="n", spec={"volumes": [px("old")]})
    snap = make_snapshot([make_node("n")], [existing])
    handle = Handle(snapshot=snap, features=feature_gates(version)).add(
        csinode_dict(
            "n", drivers={"pxd.portworx.com": 1}, migrated="kubernetes.io/portworx-volume" if annotated else ""
        )
    )
    plugin = csi.new(None, as_handle(handle))
    pod = make_pod("p", spec={"volumes": [px("new")]})
    assert plugin.pre_filter(CycleState(), pod) == (None, None)
    assert plugin.filter(CycleState(), pod, snap.node_infos[0]) == want
    assert batch_status(plugin.filter_nodes(CycleState(), pod, snap, rows(1)), 0) == want


@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_batch_equals_per_node_on_random_clusters(version: str) -> None:
    rng = random.Random(5)
    claims = [f"c{i}" for i in range(8)]
    for trial in range(30):
        nodes = [
            make_node(
                f"n{i}", extra={csi_attach_limit_key(DRIVER): str(rng.randint(0, 3))} if rng.random() < 0.3 else None
            )
            for i in range(rng.randint(1, 8))
        ]
        pods = [
            pod_with(
                f"e{trial}-{k}",
                *rng.sample(claims, rng.randint(0, 3)),
                node=rng.choice(nodes).name,
                extra=[ebs(f"v{rng.randint(0, 4)}")] if rng.random() < 0.2 else None,
            )
            for k in range(rng.randint(0, 12))
        ]
        snap = make_snapshot(nodes, pods)
        handle = Handle(snapshot=snap, features=feature_gates(version)).add(*csi_claims(*claims))
        for node in nodes:
            if rng.random() < 0.7:
                handle.add(csinode_dict(node.name, drivers={DRIVER: rng.choice([None, 1, 2, 3, 4])}))
        for k in range(rng.randint(0, 6)):
            handle.add(va_dict(f"va{k}", pv=f"pv-{rng.choice(claims)}", node=rng.choice(nodes).name))
        plugin = csi.new(None, as_handle(handle))
        pod = pod_with(
            f"p{trial}", *rng.sample(claims, rng.randint(1, 3)), extra=[ebs("v9")] if rng.random() < 0.3 else None
        )
        state = CycleState()
        batch = plugin.filter_nodes(state, pod, snap, rows(len(nodes)))
        for k, info in enumerate(snap.node_infos):
            assert batch_status(batch, k) == plugin.filter(state, pod, info), (trial, info.name)


def test_unbound_claim_counts_against_its_provisioner() -> None:
    snap = make_snapshot([make_node("n")], [pod_with("e", "a", node="n")])
    handle = Handle(snapshot=snap).add(
        *csi_claims("a"), pvc_dict("u", sc="fast"), sc_dict("fast"), csinode_dict("n", drivers={DRIVER: 1})
    )
    plugin = csi.new(None, as_handle(handle))
    pod = pod_with("p", "u")
    assert plugin.filter(CycleState(), pod, snap.node_infos[0]) == EXCEEDED
    assert batch_status(plugin.filter_nodes(CycleState(), pod, snap, rows(1)), 0) == EXCEEDED


@pytest.mark.parametrize(("has_csinode", "want"), [(True, EXCEEDED), (False, None)])
def test_migrated_in_tree_volumes_count_as_csi(has_csinode: bool, want: Status | None) -> None:
    inline = {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-new"}}
    existing = make_pod(
        "e", node_name="n", spec={"volumes": [{"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-old"}}]}
    )
    snap = make_snapshot([make_node("n")], [existing])
    handle = Handle(snapshot=snap)
    if has_csinode:
        handle.add(csinode_dict("n", drivers={DRIVER: 1}))
    plugin = csi.new(None, as_handle(handle))
    pod = make_pod("p", spec={"volumes": [inline]})
    assert plugin.filter(CycleState(), pod, snap.node_infos[0]) == want
    assert batch_status(plugin.filter_nodes(CycleState(), pod, snap, rows(1)), 0) == want


def test_missing_claim_is_unresolvable() -> None:
    snap = make_snapshot([make_node("n")])
    plugin = csi.new(None, as_handle(Handle(snapshot=snap)))
    status = plugin.filter(CycleState(), pod_with("p", "gone"), snap.node_infos[0])
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert 'persistentvolumeclaim "gone" not found' in status.message


def ebs(vol: str) -> dict[str, Any]:
    return {"name": f"d-{vol}", "awsElasticBlockStore": {"volumeID": vol}}


NON_CSI_CASES = [
    ("ebs under default 39", 38, 1, {}, None),
    ("ebs over default 39", 39, 1, {}, EXCEEDED),
    ("nitro instance type limit 25", 25, 1, {"node.kubernetes.io/instance-type": "m5.large"}, EXCEEDED),
    ("allocatable overrides", 2, 1, {"alloc": "2"}, EXCEEDED),
]


@pytest.mark.parametrize(
    ("name", "attached", "new", "labels", "want"), NON_CSI_CASES, ids=[c[0] for c in NON_CSI_CASES]
)
def test_ebs_limits(name: str, attached: int, new: int, labels: dict[str, str], want: Status | None) -> None:
    alloc = labels.pop("alloc", None)
    node = make_node("n", labels=labels, extra={"attachable-volumes-aws-ebs": alloc} if alloc else None)
    existing = make_pod("e", node_name="n", spec={"volumes": [ebs(f"old-{i}") for i in range(attached)]})
    snap = make_snapshot([node], [existing])
    plugin = non_csi.new_ebs(None, as_handle(Handle(snapshot=snap)))
    pod = make_pod("p", spec={"volumes": [ebs(f"new-{i}") for i in range(new)]})
    state = CycleState()
    assert plugin.pre_filter(state, pod) == (None, None)
    assert plugin.filter(state, pod, snap.node_infos[0]) == want
    assert batch_status(plugin.filter_nodes(state, pod, snap, rows(1)), 0) == want


def test_in_tree_limits_step_aside_on_migrated_nodes() -> None:
    existing = make_pod("e", node_name="n", spec={"volumes": [ebs(f"old-{i}") for i in range(39)]})
    snap = make_snapshot([make_node("n")], [existing])
    plugin = non_csi.new_ebs(None, as_handle(Handle(snapshot=snap).add(csinode_dict("n", drivers={DRIVER: 100}))))
    pod = make_pod("p", spec={"volumes": [ebs("new")]})
    assert plugin.filter(CycleState(), pod, snap.node_infos[0]) is None


@pytest.mark.parametrize(
    ("factory", "source", "limit"),
    [
        (non_csi.new_gce_pd, {"gcePersistentDisk": {"pdName": "x"}}, 16),
        (non_csi.new_azure_disk, {"azureDisk": {"diskName": "x", "diskURI": "u"}}, 16),
    ],
)
def test_other_cloud_defaults(factory: Any, source: dict[str, Any], limit: int) -> None:
    key, body = next(iter(source.items()))
    id_field = next(iter(body))

    def vol(i: int) -> dict[str, Any]:
        return {"name": f"d{i}", key: {**body, id_field: f"disk-{i}"}}

    existing = make_pod("e", node_name="n", spec={"volumes": [vol(i) for i in range(limit)]})
    snap = make_snapshot([make_node("n")], [existing])
    plugin = factory(None, Handle(snapshot=snap))
    assert plugin.filter(CycleState(), make_pod("p", spec={"volumes": [vol(limit)]}), snap.node_infos[0]) == EXCEEDED
    assert plugin.filter(CycleState(), make_pod("q", spec={"volumes": [vol(0)]}), snap.node_infos[0]) is None
