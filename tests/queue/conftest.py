"""Shared fixtures for the scheduling-queue tests: a hand-driven clock and pod builders."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubesched.api.objects import Pod
from tests.factories import pod_dict

T0 = datetime(2024, 1, 1, tzinfo=UTC)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def step(self, seconds: float = 0, **kw: float) -> datetime:
        self.now += timedelta(seconds=seconds, **kw)
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def mkpod(
    name: str,
    *,
    priority: int = 0,
    nominated: str = "",
    gates: Iterable[str] = (),
    labels: Mapping[str, str] | None = None,
    namespace: str = "default",
    node_name: str = "",
    spec: Mapping[str, Any] | None = None,
    scheduler: str = "default-scheduler",
    uid: str | None = None,
) -> Pod:
    body: dict[str, Any] = dict(spec or {})
    if gates:
        body["schedulingGates"] = [{"name": g} for g in gates]
    body["schedulerName"] = scheduler
    raw = pod_dict(
        name,
        priority=priority,
        labels=labels,
        namespace=namespace,
        node_name=node_name,
        spec=body,
        uid=uid or f"uid-{namespace}-{name}",
    )
    if nominated:
        raw["status"]["nominatedNodeName"] = nominated
    return Pod.from_dict(raw)


def modified(pod: Pod, **changes: Any) -> Pod:
    """A copy of ``pod`` with ``__``-separated paths set (``metadata__resourceVersion='2'``; None removes)."""
    raw = copy.deepcopy(dict(pod.raw))
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        target = raw
        for p in parents:
            target = target.setdefault(p, {})
        if value is None:
            target.pop(leaf, None)
        else:
            target[leaf] = value
    return Pod.from_dict(raw)
