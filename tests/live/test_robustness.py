"""Connections fail and API servers restart; the scheduler neither loses nor doubles anything.

The scheduler reaches kube-apiserver through a proxy whose connections the test cuts (every watch breaks
at once), then kube-apiserver itself is stopped and started again over the same etcd. Pods created
around both end bound exactly once, and the scheduler's own cache counts exactly the bound pods: an
event applied twice or lost would show there.
"""

from __future__ import annotations

import re
import time
import urllib.request

import pytest

from testing.controlplane.fixture import free_port
from testing.controlplane.proxy import CuttableProxy
from tests.live.conftest import Live, node, pod

pytestmark = pytest.mark.controlplane


def metric(port: int, name: str, labels: str) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    match = re.search(rf"^{re.escape(name)}\{{{re.escape(labels)}\}} (\S+)$", text, re.M)
    return float(match.group(1)) if match else -1.0


def test_cut_watches_and_an_apiserver_restart_lose_and_double_nothing(live: Live) -> None:
    proxy = CuttableProxy(live.plane.apiserver_port)
    port = free_port()
    try:
        live.apply(node("n1", cpu="64", pods="200"), node("n2", cpu="64", pods="200"))
        # A renew deadline longer than the API server's restart: with the default 10 s the leader would
        # (rightly) give up its Lease and exit while kube-apiserver is down, as kube-scheduler does.
        live.start_scheduler(
            "--plain-http",
            "--secure-port",
            str(port),
            "--bind-address",
            "127.0.0.1",
            "--leader-elect-lease-duration=90s",
            "--leader-elect-renew-deadline=60s",
            kubeconfig=live.kubeconfig_via(proxy.url),
        )
        batches = [[pod(f"b{b}-{i}") for i in range(10)] for b in range(4)]
        live.apply(*batches[0])
        live.wait_bound(*(p["metadata"]["name"] for p in batches[0]))

        assert proxy.cut() > 0  # every watch and the binding connections break at once
        live.apply(*batches[1])
        live.wait_bound(*(p["metadata"]["name"] for p in batches[1]))

        live.plane.stop_apiserver()
        time.sleep(2)  # the scheduler's watches and requests fail meanwhile
        live.plane.start_apiserver()
        live.apply(*batches[2])
        proxy.cut()
        live.apply(*batches[3])
        names = [p["metadata"]["name"] for batch in batches for p in batch]
        live.wait_bound(*names, timeout=120)

        pods = live.pods()
        assert sorted(pods) == sorted(names)
        assert all(p["spec"]["nodeName"] in ("n1", "n2") for p in pods.values())

        def cached() -> tuple[float, float]:
            return (
                metric(port, "scheduler_cache_size", 'type="pods"'),
                metric(port, "scheduler_cache_size", 'type="assumed_pods"'),
            )

        deadline = time.monotonic() + 30
        while cached() != (len(names), 0) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert cached() == (len(names), 0), live.log_tail(200)  # (bound pods counted once, none assumed)
        assert metric(port, "scheduler_cache_size", 'type="nodes"') == 2
        # Each pod bound once: never two successful bindings. A binding the API server took while the
        # proxy cut its answer counts as an error attempt (kube-scheduler counts it so too), and the
        # pod, seen bound by the informer, is not tried again.
        scheduled = metric(port, "scheduler_schedule_attempts_total", 'profile="default-scheduler",result="scheduled"')
        errors = max(metric(port, "scheduler_schedule_attempts_total", 'profile="default-scheduler",result="error"'), 0)
        assert scheduled <= len(names) <= scheduled + errors, (scheduled, errors)
    finally:
        proxy.close()
