"""One control plane, one proxy, one ``kubesched run`` and one churner for the whole fault suite: each
test injects its fault, then checks the invariants (:meth:`FaultEnv.settle`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.controlplane.fixture import ControlPlane
from testing.controlplane.proxy import FaultProxy
from tests.live.conftest import Live
from tests.live.faults.support import WORKERS, Admin, Churner, FaultEnv, SchedulerProcess, node, pod


@pytest.fixture(scope="package")
def fault_env(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultEnv]:
    folder: Path = tmp_path_factory.mktemp("faults")
    cleaner = Live(control_plane, folder)
    cleaner.reset()
    admin = Admin(control_plane)
    for name in WORKERS:
        admin.create_node(node(name))
    proxy = FaultProxy.in_front_of(control_plane)
    scheduler = SchedulerProcess(control_plane, proxy, folder)
    churner = Churner(admin)
    env = FaultEnv(control_plane, proxy, admin, scheduler, churner)
    try:
        scheduler.start()
        admin.create_pod(pod("probe"))
        env.wait_bound("probe", timeout=120)
        churner.start()
        yield env
    finally:
        churner.stop()
        scheduler.stop()
        proxy.close()
        cleaner.reset()


@pytest.fixture
def env(fault_env: FaultEnv) -> Iterator[FaultEnv]:
    """The shared environment with no rule and no expectation left from an earlier test."""
    fault_env.proxy.rules.clear()
    fault_env.unschedulable.clear()
    if not fault_env.scheduler.alive():
        fault_env.scheduler.start()  # an earlier test failed hard: carry on with a fresh scheduler
    yield fault_env
    for rule in list(fault_env.proxy.rules):
        release = getattr(rule.action, "release", None)
        if release is not None:
            release()
    fault_env.proxy.rules.clear()
