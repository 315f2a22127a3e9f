"""ImageLocality: favour nodes that already hold the pod's container images.

An image counts for its size scaled by the share of nodes that have it, so that a popular image
does not pull every pod onto the same few nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Container, Pod
from kubesched.cache.node_info import ImageStateSummary, NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import MAX_NODE_SCORE, ScoreExtensions
from kubesched.framework.status import Status
from kubesched.plugins import names
from kubesched.plugins.helper import IdentityMemo

if TYPE_CHECKING:
    from kubesched.cache.snapshot import NodeInfoList, Snapshot

NAME = names.IMAGE_LOCALITY

MB = 1024 * 1024
#: Image sizes outside this range do not change the score (per container, for the upper bound).
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """The name as node status reports it: ``:latest`` added when the name carries no tag.

    Only a ':' after the last '/' is a tag (a registry port is not); digests are left alone, and no
    registry or ``library/`` prefix is added.
    """
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(state: ImageStateSummary, total_nodes: int) -> int:
    """Size times the share of nodes holding the image, in float64 and truncated as kube-scheduler does."""
    spread = float(state.num_nodes) / float(total_nodes)
    return int(float(state.size) * spread)


def sum_image_scores(image_states: Mapping[str, ImageStateSummary], images: tuple[str, ...], total_nodes: int) -> int:
    total = 0
    for image in images:
        state = image_states.get(image)
        if state is not None:
            total += scaled_image_score(state, total_nodes)
    return total


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Clamp the summed image scores and map them linearly (integer division) to 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    # The lower bound wins when the bounds cross (a pod without containers).
    if sum_scores < MIN_THRESHOLD:
        clamped = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        clamped = max_threshold
    else:
        clamped = sum_scores
    # Only a pod without containers gets a negative denominator; divide truncating toward zero (Go).
    numerator = MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)
    denominator = max_threshold - MIN_THRESHOLD
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


def _pod_images(pod: Pod) -> tuple[str, ...]:
    """Normalised images of init then app containers (duplicates kept: each container counts)."""
    return tuple(normalized_image_name(image) for image in pod.images())


class _ImageIndex:
    """image name -> (node slots that have it, size, num_nodes per such node), for one version of the
    snapshot's image states. Slots, not rows: nodes joining without images move rows but leave the
    index as it is (see Snapshot.slots)."""

    __slots__ = ("by_image", "snapshot", "version")

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.version = snapshot.images_version
        slots: dict[str, list[int]] = {}
        sizes: dict[str, list[int]] = {}
        counts: dict[str, list[int]] = {}
        slot_of = snapshot.slots.slot
        for i, info in enumerate(snapshot.node_infos):
            if not info.image_states:
                continue
            slot = slot_of(i)
            for image, state in info.image_states.items():
                slots.setdefault(image, []).append(slot)
                sizes.setdefault(image, []).append(state.size)
                counts.setdefault(image, []).append(state.num_nodes)
        self.by_image: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {
            image: (
                np.asarray(slots[image], dtype=np.int64),
                np.asarray(sizes[image], dtype=np.float64),
                np.asarray(counts[image], dtype=np.float64),
            )
            for image in slots
        }

    def current_for(self, snapshot: Snapshot) -> bool:
        return self.snapshot is snapshot and self.version == snapshot.images_version


class ImageLocality:
    name = NAME

    def __init__(self, handle: Any = None) -> None:
        self.handle = handle
        self._index: _ImageIndex | None = None
        #: The pod's normalised images per parsed containers tuple (pods of one spec share it), with
        #: the init containers they were read with.
        self._images: IdentityMemo[tuple[Container, ...], tuple[tuple[Container, ...], tuple[str, ...]]] = (
            IdentityMemo()
        )

    def _pod_images(self, pod: Pod) -> tuple[str, ...]:
        """:func:`_pod_images`, kept per parsed containers."""
        containers, init = pod.containers, pod.init_containers
        kept = self._images.get(containers)
        if kept is None or kept[0] is not init:
            kept = self._images.put(containers, (init, _pod_images(pod)))
        return kept[1]

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        total_nodes = len(self.handle.snapshot)
        images = self._pod_images(pod)
        summed = sum_image_scores(node_info.image_states, images, total_nodes)
        return calculate_priority(summed, len(images)), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> np.ndarray:
        snapshot = nodes.snapshot
        rows = np.asarray(nodes.indices)
        images = self._pod_images(pod)
        total_nodes = len(snapshot)
        index = self._index
        if index is None or not index.current_for(snapshot):
            index = self._index = _ImageIndex(snapshot)
        entries = [entry for image in images if (entry := index.by_image.get(image)) is not None]
        if not entries:
            # No node holds any of the pod's images: every sum is below the lower threshold, which
            # scores 0 whatever the number of containers.
            return np.zeros(len(rows), dtype=np.int64)
        # Per snapshot row, the summed image scores; only rows holding an image are touched.
        per_row = np.zeros(total_nodes, dtype=np.int64)
        for slots, sizes, counts in entries:
            # float64 arithmetic then truncation, exactly as the per-node form.
            per_row[snapshot.slots.rows(slots)] += (sizes * (counts / float(total_nodes))).astype(np.int64)
        summed = per_row[rows]
        max_threshold = MAX_CONTAINER_THRESHOLD * len(images)
        if max_threshold <= MIN_THRESHOLD:
            return np.array([calculate_priority(int(s), len(images)) for s in summed], dtype=np.int64)
        clamped = np.clip(summed, MIN_THRESHOLD, max_threshold)
        scores: np.ndarray = (MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) // (max_threshold - MIN_THRESHOLD)
        return scores

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    def normalize_scores(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray | None:
        return None


def new(args: Any, handle: Handle) -> ImageLocality:
    return ImageLocality(handle)
