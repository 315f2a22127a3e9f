"""kubesched deciding on exactly the state upstream decided on, through the public ``simulate`` API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched import simulate
from testing.differential.allocations import pod_allocations
from testing.differential.upstream import SCHEDULER_CONFIG
from testing.differential.verdict import BOUND, NONE, PREEMPTED, UNSCHEDULABLE, Verdict

#: The kube-scheduler version kubesched emulates here: the oracle's (the one place to change it).
EMULATED_VERSION: str | None = "1.34"


#: Kinds the simulator does not load. Only admission reads a RuntimeClass, and the pods in the state were
#: admitted by the real API server already (their ``spec.overhead`` is set).
NOT_FOR_THE_SIMULATOR = frozenset({"RuntimeClass"})


def simulate_options() -> dict[str, Any]:
    return {"emulated_version": EMULATED_VERSION} if EMULATED_VERSION else {}


def kubesched_verdict(state: Sequence[dict[str, Any]], pod: dict[str, Any], *, seed: int = 0) -> Verdict:
    """kubesched's first attempt at ``pod`` on a cluster holding ``state`` (objects as the API server
    returned them; ``pod`` pending)."""
    objects = [o for o in state if o["kind"] not in NOT_FOR_THE_SIMULATOR]
    result = simulate([*objects, pod], config=SCHEDULER_CONFIG, seed=seed, record="full", **simulate_options())
    key = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
    attempts = [r for r in result.records if r.pod == key]
    if not attempts:
        return Verdict(NONE)
    first = min(attempts, key=lambda r: r.cycle)
    if first.result == "Scheduled":
        devices = {}
        if pod["spec"].get("resourceClaims") and result.cluster is not None:
            namespace = pod["metadata"]["namespace"]
            bound = result.cluster.lookup("Pod", namespace, pod["metadata"]["name"]) or pod
            claims = {
                c["metadata"]["name"]: c
                for c in result.cluster.objects("ResourceClaim")
                if c["metadata"].get("namespace") == namespace
            }
            devices = pod_allocations(bound, claims)
        return Verdict(
            BOUND,
            first.node,
            ties=tuple(sorted(first.ties)),
            scores={node: dict(first.scores[node]) for node in sorted(first.scores)},
            devices=devices,
        )
    if first.nominated_node:
        victims = tuple(sorted(v.split("/", 1)[-1] for v in first.victims or ()))
        return Verdict(PREEMPTED, first.nominated_node, first.message, victims)
    return Verdict(UNSCHEDULABLE, None, first.message)
