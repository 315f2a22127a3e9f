"""GPUBinPacking: a Score plugin that fills GPU nodes before opening new ones.

A node scores by how full its GPUs would be with the pod on it (``requested / allocatable * 100``),
so GPU pods pack onto partly used nodes and whole nodes stay free for big jobs. Pods without GPUs
skip the plugin (PreScore returns Skip). It shows both forms of Score: ``score`` per node, which
every plugin needs, and ``score_nodes``, an optional batch form over all candidate nodes at once
(NumPy over the snapshot's resource columns) that the framework prefers when present.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.framework.status import Code, Status

MAX_SCORE = 100


class GPUBinPacking:
    name = "GPUBinPacking"

    def __init__(self, args: dict[str, Any] | None, handle: Any) -> None:
        self.resource = (args or {}).get("resource", "nvidia.com/gpu")

    def _request(self, pod: Any) -> int:
        return int(pod.requests.get(self.resource, 0))

    # PreScore: nothing to score for pods that want no GPU.
    def pre_score(self, state: Any, pod: Any, nodes: Any) -> Status | None:
        return Status(Code.SKIP) if self._request(pod) == 0 else None

    # Score, per node: how full the node's GPUs would be.
    def score(self, state: Any, pod: Any, node_info: Any) -> tuple[int, Status | None]:
        allocatable = node_info.allocatable.get(self.resource, 0)
        if allocatable == 0:
            return 0, None
        used = node_info.requested.get(self.resource, 0) + self._request(pod)
        return min(used * MAX_SCORE // allocatable, MAX_SCORE), None

    def score_extensions(self) -> None:
        return None  # scores are already in [0, 100]

    # The batch form: the same numbers for every node of ``nodes`` in a few array operations.
    def score_nodes(self, state: Any, pod: Any, nodes: Any) -> np.ndarray:
        snapshot = nodes.snapshot
        column = snapshot.resource_column(self.resource)
        if column is None:  # no node has this resource
            return np.zeros(len(nodes), dtype=np.int64)
        allocatable = snapshot.allocatable[nodes.indices, column]
        used = snapshot.requested[nodes.indices, column] + self._request(pod)
        scores = np.where(allocatable > 0, used * MAX_SCORE // np.maximum(allocatable, 1), 0)
        return np.minimum(scores, MAX_SCORE).astype(np.int64)

    def normalize_scores(self, state: Any, pod: Any, scores: np.ndarray) -> None:
        return None
