"""kubesched against upstream kube-scheduler v1.34 on the real control plane, seed by seed.

Upstream decides each seed's pending pods one at a time (testing/differential/upstream.py); kubesched
decides each on the state upstream decided on; the first decisions are compared (compare.py). One
kube-scheduler and one kube-controller-manager serve every seed. ``python -m benchmarks.differential``
runs any number of seeds and reports each disagreement with the state to reproduce it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.controlplane.fixture import ControlPlane
from testing.differential import harness, replay
from testing.differential.compare import AGREE, DISAGREE, EXPECTED, SKIPPED, Comparison
from testing.differential.upstream import Oracle
from testing.differential.verdict import BOUND, PREEMPTED, UNSCHEDULABLE

pytestmark = pytest.mark.controlplane

#: About 1.5 s each on a quiet machine; together they bind, fail and preempt; about half of them have
#: devices published through DRA and pods claiming them.
SEEDS = range(20)

#: PENDING until kubesched emulates v1.34 (``replay.EMULATED_VERSION = "1.34"``): the FailedScheduling
#: texts must then equal upstream's word for word. Until then kubesched speaks v1.30, whose texts differ
#: in ways the catalogue names; those differences are checked below instead.
EXACT_MESSAGES_PENDING = replay.EMULATED_VERSION != "1.34"


@pytest.fixture(scope="module")
def results(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[harness.SeedResult]]:
    with Oracle(control_plane, Path(tmp_path_factory.mktemp("oracle"))) as oracle:
        yield harness.run_seeds(oracle, SEEDS, dra=True)


def _report(comparisons: list[Comparison]) -> str:
    return "\n".join(c.summary() for c in comparisons)


def test_upstream_decided_every_pod(results: list[harness.SeedResult]) -> None:
    assert {r.seed: r.error for r in results if r.error} == {}
    undecided = [c for c in harness.comparisons(results) if c.decision == SKIPPED]
    assert undecided == [], _report(undecided)


def test_the_seeds_bind_fail_and_preempt(results: list[harness.SeedResult]) -> None:
    kinds = {c.upstream.kind for c in harness.comparisons(results)}
    assert kinds == {BOUND, UNSCHEDULABLE, PREEMPTED}


def test_placements_and_preemptions_agree(results: list[harness.SeedResult]) -> None:
    """Bound: upstream's node is among kubesched's best; unschedulable for both; preempted: the same node
    and victims. Version differences of scoring (§5.2) count as expected until kubesched emulates v1.34."""
    wrong = [c for c in harness.comparisons(results) if c.decision == DISAGREE]
    assert wrong == [], _report(wrong)
    if not EXACT_MESSAGES_PENDING:
        assert all(c.decision == AGREE for c in harness.comparisons(results))


def test_the_devices_allocated_agree(results: list[harness.SeedResult]) -> None:
    """For pods both bound, the devices written to their claims agree up to equivalent devices."""
    compared = [c for c in harness.comparisons(results) if c.devices is not None]
    assert compared, "no pod with claims was bound by both schedulers"
    wrong = [c for c in compared if c.devices != AGREE]
    assert wrong == [], _report(wrong)


def test_message_differences_are_known_version_differences(results: list[harness.SeedResult]) -> None:
    """Every FailedScheduling text equals upstream's, or differs only as the v1.30 → v1.34 catalogue says."""
    wrong = [c for c in harness.comparisons(results) if c.message == DISAGREE]
    assert wrong == [], _report(wrong)
    assert any(c.message == EXPECTED for c in harness.comparisons(results)) == EXACT_MESSAGES_PENDING


@pytest.mark.skipif(
    EXACT_MESSAGES_PENDING,
    reason="pending: kubesched emulates v1.30 until simulate() takes "
    "emulated_version; set replay.EMULATED_VERSION = '1.34' then",
)
def test_failed_scheduling_messages_equal_upstream(results: list[harness.SeedResult]) -> None:
    wrong = [c for c in harness.comparisons(results) if c.message not in (AGREE, None)]
    assert wrong == [], _report(wrong)
