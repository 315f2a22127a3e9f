from __future__ import annotations

from kubesched.api.objects import Pod
from kubesched.queue.nominator import VIEW_LOG, Nominator
from tests.queue.conftest import mkpod


def names(pods: list[Pod]) -> list[str]:
    return [p.name for p in pods]


def test_add_override_noop_and_order() -> None:
    n = Nominator()
    a, b, c = mkpod("a"), mkpod("b", nominated="n2"), mkpod("c")
    n.add_nominated_pod(a, "n1")
    n.add_nominated_pod(b)  # falls back to status.nominatedNodeName
    n.add_nominated_pod(c, "n1")
    n.add_nominated_pod(mkpod("d"))  # nothing to nominate to
    assert names(n.nominated_pods_for_node("n1")) == ["a", "c"]
    assert names(n.nominated_pods_for_node("n2")) == ["b"]
    assert n.nominated_node_of(a.uid) == "n1" and n.nominated_node_of("nope") is None
    assert len(n) == 3
    # Re-nominating moves the pod (to the end of the new node's list).
    n.add_nominated_pod(a, "n2")
    assert names(n.nominated_pods_for_node("n1")) == ["c"]
    assert names(n.nominated_pods_for_node("n2")) == ["b", "a"]
    # Explicit noop ignores the given name; override with "" clears.
    n.add_nominated_pod(b, "n3", mode="noop")
    assert n.nominated_node_of(b.uid) == "n2"
    n.add_nominated_pod(b, "", mode="override")
    assert n.nominated_node_of(b.uid) is None
    assert names(n.nominated_pods_for_node("n2")) == ["a"]
    assert sorted(n.nominated_node_names()) == ["n1", "n2"]


def test_result_is_a_copy() -> None:
    n = Nominator()
    n.add_nominated_pod(mkpod("a"), "n1")
    got = n.nominated_pods_for_node("n1")
    got.clear()
    assert names(n.nominated_pods_for_node("n1")) == ["a"]
    assert n.nominated_pods_for_node("unknown") == []


def test_bound_or_gone_pods_are_not_nominated() -> None:
    n = Nominator()
    n.add_nominated_pod(mkpod("bound", node_name="n9"), "n1")
    assert n.nominated_pods_for_node("n1") == []
    live = {"default/alive": mkpod("alive"), "default/bound-now": mkpod("bound-now", node_name="n3")}
    n = Nominator(pod_lister=lambda p: live.get(p.key))
    n.add_nominated_pod(mkpod("alive"), "n1")
    n.add_nominated_pod(mkpod("gone"), "n1")
    n.add_nominated_pod(mkpod("bound-now"), "n1")
    assert names(n.nominated_pods_for_node("n1")) == ["alive"]


def test_delete() -> None:
    n = Nominator()
    a = mkpod("a")
    n.add_nominated_pod(a, "n1")
    n.delete_nominated_pod_if_exists(a)
    n.delete_nominated_pod_if_exists(a)
    assert n.nominated_pods_for_node("n1") == [] and n.nominated_node_names() == []


def test_update() -> None:
    n = Nominator()
    old = mkpod("a")
    n.add_nominated_pod(old, "n1")
    # An update knowing nothing of the nomination keeps the in-memory one, with the new object.
    new = mkpod("a", labels={"v": "2"})
    n.update_nominated_pod(old, new)
    assert n.nominated_pods_for_node("n1") == [new]
    # The status patch arrives naming another node: follow it.
    newer = mkpod("a", nominated="n2")
    n.update_nominated_pod(new, newer)
    assert n.nominated_pods_for_node("n1") == [] and n.nominated_pods_for_node("n2") == [newer]
    # The nomination is cleared on the object: drop it.
    n.update_nominated_pod(newer, mkpod("a"))
    assert n.nominated_node_of(old.uid) is None


def test_nominations_view_follows_every_change() -> None:
    n = Nominator()
    a, b = mkpod("a"), mkpod("b")
    assert n.nominations() == {}
    n.add_nominated_pod(a, "n1")
    n.add_nominated_pod(b, "n1")
    view = n.nominations()
    assert {k: names(list(v)) for k, v in view.items()} == {"n1": ["a", "b"]}
    assert n.nominations() is view  # nothing changed: the same view, no rebuild
    n.add_nominated_pod(a, "n2")
    assert {k: names(list(v)) for k, v in n.nominations().items()} == {"n1": ["b"], "n2": ["a"]}
    n.delete_nominated_pod_if_exists(b)
    n.update_nominated_pod(a, mkpod("a"))  # a new object without a nomination keeps the in-memory one
    assert {k: names(list(v)) for k, v in n.nominations().items()} == {"n2": ["a"]}


def test_a_new_view_keeps_the_tuples_of_nodes_that_did_not_change() -> None:
    n = Nominator()
    a, b, c = mkpod("a"), mkpod("b"), mkpod("c")
    n.add_nominated_pod(a, "n1")
    n.add_nominated_pod(b, "n2")
    before = n.nominations()
    n.add_nominated_pod(c, "n2")
    after = n.nominations()
    assert after is not before and after["n1"] is before["n1"]  # what readers compare by identity
    assert names(list(after["n2"])) == ["b", "c"]
    n.delete_nominated_pod_if_exists(a)
    assert "n1" not in n.nominations() and n.nominations()["n2"] is after["n2"]


def test_a_view_tells_which_nodes_changed_since_an_earlier_one() -> None:
    n = Nominator()
    a, b, c = mkpod("a"), mkpod("b"), mkpod("c")
    n.add_nominated_pod(a, "n1")
    first = n.nominations()
    n.add_nominated_pod(b, "n2")
    second = n.nominations()
    n.add_nominated_pod(c, "n3")
    n.delete_nominated_pod_if_exists(a)
    third = n.nominations()
    assert third.changed_since(second.version) == {"n1", "n3"}
    assert third.changed_since(first.version) == {"n1", "n2", "n3"}
    assert second.changed_since(first.version) == {"n2"}  # an older view knows nothing of later changes
    assert third.changed_since(third.version) == set()
    for i in range(VIEW_LOG + 1):  # the oldest changes are forgotten: readers compare every entry then
        n.add_nominated_pod(mkpod(f"x{i}"), "n9")
        n.nominations()
    assert n.nominations().changed_since(first.version) is None
