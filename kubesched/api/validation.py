"""What the API server refuses before storing an object, for every kind a scenario may hold.

kube-apiserver decodes each object into typed Go structs (a string where a boolean is due fails
decoding) and then validates it (``pkg/apis/core/validation``). A simulation reads plain dicts, so
both steps happen here, once, before anything is created: :func:`validate_object` raises
:class:`~kubesched.api.errors.ObjectError` with the field path for the first bad field, and the
manifest loader adds the file and document. The typed views (``objects.py``) then parse deeper
semantics (affinity, tolerations, spread constraints).

The checks are those that change what the scheduler sees or could crash it: types of the fields the
scheduler and the embedded controllers read, resource names and amounts, ports, enums. Fields
nothing reads are left alone, as are rules that only matter to other components.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from kubesched.api import dra_validation
from kubesched.api import fields as f
from kubesched.api.errors import ObjectError
from kubesched.api.labels import LabelSelector, NodeSelector, validate_label_key, validate_label_value
from kubesched.api.quantity import format_quantity
from kubesched.api.resource_names import (
    check_amount_fits,
    is_hugepages,
    overcommit_allowed,
    parse_amount,
    qualified_name_error,
    validate_container_resource_name,
    validate_resource_name,
)
from kubesched.api.resources import parse_resource_list, pod_requests

PROTOCOLS = ("TCP", "UDP", "SCTP")
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
VOLUME_MODES = ("Filesystem", "Block")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
#: User-defined PriorityClasses may not go above this (scheduling.HighestUserDefinablePriority).
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"

ResourceNameCheck = Callable[[str, str], None]


def validate_object(obj: Mapping[str, Any]) -> None:
    """Refuse what the API server would refuse in ``obj`` (a manifest already known to have a kind)."""
    kind = str(obj.get("kind") or "")
    validate_metadata(obj.get("metadata"), kind)
    for part in ("spec", "status"):
        f.mapping(obj.get(part), part)
    check = _BY_KIND.get(kind)
    if check is not None:
        check(obj)


def validate_metadata(raw: object, kind: str = "") -> None:
    meta = f.mapping(raw, "metadata")
    for field in ("generateName", "uid", "resourceVersion", "creationTimestamp"):
        f.string(meta.get(field), f"metadata.{field}")
    name = f.string(meta.get("name"), "metadata.name")
    if name:
        (_dns_label if kind == "Namespace" else _dns_subdomain)(name, "metadata.name")
    namespace = f.string(meta.get("namespace"), "metadata.namespace")
    if namespace:
        _dns_label(namespace, "metadata.namespace")
    for key, value in f.string_map(meta.get("labels"), "metadata.labels").items():
        validate_label_key(key, f"metadata.labels.{key}")
        validate_label_value(value, f"metadata.labels.{key}")
    f.string_map(meta.get("annotations"), "metadata.annotations")
    for i, ref in enumerate(f.sequence(meta.get("ownerReferences"), "metadata.ownerReferences")):
        path = f"metadata.ownerReferences[{i}]"
        ref = f.mapping(ref, path)
        for name in ("apiVersion", "kind", "name", "uid"):
            f.string(ref.get(name), f"{path}.{name}")
        f.boolean(ref.get("controller"), f"{path}.controller")


_DNS_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _dns_subdomain(name: str, path: str) -> None:
    """Object names (apimachinery's NameIsDNSSubdomain): they also key results as namespace/name."""
    if len(name) > 253 or not _DNS_SUBDOMAIN_RE.fullmatch(name):
        raise ObjectError(
            path,
            f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of lower '
            "case alphanumeric characters, '-' or '.', and must start and end with an "
            "alphanumeric character",
        )


def _dns_label(name: str, path: str) -> None:
    """Namespace names (NameIsDNSLabel)."""
    if len(name) > 63 or not _DNS_LABEL_RE.fullmatch(name):
        raise ObjectError(
            path,
            f'Invalid value: "{name}": a lowercase RFC 1123 label must consist of lower case '
            "alphanumeric characters or '-', and must start and end with an alphanumeric "
            "character",
        )


def _parse(fn: Callable[[Any], Any], raw: object, path: str) -> Any:
    """Run a typed view's parser and put ``path`` in front of its errors."""
    try:
        return fn(raw)
    except ObjectError as err:
        raise err.under(path) from None


def _strings(value: object, path: str) -> list[str]:
    return [f.string(item, f"{path}[{i}]") for i, item in enumerate(f.sequence(value, path))]


def _selector(value: object, path: str) -> None:
    if value is not None:
        _parse(LabelSelector.from_dict, f.mapping(value, path), path)


# ---------------------------------------------------------------------------------------------------------
# Resources


def _node_resource_name(name: str, path: str) -> None:
    """Node capacity and allocatable: the API server checks only the amounts there, and kubelets
    report volume limits as ``attachable-volumes-<plugin>``; other names as validateResourceName."""
    if name.startswith("attachable-volumes-") and qualified_name_error(name) is None:
        return
    validate_resource_name(name, path)


def resource_list(raw: object, path: str, names: ResourceNameCheck = validate_resource_name) -> dict[str, Fraction]:
    """``{name: quantity}`` with every name and amount checked; the exact amounts."""
    out: dict[str, Fraction] = {}
    for key, value in f.mapping(raw, path).items():
        name = str(key)
        field = f"{path}.{name}"
        names(name, field)
        out[name] = parse_amount(name, value, field)
    return out


def _container_resources(raw: object, path: str) -> dict[str, Fraction]:
    """validateResourceRequirements on a container; returns the requests after API defaulting."""
    body = f.mapping(raw, path)
    limits = resource_list(body.get("limits"), f"{path}.limits", validate_container_resource_name)
    requests = resource_list(body.get("requests"), f"{path}.requests", validate_container_resource_name)
    for name, amount in limits.items():
        requests.setdefault(name, amount)  # the API server defaults requests to limits first
    for name, request in requests.items():
        limit = limits.get(name)
        field = f"{path}.requests.{name}"
        if limit is None:
            if not overcommit_allowed(name):
                raise ObjectError(
                    f"{path}.limits", f"Required value: Limit must be set for non overcommitable resources ({name})"
                )
        elif request != limit and not overcommit_allowed(name):
            raise ObjectError(field, f"must be equal to {name} limit of {_fmt(limit)}")
        elif request > limit:
            raise ObjectError(field, f"must be less than or equal to {name} limit of {_fmt(limit)}")
    if any(is_hugepages(name) for name in requests) and not {"cpu", "memory"} & requests.keys():
        raise ObjectError(path, "Forbidden: HugePages require cpu or memory")
    return requests


def _fmt(q: Fraction) -> str:
    return format_quantity(q)


# ---------------------------------------------------------------------------------------------------------
# Pods


def _container(raw: object, path: str) -> dict[str, Fraction]:
    c = f.mapping(raw, path)
    for name in ("name", "image", "imagePullPolicy"):
        f.string(c.get(name), f"{path}.{name}")
    f.one_of(c.get("restartPolicy"), f"{path}.restartPolicy", ("Always",))
    for i, p in enumerate(f.sequence(c.get("ports"), f"{path}.ports")):
        where = f"{path}.ports[{i}]"
        p = f.mapping(p, where)
        f.port(p.get("containerPort"), f"{where}.containerPort")
        f.port(p.get("hostPort"), f"{where}.hostPort", allow_zero=True)
        f.one_of(p.get("protocol"), f"{where}.protocol", PROTOCOLS)
        f.string(p.get("hostIP"), f"{where}.hostIP")
        f.string(p.get("name"), f"{where}.name")
    return _container_resources(c.get("resources"), f"{path}.resources")


#: Pod specs already found valid, by content (pods of one workload share their spec).
_VALID_SPECS: set[bytes] = set()
_VALID_SPECS_SIZE = 4096


def pod_spec(raw: object, path: str) -> None:
    """A pod's spec (also a workload's pod template spec); a spec seen valid before is not walked again
    (whatever node it names: the pods of one workload share their spec bound or not)."""
    shared: Any = raw
    if isinstance(raw, dict) and "nodeName" in raw:
        f.string(raw["nodeName"], f"{path}.nodeName")
        shared = {k: v for k, v in raw.items() if k != "nodeName"}
    try:
        key: bytes | None = marshal.dumps((path, shared), 2)  # equal bytes: equal content
    except ValueError:  # something marshal cannot write: check it every time
        key = None
    if key is not None and key in _VALID_SPECS:
        return
    _check_pod_spec(shared, path)
    if key is not None:
        if len(_VALID_SPECS) >= _VALID_SPECS_SIZE:
            _VALID_SPECS.clear()
        _VALID_SPECS.add(key)


def _check_pod_spec(raw: object, path: str) -> None:
    spec = f.mapping(raw, path)
    containers = [
        _container(c, f"{path}.containers[{i}]")
        for i, c in enumerate(f.sequence(spec.get("containers"), f"{path}.containers"))
    ]
    init = [
        (_container(c, f"{path}.initContainers[{i}]"), f.mapping(c, "").get("restartPolicy") == "Always")
        for i, c in enumerate(f.sequence(spec.get("initContainers"), f"{path}.initContainers"))
    ]
    overhead = resource_list(spec.get("overhead"), f"{path}.overhead", validate_container_resource_name)
    for name, total in pod_requests(containers, init, overhead).items():
        check_amount_fits(name, total, f"{path}.containers (total {name} request of the pod)")
    # Pod-level resources decode whatever the version; what they may hold is checked on admission, where
    # the API server's gates are known (kubesched.api.pod_level_resources).
    pod_level = f.mapping(spec.get("resources"), f"{path}.resources")
    for part in ("requests", "limits"):
        parse_resource_list(pod_level.get(part), f"{path}.resources.{part}")
    for name in (
        "nodeName",
        "schedulerName",
        "priorityClassName",
        "restartPolicy",
        "dnsPolicy",
        "serviceAccountName",
        "hostname",
        "subdomain",
    ):
        f.string(spec.get(name), f"{path}.{name}")
    f.integer(spec.get("priority"), f"{path}.priority", minimum=f.INT32_MIN, maximum=f.INT32_MAX)
    f.one_of(spec.get("preemptionPolicy"), f"{path}.preemptionPolicy", PREEMPTION_POLICIES)
    f.string_map(spec.get("nodeSelector"), f"{path}.nodeSelector")
    for name in ("hostNetwork", "hostPID", "hostIPC"):
        f.boolean(spec.get(name), f"{path}.{name}")
    f.integer(spec.get("terminationGracePeriodSeconds"), f"{path}.terminationGracePeriodSeconds", minimum=0)
    affinity = f.mapping(spec.get("affinity"), f"{path}.affinity")
    for name in ("nodeAffinity", "podAffinity", "podAntiAffinity"):
        f.mapping(affinity.get(name), f"{path}.affinity.{name}")
    for i, t in enumerate(f.sequence(spec.get("tolerations"), f"{path}.tolerations")):
        t = f.mapping(t, f"{path}.tolerations[{i}]")
        for name in ("key", "operator", "value", "effect"):
            f.string(t.get(name), f"{path}.tolerations[{i}].{name}")
        f.integer(t.get("tolerationSeconds"), f"{path}.tolerations[{i}].tolerationSeconds")
    for i, g in enumerate(f.sequence(spec.get("schedulingGates"), f"{path}.schedulingGates")):
        f.string(f.mapping(g, f"{path}.schedulingGates[{i}]").get("name"), f"{path}.schedulingGates[{i}].name")
    _spread_constraints(
        f.sequence(spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints"),
        f"{path}.topologySpreadConstraints",
    )
    for i, v in enumerate(f.sequence(spec.get("volumes"), f"{path}.volumes")):
        where = f"{path}.volumes[{i}]"
        v = f.mapping(v, where)
        f.string(v.get("name"), f"{where}.name")
        for source in ("persistentVolumeClaim", "ephemeral", "hostPath", "emptyDir", "configMap", "secret"):
            f.mapping(v.get(source), f"{where}.{source}")
        claim = f.mapping(v.get("persistentVolumeClaim"), f"{where}.persistentVolumeClaim")
        f.string(claim.get("claimName"), f"{where}.persistentVolumeClaim.claimName")
        f.boolean(claim.get("readOnly"), f"{where}.persistentVolumeClaim.readOnly")
    dra_validation.pod_resource_claims(spec, path)


def _spread_constraints(constraints: list[Any], path: str) -> None:
    """Mappings, and no two with the same topologyKey and whenUnsatisfiable (the first one is named)."""
    pairs = []
    for i, c in enumerate(constraints):
        c = f.mapping(c, f"{path}[{i}]")
        pairs.append((c.get("topologyKey"), c.get("whenUnsatisfiable")))
    for i, (key, action) in enumerate(pairs):
        if isinstance(key, str) and isinstance(action, str) and (key, action) in pairs[i + 1 :]:
            raise ObjectError(
                f"{path}[{i}].{{topologyKey, whenUnsatisfiable}}", f'Duplicate value: "{{{key}, {action}}}"'
            )


def _pod(obj: Mapping[str, Any]) -> None:
    if obj.get("spec") is None:
        raise ObjectError("spec", "Required value")
    pod_spec(obj.get("spec"), "spec")
    status = f.mapping(obj.get("status"), "status")
    for name in ("phase", "nominatedNodeName", "startTime", "qosClass"):
        f.string(status.get(name), f"status.{name}")
    f.sequence(status.get("conditions"), "status.conditions")


def _pod_template(raw: object, path: str) -> None:
    template = f.mapping(raw, path)
    meta = f.mapping(template.get("metadata"), f"{path}.metadata")
    f.string_map(meta.get("labels"), f"{path}.metadata.labels")
    f.string_map(meta.get("annotations"), f"{path}.metadata.annotations")
    pod_spec(template.get("spec"), f"{path}.spec")


# ---------------------------------------------------------------------------------------------------------
# Nodes and cluster-wide policy


#: Node spec and status pairs already found valid, by content (nodes of one machine type share them).
_VALID_NODES: set[bytes] = set()


def _node(obj: Mapping[str, Any]) -> None:
    try:
        key: bytes | None = marshal.dumps((obj.get("spec"), obj.get("status")), 2)
    except ValueError:
        key = None
    if key is not None and key in _VALID_NODES:
        return
    _check_node(obj)
    if key is not None:
        if len(_VALID_NODES) >= _VALID_SPECS_SIZE:
            _VALID_NODES.clear()
        _VALID_NODES.add(key)


def _check_node(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    f.boolean(spec.get("unschedulable"), "spec.unschedulable")
    for name in ("podCIDR", "providerID"):
        f.string(spec.get(name), f"spec.{name}")
    for i, t in enumerate(f.sequence(spec.get("taints"), "spec.taints")):
        t = f.mapping(t, f"spec.taints[{i}]")
        for name in ("key", "value", "effect", "timeAdded"):
            f.string(t.get(name), f"spec.taints[{i}].{name}")
    status = f.mapping(obj.get("status"), "status")
    # kube-apiserver checks only the amounts here (the kubelet never reports a bad name), but a
    # hand-written node with "memroy" would quietly have no memory, so the names are checked too.
    resource_list(status.get("capacity"), "status.capacity", _node_resource_name)
    resource_list(status.get("allocatable"), "status.allocatable", _node_resource_name)
    for i, image in enumerate(f.sequence(status.get("images"), "status.images")):
        where = f"status.images[{i}]"
        image = f.mapping(image, where)
        _strings(image.get("names"), f"{where}.names")
        f.integer(image.get("sizeBytes"), f"{where}.sizeBytes", minimum=0)
    for name in ("conditions", "addresses"):
        for i, item in enumerate(f.sequence(status.get(name), f"status.{name}")):
            f.mapping(item, f"status.{name}[{i}]")


def _priority_class(obj: Mapping[str, Any]) -> None:
    name = str((obj.get("metadata") or {}).get("name") or "")
    high = f.INT32_MAX if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX) else HIGHEST_USER_DEFINABLE_PRIORITY
    if obj.get("value") is None:
        raise ObjectError("value", "Required value: an integer priority is required")
    f.integer(obj.get("value"), "value", minimum=f.INT32_MIN, maximum=high)
    f.boolean(obj.get("globalDefault"), "globalDefault")
    f.one_of(obj.get("preemptionPolicy"), "preemptionPolicy", PREEMPTION_POLICIES)
    f.string(obj.get("description"), "description")


def _namespace(obj: Mapping[str, Any]) -> None:
    _strings(f.mapping(obj.get("spec"), "spec").get("finalizers"), "spec.finalizers")
    f.string(f.mapping(obj.get("status"), "status").get("phase"), "status.phase")


# ---------------------------------------------------------------------------------------------------------
# Workloads, services and budgets (read by PodTopologySpread's defaults, preemption, controllers)


def _service(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    f.string_map(spec.get("selector"), "spec.selector")
    f.one_of(spec.get("type"), "spec.type", SERVICE_TYPES)
    f.string(spec.get("clusterIP"), "spec.clusterIP")
    for i, p in enumerate(f.sequence(spec.get("ports"), "spec.ports")):
        where = f"spec.ports[{i}]"
        p = f.mapping(p, where)
        f.port(p.get("port"), f"{where}.port")
        f.port(p.get("nodePort"), f"{where}.nodePort", allow_zero=True)
        target = f.int_or_string(p.get("targetPort"), f"{where}.targetPort")
        if isinstance(target, int):
            f.port(target, f"{where}.targetPort", allow_zero=True)
        f.one_of(p.get("protocol"), f"{where}.protocol", PROTOCOLS)
        f.string(p.get("name"), f"{where}.name")


def _replicas(spec: Mapping[str, Any]) -> None:
    f.integer(spec.get("replicas"), "spec.replicas", minimum=0, maximum=f.INT32_MAX)


def _replication_controller(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    _replicas(spec)
    f.string_map(spec.get("selector"), "spec.selector")
    _pod_template(spec.get("template"), "spec.template")


def _apps_workload(obj: Mapping[str, Any]) -> None:
    """ReplicaSet, Deployment, StatefulSet, DaemonSet: a label selector and a pod template."""
    spec = f.mapping(obj.get("spec"), "spec")
    if obj.get("kind") != "DaemonSet":
        _replicas(spec)
    _selector(spec.get("selector"), "spec.selector")
    _pod_template(spec.get("template"), "spec.template")
    f.string(spec.get("serviceName"), "spec.serviceName")
    f.one_of(spec.get("podManagementPolicy"), "spec.podManagementPolicy", ("OrderedReady", "Parallel"))
    f.integer(spec.get("minReadySeconds"), "spec.minReadySeconds", minimum=0, maximum=f.INT32_MAX)


def _job(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    for name in ("parallelism", "completions", "backoffLimit"):
        f.integer(spec.get(name), f"spec.{name}", minimum=0, maximum=f.INT32_MAX)
    f.boolean(spec.get("suspend"), "spec.suspend")
    f.boolean(spec.get("manualSelector"), "spec.manualSelector")
    _selector(spec.get("selector"), "spec.selector")
    _pod_template(spec.get("template"), "spec.template")


def _pod_disruption_budget(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    _selector(spec.get("selector"), "spec.selector")
    min_available = f.int_or_percent(spec.get("minAvailable"), "spec.minAvailable")
    max_unavailable = f.int_or_percent(spec.get("maxUnavailable"), "spec.maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        raise ObjectError("spec", "Invalid value: minAvailable and maxUnavailable cannot be both set")
    f.one_of(
        spec.get("unhealthyPodEvictionPolicy"), "spec.unhealthyPodEvictionPolicy", ("IfHealthyBudget", "AlwaysAllow")
    )
    status = f.mapping(obj.get("status"), "status")
    for name in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        f.integer(status.get(name), f"status.{name}", minimum=0, maximum=f.INT32_MAX)
    f.integer(status.get("observedGeneration"), "status.observedGeneration", minimum=0)
    f.string_map(status.get("disruptedPods"), "status.disruptedPods")
    for i, c in enumerate(f.sequence(status.get("conditions"), "status.conditions")):
        f.mapping(c, f"status.conditions[{i}]")


# ---------------------------------------------------------------------------------------------------------
# Storage


def _access_modes(value: object, path: str) -> None:
    for i, mode in enumerate(f.sequence(value, path)):
        f.one_of(mode, f"{path}[{i}]", ACCESS_MODES)


def _persistent_volume(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    resource_list(spec.get("capacity"), "spec.capacity")
    _access_modes(spec.get("accessModes"), "spec.accessModes")
    for name in ("storageClassName", "persistentVolumeReclaimPolicy", "volumeAttributesClassName"):
        f.string(spec.get(name), f"spec.{name}")
    f.one_of(spec.get("volumeMode"), "spec.volumeMode", VOLUME_MODES)
    claim = f.mapping(spec.get("claimRef"), "spec.claimRef")
    for name in ("namespace", "name", "uid"):
        f.string(claim.get(name), f"spec.claimRef.{name}")
    affinity = f.mapping(spec.get("nodeAffinity"), "spec.nodeAffinity")
    required = affinity.get("required")
    if required is not None:
        _parse(NodeSelector.from_dict, required, "spec.nodeAffinity.required")
    f.string(f.mapping(obj.get("status"), "status").get("phase"), "status.phase")


def _persistent_volume_claim(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    _access_modes(spec.get("accessModes"), "spec.accessModes")
    resources = f.mapping(spec.get("resources"), "spec.resources")
    resource_list(resources.get("requests"), "spec.resources.requests")
    resource_list(resources.get("limits"), "spec.resources.limits")
    for name in ("storageClassName", "volumeName", "volumeAttributesClassName"):
        f.string(spec.get(name), f"spec.{name}")
    f.one_of(spec.get("volumeMode"), "spec.volumeMode", VOLUME_MODES)
    _selector(spec.get("selector"), "spec.selector")
    status = f.mapping(obj.get("status"), "status")
    f.string(status.get("phase"), "status.phase")
    resource_list(status.get("capacity"), "status.capacity")


def _storage_class(obj: Mapping[str, Any]) -> None:
    f.string(obj.get("provisioner"), "provisioner")
    f.one_of(obj.get("volumeBindingMode"), "volumeBindingMode", BINDING_MODES)
    f.string(obj.get("reclaimPolicy"), "reclaimPolicy")
    f.string_map(obj.get("parameters"), "parameters")
    f.boolean(obj.get("allowVolumeExpansion"), "allowVolumeExpansion")
    for i, term in enumerate(f.sequence(obj.get("allowedTopologies"), "allowedTopologies")):
        where = f"allowedTopologies[{i}]"
        term = f.mapping(term, where)
        for j, expr in enumerate(f.sequence(term.get("matchLabelExpressions"), f"{where}.matchLabelExpressions")):
            expr = f.mapping(expr, f"{where}.matchLabelExpressions[{j}]")
            f.string(expr.get("key"), f"{where}.matchLabelExpressions[{j}].key")
            _strings(expr.get("values"), f"{where}.matchLabelExpressions[{j}].values")


def _csi_node(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    for i, d in enumerate(f.sequence(spec.get("drivers"), "spec.drivers")):
        where = f"spec.drivers[{i}]"
        d = f.mapping(d, where)
        f.string(d.get("name"), f"{where}.name")
        f.string(d.get("nodeID"), f"{where}.nodeID")
        _strings(d.get("topologyKeys"), f"{where}.topologyKeys")
        allocatable = f.mapping(d.get("allocatable"), f"{where}.allocatable")
        f.integer(allocatable.get("count"), f"{where}.allocatable.count", minimum=0, maximum=f.INT32_MAX)


def _volume_attachment(obj: Mapping[str, Any]) -> None:
    spec = f.mapping(obj.get("spec"), "spec")
    for name in ("attacher", "nodeName"):
        if not f.string(spec.get(name), f"spec.{name}"):
            raise ObjectError(f"spec.{name}", "Required value")
    source = f.mapping(spec.get("source"), "spec.source")
    pv_name = source.get("persistentVolumeName")
    inline = source.get("inlineVolumeSpec")
    f.mapping(inline, "spec.source.inlineVolumeSpec")
    if (pv_name is None) == (inline is None):
        verdict = "Required value" if pv_name is None else "Forbidden"
        raise ObjectError(
            "spec.source", f"{verdict}: must specify exactly one of inlineVolumeSpec and persistentVolumeName"
        )
    if pv_name is not None and not f.string(pv_name, "spec.source.persistentVolumeName"):
        raise ObjectError(
            "spec.source.persistentVolumeName", "Required value: must specify non empty persistentVolumeName"
        )


def _config_data(obj: Mapping[str, Any]) -> None:
    f.string_map(obj.get("data"), "data")


_BY_KIND: dict[str, Callable[[Mapping[str, Any]], None]] = {
    "Pod": _pod,
    "Node": _node,
    "PriorityClass": _priority_class,
    "Namespace": _namespace,
    "Service": _service,
    "ReplicationController": _replication_controller,
    "ReplicaSet": _apps_workload,
    "Deployment": _apps_workload,
    "StatefulSet": _apps_workload,
    "DaemonSet": _apps_workload,
    "Job": _job,
    "PodDisruptionBudget": _pod_disruption_budget,
    "PersistentVolume": _persistent_volume,
    "PersistentVolumeClaim": _persistent_volume_claim,
    "StorageClass": _storage_class,
    "CSINode": _csi_node,
    "VolumeAttachment": _volume_attachment,
    "ConfigMap": _config_data,
    "Secret": _config_data,
    **dra_validation.BY_KIND,
}
