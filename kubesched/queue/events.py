"""The cluster events the scheduling queue reacts to, and the event map plugins register.

Resource names are kube-scheduler's GVK strings, so events built here compare equal to the ones
plugins return from ``events_to_register``. The labels only name an event for logs and metrics;
matching (``ClusterEvent.matches``) looks at resource and action alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubesched.framework.interfaces import ActionType, ClusterEvent, EnqueueExtensions

# -- resources (GVKs) -----------------------------------------------------------------------------
POD = "Pod"
NODE = "Node"
PERSISTENT_VOLUME = "PersistentVolume"
PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
CSI_NODE = "storage.k8s.io/CSINode"
CSI_DRIVER = "storage.k8s.io/CSIDriver"
CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
STORAGE_CLASS = "storage.k8s.io/StorageClass"
POD_SCHEDULING_CONTEXT = "PodSchedulingContext"
RESOURCE_CLAIM = "ResourceClaim"
RESOURCE_CLASS = "ResourceClass"
RESOURCE_CLAIM_PARAMETERS = "ResourceClaimParameters"
RESOURCE_CLASS_PARAMETERS = "ResourceClassParameters"
WILDCARD = "*"

# -- reasons a pod enters a sub-queue (the ``event`` label of scheduler_queue_incoming_pods_total) ----
POD_ADD = "PodAdd"
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
FORCE_ACTIVATE = "ForceActivate"
POD_UPDATE = "PodUpdate"

# -- named cluster events -------------------------------------------------------------------------
AssignedPodAdd = ClusterEvent(POD, ActionType.ADD, "AssignedPodAdd")
AssignedPodUpdate = ClusterEvent(POD, ActionType.UPDATE, "AssignedPodUpdate")
AssignedPodDelete = ClusterEvent(POD, ActionType.DELETE, "AssignedPodDelete")
NodeAdd = ClusterEvent(NODE, ActionType.ADD, "NodeAdd")
NodeSpecUnschedulableChange = ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT, "NodeSpecUnschedulableChange")
NodeAllocatableChange = ClusterEvent(NODE, ActionType.UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange")
NodeLabelChange = ClusterEvent(NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
NodeAnnotationChange = ClusterEvent(NODE, ActionType.UPDATE_NODE_ANNOTATION, "NodeAnnotationChange")
NodeTaintChange = ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT, "NodeTaintChange")
NodeConditionChange = ClusterEvent(NODE, ActionType.UPDATE_NODE_CONDITION, "NodeConditionChange")
PvAdd = ClusterEvent(PERSISTENT_VOLUME, ActionType.ADD, "PvAdd")
PvUpdate = ClusterEvent(PERSISTENT_VOLUME, ActionType.UPDATE, "PvUpdate")
PvcAdd = ClusterEvent(PERSISTENT_VOLUME_CLAIM, ActionType.ADD, "PvcAdd")
PvcUpdate = ClusterEvent(PERSISTENT_VOLUME_CLAIM, ActionType.UPDATE, "PvcUpdate")
StorageClassAdd = ClusterEvent(STORAGE_CLASS, ActionType.ADD, "StorageClassAdd")
StorageClassUpdate = ClusterEvent(STORAGE_CLASS, ActionType.UPDATE, "StorageClassUpdate")
CSINodeAdd = ClusterEvent(CSI_NODE, ActionType.ADD, "CSINodeAdd")
CSINodeUpdate = ClusterEvent(CSI_NODE, ActionType.UPDATE, "CSINodeUpdate")
CSIDriverAdd = ClusterEvent(CSI_DRIVER, ActionType.ADD, "CSIDriverAdd")
CSIDriverUpdate = ClusterEvent(CSI_DRIVER, ActionType.UPDATE, "CSIDriverUpdate")
CSIStorageCapacityAdd = ClusterEvent(CSI_STORAGE_CAPACITY, ActionType.ADD, "CSIStorageCapacityAdd")
CSIStorageCapacityUpdate = ClusterEvent(CSI_STORAGE_CAPACITY, ActionType.UPDATE, "CSIStorageCapacityUpdate")
#: Storage watch events (kind, watch event type) -> the cluster event kube-scheduler's handlers emit.
STORAGE_EVENTS: dict[tuple[str, str], ClusterEvent] = {
    ("PersistentVolume", "ADDED"): PvAdd,
    ("PersistentVolume", "MODIFIED"): PvUpdate,
    ("PersistentVolumeClaim", "ADDED"): PvcAdd,
    ("PersistentVolumeClaim", "MODIFIED"): PvcUpdate,
    ("StorageClass", "ADDED"): StorageClassAdd,
    ("StorageClass", "MODIFIED"): StorageClassUpdate,
    ("CSINode", "ADDED"): CSINodeAdd,
    ("CSINode", "MODIFIED"): CSINodeUpdate,
    ("CSIDriver", "ADDED"): CSIDriverAdd,
    ("CSIDriver", "MODIFIED"): CSIDriverUpdate,
}
#: Matches every resource and action: used to force every unschedulable pod to move.
WildCardEvent = ClusterEvent(WILDCARD, ActionType.ALL, "WildCardEvent")
#: A pod sat in the unschedulable pool longer than the configured maximum (a wildcard too).
UnschedulableTimeout = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")
#: The configuration was reloaded: new plugins may judge every waiting pod otherwise (a wildcard too).
ConfigReload = ClusterEvent(WILDCARD, ActionType.ALL, "ConfigReload")

ClusterEventMap = dict[ClusterEvent, set[str]]


def build_cluster_event_map(plugins: Iterable[EnqueueExtensions]) -> ClusterEventMap:
    """Registered event -> names of the plugins that registered it, for one profile.

    Same rules as the scheduler's queueing-hint map (hints off): a plugin registering no events is
    left out (only its own pod updates can requeue what it rejected); a plugin that asks for node
    additions but not taint updates also gets ``Node/UpdateNodeTaint``, because the scheduler's
    pre-check may drop a node-add event that such a plugin would have needed.
    """
    out: ClusterEventMap = {}
    for plugin in plugins:
        events = list(plugin.events_to_register())
        if not events:
            continue
        wants_node_add = wants_taint_update = False
        for event in events:
            if event.resource == NODE:
                wants_node_add |= bool(event.action & ActionType.ADD)
                wants_taint_update |= bool(event.action & ActionType.UPDATE_NODE_TAINT)
            out.setdefault(event, set()).add(plugin.name)
        if wants_node_add and not wants_taint_update:
            out.setdefault(ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT), set()).add(plugin.name)
    return out
