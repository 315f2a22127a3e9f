"""The informer store turns lists and watch events into exactly the changes not yet handed on."""

from __future__ import annotations

from kubesched.live.informers.store import Store


def obj(name: str, rv: str, uid: str | None = None, ns: str = "default") -> dict:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": ns, "resourceVersion": rv, "uid": uid or name}}


def summary(deltas: list) -> list[tuple[str, str, str | None]]:
    return [
        (d.type, d.obj["metadata"]["name"], d.old["metadata"]["resourceVersion"] if d.old is not None else None)
        for d in deltas
    ]


def test_first_list_is_all_adds_and_marks_synced() -> None:
    store = Store()
    assert not store.has_synced()
    assert summary(store.replace([obj("a", "1"), obj("b", "2")])) == [("ADDED", "a", None), ("ADDED", "b", None)]
    assert store.has_synced()
    assert {o["metadata"]["name"] for o in store.list()} == {"a", "b"}


def test_relist_is_diffed_against_the_store() -> None:
    store = Store()
    store.replace([obj("keep", "1"), obj("change", "2"), obj("gone", "3"), obj("recreated", "4", uid="u1")])
    deltas = store.replace([obj("keep", "1"), obj("change", "7"), obj("new", "8"), obj("recreated", "9", uid="u2")])
    assert sorted(summary(deltas)) == sorted(
        [
            ("DELETED", "gone", None),
            ("MODIFIED", "change", "2"),
            ("ADDED", "new", None),
            ("DELETED", "recreated", None),
            ("ADDED", "recreated", None),
        ]
    )
    changed = store.get("default", "change")
    assert changed is not None and changed["metadata"]["resourceVersion"] == "7"
    assert store.get("default", "gone") is None


def test_watch_events_already_seen_yield_nothing() -> None:
    store = Store()
    store.replace([obj("a", "1")])
    assert store.apply("ADDED", obj("a", "1")) == []
    assert summary(store.apply("MODIFIED", obj("a", "2"))) == [("MODIFIED", "a", "1")]
    assert store.apply("MODIFIED", obj("a", "2")) == []
    assert summary(store.apply("DELETED", obj("a", "3"))) == [("DELETED", "a", None)]
    assert store.apply("DELETED", obj("a", "3")) == []


def test_keys_are_namespaced() -> None:
    store = Store()
    store.replace([obj("a", "1", ns="x"), obj("a", "2", ns="y")])
    assert [o["metadata"]["namespace"] for o in store.list("y")] == ["y"]
    in_x = store.get("x", "a")
    assert in_x is not None and in_x["metadata"]["resourceVersion"] == "1"
