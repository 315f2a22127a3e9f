"""Live-mode shutdown (``Scheduler.run_forever``): popping stops, bindings in flight finish, and binding
work that fails is undone and requeued, never dropped. On the embedded cluster with the real clock."""

from __future__ import annotations

import threading
import time
from typing import Any

from kubesched.clock import RealClock
from kubesched.cluster.protocol import ApiError
from kubesched.config import load_config
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.scheduler import Scheduler
from tests.factories import node_dict, pod_dict


class SlowBindCluster(EmbeddedCluster):
    """Binding takes a while (and the first ``failures`` bindings fail), as on a busy API server."""

    def __init__(self, delay: float, failures: int = 0) -> None:
        super().__init__(synchronous=True)
        self.delay = delay
        self.failures = failures
        self.bind_started = threading.Event()
        self.bind_calls = 0

    def bind(self, namespace: str, name: str, node_name: str, *, uid: str | None = None) -> None:
        self.bind_calls += 1
        self.bind_started.set()
        time.sleep(self.delay)
        if self.failures:
            self.failures -= 1
            raise ApiError("etcdserver: request timed out", code=500)
        super().bind(namespace, name, node_name, uid=uid)


def start(cluster: EmbeddedCluster, config: Any = None) -> tuple[Scheduler, threading.Event, threading.Thread]:
    sched = Scheduler(cluster, config or load_config(None), clock=RealClock())
    sched.start()
    stop = threading.Event()
    thread = threading.Thread(target=sched.run_forever, args=(stop,), daemon=True)
    thread.start()
    return sched, stop, thread


def node_of(cluster: EmbeddedCluster, name: str) -> str | None:
    return cluster.get("Pod", "default", name)["spec"].get("nodeName")


def test_stop_lets_the_binding_in_flight_finish() -> None:
    cluster = SlowBindCluster(delay=0.5)
    cluster.create(node_dict("n1"))
    _, stop, thread = start(cluster)
    cluster.create(pod_dict("p"))
    assert cluster.bind_started.wait(10)
    stop.set()  # while the binding is still on the wire
    thread.join(10)
    assert not thread.is_alive()
    assert node_of(cluster, "p") == "n1"


def test_nothing_is_popped_after_stop() -> None:
    cluster = SlowBindCluster(delay=0.0)
    cluster.create(node_dict("n1"))
    _, stop, thread = start(cluster)
    stop.set()
    thread.join(10)
    cluster.create(pod_dict("late"))
    time.sleep(0.3)
    assert node_of(cluster, "late") is None
    assert cluster.bind_calls == 0


def test_a_failed_binding_is_undone_and_requeued_then_binds() -> None:
    cluster = SlowBindCluster(delay=0.0, failures=1)
    cluster.create(node_dict("n1"))
    sched, stop, thread = start(cluster)
    try:
        cluster.create(pod_dict("p"))
        deadline = time.monotonic() + 15  # the retry waits out the pod's initial backoff (1 s)
        while node_of(cluster, "p") is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert node_of(cluster, "p") == "n1"
        assert cluster.bind_calls == 2
        [pod] = sched.pods()
        assert pod.node_name == "n1" and not sched.cache.is_assumed(pod)
    finally:
        stop.set()
        thread.join(10)


class HeldBindCluster(EmbeddedCluster):
    """Every binding waits (as on a slow API server) until ``release`` is set; counts those in flight."""

    def __init__(self) -> None:
        super().__init__(synchronous=True)
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0

    def bind(self, namespace: str, name: str, node_name: str, *, uid: str | None = None) -> None:
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        self.release.wait(10)
        with self.lock:
            self.in_flight -= 1
        super().bind(namespace, name, node_name, uid=uid)


def test_bindings_waiting_on_the_api_server_do_not_hold_up_the_next_ones() -> None:
    """As kube-scheduler's goroutine per binding: more bindings wait at once than ``parallelism`` (16)."""
    cluster = HeldBindCluster()
    for i in range(4):
        cluster.create(node_dict(f"n{i}"))
    sched, stop, thread = start(cluster)
    try:
        assert sched.config.parallelism == 16
        for i in range(40):
            cluster.create(pod_dict(f"p{i}"))
        deadline = time.monotonic() + 10
        while cluster.most_in_flight < 40 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert cluster.most_in_flight == 40
    finally:
        cluster.release.set()
        stop.set()
        thread.join(10)
    assert all(node_of(cluster, f"p{i}") for i in range(40))
