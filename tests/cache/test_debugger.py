"""The cache debugger: what the comparer finds and what the dumper writes, as kube-scheduler's do."""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import threading
import time
from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.cache.cache import Cache
from kubesched.cache.debugger import (
    CacheDebugger,
    compare_nodes,
    compare_pod_nodes,
    compare_pods,
    compare_strings,
    print_resource,
    queue_summary,
)
from kubesched.clock import VirtualClock
from kubesched.klog.text import KV_ATTR
from tests.factories import make_node, make_pod, node_dict, pod_dict


class FakeQueue:
    """The queue as the debugger reads it: pending pods, their counts, nominations."""

    def __init__(self, pending: list[Pod], nominated: dict[str, list[Pod]] | None = None) -> None:
        self.pending = pending
        self.nominated = nominated or {}

    def pending_pod_list(self) -> list[Pod]:
        return list(self.pending)

    def pending_pods(self) -> dict[str, int]:
        return {"active": len(self.pending), "backoff": 0, "unschedulable": 0, "gated": 0}

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        return list(self.nominated.get(node_name, []))


@pytest.mark.parametrize(
    ("actual", "cached", "missed", "redundant"),
    [
        ([], [], [], []),
        (["a", "b"], ["b", "a"], [], []),
        (["a", "b", "c"], ["b"], ["a", "c"], []),
        (["b"], ["a", "b", "c"], [], ["a", "c"]),
        (["a", "c"], ["b", "c", "d"], ["a"], ["b", "d"]),
        (["a"], ["a", "a"], [], ["a"]),  # held twice (on a node and in the queue): redundant once
    ],
)
def test_compare_strings_merges_two_sorted_lists(
    actual: list[str], cached: list[str], missed: list[str], redundant: list[str]
) -> None:
    assert compare_strings(actual, cached) == (missed, redundant)


def on(pod_name: str, node: str, uid: str) -> dict[str, Any]:
    return pod_dict(pod_name, node_name=node, uid=uid, cpu="100m", memory="128Mi")


@pytest.fixture
def scene() -> tuple[Cache, FakeQueue, list[dict], list[dict]]:
    """A cache that disagrees with the cluster in every way the comparer can tell."""
    cache = Cache(VirtualClock().now)
    for name in ("n1", "n2", "n3"):
        cache.add_node(make_node(name))
    cache.add_pod(Pod.from_dict(on("a", "n1", "uid-a")))
    pending_b = make_pod("b", uid="uid-b")
    cache.assume_pod(dataclasses.replace(pending_b, node_name="n2"), "n2")  # its binding is in flight
    cache.add_pod(Pod.from_dict(on("c", "n3", "uid-c")))
    cache.remove_node(make_node("n3"))  # deleted while it still holds c: kept as a deleted node
    cache.add_pod(Pod.from_dict(on("m", "n1", "uid-m")))  # the cluster has it on n2
    queue = FakeQueue([make_pod("p", uid="uid-p")], {"n1": [make_pod("q", uid="uid-q")]})
    nodes = [node_dict("n1"), node_dict("n2"), node_dict("n4")]
    pods = [
        on("a", "n1", "uid-a"),
        pod_dict("b", uid="uid-b"),
        pod_dict("p", uid="uid-p"),
        on("x", "n1", "uid-x"),
        on("m", "n2", "uid-m"),
    ]
    return cache, queue, nodes, pods


def test_the_comparer_finds_missing_redundant_and_misplaced_objects(scene, caplog) -> None:
    cache, queue, nodes, pods = scene
    dump = cache.dump()
    assert sorted(dump.nodes) == ["n1", "n2", "n3"] and dump.assumed_pods == {"uid-b"}
    assert compare_nodes(nodes, dump.nodes) == (["n4"], ["n3"])
    assert compare_pods(pods, queue.pending_pod_list(), dump.nodes) == (["uid-x"], ["uid-c"])
    assert compare_pod_nodes(pods, queue.pending_pod_list(), dump.nodes) == [
        "default/b(uid-b): cache n2, cluster (none)",
        "default/m(uid-m): cache n1, cluster n2",
    ]

    caplog.set_level(logging.INFO, logger="kubesched")
    diff = CacheDebugger(lambda: nodes, lambda: pods, cache, queue).compare()
    assert not diff.empty
    lines = [(r.getMessage(), getattr(r, KV_ATTR)) for r in caplog.records]
    assert lines == [
        ("Cache mismatch", ("missedNodes", ["n4"], "redundantNodes", ["n3"])),
        ("Cache mismatch", ("missedPods", ["uid-x"], "redundantPods", ["uid-c"])),
        (
            "Cache mismatch",
            (
                "mismatchedPods",
                ["default/b(uid-b): cache n2, cluster (none)", "default/m(uid-m): cache n1, cluster n2"],
            ),
        ),
    ]


