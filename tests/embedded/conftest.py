"""Deterministic parts for building embedded clusters in tests."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from kubesched.embedded.apiserver import EmbeddedCluster

START = datetime(2024, 1, 1, tzinfo=UTC)


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_cluster(clock: FakeClock) -> Callable[..., EmbeddedCluster]:
    def make(**kwargs: object) -> EmbeddedCluster:
        counter = itertools.count(1)
        return EmbeddedCluster(clock=clock, uid_factory=lambda: f"uid-{next(counter)}", **kwargs)  # type: ignore[arg-type]

    return make


@pytest.fixture
def cluster(make_cluster: Callable[..., EmbeddedCluster]) -> EmbeddedCluster:
    return make_cluster()


def pod(name: str, namespace: str | None = "default", **spec: object) -> dict:
    meta: dict = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


def node(name: str, **status: object) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": dict(status)}
