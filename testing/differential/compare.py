"""Judging kubesched's first decision against upstream's, tie-robustly.

The rules, per kind of upstream decision:

* **bound** to node N: kubesched placed the pod too and N is one of its ``ties`` (the feasible nodes
  sharing the best total score): upstream breaks ties at random, so any of them is a right answer;
* **unschedulable**: kubesched cannot place the pod either and does not preempt; its message must equal
  upstream's FailedScheduling text;
* **devices** (bound pods with claims): the allocations both wrote agree up to equivalent devices
  (:mod:`allocations`), a verdict of its own beside the decision;
* **preempted** on node N with victims V: kubesched nominates N and evicts exactly V; its message (the
  filter diagnosis of the failed attempt) must equal upstream's. Candidate ties cannot occur: every
  bound pod of a scenario has its own start time, so the last criterion of kube-scheduler's candidate
  choice (the latest start among the highest-priority victims) separates any two candidates, and the
  nominated node is deterministic. The rule is therefore exact, not a set comparison.

A mismatch is ``expected`` when the known v1.30 → v1.34 differences (:mod:`catalogue`) account for it and
kubesched was not asked to emulate v1.34; otherwise it is a ``disagree``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from testing.differential.allocations import device_signatures, equivalent
from testing.differential.catalogue import PodFacts, explain_message, explain_placement, pod_facts
from testing.differential.verdict import BOUND, NONE, PREEMPTED, UNSCHEDULABLE, Verdict

AGREE = "agree"
EXPECTED = "expected"
DISAGREE = "disagree"
#: Upstream made no decision in time: nothing to compare.
SKIPPED = "skipped"
OUTCOMES = (AGREE, EXPECTED, DISAGREE, SKIPPED)


@dataclass
class Comparison:
    """One pod's two verdicts and how they compare: ``decision`` (where it goes, which victims) and
    ``message`` (the FailedScheduling text; None when neither side failed), each an outcome with the
    catalogue sections that explain an ``expected`` one."""

    seed: int
    index: int
    pod: str
    upstream: Verdict
    kubesched: Verdict
    decision: str
    message: str | None = None
    #: Where both bound a pod with claims: whether the devices allocated agree.
    devices: str | None = None
    decision_tags: list[str] = field(default_factory=list)
    message_tags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return self.decision == AGREE and self.message in (AGREE, None) and self.devices in (AGREE, None)

    def summary(self) -> str:
        parts = [f"seed {self.seed} pod {self.pod}: decision {self.decision}"]
        if self.decision_tags:
            parts[-1] += f" ({'; '.join(self.decision_tags)})"
        if self.message is not None:
            tags = f" ({'; '.join(self.message_tags)})" if self.message_tags else ""
            parts.append(f"message {self.message}{tags}")
        if self.devices is not None:
            parts.append(f"devices {self.devices}")
        return ", ".join(parts) + f"\n    upstream:  {self.upstream}\n    kubesched: {self.kubesched}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "index": self.index,
            "pod": self.pod,
            "decision": self.decision,
            "decisionTags": self.decision_tags,
            "message": self.message,
            "messageTags": self.message_tags,
            "devices": self.devices,
            "upstream": self.upstream.to_dict(),
            "kubesched": self.kubesched.to_dict(),
            "notes": self.notes,
        }


def compare(
    seed: int,
    index: int,
    upstream: Verdict,
    kubesched: Verdict,
    state: Sequence[dict[str, Any]],
    pod: dict[str, Any],
    *,
    explain: bool = True,
) -> Comparison:
    """``explain=False`` (kubesched emulating v1.34) makes every mismatch a disagreement."""
    facts = pod_facts(state, pod) if explain else None
    result = Comparison(seed, index, pod["metadata"]["name"], upstream, kubesched, SKIPPED)
    if upstream.kind == NONE:
        return result
    result.decision, result.decision_tags = _decision(upstream, kubesched, facts)
    if upstream.kind in (UNSCHEDULABLE, PREEMPTED) and kubesched.kind == upstream.kind:
        result.message, result.message_tags = _message(upstream.message, kubesched.message, facts)
    if upstream.kind == kubesched.kind == BOUND and (upstream.devices or kubesched.devices):
        same = equivalent(
            upstream.devices, kubesched.devices, device_signatures(state), same_node=upstream.node == kubesched.node
        )
        result.devices = AGREE if same else DISAGREE
    return result


def _decision(u: Verdict, k: Verdict, facts: PodFacts | None) -> tuple[str, list[str]]:
    if u.kind != k.kind:
        return DISAGREE, []
    if u.kind == BOUND:
        assert u.node is not None
        if u.node in k.ties:
            return AGREE, []
        tags = explain_placement(u.node, k.scores, facts) if facts is not None else None
        return (EXPECTED, tags) if tags else (DISAGREE, [])
    if u.kind == PREEMPTED:
        same = u.node == k.node and sorted(u.victims) == sorted(k.victims)
        return (AGREE if same else DISAGREE), []
    return AGREE, []


def _message(u: str | None, k: str | None, facts: PodFacts | None) -> tuple[str, list[str]]:
    if u == k:
        return AGREE, []
    tags = explain_message(u, k, facts) if facts is not None else None
    return (EXPECTED, tags) if tags else (DISAGREE, [])
