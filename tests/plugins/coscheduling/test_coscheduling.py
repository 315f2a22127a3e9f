"""Coscheduling through ``simulate``: gangs form, fit all-or-nothing, time out, and report why."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched import simulate
from kubesched.embedded.podgroups import compute_status
from kubesched.sim.report import format_summary
from tests.factories import node_dict, pod_dict

LABEL = "scheduling.x-k8s.io/pod-group"


def config(**args: Any) -> dict[str, Any]:
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
        },
        "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10, **args}}],
    }
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


def group(
    name: str,
    min_member: int,
    *,
    members: int | None = None,
    cpu: str = "1",
    timeout: int | None = None,
    min_resources: dict[str, str] | None = None,
    priority_class: str = "",
) -> list[dict[str, Any]]:
    spec: dict[str, Any] = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    if min_resources:
        spec["minResources"] = min_resources
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    ]
    for i in range(min_member if members is None else members):
        pod = pod_dict(f"{name}-{i}", cpu=cpu, labels={LABEL: name})
        if priority_class:
            pod["spec"].pop("priority", None)
            pod["spec"]["priorityClassName"] = priority_class
        objs.append(pod)
    return objs


def nodes(n: int, cpu: str = "4") -> list[dict[str, Any]]:
    return [node_dict(f"node-{i}", cpu=cpu) for i in range(n)]


def podgroup_status(result: Any, name: str) -> dict[str, Any]:
    return result.cluster.get("PodGroup", "default", name).get("status") or {}


@pytest.mark.parametrize("burst", [False, True])
def test_a_gang_that_fits_is_scheduled_whole(burst: bool) -> None:
    result = simulate([*nodes(2), *group("train", 4, cpu="2")], config=config(), burst=burst)
    assert all(result.final.values()) and len(result.final) == 4
    status = podgroup_status(result, "train")
    assert status["phase"] == "Scheduled" and status["scheduled"] == 4
    assert "default/train: Scheduled, 4/4 members scheduled" in format_summary(result)


@pytest.mark.parametrize("version", ["1.30", "1.34"])
@pytest.mark.parametrize("burst", [False, True])
def test_a_gang_that_cannot_fit_holds_nothing_and_says_why(burst: bool, version: str) -> None:
    # Three 4-cpu nodes hold three of the four 3-cpu members: none may stay.
    result = simulate([*nodes(3), *group("big", 4, cpu="3")], config=config(), burst=burst, emulated_version=version)
    assert set(result.final.values()) == {None}
    assert all(not (p["spec"].get("nodeName")) for p in result.pods())
    status = podgroup_status(result, "big")
    assert status["phase"] == "Scheduling" and status["scheduled"] == 0
    summary = format_summary(result)
    assert "default/big: Scheduling, 0/4 members scheduled; pending: " in summary
    if version == "1.30":
        # v1.34 retries a member from backoffQ as soon as activeQ is empty (SchedulerPopFromBackoffQ):
        # the members then fail in another order, and none is tried while the group is denied.
        assert "PodGroup default/big gets rejected due to Pod" in summary
    rejected = [r for r in result.attempts if "optimistic rejection in PostFilter" in (r.get("message") or "")]
    assert rejected, "waiting members are rejected when a member cannot fit"


def test_permit_timeout_releases_the_whole_gang() -> None:
    # minMember 10, room for 9: the tenth fails, but a gap of 10% is under the reject threshold,
    # so the nine wait for their 7s group timeout, then all go.
    result = simulate([*nodes(3, cpu="3"), *group("tight", 10, timeout=7)], config=config())
    assert set(result.final.values()) == {None}
    messages = [r.get("message") or "" for r in result.attempts]
    first = next(
        i for i, m in enumerate(messages) if "rejected due to timeout after waiting 7s at plugin Coscheduling" in m
    )
    # The member that timed out is unreserved, and that rejects every other waiting member at once.
    released = [m for m in messages[first + 1 : first + 9] if m.endswith("1 rejection in Unreserve.")]
    assert len(released) == 8
    assert result.virtual_seconds >= 7
    assert all(not p["spec"].get("nodeName") for p in result.pods())


def test_prefilter_waits_for_enough_siblings() -> None:
    result = simulate([*nodes(2), *group("short", 3, members=2)], config=config())
    assert set(result.final.values()) == {None}
    assert (
        "pre-filter pod short-1 cannot find enough sibling pods, current pods number: 2, minMember of group: 3"
        in result.attempts[-1]["message"]
    )
    assert podgroup_status(result, "short")["phase"] == "Pending"


def test_min_resources_are_checked_against_free_room() -> None:
    result = simulate([*nodes(2), *group("hungry", 2, min_resources={"cpu": "20"})], config=config())
    assert set(result.final.values()) == {None}
    assert any("resource gap: cpu=12000" in (r.get("message") or "") for r in result.attempts)
    ok = simulate([*nodes(2), *group("modest", 2, min_resources={"cpu": "6"})], config=config())
    assert all(ok.final.values())


def test_pod_naming_a_missing_group_is_rejected_at_permit() -> None:
    pod = pod_dict("orphan", labels={LABEL: "nowhere"})
    result = simulate([*nodes(1), pod], config=config())
    assert result.final == {"default/orphan": None}
    assert "PodGroup not found" in result.attempts[0]["message"]


def test_queue_sort_orders_by_priority_then_group_creation_and_keeps_groups_together() -> None:
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 10}
    objs = [high, *nodes(4), *group("first", 2), *group("second", 2), *group("urgent", 2, priority_class="high")]
    result = simulate(objs, config=config(), burst=True)
    scheduled = [r["pod"] for r in result.attempts if r["result"] == "Scheduled"]
    order = [r["pod"] for r in result.attempts]
    assert all(result.final.values())
    firsts = [order.index(f"default/{g}-0") for g in ("urgent", "first", "second")]
    assert firsts == sorted(firsts)
    assert scheduled.index("default/first-1") < scheduled.index("default/second-0")


def test_plugin_args_are_checked() -> None:
    with pytest.raises(ValueError, match=r"pluginConfig\[Coscheduling\]\.args\.podGroupRejectPercentage"):
        simulate(nodes(1), config=config(podGroupRejectPercentage=150))
    with pytest.raises(ValueError, match="unknown field 'permitWaitingTime'"):
        simulate(nodes(1), config=config(permitWaitingTime=3))


@pytest.mark.parametrize(
    ("min_member", "pods", "phase", "counts"),
    [
        (3, [], "Pending", (0, 0, 0, 0)),
        (2, [("", "Pending"), ("", "Pending")], "Scheduling", (0, 0, 0, 0)),
        (2, [("n", "Pending"), ("n", "Pending")], "Scheduled", (2, 0, 0, 0)),
        (2, [("n", "Running"), ("n", "Running")], "Running", (2, 2, 0, 0)),
        (2, [("n", "Succeeded"), ("n", "Succeeded")], "Finished", (0, 0, 2, 0)),
        (2, [("n", "Failed"), ("n", "Running")], "Failed", (1, 1, 0, 1)),
    ],
)
def test_podgroup_status(
    min_member: int, pods: list[tuple[str, str]], phase: str, counts: tuple[int, int, int, int]
) -> None:
    grp = {"spec": {"minMember": min_member}, "status": {}}
    members = [
        {"metadata": {"namespace": "d", "name": f"p{i}"}, "spec": {"nodeName": node}, "status": {"phase": ph}}
        for i, (node, ph) in enumerate(pods)
    ]
    status = compute_status(grp, members)
    assert status["phase"] == phase
    assert (status["scheduled"], status["running"], status["succeeded"], status["failed"]) == counts


def test_bad_args_are_one_line_and_exit_2(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    from kubesched.app.cli import main

    (tmp_path / "s.yaml").write_text(yaml.safe_dump_all(nodes(1)))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config(permitWaitingTimeSeconds=-1)))
    assert main(["simulate", str(tmp_path / "s.yaml"), "--config", str(tmp_path / "c.yaml")]) == 2
    assert capsys.readouterr().err == (
        'kubesched: error: plugin "Coscheduling": building it failed: ValueError: '
        "pluginConfig[Coscheduling].args.permitWaitingTimeSeconds: expected a non-negative integer, got -1\n"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"minMember": "four"}, 'PodGroup "g" is invalid: spec.minMember: expected a non-negative integer'),
        ({"minMember": 2, "scheduleTimeoutSeconds": -1}, "spec.scheduleTimeoutSeconds: expected a non-negative"),
        ({"minMember": 2, "minResources": {"cpu": "lots"}}, "spec.minResources.cpu"),
    ],
)
def test_malformed_podgroup_is_refused_at_load(spec: dict[str, Any], message: str) -> None:
    from kubesched.scenario.manifests import ManifestError

    grp = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": spec,
    }
    with pytest.raises(ManifestError, match="document 2") as err:
        simulate([*nodes(1), grp], config=config())
    assert message in str(err.value)


def test_the_shipped_example(capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    from kubesched.app.cli import main

    folder = Path(__file__).resolve().parents[3] / "examples" / "coscheduling"
    assert main(["simulate", str(folder / "scenario.yaml"), "--config", str(folder / "config.yaml")]) == 0
    out = capsys.readouterr().out
    assert "ml/llm-finetune: Scheduled, 4/4 members scheduled" in out
    assert "ml/vision: Scheduled, 2/2 members scheduled" in out
    assert "ml/giant: Scheduling, 0/3 members scheduled; pending: " in out
