"""Error answers and slow answers from kube-apiserver (written by the proxy as kube-apiserver writes them),
and how kubesched takes each: retried when client-go retries, otherwise undone and scheduled again."""

from __future__ import annotations

import itertools

import pytest

from testing.controlplane.faults import Delay, Respond, SlowAnswer
from tests.live.faults.support import REQUEST_TIMEOUT, FaultEnv, pod

pytestmark = pytest.mark.controlplane


def status_path(name: str) -> str:
    return f"/api/v1/namespaces/default/pods/{name}/status"


def test_a_conflict_on_bind_forgets_the_pod_and_binds_it_once_later(env: FaultEnv) -> None:
    # Three bindings refused with 409 before they reach the API server; one refused after the server
    # bound the pod (the client hears of a conflict, the server has done it).
    env.proxy.add(Respond(409), method="POST", path=r".*/pods/conflict-[0-2]/binding", times=3)
    env.proxy.add(Respond(409, forward_first=True), method="POST", path=r".*/pods/conflict-3/binding")
    names = [f"conflict-{i}" for i in range(4)]
    for name in names:
        env.admin.create_pod(pod(name))
    env.wait_bound(*names)
    env.settle()
    for name in names[:3]:
        statuses = [e.status for e in env.bindings(name)]
        assert statuses[0] == 409 and statuses[-1] == 201, statuses
    # The pod bound behind the conflict is never bound again: a later try would be refused by the server.
    upstream = [e.upstream_status for e in env.bindings("conflict-3")]
    assert upstream[0] == 201 and all(s == 409 for s in upstream[1:]), upstream


def test_status_patches_retry_a_server_error_but_not_a_conflict(env: FaultEnv) -> None:
    # Pods too big for any node: each failed attempt patches PodScheduled=False onto the pod.
    env.proxy.add(Respond(409), method="PATCH", path=status_path("huge-conflict"), times=None)
    env.proxy.add(Respond(500), method="PATCH", path=status_path("huge-flaky"), times=2)
    env.unschedulable.update({"huge-conflict", "huge-flaky"})
    for name in ("huge-conflict", "huge-flaky"):
        env.admin.create_pod(pod(name, cpu="100"))

    def condition(name: str) -> dict | None:
        conditions = ((env.admin.pod(name) or {}).get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == "PodScheduled"), None)

    # An InternalError is tried again at once (kube-scheduler's PatchPodStatus: four tries).
    found = env.wait(lambda: condition("huge-flaky"), 30, "the flaky pod's condition")
    assert (found["status"], found["reason"]) == ("False", "Unschedulable")
    patches = [e.status for e in env.proxy.seen(method="PATCH", path=status_path("huge-flaky"))]
    assert patches[:3] == [500, 500, 200], patches
    # A conflict is not tried again: the pod stays queued without its condition, nothing is lost.
    env.wait(lambda: env.proxy.seen(method="PATCH", path=status_path("huge-conflict")), 30, "the conflicting patch")
    assert condition("huge-conflict") is None
    env.settle()
    for name in ("huge-conflict", "huge-flaky"):
        env.admin.delete_pod(name)
    env.unschedulable.clear()
    env.settle()


def test_too_many_requests_waits_as_retry_after_says(env: FaultEnv) -> None:
    env.proxy.add(Respond(429, retry_after=1), method="POST", path=r".*/pods/throttled/binding", times=2)
    # A wait the request's time limit cannot hold is not waited: the binding fails and the pod is
    # scheduled again (with its backoff).
    env.proxy.add(
        Respond(429, retry_after=int(REQUEST_TIMEOUT) + 1), method="POST", path=r".*/pods/throttled-long/binding"
    )
    env.admin.create_pod(pod("throttled"))
    env.admin.create_pod(pod("throttled-long"))
    env.wait_bound("throttled", "throttled-long")
    tries = env.bindings("throttled")
    assert [e.status for e in tries] == [429, 429, 201]
    # Sent again by the client itself, each time once the server's Retry-After had passed.
    for answered, again in itertools.pairwise(tries):
        assert again.started - answered.ended >= 1 - 0.05, (answered, again)
    log = env.scheduler.log()
    assert 'Failed to bind pod" pod="default/throttled"' not in log
    assert 'Failed to bind pod" pod="default/throttled-long"' in log
    assert [e.status for e in env.bindings("throttled-long")] == [429, 201]
    env.settle()


def test_server_errors_are_retried_when_the_server_says_when_and_otherwise_rescheduled(env: FaultEnv) -> None:
    env.proxy.add(Respond(503, retry_after=1), method="POST", path=r".*/pods/unavailable/binding")
    env.proxy.add(Respond(500), method="POST", path=r".*/pods/internal/binding")
    env.proxy.add(Respond(503), method="POST", path=r".*/pods/unavailable-no-hint/binding")
    for name in ("unavailable", "internal", "unavailable-no-hint"):
        env.admin.create_pod(pod(name))
    env.wait_bound("unavailable", "internal", "unavailable-no-hint")
    tries = env.bindings("unavailable")
    assert [e.status for e in tries] == [503, 201] and tries[1].started - tries[0].ended >= 1 - 0.05
    log = env.scheduler.log()
    assert 'Failed to bind pod" pod="default/unavailable"' not in log
    # Without Retry-After the binding fails; the pod goes back to the queue and is bound on its next attempt.
    for name in ("internal", "unavailable-no-hint"):
        assert [e.status for e in env.bindings(name)] == [500 if name == "internal" else 503, 201]
        assert f'Failed to bind pod" pod="default/{name}"' in log
    env.settle()


def test_answers_slower_than_the_client_waits_bind_once(env: FaultEnv) -> None:
    # The server binds at once, but the answer comes after the client gave up; and a request held
    # past the client's timeout reaches the server after the scheduler has tried again.
    env.proxy.add(SlowAnswer(REQUEST_TIMEOUT + 2), method="POST", path=r".*/pods/slow-answer/binding")
    env.proxy.add(Delay(REQUEST_TIMEOUT + 2), method="POST", path=r".*/pods/slow-request/binding")
    env.admin.create_pod(pod("slow-answer"))
    env.admin.create_pod(pod("slow-request"))
    env.wait_bound("slow-answer", "slow-request")
    env.settle()
    for name in ("slow-answer", "slow-request"):
        tries = env.bindings(name)  # the proxy answered every one of them (settled)
        assert tries[0].ended - tries[0].started >= REQUEST_TIMEOUT, tries
        assert sum(1 for e in tries if e.upstream_status == 201) == 1, tries
    assert "timed out" in env.scheduler.log()
