"""pytest wiring for the real control plane: the ``controlplane`` marker and a session fixture.

Tests marked ``controlplane`` get a running etcd + kube-apiserver (:class:`ControlPlane`) shared by the
session. Where Go is missing they are skipped with that reason, unless the run requires them
(``KUBESCHED_REQUIRE_CONTROLPLANE=1``, which ``.ci/run`` sets, or ``CI=true``): then the missing toolchain
is an error, so CI can never pass by skipping them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from testing.controlplane.fixture import ControlPlane, go_available

REQUIRE_ENV = "KUBESCHED_REQUIRE_CONTROLPLANE"


def controlplane_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0") or os.environ.get("CI", "").lower() == "true"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "controlplane: needs a real etcd + kube-apiserver (built with Go)")


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    if not go_available():
        if controlplane_required():
            pytest.fail("Go is not installed, and this run requires the real control plane "
                        f"({REQUIRE_ENV} or CI is set)")
        pytest.skip("Go is not installed: the real control plane (etcd, kube-apiserver) cannot be built")
    plane = ControlPlane.start()
    try:
        yield plane
    finally:
        plane.stop()
