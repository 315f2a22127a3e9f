"""Tests for the queue's per-pod values and helpers (kubesched.queue.queued_pod_info)."""

from __future__ import annotations

from kubesched.queue.queued_pod_info import is_pod_updated
from tests.queue.conftest import mkpod, modified


def test_is_pod_updated() -> None:
    pod = mkpod("p")
    assert not is_pod_updated(pod, modified(pod, metadata__resourceVersion="2", metadata__managedFields=[{}]))
    assert not is_pod_updated(pod, modified(pod, status__phase="Running"))
    assert is_pod_updated(pod, modified(pod, status__resourceClaimStatuses=[{"name": "c"}]))
    assert is_pod_updated(pod, modified(pod, metadata__annotations={"a": "b"}))
    assert is_pod_updated(None, pod)
