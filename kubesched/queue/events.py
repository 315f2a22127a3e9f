"""The cluster events the scheduling queue reacts to, and how they are matched with registrations.

Resource names are kube-scheduler's GVK strings, so events built here compare equal to the ones
plugins return from ``events_to_register``. Labels only name an event for logs and metrics.

Two vocabularies live side by side, one per emulated version:

* v1.30 (SchedulerQueueingHints off): hand-labelled events (``NodeLabelChange``, ``PodAdd``) on the
  ``Pod`` and ``Node`` resources, matched by :meth:`ClusterEvent.matches` (any shared action bit).
* v1.34: pod events name ``AssignedPod`` or ``UnschedulablePod``, updates say precisely what changed
  (:func:`pod_scheduling_properties_change`, :func:`node_scheduling_properties_change`), labels are
  resource plus action, and :func:`match_cluster_events` also requires the incoming action to be no
  wider than the registered one, so a generic update never wakes a plugin that asked for a specific one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.framework.interfaces import ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions

# -- resources (GVKs) -----------------------------------------------------------------------------
POD = "Pod"
NODE = "Node"
PERSISTENT_VOLUME = "PersistentVolume"
PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
CSI_NODE = "storage.k8s.io/CSINode"
CSI_DRIVER = "storage.k8s.io/CSIDriver"
CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
STORAGE_CLASS = "storage.k8s.io/StorageClass"
VOLUME_ATTACHMENT = "storage.k8s.io/VolumeAttachment"
RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
DEVICE_CLASS = "resource.k8s.io/DeviceClass"
WILDCARD = "*"
#: v1.34's incoming pod events say whether the pod is bound; plugins register ``Pod``, which matches both.
ASSIGNED_POD = "AssignedPod"
UNSCHEDULABLE_POD = "UnschedulablePod"

#: Watched kinds whose changes reach the queue, by the resource name the queue matches (v1.34).
KIND_RESOURCES: Mapping[str, str] = {
    "PersistentVolume": PERSISTENT_VOLUME,
    "PersistentVolumeClaim": PERSISTENT_VOLUME_CLAIM,
    "StorageClass": STORAGE_CLASS,
    "CSINode": CSI_NODE,
    "CSIDriver": CSI_DRIVER,
    "CSIStorageCapacity": CSI_STORAGE_CAPACITY,
    "VolumeAttachment": VOLUME_ATTACHMENT,
    "ResourceClaim": RESOURCE_CLAIM,
    "ResourceSlice": RESOURCE_SLICE,
    "DeviceClass": DEVICE_CLASS,
}

#: The kind each such resource name stands for (what the scheduler watches).
RESOURCE_KINDS: Mapping[str, str] = {resource: kind for kind, resource in KIND_RESOURCES.items()}

# -- reasons a pod enters a sub-queue (the ``event`` label of scheduler_queue_incoming_pods_total) ----
POD_ADD = "PodAdd"
POD_UPDATE = "PodUpdate"
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
FORCE_ACTIVATE = "ForceActivate"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

# -- named cluster events, v1.30 -------------------------------------------------------------------
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
#: Storage watch events (kind, watch event type) -> the cluster event kube-scheduler v1.30's handlers emit.
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
UnschedulableTimeout = ClusterEvent(WILDCARD, ActionType.ALL, UNSCHEDULABLE_TIMEOUT)
#: The configuration was reloaded: new plugins may judge every waiting pod otherwise (a wildcard too).
ConfigReload = ClusterEvent(WILDCARD, ActionType.ALL, "ConfigReload")

# -- named cluster events, v1.34 -------------------------------------------------------------------
EventAssignedPodAdd = ClusterEvent(ASSIGNED_POD, ActionType.ADD)
EventAssignedPodUpdate = ClusterEvent(ASSIGNED_POD, ActionType.UPDATE)
EventAssignedPodDelete = ClusterEvent(ASSIGNED_POD, ActionType.DELETE)
EventUnscheduledPodAdd = ClusterEvent(UNSCHEDULABLE_POD, ActionType.ADD)
EventUnscheduledPodUpdate = ClusterEvent(UNSCHEDULABLE_POD, ActionType.UPDATE)
EventUnscheduledPodDelete = ClusterEvent(UNSCHEDULABLE_POD, ActionType.DELETE)
EventNodeAdd = ClusterEvent(NODE, ActionType.ADD)
EventNodeDelete = ClusterEvent(NODE, ActionType.DELETE)
#: A wildcard aimed at one pod (``new_obj``): Activate of a pod that is being scheduled.
EventForceActivate = ClusterEvent(WILDCARD, ActionType.ALL, FORCE_ACTIVATE)

_WATCH_ACTIONS = {"ADDED": ActionType.ADD, "MODIFIED": ActionType.UPDATE, "DELETED": ActionType.DELETE}


def watch_event(kind: str, watch_type: str) -> ClusterEvent | None:
    """The v1.34 cluster event for a watched kind's change (None: the queue does not hear that kind)."""
    resource = KIND_RESOURCES.get(kind)
    action = _WATCH_ACTIONS.get(watch_type)
    if resource is None or action is None:
        return None
    return ClusterEvent(resource, action)


