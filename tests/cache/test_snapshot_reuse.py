"""A node joining the cluster copies only that node into the snapshot (a live cluster adds nodes all the
time), unless an image's spread moved, which every node's copy carries."""

from __future__ import annotations

from tests.cache.test_cache import make_node, new_cache, snap


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
