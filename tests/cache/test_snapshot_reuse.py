"""A node joining the cluster copies only that node into the snapshot (a live cluster adds nodes all the
time), unless an image's spread moved, which every node's copy carries."""

from __future__ import annotations

from kubesched.api.labels import LabelSelector
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
