"""Node pools: which label groups a cluster's nodes, and the order people expect node names in.

Clusters of thousands of nodes are made of a few pools of alike nodes, and every managed Kubernetes
labels a node with its pool. The first of :data:`POOL_LABELS` that some node carries groups them all
(nodes without it form the pool ``<none>``); with none of them, nodes group by zone, and otherwise
they are one pool. The summary and the HTML report both group by :func:`pool_label`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

#: Node-pool labels, most specific first: GKE, EKS managed node groups, Karpenter, AKS (current and
#: legacy), then the instance type, which alike nodes share where no pool label is set.
POOL_LABELS = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "node.kubernetes.io/instance-type",
)
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
#: The pool of a node that lacks the grouping label.
NO_POOL = "<none>"

_DIGITS = re.compile(r"(\d+)")


def pool_label(label_sets: Iterable[Mapping[str, str]]) -> str | None:
    """The label that groups these nodes into pools (see the module docstring); None: one pool."""
    present: set[str] = set()
    for labels in label_sets:
        present.update(k for k in (*POOL_LABELS, *ZONE_LABELS) if k in labels)
    return next((k for k in (*POOL_LABELS, *ZONE_LABELS) if k in present), None)


def pool_of(labels: Mapping[str, str], label: str | None) -> str:
    """The node's pool under ``label`` (its value, :data:`NO_POOL` without it; ``all`` with no label)."""
    if label is None:
        return "all"
    return labels.get(label, NO_POOL)


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the numbers inside names by value: ``node-2`` before ``node-10``."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(name) if part)
