"""VolumeBinding's queueing hints (v1.34): which storage changes may let a pod it rejected bind its claims.

Storage objects reach a hint as their object dicts (``old_obj`` None for an addition).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.objects import Pod
from kubesched.api.quantity import parse_quantity
from kubesched.api.storage import claim_names_of
from kubesched.framework.interfaces import QueueingHint
from kubesched.queue.hints import object_meta

#: The CSINode annotation listing the in-tree plugins migrated to CSI on the node.
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def is_schedulable_after_storage_class_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Any new class; an updated one only when its allowed topologies changed."""
    if old_obj is None:
        return QUEUE
    return QUEUE if old_obj.get("allowedTopologies") != new_obj.get("allowedTopologies") else SKIP


def is_schedulable_after_pvc_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A claim the pod uses (by name, or as its generic ephemeral volume) was created or changed."""
    namespace, name = object_meta(new_obj)
    if namespace != pod.namespace:
        return SKIP
    return QUEUE if any(claim == name for claim, _ in claim_names_of(pod.volumes, pod.name)) else SKIP


def is_schedulable_after_csi_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A new CSINode, or one whose migrated-plugins annotation changed."""
    if old_obj is None:
        return QUEUE
    return QUEUE if _migrated_plugins(old_obj) != _migrated_plugins(new_obj) else SKIP


def _migrated_plugins(csi_node: Mapping[str, Any]) -> Any:
    return ((csi_node.get("metadata") or {}).get("annotations") or {}).get(MIGRATED_PLUGINS_ANNOTATION)


def is_schedulable_after_csi_driver_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A driver of one of the pod's inline CSI volumes stopped tracking storage capacity."""
    _, driver = object_meta(new_obj)
    was = ((old_obj or {}).get("spec") or {}).get("storageCapacity") is True
    now = (new_obj.get("spec") or {}).get("storageCapacity") is True
    if not was or now:
        return SKIP
    uses = any((v.get("csi") or {}).get("driver") == driver for v in pod.volumes if v.get("csi") is not None)
    return QUEUE if uses else SKIP


def is_schedulable_after_csi_storage_capacity_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """New capacity, or a volume limit that appeared or grew."""
    if old_obj is None:
        return QUEUE
    old_limit, new_limit = _volume_limit(old_obj), _volume_limit(new_obj)
    if new_limit is not None and (old_limit is None or new_limit > old_limit):
        return QUEUE
    return SKIP


def _volume_limit(capacity: Mapping[str, Any]) -> Any:
    """maximumVolumeSize when set (more precise), else capacity; None when neither is (or parses)."""
    value = capacity.get("maximumVolumeSize")
    if value is None:
        value = capacity.get("capacity")
    if value is None:
        return None
    try:
        return parse_quantity(value)
    except (TypeError, ValueError):
        return None
