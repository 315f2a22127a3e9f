"""Which fields a reloaded configuration may change (kubesched.config.reload)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import load_config
from kubesched.config.reload import restart_only_changes

BASE: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def config(**fields: Any) -> Any:
    return load_config({**BASE, **fields})


@pytest.mark.parametrize(
    "fields",
    [
        {"profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}]},
        {"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 7}]}}}]},
        {"percentageOfNodesToScore": 30, "podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": 20},
        {"extenders": [{"urlPrefix": "http://ext", "filterVerb": "filter"}]},
    ],
    ids=["profiles", "weights", "scoring-and-backoff", "extenders"],
)
def test_what_a_reload_applies(fields: dict[str, Any]) -> None:
    assert restart_only_changes(config(), config(**fields)) is None


@pytest.mark.parametrize(
    ("fields", "paths"),
    [
        ({"parallelism": 8}, ["parallelism"]),
        (
            {"leaderElection": {"leaseDuration": "30s", "resourceName": "other"}},
            ["leaderElection.leaseDuration", "leaderElection.resourceName"],
        ),
        ({"clientConnection": {"qps": 500, "burst": 1000}}, ["clientConnection.burst", "clientConnection.qps"]),
        (
            {"delayCacheUntilActive": True, "enableProfiling": False},
            ["delayCacheUntilActive", "enableProfiling", "enableContentionProfiling"],
        ),
    ],
    ids=["parallelism", "leader-election", "client-connection", "start-up-options"],
)
def test_what_only_a_restart_changes_is_named_field_by_field(fields: dict[str, Any], paths: list[str]) -> None:
    error = restart_only_changes(config(), config(**fields))
    assert error is not None
    assert [path for path, _ in error.errors] == paths
    assert all(
        reason == "Forbidden: changes only at a restart; the running value is kept" for _, reason in error.errors
    )
