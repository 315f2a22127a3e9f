"""What the API server does to an object before storing it: v1 defaulting and admission plugins.

The scheduler only ever sees objects after this step in a real cluster (a pod's ``spec.priority`` comes
from the Priority admission plugin, a node's allocatable from defaulting), so the embedded cluster must
apply the same rules or simulated decisions would differ from real ones.

Everything here works in place on the cluster's private copy of the object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.api.errors import ObjectError
from kubesched.api.pod_level_resources import default_pod_level_resources, validate_pod_level_resources
from kubesched.cluster.kinds import kind_info
from kubesched.cluster.protocol import Forbidden, Invalid
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.embedded import dra_admission
from kubesched.embedded.label_keys import prepare_label_keys

DEFAULT_SCHEDULER_NAME = "default-scheduler"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
# The priority of a pod when no PriorityClass is globalDefault
# (scheduling.DefaultPriorityWhenNoDefaultClassExists).
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS = 0

# PriorityClasses every API server creates at start-up (scheduling.SystemPriorityClasses()).
SYSTEM_PRIORITY_CLASSES: tuple[tuple[str, int, str], ...] = (
    (
        "system-node-critical",
        2000001000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2000000000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
)


class AdmissionStore(Protocol):
    """Read access to stored objects that admission plugins need (their informers' view)."""

    def lookup(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        """The stored object or None; the caller must not mutate it."""
        ...

    def objects(self, kind: str) -> Iterable[dict[str, Any]]:
        """Every stored object of ``kind``; the caller must not mutate them."""
        ...

    @property
    def features(self) -> FeatureGates:
        """The emulated version's gates: what is done on create follows them, as kube-apiserver's do."""
        ...


def system_priority_classes() -> list[dict[str, Any]]:
    """The built-in PriorityClass objects, as manifests to create."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "globalDefault": False,
            "description": description,
            "preemptionPolicy": PREEMPT_LOWER_PRIORITY,
        }
        for name, value, description in SYSTEM_PRIORITY_CLASSES
    ]


# ---------------------------------------------------------------------------------------------------------
# v1 defaulting (applied on create and on update, as decoding does in the API server)


def apply_defaults(obj: dict[str, Any]) -> None:
    """Fill in the v1 defaults the scheduler depends on for ``obj`` (by its kind)."""
    defaulter = _DEFAULTERS.get(obj.get("kind", ""))
    if defaulter is not None:
        defaulter(obj)


def _dict_at(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """``obj[key]`` as a dict, created when absent or null (the API's nil structs decode as empty)."""
    value = obj.get(key)
    if not isinstance(value, dict):
        value = {}
        obj[key] = value
    return value


def _default_node(obj: dict[str, Any]) -> None:
    status = obj.get("status")
    if isinstance(status, dict) and status.get("allocatable") is None and status.get("capacity") is not None:
        status["allocatable"] = dict(status["capacity"])


def _default_container_requests(containers: object) -> None:
    """requests := limits for every resource that has only a limit (SetDefaults_Pod)."""
    if not isinstance(containers, list):
        return
    for container in containers:
        if not isinstance(container, dict):
            continue
        resources = container.get("resources")
        if not isinstance(resources, dict):
            continue
        limits = resources.get("limits")
        if not isinstance(limits, dict) or not limits:
            continue
        requests = resources.get("requests")
        if not isinstance(requests, dict):
            requests = {}
            resources["requests"] = requests
        elif requests.keys() >= limits.keys():
            continue  # every limit has its request already (the common shape)
        for key, value in limits.items():
            requests.setdefault(key, value)


def _default_host_network_ports(containers: object) -> None:
    """With hostNetwork every container port is a host port: hostPort := containerPort when unset."""
    if not isinstance(containers, list):
        return
    for container in containers:
        ports = container.get("ports") if isinstance(container, dict) else None
        for port in ports if isinstance(ports, list) else []:
            if isinstance(port, dict) and not port.get("hostPort") and port.get("containerPort"):
                port["hostPort"] = port["containerPort"]


def _default_pod(obj: dict[str, Any]) -> None:
    spec = _dict_at(obj, "spec")
    _default_container_requests(spec.get("containers"))
    if spec.get("initContainers"):
        _default_container_requests(spec["initContainers"])
    if spec.get("hostNetwork"):
        _default_host_network_ports(spec.get("containers"))
        _default_host_network_ports(spec.get("initContainers"))
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    status = _dict_at(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"


def _default_namespace(obj: dict[str, Any]) -> None:
    meta = _dict_at(obj, "metadata")
    labels = _dict_at(meta, "labels")
    labels[NAMESPACE_NAME_LABEL] = meta.get("name", "")
    status = _dict_at(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Active"


def _default_storage_class(obj: dict[str, Any]) -> None:
    if not obj.get("volumeBindingMode"):
        obj["volumeBindingMode"] = "Immediate"
    if not obj.get("reclaimPolicy"):
        obj["reclaimPolicy"] = "Delete"


def _default_priority_class(obj: dict[str, Any]) -> None:
    if not obj.get("preemptionPolicy"):
        obj["preemptionPolicy"] = PREEMPT_LOWER_PRIORITY


def _default_pv(obj: dict[str, Any]) -> None:
    spec = _dict_at(obj, "spec")
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"
    if not spec.get("volumeMode"):
        spec["volumeMode"] = "Filesystem"
    status = _dict_at(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"


def _default_pvc(obj: dict[str, Any]) -> None:
    spec = _dict_at(obj, "spec")
    if not spec.get("volumeMode"):
        spec["volumeMode"] = "Filesystem"
    status = _dict_at(obj, "status")
    if not status.get("phase"):
        status["phase"] = "Pending"


_DEFAULTERS = {
    "Node": _default_node,
    "Pod": _default_pod,
    "Namespace": _default_namespace,
    "StorageClass": _default_storage_class,
    "PriorityClass": _default_priority_class,
    "PersistentVolume": _default_pv,
    "PersistentVolumeClaim": _default_pvc,
}


# ---------------------------------------------------------------------------------------------------------
# Admission on create


def admit_create(obj: dict[str, Any], store: AdmissionStore, features: FeatureGates | None = None) -> None:
    """Default ``obj`` and run the admission plugins that change what the scheduler sees.

    ``obj`` must already carry its final name, namespace and creationTimestamp. Raises ``Forbidden`` or
    ``Invalid`` as the API server would; ``features`` (default: the newest version's) are the API
    server's gates.
    """
    apply_defaults(obj)
    kind = obj.get("kind")
    if kind == "Pod":
        _admit_pod_level_resources(obj, None, features or feature_gates(), validate=True)
        _admit_pod_priority(obj, store)
        _admit_bound_pod_status(obj)
        prepare_label_keys(obj, store.features)
    elif kind == "PriorityClass":
        _admit_priority_class(obj, store)
    elif kind == "PersistentVolumeClaim":
        _admit_default_storage_class(obj, store)
    elif kind == "Lease":
        validate_lease(obj)
    elif kind == "PodGroup":
        _validate_pod_group(obj)
    else:
        dra_admission.admit_create(obj, store)


def _validate_pod_group(obj: dict[str, Any]) -> None:
    """The PodGroup CRD's schema: minMember and scheduleTimeoutSeconds are integers, minResources quantities."""
    from kubesched.api.errors import ObjectError
    from kubesched.api.podgroup import PodGroup

    try:
        PodGroup.from_dict(obj)
    except ObjectError as err:
        name = str((obj.get("metadata") or {}).get("name") or "")
        raise Invalid.of("PodGroup", name, err.path, err.reason) from None


def admit_update(obj: dict[str, Any], old: dict[str, Any], features: FeatureGates | None = None) -> None:
    """Default ``obj`` on update; a pod keeps the priority admission gave it when the update drops it."""
    apply_defaults(obj)
    if obj.get("kind") == "Lease":
        validate_lease(obj)
    dra_admission.admit_update(obj, old)
    if obj.get("kind") == "Pod":
        _admit_pod_level_resources(obj, old, features or feature_gates(), validate=False)
        spec = _dict_at(obj, "spec")
        old_spec = old.get("spec") or {}
        for key in ("priority", "preemptionPolicy"):
            if spec.get(key) is None and old_spec.get(key) is not None:
                spec[key] = old_spec[key]


def _admit_pod_level_resources(
    pod: dict[str, Any], old: dict[str, Any] | None, features: FeatureGates, *, validate: bool
) -> None:
    """Pod-level resources (``spec.resources``): defaulted and, on create, validated with PodLevelResources
    on; dropped with it off, unless the stored pod already uses them (a field the API server does not
    serve is not kept)."""
    spec = _dict_at(pod, "spec")
    if not features.enabled("PodLevelResources"):
        old_spec = old.get("spec") if old is not None else None
        in_use = old_spec.get("resources") if isinstance(old_spec, dict) else None
        if not (isinstance(in_use, dict) and (in_use.get("requests") or in_use.get("limits"))):
            spec.pop("resources", None)
            return
    try:
        default_pod_level_resources(spec)
        if validate:
            validate_pod_level_resources(spec)
    except ObjectError as err:
        raise Invalid.of("Pod", str(pod.get("metadata", {}).get("name") or ""), err.path, err.reason) from None


@dataclass(frozen=True, slots=True)
class PodPriority:
    """What the Priority admission plugin gives a pod: the class it names (the global default when it
    named none; "" without one), the priority and the preemption policy."""

    class_name: str
    value: int
    preemption_policy: str


#: What a pod that names no class gets where no class is the global default (one frozen value for all).
_NO_CLASS = PodPriority("", DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS, PREEMPT_LOWER_PRIORITY)


def priority_class_value(pc: Mapping[str, Any]) -> int:
    """A PriorityClass's value (0 for a class whose value is no integer: its own admission refuses it)."""
    value = pc.get("value", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def default_priority_class(classes: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The globalDefault class with the lowest value, the first of equals (what the Priority plugin picks
    when several exist)."""
    best: Mapping[str, Any] | None = None
    for pc in classes:
        if pc.get("globalDefault") is True and (best is None or priority_class_value(best) > priority_class_value(pc)):
            best = pc
    return best


def pod_priority(
    spec: Mapping[str, Any], lookup: Callable[[str], Mapping[str, Any] | None], default: Mapping[str, Any] | None
) -> PodPriority | None:
    """The priority a pod with ``spec`` is admitted with: from the class it names (``lookup`` by name),
    else from ``default`` (see :func:`default_priority_class`), else 0. None when the class it names
    does not exist."""
    class_name = spec.get("priorityClassName") or ""
    pc = lookup(class_name) if class_name else default
    if pc is None:
        if class_name:
            return None
        return _NO_CLASS
    return PodPriority(
        str((pc.get("metadata") or {}).get("name") or ""),
        priority_class_value(pc),
        pc.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY,
    )


def priority_contradiction(spec: Mapping[str, Any], admitted: PodPriority) -> tuple[str, str] | None:
    """``(field, message)`` when the pod spec gives a priority or a preemption policy other than its class's;
    None when it agrees (or gives none)."""
    given = spec.get("priority")
    if given is not None and given != admitted.value:
        return "priority", (
            f"the integer value of priority ({given}) must not be provided in pod spec; priority "
            f"admission controller computed {admitted.value} from the given PriorityClass name"
        )
    given_policy = spec.get("preemptionPolicy")
    if given_policy is not None and given_policy != admitted.preemption_policy:
        return "preemptionPolicy", (
            f"the string value of PreemptionPolicy ({given_policy}) must not be provided in "
            f"pod spec; priority admission controller computed "
            f"{admitted.preemption_policy} from the given PriorityClass name"
        )
    return None


def _admit_pod_priority(pod: dict[str, Any], store: AdmissionStore) -> None:
    """The Priority admission plugin on pod create: priorityClassName → spec.priority, preemptionPolicy."""
    spec = pod["spec"]
    name = pod["metadata"]["name"]
    admitted = pod_priority(
        spec,
        lambda class_name: store.lookup("PriorityClass", None, class_name),
        default_priority_class(store.objects("PriorityClass")),
    )
    if admitted is None:
        raise Forbidden.of("pods", name, f"no PriorityClass with name {spec['priorityClassName']} was found")
    contradiction = priority_contradiction(spec, admitted)
    if contradiction is not None:
        raise Forbidden.of("pods", name, contradiction[1])
    if admitted.class_name and not spec.get("priorityClassName"):
        spec["priorityClassName"] = admitted.class_name
    spec["priority"] = admitted.value
    spec["preemptionPolicy"] = admitted.preemption_policy


def _admit_priority_class(pc: dict[str, Any], store: AdmissionStore) -> None:
    """A PriorityClass needs an integer value, and only one may be globalDefault."""
    name = pc["metadata"]["name"]
    value = pc.get("value")
    if not isinstance(value, int) or isinstance(value, bool):
        raise Invalid.of("PriorityClass", name, "value", "Required value: an integer priority is required")
    if pc.get("globalDefault") is not True:
        return
    for other in store.objects("PriorityClass"):
        if other.get("globalDefault") is True and other["metadata"]["name"] != name:
            raise Forbidden.of(
                "priorityclasses",
                name,
                f"PriorityClass {other['metadata']['name']} is already marked as default. Only one default can exist",
            )


def _admit_bound_pod_status(pod: dict[str, Any]) -> None:
    """A pod created already bound is taken as running since its creation (what a kubelet would report)."""
    if not pod["spec"].get("nodeName"):
        return
    status = pod["status"]
    if not status.get("startTime"):
        status["startTime"] = pod["metadata"]["creationTimestamp"]
        if status.get("phase") in (None, "", "Pending"):
            status["phase"] = "Running"


def _admit_default_storage_class(pvc: dict[str, Any], store: AdmissionStore) -> None:
    """DefaultStorageClass: a claim that names no class gets the default one (newest wins, then name)."""
    spec = _dict_at(pvc, "spec")
    if "storageClassName" in spec and spec["storageClassName"] is not None:
        return
    annotations = pvc["metadata"].get("annotations") or {}
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return
    defaults = [
        sc
        for sc in store.objects("StorageClass")
        if (sc["metadata"].get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true"
        or (sc["metadata"].get("annotations") or {}).get(BETA_DEFAULT_CLASS_ANNOTATION) == "true"
    ]
    if not defaults:
        return
    # Newest creationTimestamp first (RFC3339 in UTC sorts as text), then by name.
    newest = max(sc["metadata"].get("creationTimestamp", "") for sc in defaults)
    chosen = min(sc["metadata"]["name"] for sc in defaults if sc["metadata"].get("creationTimestamp", "") == newest)
    spec["storageClassName"] = chosen


def validate_lease(lease: dict[str, Any]) -> None:
    """coordination.k8s.io/v1 Lease validation: a positive duration, non-negative transitions, MicroTimes
    that parse, and preferredHolder only with a strategy (what leader election relies on)."""
    from datetime import datetime

    name = str((lease.get("metadata") or {}).get("name") or "")
    spec = lease.get("spec") or {}

    def invalid(path: str, detail: str) -> Invalid:
        return Invalid.of(kind_info("Lease").qualified_kind, name, f"spec.{path}", detail)

    if not isinstance(spec, dict):
        raise invalid("", "must be a mapping")
    holder = spec.get("holderIdentity")
    if holder is not None and not isinstance(holder, str):
        raise invalid("holderIdentity", f"Invalid value: {holder!r}: must be a string")
    for key, minimum, rule in (
        ("leaseDurationSeconds", 1, "must be greater than 0"),
        ("leaseTransitions", 0, "must be greater than or equal to 0"),
    ):
        value = spec.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise invalid(key, f"Invalid value: {value!r}: must be an integer")
        if value < minimum:
            raise invalid(key, f"Invalid value: {value}: {rule}")
    for key in ("acquireTime", "renewTime"):
        value = spec.get(key)
        if value is None:
            continue
        try:
            datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise invalid(key, f"Invalid value: {value!r}: must be an RFC 3339 time") from None
    if spec.get("preferredHolder") and not spec.get("strategy"):
        raise invalid("preferredHolder", "Forbidden: may only be specified if `strategy` is defined")
