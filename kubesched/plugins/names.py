"""Names of the in-tree plugins, as configuration files spell them."""

PRIORITY_SORT = "PrioritySort"
SCHEDULING_GATES = "SchedulingGates"
NODE_UNSCHEDULABLE = "NodeUnschedulable"
NODE_NAME = "NodeName"
TAINT_TOLERATION = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
NODE_PORTS = "NodePorts"
NODE_RESOURCES_FIT = "NodeResourcesFit"
NODE_RESOURCES_BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation"
VOLUME_RESTRICTIONS = "VolumeRestrictions"
EBS_LIMITS = "EBSLimits"
GCE_PD_LIMITS = "GCEPDLimits"
NODE_VOLUME_LIMITS = "NodeVolumeLimits"
AZURE_DISK_LIMITS = "AzureDiskLimits"
VOLUME_BINDING = "VolumeBinding"
VOLUME_ZONE = "VolumeZone"
POD_TOPOLOGY_SPREAD = "PodTopologySpread"
INTER_POD_AFFINITY = "InterPodAffinity"
DEFAULT_PREEMPTION = "DefaultPreemption"
IMAGE_LOCALITY = "ImageLocality"
DEFAULT_BINDER = "DefaultBinder"

#: In-tree Filter plugins whose verdict on a node depends on the node object (and cluster objects such
#: as volumes) only, never on the pods placed on it: adding or removing pods cannot change it.
NODE_ONLY_FILTERS = frozenset({NODE_UNSCHEDULABLE, NODE_NAME, TAINT_TOLERATION, NODE_AFFINITY, VOLUME_ZONE,
                               VOLUME_BINDING})
