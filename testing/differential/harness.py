"""Seeds in, a report out: the oracle plays each seed, kubesched decides on each recorded state, and every
pod's two verdicts are compared. Shared by tests/differential and ``python -m benchmarks.differential``."""

from __future__ import annotations

import statistics
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from testing.differential import replay
from testing.differential.compare import DISAGREE, EXPECTED, OUTCOMES, Comparison, compare
from testing.differential.generator import generate
from testing.differential.upstream import Oracle, Step
from testing.differential.verdict import BOUND, NONE, PREEMPTED, UNSCHEDULABLE, Verdict

KINDS = (BOUND, UNSCHEDULABLE, PREEMPTED, NONE)


@dataclass
class SeedResult:
    seed: int
    comparisons: list[Comparison] = field(default_factory=list)
    #: The recorded steps of pods whose comparison is not an agreement (to reproduce them).
    steps: dict[str, Step] = field(default_factory=dict)
    upstream_seconds: float = 0.0
    kubesched_seconds: float = 0.0
    error: str | None = None

    @property
    def seconds(self) -> float:
        return self.upstream_seconds + self.kubesched_seconds


def run_seed(oracle: Oracle, seed: int, *, dra: bool = False) -> SeedResult:
    """One seed end to end (``dra``: with devices and claims in some seeds); an oracle failure is recorded
    as the seed's error, not raised."""
    result = SeedResult(seed)
    scenario = generate(seed, dra=dra)
    started = time.monotonic()
    try:
        steps = oracle.play(scenario)
    except Exception as err:  # reported per seed; the run goes on with the next one
        result.error = f"{type(err).__name__}: {err}"
        result.upstream_seconds = time.monotonic() - started
        return result
    result.upstream_seconds = time.monotonic() - started
    started = time.monotonic()
    for step in steps:
        kubesched = _kubesched(step)
        comparison = compare(
            seed,
            step.index,
            step.upstream,
            kubesched,
            step.state,
            step.created,
            explain=replay.EMULATED_VERSION != "1.34",
        )
        comparison.notes = list(step.notes)
        result.comparisons.append(comparison)
        if not comparison.agrees or step.notes:
            result.steps[step.pod] = step
    result.kubesched_seconds = time.monotonic() - started
    return result


def _kubesched(step: Step) -> Verdict:
    try:
        return replay.kubesched_verdict(step.state, step.created)
    except Exception as err:  # a crash is a verdict too: it disagrees, with the reason
        step.notes.append(f"kubesched raised {type(err).__name__}: {err}\n{traceback.format_exc(limit=5)}")
        return Verdict(NONE)


def run_seeds(
    oracle: Oracle, seeds: Iterable[int], progress: Callable[[SeedResult], None] | None = None, *, dra: bool = False
) -> list[SeedResult]:
    results = []
    for seed in seeds:
        result = run_seed(oracle, seed, dra=dra)
        results.append(result)
        if progress is not None:
            progress(result)
    return results


# -- summaries --------------------------------------------------------------------------------------
def comparisons(results: Iterable[SeedResult]) -> list[Comparison]:
    return [c for r in results for c in r.comparisons]


def agreement_table(results: list[SeedResult]) -> str:
    """Markdown: per upstream outcome kind, how kubesched's decisions and messages compared."""
    rows = Counter((c.upstream.kind, "decision", c.decision) for c in comparisons(results))
    rows.update((c.upstream.kind, "message", c.message) for c in comparisons(results) if c.message is not None)
    rows.update((c.upstream.kind, "devices", c.devices) for c in comparisons(results) if c.devices is not None)
    header = "| upstream | compared | pods | " + " | ".join(OUTCOMES) + " |"
    lines = [header, "|" + "---|" * (3 + len(OUTCOMES))]
    for kind in KINDS:
        for what in ("decision", "message", "devices"):
            counts = [rows[(kind, what, outcome)] for outcome in OUTCOMES]
            if sum(counts):
                lines.append(f"| {kind} | {what} | {sum(counts)} | " + " | ".join(str(n) for n in counts) + " |")
    return "\n".join(lines)


def tag_counts(results: list[SeedResult]) -> Counter[str]:
    """How often each catalogue section explained an expected mismatch."""
    tags: Counter[str] = Counter()
    for c in comparisons(results):
        tags.update(c.decision_tags if c.decision == EXPECTED else [])
        tags.update(c.message_tags if c.message == EXPECTED else [])
    return tags


def disagreements(results: list[SeedResult]) -> list[Comparison]:
    return [c for c in comparisons(results) if DISAGREE in (c.decision, c.message, c.devices)]


def tie_sizes(results: list[SeedResult]) -> dict[int, int]:
    """How many nodes shared kubesched's best score, over the pods upstream bound: the fewer, the
    sharper the placement check (one node: upstream had to pick exactly that one)."""
    sizes = Counter(
        len(c.kubesched.ties) for c in comparisons(results) if c.upstream.kind == BOUND and c.kubesched.ties
    )
    return dict(sorted(sizes.items()))


def report(results: list[SeedResult], *, wall_seconds: float) -> dict[str, Any]:
    """The JSON report: counts, timings, and every disagreement with the state to reproduce it."""
    per_seed = [r.seconds for r in results if r.error is None]
    kinds = Counter(c.upstream.kind for c in comparisons(results))
    outcome_counts: dict[str, dict[str, dict[str, int]]] = {}
    for c in comparisons(results):
        entry = outcome_counts.setdefault(c.upstream.kind, {"decision": {}, "message": {}, "devices": {}})
        entry["decision"][c.decision] = entry["decision"].get(c.decision, 0) + 1
        if c.message is not None:
            entry["message"][c.message] = entry["message"].get(c.message, 0) + 1
        if c.devices is not None:
            entry["devices"][c.devices] = entry["devices"].get(c.devices, 0) + 1
    out_disagreements = []
    for result in results:
        for c in result.comparisons:
            if DISAGREE in (c.decision, c.message, c.devices):
                step = result.steps[c.pod]
                out_disagreements.append(
                    {**c.to_dict(), "upstreamEvent": step.event, "state": step.state, "podAsCreated": step.created}
                )
    return {
        "emulatedVersion": replay.EMULATED_VERSION,
        "seeds": [r.seed for r in results],
        "failedSeeds": {str(r.seed): r.error for r in results if r.error},
        "pods": sum(kinds.values()),
        "upstreamKinds": dict(kinds),
        "outcomes": outcome_counts,
        "tags": dict(tag_counts(results).most_common()),
        "tieSizes": tie_sizes(results),
        "timing": {
            "wallSeconds": round(wall_seconds, 1),
            "perSeedSeconds": _spread(per_seed),
            "upstreamSeconds": round(sum(r.upstream_seconds for r in results), 1),
            "kubeschedSeconds": round(sum(r.kubesched_seconds for r in results), 1),
        },
        "expected": [c.to_dict() for c in comparisons(results) if EXPECTED in (c.decision, c.message)],
        "disagreements": out_disagreements,
        "notes": [{"seed": c.seed, "pod": c.pod, "notes": c.notes} for c in comparisons(results) if c.notes],
    }


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {
        "mean": round(statistics.fmean(values), 2),
        "p50": round(statistics.median(values), 2),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        "max": round(ordered[-1], 2),
    }
