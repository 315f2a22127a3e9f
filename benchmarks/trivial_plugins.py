"""The trivial out-of-tree plugins the extending benchmarks measure: a filter that passes every node
and a score that gives every node 50, once in the per-node form and once with batch forms too."""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched.framework.interfaces import BatchFilterResult


class TrivialPerNode:
    name = "TrivialPerNode"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None

    def score(self, state: Any, pod: Any, node_info: Any) -> tuple[int, None]:
        return 50, None

    def score_extensions(self) -> None:
        return None


class TrivialBatch(TrivialPerNode):
    name = "TrivialBatch"

    def filter_nodes(self, state: Any, pod: Any, snapshot: Any, indices: np.ndarray) -> BatchFilterResult:
        return BatchFilterResult.all_pass(len(indices))

    def score_nodes(self, state: Any, pod: Any, nodes: Any) -> np.ndarray:
        return np.full(len(nodes), 50, dtype=np.int64)

    def normalize_scores(self, state: Any, pod: Any, scores: np.ndarray) -> None:
        return None