def test_a_cache_that_agrees_logs_no_mismatch(caplog) -> None:
    cache = Cache(VirtualClock().now)
    cache.add_node(make_node("n1"))
    cache.add_pod(Pod.from_dict(on("a", "n1", "uid-a")))
    queue = FakeQueue([make_pod("p", uid="uid-p")])
    caplog.set_level(logging.INFO, logger="kubesched")
    debugger = CacheDebugger(
        lambda: [node_dict("n1")], lambda: [on("a", "n1", "uid-a"), pod_dict("p", uid="uid-p")], cache, queue
    )
    assert debugger.compare().empty
    assert [r.getMessage() for r in caplog.records] == []


def test_the_dump_shows_each_node_its_pods_and_nominees_and_the_queue(scene, caplog) -> None:
    cache, queue, nodes, pods = scene
    caplog.set_level(logging.INFO, logger="kubesched")
    CacheDebugger(lambda: nodes, lambda: pods, cache, queue).dump_all()
    (nodes_msg, nodes_kv), (queue_msg, queue_kv) = [(r.getMessage(), getattr(r, KV_ATTR)) for r in caplog.records]
    assert nodes_msg == "Dump of cached NodeInfo" and nodes_kv[2:] == ("assumedPods", ["uid-b"])
    text = nodes_kv[1]
    assert text.startswith(
        "Node name: n1\nDeleted: false\n"
        "Requested Resources: &{MilliCPU:200 Memory:268435456 EphemeralStorage:0 AllowedPodNumber:0 "
        "ScalarResources:map[]}\n"
        "Allocatable Resources:&{MilliCPU:4000 Memory:8589934592 EphemeralStorage:0 AllowedPodNumber:110 "
        "ScalarResources:map[]}\n"
        "Scheduled Pods(number: 2):\n"
        "name: a, namespace: default, uid: uid-a, phase: Running, nominated node: \n"
        "name: m, namespace: default, uid: uid-m, phase: Running, nominated node: \n"
        "Nominated Pods(number: 1):\n"
        "name: q, namespace: default, uid: uid-q, phase: Pending, nominated node: \n"
        "\n\nNode name: n2\nDeleted: false\n"
    )  # a blank line between nodes
    assert "\n\nNode name: n3\nDeleted: true\n" in text
    assert text.endswith(
        "Scheduled Pods(number: 1):\nname: c, namespace: default, uid: uid-c, phase: Running, nominated node: \n"
    )
    assert queue_msg == "Dump of scheduling queue"
    assert queue_kv == (
        "summary",
        "activeQ:1; backoffQ:0; unschedulablePods:0",
        "pods",
        "name: p, namespace: default, uid: uid-p, phase: Pending, nominated node: \n",
    )


def test_resources_and_the_queue_summary_print_as_go_prints_them() -> None:
    assert print_resource({"cpu": 1500, "memory": 10, "pods": 3, "nvidia.com/gpu": 2, "example.com/a": 1}) == (
        "&{MilliCPU:1500 Memory:10 EphemeralStorage:0 AllowedPodNumber:3 "
        "ScalarResources:map[example.com/a:1 nvidia.com/gpu:2]}"
    )
    assert queue_summary({"active": 1, "backoff": 2, "unschedulable": 3, "gated": 4}) == (
        "activeQ:1; backoffQ:2; unschedulablePods:7"
    )


@pytest.mark.skipif(not hasattr(signal, "SIGUSR2"), reason="no SIGUSR2 here")
def test_sigusr2_compares_then_dumps(scene, caplog) -> None:
    cache, queue, nodes, pods = scene
    caplog.set_level(logging.INFO, logger="kubesched")
    previous = signal.getsignal(signal.SIGUSR2)
    stop = threading.Event()
    try:
        assert CacheDebugger(lambda: nodes, lambda: pods, cache, queue).listen_for_signal(stop)
        os.kill(os.getpid(), signal.SIGUSR2)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "Dump of scheduling queue" not in caplog.messages:
            time.sleep(0.05)
    finally:
        stop.set()
        signal.signal(signal.SIGUSR2, previous)
    assert caplog.messages == ["Cache mismatch"] * 3 + ["Dump of cached NodeInfo", "Dump of scheduling queue"]


def test_outside_the_main_thread_no_handler_is_installed() -> None:
    result: list[bool] = []
    debugger = CacheDebugger(list, list, Cache(VirtualClock().now), FakeQueue([]))
    thread = threading.Thread(target=lambda: result.append(debugger.listen_for_signal(threading.Event())))
    thread.start()
    thread.join()
    assert result == [False]
