"""Filter plugins in twins for tests/framework/test_capabilities.py: both of a pair decide alike, one
of them declares a capability (kubesched.framework.capabilities) and the other does not.

Each records how it was asked, so a test sees whether the framework and preemption took the declared
shortcut or the plain path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status

NO_SLOT = "no free slot"
WRONG_ZONE = "node is not in zone a"


class SlotFilter:
    """Rejects a node already hosting ``slots`` pods (args; default 1): a verdict on the node's pods."""

    name = ""

    def __init__(self, args: Any, handle: Any) -> None:
        self.slots = int((args or {}).get("slots", 1))
        #: (node, pods on it) per call of the per-node Filter.
        self.filter_calls: list[tuple[str, int]] = []

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.filter_calls.append((node_info.name, len(node_info.pods)))
        return Status(Code.UNSCHEDULABLE, (NO_SLOT,)) if len(node_info.pods) + 1 > self.slots else None


class SlotChecks:
    """SlotFilter's verdict as FitChecks, counting how often each form is asked."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.shortage_calls = 0
        self.batch_calls = 0

    def shortages(
        self,
        allocatable: Mapping[str, int],
        requested: Mapping[str, int],
        num_pods: int,
        adding: Mapping[str, int] | None = None,
    ) -> tuple[str, ...]:
        self.shortage_calls += 1
        return (NO_SLOT,) if num_pods + (adding is not None) + 1 > self.slots else ()

    def filter_with_pods(
        self, snapshot: Snapshot, rows: np.ndarray, extras: Sequence[Sequence[Pod]]
    ) -> list[Status | None]:
        self.batch_calls += 1
        counts = snapshot.pod_count[rows] + np.fromiter((len(e) for e in extras), dtype=np.int64, count=len(rows))
        return [Status(Code.UNSCHEDULABLE, (NO_SLOT,)) if c + 1 > self.slots else None for c in counts.tolist()]


class FitSlotFilter(SlotFilter):
    """SlotFilter that declares FitFilterPlugin."""

    def __init__(self, args: Any, handle: Any) -> None:
        super().__init__(args, handle)
        self.checks = SlotChecks(self.slots)
        self.without_checks = bool((args or {}).get("without_checks"))

    def fit_checks(self, state: CycleState) -> SlotChecks | None:
        return None if self.without_checks else self.checks


class ZoneFilter:
    """Passes only nodes labelled ``zone=a``: a verdict on the node object alone."""

    name = ""

    def __init__(self, args: Any, handle: Any) -> None:
        self.filter_calls: list[tuple[str, int]] = []

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.filter_calls.append((node_info.name, len(node_info.pods)))
        node = node_info.node
        ok = node is not None and node.labels.get("zone") == "a"
        return None if ok else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (WRONG_ZONE,))


class NodeOnlyZoneFilter(ZoneFilter):
    """ZoneFilter that declares NodeOnlyFilterPlugin."""

    filter_reads_node_only = True


class NotNodeOnlyZoneFilter(ZoneFilter):
    """ZoneFilter with the attribute, set False: declaring nothing."""

    filter_reads_node_only = False
