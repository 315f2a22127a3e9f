"""The reflector loop against a scripted API: 410 Gone relists, broken streams reconnect, bookmarks move
the resourceVersion, and every change reaches the handler exactly once."""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

import pytest

from kubesched.live.informers import informer as informer_module
from kubesched.live.informers.informer import Gone, Informer


def pod(name: str, rv: str) -> dict:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv, "uid": name}}


class Stream:
    def __init__(self, events: list[Any]) -> None:
        self.events = events
        self.closed = False

    def __iter__(self) -> Any:
        for event in self.events:
            if isinstance(event, Exception):
                raise event
            yield event

    def close(self) -> None:
        self.closed = True


class ScriptedAPI:
    """``lists`` answer successive list calls; ``watches`` answer successive watch calls (an exception is
    raised by the call itself; a list of events is a stream that then ends)."""

    def __init__(self, lists: list[tuple[list[dict], str]], watches: list[Any]) -> None:
        self.lists = lists
        self.watches = watches
        self.watch_rvs: list[str] = []
        self.list_rvs: list[str] = []
        self.done = threading.Event()

    def list(self, resource_version: str) -> tuple[list[dict], str]:
        self.list_rvs.append(resource_version)
        return self.lists.pop(0)

    def watch(self, resource_version: str, timeout_seconds: int) -> Stream:
        self.watch_rvs.append(resource_version)
        if not self.watches:
            self.done.set()
            time.sleep(0.05)
            return Stream([])
        step = self.watches.pop(0)
        if isinstance(step, Exception):
            raise step
        return Stream(step)


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(informer_module, "INITIAL_BACKOFF", 0.01)


def run(api: ScriptedAPI) -> tuple[Informer, list[tuple[str, str, str | None]]]:
    seen: queue.Queue[tuple[str, str, str | None]] = queue.Queue()

    def handler(kind: str, delta: Any) -> None:
        old = delta.old["metadata"]["resourceVersion"] if delta.old is not None else None
        seen.put((delta.type, f"{delta.obj['metadata']['name']}@{delta.obj['metadata']['resourceVersion']}", old))

    inf = Informer("Pod", api, handler)
    inf.start()
    assert api.done.wait(10), "the informer did not get through the script"
    inf.stop()
    return inf, [seen.get_nowait() for _ in range(seen.qsize())]


def test_list_then_watch_from_the_list_resource_version() -> None:
    api = ScriptedAPI(
        [([pod("a", "5")], "10")],
        [
            [
                {"type": "ADDED", "object": pod("b", "11")},
                {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "15"}}},
            ]
        ],
    )
    inf, seen = run(api)
    assert seen == [("ADDED", "a@5", None), ("ADDED", "b@11", None)]
    assert api.watch_rvs[:2] == ["10", "15"]  # the bookmark moved the resume point
    assert inf.has_synced()


def test_gone_relists_and_hands_on_only_the_difference() -> None:
    api = ScriptedAPI(
        [([pod("a", "5"), pod("b", "6")], "10"), ([pod("a", "5"), pod("c", "20")], "21")],
        [[{"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old"}}]],
    )
    inf, seen = run(api)
    assert seen == [("ADDED", "a@5", None), ("ADDED", "b@6", None), ("DELETED", "b@6", None), ("ADDED", "c@20", None)]
    assert inf.relists == 2
    assert api.watch_rvs[:2] == ["10", "21"]
    # The first list may come from the watch cache; the relist must not (what it had is gone).
    assert api.list_rvs == ["0", ""]


def test_a_410_answer_to_the_watch_request_relists_too() -> None:
    api = ScriptedAPI([([], "1"), ([pod("x", "3")], "4")], [Gone("expired")])
    _, seen = run(api)
    assert seen == [("ADDED", "x@3", None)]


def test_broken_stream_resumes_from_the_last_event_without_doubling() -> None:
    api = ScriptedAPI(
        [([pod("a", "5")], "10")],
        [
            [{"type": "MODIFIED", "object": pod("a", "11")}, ConnectionResetError("cut")],
            OSError("connection refused"),
            [{"type": "MODIFIED", "object": pod("a", "11")}, {"type": "MODIFIED", "object": pod("a", "12")}],
        ],
    )
    _, seen = run(api)
    assert seen == [("ADDED", "a@5", None), ("MODIFIED", "a@11", "5"), ("MODIFIED", "a@12", "11")]
    assert api.watch_rvs[:3] == ["10", "11", "11"]


def test_a_watch_that_broke_after_it_ran_is_opened_again_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # As client-go's reflector: only a watch that cannot be opened, or breaks at once, waits the backoff;
    # with a backoff far longer than the script, the script still completes.
    monkeypatch.setattr(informer_module, "INITIAL_BACKOFF", 60.0)
    api = ScriptedAPI(
        [([pod("a", "5")], "10")],
        [
            [{"type": "MODIFIED", "object": pod("a", "11")}, ConnectionResetError("cut mid-event")],
            [{"type": "MODIFIED", "object": pod("a", "12")}, ConnectionResetError("cut again")],
        ],
    )
    _, seen = run(api)
    assert seen == [("ADDED", "a@5", None), ("MODIFIED", "a@11", "5"), ("MODIFIED", "a@12", "11")]
    assert api.watch_rvs[:3] == ["10", "11", "12"]


def test_a_watch_that_breaks_at_once_backs_off(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float | None] = []
    api = ScriptedAPI([([], "1")], [[ConnectionResetError("cut")], [{"type": "ADDED", "object": pod("b", "2")}]])
    inf = Informer("Pod", api, lambda kind, delta: None)

    def wait(delay: float | None = None) -> bool:
        waits.append(delay)
        return False

    monkeypatch.setattr(inf._stop, "wait", wait)
    inf.start()
    assert api.done.wait(10)
    inf._stop.set()
    inf.stop()
    assert len(waits) == 1 and waits[0] is not None and waits[0] >= 0.01


def test_synced_only_once_the_first_list_reached_the_handler() -> None:
    """As kube-scheduler's handler sync: the store holding the list is not enough."""
    api = ScriptedAPI([([pod("a", "5"), pod("b", "6")], "10")], [[]])
    release = threading.Event()
    seen: list[str] = []
    synced_during: list[bool] = []
    inf: Informer | None = None

    def handler(kind: str, delta: Any) -> None:
        assert inf is not None
        synced_during.append(inf.has_synced())
        release.wait(10)
        seen.append(delta.obj["metadata"]["name"])

    inf = Informer("Pod", api, handler)
    inf.start()
    assert not inf.wait_for_sync(0.2)  # the store has the list; the handler is still on the first object
    assert inf.store.has_synced()
    release.set()
    assert inf.wait_for_sync(10)
    assert seen == ["a", "b"] and synced_during == [False, False]
    inf.stop()
