"""kube-apiserver restarted, and etcd restarted with its data kept, while pods and nodes churn."""

from __future__ import annotations

import pytest

from tests.live.faults.support import FaultEnv, pod

pytestmark = pytest.mark.controlplane


def test_an_apiserver_restart_loses_and_doubles_nothing(env: FaultEnv) -> None:
    for i in range(3):
        env.admin.create_pod(pod(f"before-apiserver-{i}"))
    since = env.scheduler.log_size()
    env.plane.restart_apiserver()
    for i in range(3):
        env.admin.create_pod(pod(f"after-apiserver-{i}"))
    env.wait_bound(*(f"{when}-apiserver-{i}" for when in ("before", "after") for i in range(3)), timeout=90)
    env.settle()
    # The informers went through the restart one way or another: a watch that could not be reopened, one
    # that broke, or (the new API server's watch cache starts at the current resourceVersion) a 410 Gone.
    log = env.scheduler.log(since)
    assert any(sign in log for sign in ("list/watch failed", "watching again", "is gone, listing again")), log[-3000:]


def test_an_etcd_restart_with_its_data_loses_and_doubles_nothing(env: FaultEnv) -> None:
    for i in range(3):
        env.admin.create_pod(pod(f"before-etcd-{i}"))
    before = set(env.plane.pids)
    env.plane.restart_etcd()
    assert len(set(env.plane.pids) - before) == 1  # a new etcd, the same kube-apiserver
    for i in range(3):
        env.admin.create_pod(pod(f"after-etcd-{i}"))
    env.wait_bound(*(f"{when}-etcd-{i}" for when in ("before", "after") for i in range(3)), timeout=90)
    env.settle()
