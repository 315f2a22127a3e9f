"""A node joining the cluster copies only that node into the snapshot (a live cluster adds nodes all the
time), unless an image's spread moved, which every node's copy carries."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.labels import LabelSelector
from kubesched.api.objects import Node, Pod
from kubesched.cache.pod_index import REQUIRED_ANTI_AFFINITY
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.imagelocality import ImageLocality
from tests.cache.test_cache import make_node, make_pod, new_cache, on, snap


def test_adding_a_node_keeps_the_other_nodes_copies() -> None:
    cache = new_cache()
    for name in ("n1", "n2"):
        cache.add_node(make_node(name))
    snapshot = snap(cache)
    before = {name: snapshot.get(name) for name in ("n1", "n2")}
    cache.add_node(make_node("n3"))
    snap(cache, snapshot)
    assert [i.name for i in snapshot.node_infos] == ["n1", "n2", "n3"]
    assert all(snapshot.get(name) is info for name, info in before.items())


def test_an_image_spread_change_recopies_every_node() -> None:
    cache = new_cache()
    cache.add_node(make_node("n1", images=[{"names": ["redis"], "sizeBytes": 50}]))
    snapshot = snap(cache)
    old = snapshot.get("n1")
    cache.add_node(make_node("n2", images=[{"names": ["redis"], "sizeBytes": 50}]))
    snap(cache, snapshot)
    n1 = snapshot.get("n1")
    assert n1 is not old and n1 is not None and n1.image_states["redis"].num_nodes == 2


def test_a_node_update_with_the_same_images_is_no_image_change() -> None:
    cache = new_cache()
    images = [{"names": ["redis"], "sizeBytes": 50}]
    cache.add_node(make_node("n1", images=images))
    cache.add_node(make_node("n2"))
    snapshot = snap(cache)
    kept = snapshot.get("n2")
    cache.update_node(None, make_node("n1", images=images, labels={"new": "label"}))
    cache.add_node(make_node("n3"))
    snap(cache, snapshot)
    assert snapshot.get("n2") is kept
    n1 = snapshot.get("n1")
    assert n1 is not None and n1.node is not None and n1.node.labels.get("new") == "label"


def test_a_node_joining_mid_list_moves_rows_and_pod_indexes_without_recopying() -> None:
    """Zones interleave, so a joining node lands between existing rows: kept nodes keep their copies,
    every row moves to its node-tree position and the pod index follows its pods to their new rows."""
    zone = "topology.kubernetes.io/zone"
    cache = new_cache()
    for name, z in (("a1", "a"), ("b1", "b"), ("a2", "a")):
        cache.add_node(make_node(name, labels={zone: z}))
    cache.add_pod(on(make_pod("p", labels={"app": "web"}, uid="u1"), "a2"))
    snapshot = snap(cache)
    assert [i.name for i in snapshot.node_infos] == ["a1", "b1", "a2"]
    snapshot.label_column(zone)
    kept = {name: snapshot.get(name) for name in ("a1", "b1", "a2")}
    cache.add_node(make_node("b2", labels={zone: "b"}))
    snap(cache, snapshot)
    assert [i.name for i in snapshot.node_infos] == ["a1", "b1", "a2", "b2"]
    assert all(snapshot.get(name) is info for name, info in kept.items())
    cache.add_node(make_node("c1", labels={zone: "c"}))
    snap(cache, snapshot)
    assert [i.name for i in snapshot.node_infos] == ["a1", "b1", "c1", "a2", "b2"]
    rows = snapshot.pods.rows_matching(None, LabelSelector.from_dict({"matchLabels": {"app": "web"}}))
    assert snapshot.names[rows].tolist() == ["a2"]
    assert snapshot.pod_count.tolist() == [0, 0, 0, 1, 0]
    column = snapshot.label_column(zone)
    assert [column.values[c] for c in column.codes] == ["a", "b", "c", "a", "b"]


_ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}
_SELECTORS = [
    LabelSelector.from_dict(s)
    for s in (
        {"matchLabels": {"app": "a"}},
        {"matchLabels": {"app": "b"}},
        {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
        {},
    )
]


def _index_answers(snapshot: Snapshot, uids: list[str]) -> tuple[Any, ...]:
    """What the pod indexes answer, in node names (rows differ between snapshots built differently)."""
    names = snapshot.names
    per_selector = [sorted(names[snapshot.pods.rows_matching(None, s)].tolist()) for s in _SELECTORS]
    scanned = [sorted(names[row] for _, row in snapshot.pods.pods_matching(None, s)) for s in _SELECTORS]
    where = [None if (r := snapshot.pods.row_of(uid)) is None else names[r] for uid in uids]
    terms = []
    for entry in snapshot.affinity_terms.terms(REQUIRED_ANTI_AFFINITY):
        rows, counts = entry.arrays()
        terms.append(sorted(zip(names[rows].tolist(), counts.tolist(), strict=True)))
        assert sorted(entry.per_row.items()) == sorted(zip(rows.tolist(), counts.tolist(), strict=True))
    return per_selector, scanned, where, terms


def _image_scores(plugin: ImageLocality, snapshot: Snapshot, pod: Pod) -> dict[str, int]:
    if not len(snapshot):
        return {}
    scores = plugin.score_nodes(CycleState(), pod, snapshot.all_nodes())
    return dict(zip(snapshot.names.tolist(), scores.tolist(), strict=True))


def _rows(snapshot: Snapshot) -> dict[str, tuple[Any, ...]]:
    """Each node's columns by resource name (column order differs between snapshots built differently)."""
    out: dict[str, tuple[Any, ...]] = {}
    for row, name in enumerate(snapshot.names.tolist()):
        per_resource = {
            r: (int(snapshot.allocatable[row, c]), int(snapshot.requested[row, c]))
            for r, c in snapshot.resource_columns.items()
        }
        out[name] = (
            {r: v for r, v in per_resource.items() if v != (0, 0)},
            snapshot.non_zero_requested[row].tolist(),
            int(snapshot.pod_count[row]),
            int(snapshot.allowed_pods[row]),
        )
    return out