# -- matching, v1.34 --------------------------------------------------------------------------------
def _match_resources(registered: str, incoming: str) -> bool:
    return registered in (WILDCARD, incoming) or (registered == POD and incoming in (ASSIGNED_POD, UNSCHEDULABLE_POD))


def match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """Whether ``incoming`` is ``registered`` or a more specific case of it (v1.34's MatchClusterEvents).

    A generic ``Update`` does not match a registration of one kind of update; an incoming wildcard
    matches only a registered wildcard."""
    if registered.is_wildcard():
        return True
    return (
        _match_resources(registered.resource, incoming.resource)
        and bool(registered.action & incoming.action)
        and incoming.action <= registered.action
    )


def match_any_cluster_event(incoming: ClusterEvent, registered: Iterable[ClusterEvent]) -> bool:
    return any(match_cluster_events(r, incoming) for r in registered)


# -- what changed, v1.34 ----------------------------------------------------------------------------
def pod_scheduling_properties_change(new: Pod, old: Pod, *, dra: bool = True) -> list[ClusterEvent]:
    """The events an update of a pod makes, most specific first (v1.34's PodSchedulingPropertiesChange):
    labels, a scale-down, scheduling gates all removed, tolerations, generated claims (``dra``); a
    change of none of these is one generic update."""
    resource = ASSIGNED_POD if new.node_name else UNSCHEDULABLE_POD
    actions: list[ActionType] = []
    if dict(new.labels) != dict(old.labels):
        actions.append(ActionType.UPDATE_POD_LABEL)
    if _scaled_down(new, old):
        actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if not new.scheduling_gates and old.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(new.tolerations) != len(old.tolerations):
        actions.append(ActionType.UPDATE_POD_TOLERATION)
    if dra and _claim_statuses(new) != _claim_statuses(old):
        actions.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    if not actions:
        actions.append(ActionType.UPDATE)
    return [ClusterEvent(resource, action) for action in actions]


def _scaled_down(new: Pod, old: Pod) -> bool:
    new_requests = new.requests
    return any(name not in new_requests or amount > new_requests[name] for name, amount in old.requests.items())


def _claim_statuses(pod: Pod) -> tuple[Any, Any]:
    status = pod.raw.get("status") or {}
    return status.get("resourceClaimStatuses") or None, status.get("extendedResourceClaimStatus") or None


def node_scheduling_properties_change(new: Node, old: Node) -> list[ClusterEvent]:
    """The events an update of a node makes, in v1.34's order (NodeSchedulingPropertiesChange): it
    became schedulable, allocatable, labels, taints, conditions (type -> status), annotations."""
    actions: list[ActionType] = []
    if old.unschedulable and not new.unschedulable:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if dict(old.allocatable) != dict(new.allocatable):
        actions.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if dict(old.labels) != dict(new.labels):
        actions.append(ActionType.UPDATE_NODE_LABEL)
    if old.taints != new.taints:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if _condition_statuses(old) != _condition_statuses(new):
        actions.append(ActionType.UPDATE_NODE_CONDITION)
    if dict(old.meta.annotations) != dict(new.meta.annotations):
        actions.append(ActionType.UPDATE_NODE_ANNOTATION)
    return [ClusterEvent(NODE, action) for action in actions]


def _condition_statuses(node: Node) -> dict[Any, Any]:
    conditions = (node.raw.get("status") or {}).get("conditions") or ()
    return {c.get("type"): c.get("status") for c in conditions if isinstance(c, Mapping)}


# -- the v1.30 event map ------------------------------------------------------------------------------
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
        events = [e.event if isinstance(e, ClusterEventWithHint) else e for e in plugin.events_to_register()]
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
