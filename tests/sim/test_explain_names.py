"""Names given to explain: workload references matched by the controllers' pod names, owners, suggestions."""

from __future__ import annotations

import pytest

from kubesched.sim.explain_names import (
    WorkloadRef,
    matching_pods,
    owner_of,
    parse_workload,
    suggestions,
)

LONG = "a-very-long-deployment-name-that-fills-most-of-a-dns-label"  # 58 characters


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Deployment/shop/api", WorkloadRef("Deployment", "shop", "api")),
        ("deploy/shop/api", WorkloadRef("Deployment", "shop", "api")),
        ("STS/db/pg", WorkloadRef("StatefulSet", "db", "pg")),
        ("jobs/nightly", WorkloadRef("Job", "default", "nightly")),
        ("ds/ops/agent", WorkloadRef("DaemonSet", "ops", "agent")),
        ("replicasets/shop/api-7d9c5b8f4", WorkloadRef("ReplicaSet", "shop", "api-7d9c5b8f4")),
        ("shop/api", None),
        ("Pod/shop/api", None),
        ("Deployment//api", None),
        ("Deployment/a/b/c", None),
    ],
)
def test_parse_workload(text: str, want: WorkloadRef | None) -> None:
    assert parse_workload(text) == want


@pytest.mark.parametrize(
    ("ref", "pod", "owned"),
    [
        (WorkloadRef("Deployment", "shop", "api"), "shop/api-7d9c5b8f4-x2bq4", True),
        (WorkloadRef("Deployment", "shop", "api"), "other/api-7d9c5b8f4-x2bq4", False),
        (WorkloadRef("Deployment", "shop", "api"), "shop/api-x2bq4", False),  # a ReplicaSet's or DaemonSet's
        (WorkloadRef("Deployment", "shop", "api"), "shop/api-gateway-7d9c5b8f4-x2bq4", False),
        (WorkloadRef("Deployment", "shop", "api"), "shop/api-7d9c5b8f4-xabcd", False),  # vowels are never generated
        (WorkloadRef("ReplicaSet", "shop", "api-7d9c5b8f4"), "shop/api-7d9c5b8f4-x2bq4", True),
        (WorkloadRef("DaemonSet", "ops", "agent"), "ops/agent-x2bq4", True),
        (WorkloadRef("DaemonSet", "ops", "agent"), "ops/agent", False),
        (WorkloadRef("Job", "batch", "report"), "batch/report-x2bq4", True),
        (WorkloadRef("Job", "batch", "report"), "batch/report-3-x2bq4", True),  # indexed
        (WorkloadRef("StatefulSet", "db", "pg"), "db/pg-0", True),
        (WorkloadRef("StatefulSet", "db", "pg"), "db/pg-12", True),
        (WorkloadRef("StatefulSet", "db", "pg"), "db/pg-x2bq4", False),
        # A generated name keeps 58 characters of its base: the hash and the dash are cut.
        (WorkloadRef("Deployment", "shop", LONG), f"shop/{LONG}x2bq4", True),
        (WorkloadRef("DaemonSet", "ops", LONG + "-and-more"), f"ops/{LONG}x2bq4", True),
    ],
)
def test_a_workload_owns_the_pods_its_controller_names(ref: WorkloadRef, pod: str, owned: bool) -> None:
    assert ref.owns(pod) is owned


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        ("shop/api-7d9c5b8f4-x2bq4", ("Deployment", "shop/api")),
        ("ops/log-agent-x2bq4", (None, "ops/log-agent")),
        ("batch/report-3-x2bq4", (None, "batch/report")),
        ("db/pg-0", ("StatefulSet", "db/pg")),
        ("default/cart-cache", None),
    ],
)
def test_owner_of(pod: str, want: tuple[str | None, str] | None) -> None:
    assert owner_of(pod) == want


PODS = ["shop/api-7d9c5b8f4-x2bq4", "shop/api-7d9c5b8f4-z8k2m", "shop/apx", "web/frontend-0", "default/solo"]


@pytest.mark.parametrize(
    ("text", "read_as", "found"),
    [
        ("shop/api", "shop/api", PODS[:2]),
        ("Deployment/shop/api", "Deployment/shop/api", PODS[:2]),
        ("shop/ap", "shop/ap", PODS[:3]),
        ("solo", "default/solo", ["default/solo"]),
        ("frontend", "frontend", ["web/frontend-0"]),  # a bare name looks in every namespace
        ("web", "namespace web", ["web/frontend-0"]),
        ("shop/nope", "shop/nope", []),
    ],
)
def test_matching_pods(text: str, read_as: str, found: list[str]) -> None:
    assert matching_pods(text, PODS) == (read_as, found)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("shop/apz", ["shop/api", "shop/apx"]),
        ("Deployment/shop/apl", ["Deployment/shop/api"]),
        ("DaemonSet/shop/api", ["Deployment/shop/api"]),  # the names show which kind it is
        ("StatefulSet/web/frontnd", ["StatefulSet/web/frontend"]),
        ("default/frontend-0", ["web/frontend-0", "web/frontend"]),  # another namespace: a little less alike
        ("frontend-1", ["web/frontend-0", "web/frontend"]),
        ("shop/zzzzzzzz", []),
    ],
)
def test_suggestions(text: str, want: list[str]) -> None:
    assert suggestions(text, PODS) == want
