"""DynamicResources' queueing hints, one row per rule of isSchedulableAfterClaimChange / PodChange."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.plugins.dynamicresources.hints import QUEUE, QUEUE_SKIP
from tests.dra import DRIVER, allocated, by_name, by_template, claim_dict, claim_pod, owned_by, request_dict
from tests.plugins.dynamicresources.env import Env


def stored(env: Env, name: str) -> dict[str, Any]:
    return env.claim(name)


def with_status(obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "status": status}


def test_claim_change_hints() -> None:
    env = Env(claim_dict("mine", request_dict("r")), claim_dict("other", request_dict("r")))
    pod = env.pod(claim_pod("p", by_name("gpu", "mine")))
    mine, other = stored(env, "mine"), stored(env, "other")
    hint = env.plugin.is_schedulable_after_claim_change
    assert hint(pod, None, mine) == QUEUE  # the pod's claim got created
    assert hint(pod, None, other) == QUEUE_SKIP  # unrelated claim
    assert hint(pod, mine, {**mine, "metadata": {**mine["metadata"], "finalizers": ["x"]}}) == QUEUE_SKIP
    assert hint(pod, mine, with_status(mine, allocated(("r", DRIVER, "p", "g0")))) == QUEUE  # its status changed
    held = with_status(other, allocated(("r", DRIVER, "p", "g0")))
    assert hint(pod, held, other) == QUEUE  # devices got freed, whoever held them
    assert hint(pod, other, held) == QUEUE_SKIP


def test_claim_change_skips_a_pod_still_waiting_for_one_of_its_claims() -> None:
    env = Env(claim_dict("mine", request_dict("r")))
    pod = env.pod(claim_pod("p", by_name("gpu", "mine"), by_name("more", "missing")))
    mine = stored(env, "mine")
    assert (
        env.plugin.is_schedulable_after_claim_change(pod, with_status(mine, allocated(("r", DRIVER, "p", "g0"))), mine)
        == QUEUE_SKIP
    )


@pytest.mark.parametrize(
    ("recorded", "exists", "want"), [(False, False, QUEUE_SKIP), (True, False, QUEUE_SKIP), (True, True, QUEUE)]
)
def test_pod_change_hint_queues_the_pod_once_its_claims_exist(recorded: bool, exists: bool, want: str) -> None:
    env = Env()
    pod = env.pod(claim_pod("p", by_template("gpu", "t")))
    updated = Pod.from_dict(
        {**pod.raw, "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-abcde"}]}}
        if recorded
        else pod.raw
    )
    if exists:
        env.create(owned_by(claim_dict("p-gpu-abcde", request_dict("r")), pod.raw))
    assert env.plugin.is_schedulable_after_pod_change(pod, pod, updated) == want
    other = env.pod(claim_pod("q", by_template("gpu", "t")))
    assert env.plugin.is_schedulable_after_pod_change(pod, other, other) == QUEUE_SKIP