def _cordoned(node: Node) -> bool:
    return node.unschedulable


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(("node", "pod", "move", "delete", "remake", "relabel", "resize")), st.integers(0, 1000)
        ),
        min_size=1,
        max_size=50,
    )
)
def test_pod_indexes_follow_joining_nodes_as_a_fresh_snapshot_sees_them(ops: list[tuple[str, int]]) -> None:
    """Nodes join in random zones (rows shift) and are resized, pods come, move, are re-made (relabelled
    or not) and go; after every update (after most steps, some changes piling up in between) the kept
    snapshot's indexes, columns and carried node columns answer as a snapshot built from scratch does."""
    cache = new_cache()
    snapshot = snap(cache)
    snapshot.node_column(_cordoned, bool)
    kept_plugin = ImageLocality()
    nodes: list[str] = []
    pods: dict[str, Pod] = {}
    for step, (op, n) in enumerate(ops):
        if op == "node" or not nodes:
            name = f"n{step}"
            images = [{"names": [f"img{n % 4}:v1"], "sizeBytes": 300 * 1024 * 1024}] if n % 4 < 2 else []
            cache.add_node(
                make_node(
                    name, labels={"topology.kubernetes.io/zone": f"z{n % 3}"}, unschedulable=n % 5 == 0, images=images
                )
            )
            nodes.append(name)
        elif op == "pod" or not pods:
            labels = {"app": "ab"[n % 2]} if n % 3 else {}
            spec = {"affinity": _ANTI} if n % 4 == 0 else None
            pod = on(make_pod(f"p{step}", labels=labels, spec=spec, uid=f"u{step}"), nodes[n % len(nodes)])
            cache.add_pod(pod)
            pods[pod.uid] = pod
        elif op == "move":
            old = pods[sorted(pods)[n % len(pods)]]
            cache.remove_pod(old)
            pods[old.uid] = on(old, nodes[n % len(nodes)])
            cache.add_pod(pods[old.uid])
        elif op == "resize":  # a node's allocatable changes (an extended resource comes and goes)
            name = nodes[n % len(nodes)]
            node = cache.node_infos()[name].node  # the snapshot may not have the node yet
            assert node is not None
            allocatable = {**node.raw["status"]["allocatable"], "cpu": str(2 + n % 5)}
            if n % 2:
                allocatable["example.com/dongle"] = str(n % 3)
            status = {**node.raw["status"], "allocatable": allocatable}
            cache.update_node(node, Node.from_dict({**node.raw, "status": status}))
        elif op in ("remake", "relabel"):  # the same pod on the same node, a new object (a binding confirmed)
            old = pods[sorted(pods)[n % len(pods)]]
            labels = {"app": "ab"[n % 2]} if op == "relabel" else dict(old.labels)
            raw = {**old.raw, "metadata": {**old.raw["metadata"], "labels": labels}}
            pods[old.uid] = on(Pod.from_dict(raw), old.node_name)
            cache.update_pod(old, pods[old.uid])
        else:
            cache.remove_pod(pods.pop(sorted(pods)[n % len(pods)]))
        if n % 3 == 0 and step < len(ops) - 1:
            continue  # changes pile up: the next update sees several on a node (one pod swapped for another…)
        snap(cache, snapshot)
        fresh = Snapshot()
        fresh.replace_all(list(snapshot.node_infos))
        uids = [*sorted(pods), "missing"]
        assert _index_answers(snapshot, uids) == _index_answers(fresh, uids)
        handed_out = {pod.uid: pod for pod, _ in snapshot.pods.pods_matching(None, LabelSelector.from_dict({}))}
        assert handed_out.keys() == pods.keys() and all(handed_out[uid] is pod for uid, pod in pods.items())
        assert _rows(snapshot) == _rows(fresh)
        incoming = make_pod("incoming", image=f"img{n % 2}:v1")
        # The kept plugin's image index is carried across joins; a new one's is built from scratch.
        assert _image_scores(kept_plugin, snapshot, incoming) == _image_scores(ImageLocality(), fresh, incoming)
        if step % 7 == 0:  # built now and then, so that it is carried through several joins
            assert snapshot.node_column(_cordoned, bool).tolist() == fresh.node_column(_cordoned, bool).tolist()
