"""Typed, read-only views of the Kubernetes objects the scheduler reads.

Each view is parsed once from the dict the API server (or the embedded cluster) serves, keeps that
dict as ``raw`` for writing results back, and precomputes what the scheduling cycle asks for again
and again (requests, host ports, images, parsed affinity). A malformed field raises
:class:`~kubesched.api.errors.ObjectError` naming its path, so the caller can report it and keep
running.
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kubesched.api import fields
from kubesched.api.errors import ObjectError
from kubesched.api.labels import NodeSelector, PreferredSchedulingTerm
from kubesched.api.pod_affinity import PodAffinity
from kubesched.api.resource_names import MAX_SCHEDULER_UNITS, check_amount_fits
from kubesched.api.resources import (
    NON_MISSING_DEFAULTS,
    V1_34_RULES,
    ContainerResizeStatus,
    ResourceList,
    ResourceRules,
    is_supported_pod_level_resource,
    parse_resource_list,
    pod_requests,
    pod_resources,
    resized_requests,
    scheduler_resources,
    to_scheduler_units,
)
from kubesched.api.taints import Taint, Toleration
from kubesched.api.topology_spread import TopologySpreadConstraint, parse_constraints
from kubesched.util.slots import slot_builder, slot_copier

DEFAULT_SCHEDULER_NAME = "default-scheduler"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"


def _map(obj: Any, path: str) -> Mapping[str, Any]:
    if type(obj) is dict:  # the usual case, before the (slower) abstract isinstance check
        return obj
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise ObjectError(path, f"expected an object, got {type(obj).__name__}")
    return obj


def _list(obj: Any, path: str) -> list[Any]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise ObjectError(path, f"expected a list, got {type(obj).__name__}")
    return obj


def _str_map(obj: Any, path: str) -> dict[str, str]:
    """Labels, annotations, nodeSelector: strings only (``ssd: true`` unquoted is a boolean, refused)."""
    return fields.string_map(obj, path)


def _int(obj: Any, path: str, default: int = 0) -> int:
    if obj is None:
        return default
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise ObjectError(path, f"expected an integer, got {obj!r}")
    return obj


def _check_fits(units: Mapping[str, int], resources: ResourceList, path: str) -> Mapping[str, int]:
    """``units`` (scheduler units of ``resources``) unless one is past the snapshot's int64 columns.

    A real API server accepts ``cpu: 1E``; the scheduler must refuse it rather than overflow.
    """
    for name, value in units.items():
        if value > MAX_SCHEDULER_UNITS:
            check_amount_fits(name, resources[name], f"{path}.{name}")
    return units


def parse_time(value: Any, path: str) -> datetime | None:
    """RFC 3339 timestamps as the API server writes them (``2024-01-01T00:00:00Z``)."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ObjectError(path, f"invalid timestamp {value!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _parse(fn: Any, raw: Any, path: str) -> Any:
    try:
        return fn(raw)
    except ObjectError as err:
        raise err.under(path) from None


@dataclass(frozen=True, slots=True)
class ObjectMeta:
    """The metadata every object carries; ``key`` is ``namespace/name`` (or ``name``)."""

    name: str
    namespace: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    resource_version: str
    creation_timestamp: datetime | None
    deletion_timestamp: datetime | None
    owner_references: tuple[Mapping[str, Any], ...]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def from_dict(cls, raw: Any, *, namespaced: bool) -> ObjectMeta:
        meta = _map(raw, "metadata")
        name = meta.get("name")
        if not name or not isinstance(name, str):
            raise ObjectError("metadata.name", "required value")
        namespace = str(meta.get("namespace") or ("default" if namespaced else ""))
        refs = meta.get("ownerReferences")
        return _new_meta(
            name=name,
            namespace=namespace,
            uid=str(meta.get("uid") or ""),
            labels=_str_map(meta.get("labels"), "metadata.labels"),
            annotations=_str_map(meta.get("annotations"), "metadata.annotations"),
            resource_version=str(meta.get("resourceVersion") or ""),
            creation_timestamp=parse_time(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
            deletion_timestamp=parse_time(meta.get("deletionTimestamp"), "metadata.deletionTimestamp"),
            owner_references=()
            if refs is None
            else tuple(_map(o, "metadata.ownerReferences") for o in _list(refs, "metadata.ownerReferences")),
        )


#: ObjectMeta(...) without the frozen __init__'s setattr per field: every object read makes one.
_new_meta = slot_builder(ObjectMeta)


@dataclass(frozen=True, slots=True)
class ContainerPort:
    """A port a container asks for on the host (only ``host_port > 0`` matters to the scheduler)."""

    host_port: int
    protocol: str
    host_ip: str


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    image: str
    requests: ResourceList
    ports: tuple[ContainerPort, ...]
    is_sidecar: bool = False

    @classmethod
    def from_dict(cls, raw: Any, *, init: bool) -> Container:
        c = _map(raw, "")
        resources = _map(c.get("resources"), "resources")
        requests = parse_resource_list(resources.get("requests"), "resources.requests")
        # The API server defaults requests to limits for resources that only have a limit.
        limits = parse_resource_list(resources.get("limits"), "resources.limits")
        for name, value in limits.items():
            requests.setdefault(name, value)
        ports = []
        for i, p in enumerate(_list(c.get("ports"), "ports")):
            pm = _map(p, f"ports[{i}]")
            ports.append(
                ContainerPort(
                    host_port=fields.port(pm.get("hostPort"), f"ports[{i}].hostPort", allow_zero=True),
                    protocol=str(pm.get("protocol") or "TCP"),
                    host_ip=str(pm.get("hostIP") or ""),
                )
            )
        return cls(
            name=str(c.get("name") or ""),
            image=str(c.get("image") or ""),
            requests=requests,
            ports=tuple(ports),
            is_sidecar=init and c.get("restartPolicy") == "Always",
        )


@dataclass(frozen=True, slots=True)
class NodeAffinity:
    required: NodeSelector | None
    preferred: tuple[PreferredSchedulingTerm, ...]

    @classmethod
    def from_dict(cls, raw: Any) -> NodeAffinity:
        na = _map(raw, "")
        req_raw = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        required = (
            _parse(NodeSelector.from_dict, req_raw, "requiredDuringSchedulingIgnoredDuringExecution")
            if req_raw is not None
            else None
        )
        preferred = tuple(
            _parse(PreferredSchedulingTerm.from_dict, p, f"preferredDuringSchedulingIgnoredDuringExecution[{i}]")
            for i, p in enumerate(
                _list(
                    na.get("preferredDuringSchedulingIgnoredDuringExecution"),
                    "preferredDuringSchedulingIgnoredDuringExecution",
                )
            )
        )
        return cls(required=required, preferred=preferred)


@dataclass(frozen=True, slots=True, eq=False)
class Pod:
    """A pod as the scheduler sees it; identity is the object itself (compare by ``uid``/``key``)."""

    raw: Mapping[str, Any] = field(repr=False)
    meta: ObjectMeta
    node_name: str
    scheduler_name: str
    priority: int
    preemption_policy: str
    node_selector: Mapping[str, str]
    node_affinity: NodeAffinity | None
    affinity: Mapping[str, Any]
    tolerations: tuple[Toleration, ...]
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    overhead: ResourceList
    scheduling_gates: tuple[str, ...]
    #: Pod (anti-)affinity terms, parsed (``affinity`` keeps the raw block).
    pod_affinity: PodAffinity
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...]
    volumes: tuple[Mapping[str, Any], ...]
    phase: str
    nominated_node_name: str
    start_time: datetime | None
    #: Requests in scheduler units (cpu milli, others whole), only resources the scheduler tracks:
    #: what the pod counts for on its node (the resources its status reports included, when the
    #: rules it was read with say so).
    requests: Mapping[str, int]
    #: The requests its spec alone gives: what NodeResourcesFit checks for the pod being scheduled.
    #: The same mapping as ``requests`` unless the pod's status reports resources.
    spec_requests: Mapping[str, int]
    #: cpu (milli) and memory the pod counts for in scoring when it sits on a node.
    non_zero_cpu: int
    non_zero_memory: int
    #: The containers' requests with the cpu / memory defaults for containers that name none, in
    #: scheduler units: what NodeResourcesFit's scores weigh an incoming pod by (never pod-level
    #: requests; status resources only by v1.30's rules).
    scoring_requests: Mapping[str, int]
    #: Host ports the pod takes on its node (v1.34: its sidecars' too).
    host_ports: tuple[ContainerPort, ...]
    #: ``spec.resources.requests`` (cpu, memory, hugepages), exact; None when the pod sets none.
    pod_level_requests: ResourceList | None

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace

    @property
    def uid(self) -> str:
        return self.meta.uid

    @property
    def key(self) -> str:
        return self.meta.key

    @property
    def labels(self) -> Mapping[str, str]:
        return self.meta.labels

    @property
    def is_terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    def requests_with_defaults(self) -> ResourceList:
        """Exact requests with cpu / memory defaults for containers that name none, from the spec's
        containers alone (no pod-level requests, no status)."""
        return pod_requests(
            [c.requests for c in self.containers],
            [(c.requests, c.is_sidecar) for c in self.init_containers],
            self.overhead,
            non_missing=NON_MISSING_DEFAULTS,
        )

    def images(self) -> tuple[str, ...]:
        return tuple(c.image for c in (*self.init_containers, *self.containers))

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], rules: ResourceRules = V1_34_RULES) -> Pod:
        """The pod ``raw`` describes, its requests added up by ``rules`` (the emulated release's)."""
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=True)
        node_name, (from_spec, template) = _spec_fields(raw.get("spec"), meta.namespace, rules)
        status = _map(raw.get("status"), "status")
        if rules.in_place_resize and has_resize_status(status):
            resized = {**from_spec, **_resized_fields(from_spec, status, rules), "node_name": node_name}
            phase, nominated, start_time = _status_fields(status)
            return cls(raw=raw, meta=meta, phase=phase, nominated_node_name=nominated, start_time=start_time, **resized)
        return pod_like(template, raw, meta, node_name, *_status_fields(status))


def _status_fields(status: Mapping[str, Any]) -> tuple[str, str, datetime | None]:
    """The Pod fields read from ``status``: phase, nominated node name, start time."""
    return (
        str(status.get("phase") or "Pending"),
        str(status.get("nominatedNodeName") or ""),
        parse_time(status.get("startTime"), "status.startTime"),
    )


#: A spec's Pod fields, and a pod holding them (its own fields blank) that the pods of that spec copy.
_ParsedSpec = tuple[dict[str, Any], Pod]
#: Parsed pod specs by content (and the rules their requests were added up by): pods of one workload
#: share their spec, and parsing it is most of what parsing a pod costs. Entries are read-only (Pod is
#: frozen and nothing changes its fields).
_SPEC_MEMO: dict[tuple[ResourceRules, bytes], _ParsedSpec] = {}
_SPEC_MEMO_SIZE = 4096
#: The Pod fields that come from the object itself rather than its spec (set on a copy of the template).
_OWN_FIELDS = frozenset({"raw", "meta", "node_name", "phase", "nominated_node_name", "start_time"})
_NO_META = ObjectMeta("", "", "", {}, {}, "", None, None, ())


def _spec_fields(raw_spec: Any, namespace: str, rules: ResourceRules) -> tuple[str, _ParsedSpec]:
    """spec.nodeName, and the Pod fields that come from ``spec`` (and the namespace, which pod affinity
    terms default to) with their template pod.

    spec.nodeName is read apart, so that the pods of one workload share a parse bound or not."""
    node_name = None  # a spec that is no dict keeps it, and its parse reads it
    if isinstance(raw_spec, dict) and "nodeName" in raw_spec:
        node_name = fields.string(raw_spec["nodeName"], "spec.nodeName")
        raw_spec = {k: v for k, v in raw_spec.items() if k != "nodeName"}
    key: tuple[ResourceRules, bytes] | None
    try:
        key = (rules, marshal.dumps((namespace, raw_spec), 2))  # equal bytes: equal content
    except ValueError:  # something marshal cannot write: parse without remembering
        key = None
    parsed = _SPEC_MEMO.get(key) if key is not None else None
    if parsed is None:
        from_spec = _parse_spec(raw_spec, namespace, rules)
        blank = {"raw": {}, "meta": _NO_META, "phase": "", "nominated_node_name": "", "start_time": None}
        parsed = from_spec, Pod(**{**from_spec, **blank})
        if key is not None:
            if len(_SPEC_MEMO) >= _SPEC_MEMO_SIZE:
                _SPEC_MEMO.clear()
            _SPEC_MEMO[key] = parsed
    return (parsed[0]["node_name"] if node_name is None else node_name), parsed


_POD_SETTERS = slot_copier(Pod)[1]
_copy_spec_slots = slot_copier(Pod, skip=_OWN_FIELDS)[2]
_set_raw, _set_meta, _set_node_name, _set_phase, _set_nominated, _set_start = (
    _POD_SETTERS[name] for name in ("raw", "meta", "node_name", "phase", "nominated_node_name", "start_time")
)


def pod_like(
    template: Pod,
    raw: Mapping[str, Any],
    meta: ObjectMeta,
    node_name: str,
    phase: str,
    nominated_node_name: str,
    start_time: datetime | None,
) -> Pod:
    """A pod with ``template``'s spec fields and these fields of its own: what ``Pod(...)`` builds, its
    slots set straight (the frozen ``__init__`` sets 27 through ``object.__setattr__``, twice the cost)."""
    pod = object.__new__(Pod)
    _copy_spec_slots(template, pod)
    _set_raw(pod, raw)
    _set_meta(pod, meta)
    _set_node_name(pod, node_name)
    _set_phase(pod, phase)
    _set_nominated(pod, nominated_node_name)
    _set_start(pod, start_time)
    return pod


def _parse_spec(raw_spec: Any, namespace: str, rules: ResourceRules) -> dict[str, Any]:
    spec = _map(raw_spec, "spec")
    containers = tuple(
        _parse(lambda c: Container.from_dict(c, init=False), c, f"spec.containers[{i}]")
        for i, c in enumerate(_list(spec.get("containers"), "spec.containers"))
    )
    init_containers = tuple(
        _parse(lambda c: Container.from_dict(c, init=True), c, f"spec.initContainers[{i}]")
        for i, c in enumerate(_list(spec.get("initContainers"), "spec.initContainers"))
    )
    overhead = parse_resource_list(spec.get("overhead"), "spec.overhead")
    affinity = _map(spec.get("affinity"), "spec.affinity")
    node_affinity = None
    if affinity.get("nodeAffinity") is not None:
        node_affinity = _parse(NodeAffinity.from_dict, affinity["nodeAffinity"], "spec.affinity.nodeAffinity")
    tolerations = tuple(
        _parse(Toleration.from_dict, t, f"spec.tolerations[{i}]")
        for i, t in enumerate(_list(spec.get("tolerations"), "spec.tolerations"))
    )
    gates = tuple(
        str(_map(g, f"spec.schedulingGates[{i}]").get("name", ""))
        for i, g in enumerate(_list(spec.get("schedulingGates"), "spec.schedulingGates"))
    )
    pod_level = _pod_level_requests(spec.get("resources"))
    resources = _resource_fields(containers, init_containers, overhead, pod_level, rules)
    sidecars = (c for c in init_containers if c.is_sidecar) if rules.v134 else ()
    return {
        "node_name": fields.string(spec.get("nodeName"), "spec.nodeName"),
        "scheduler_name": fields.string(spec.get("schedulerName"), "spec.schedulerName") or DEFAULT_SCHEDULER_NAME,
        "priority": _int(spec.get("priority"), "spec.priority"),
        "preemption_policy": str(spec.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY),
        "node_selector": _str_map(spec.get("nodeSelector"), "spec.nodeSelector"),
        "node_affinity": node_affinity,
        "affinity": affinity,
        "tolerations": tolerations,
        "containers": containers,
        "init_containers": init_containers,
        "overhead": overhead,
        "scheduling_gates": gates,
        "pod_affinity": _parse(lambda a: PodAffinity.from_affinity(a, namespace), affinity, "spec.affinity"),
        "topology_spread_constraints": parse_constraints(
            _list(spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints"),
            "spec.topologySpreadConstraints",
        ),
        "volumes": tuple(
            _map(v, f"spec.volumes[{i}]") for i, v in enumerate(_list(spec.get("volumes"), "spec.volumes"))
        ),
        "pod_level_requests": pod_level,
        **resources,
        "spec_requests": resources["requests"],
        # v1.34 counts the ports of sidecars (they run as long as the pod), ahead of the containers'.
        "host_ports": tuple(p for c in (*sidecars, *containers) for p in c.ports if p.host_port > 0),
    }


def _pod_level_requests(raw: Any) -> ResourceList | None:
    """The supported pod-level requests (``spec.resources.requests``: cpu, memory, hugepages), None
    when the pod sets none of them."""
    resources = _map(raw, "spec.resources")
    requests = parse_resource_list(resources.get("requests"), "spec.resources.requests")
    supported = {name: q for name, q in requests.items() if is_supported_pod_level_resource(name)}
    return supported or None


def _resource_fields(
    containers: tuple[Container, ...],
    init_containers: tuple[Container, ...],
    overhead: ResourceList,
    pod_level: ResourceList | None,
    rules: ResourceRules,
    app: list[ResourceList] | None = None,
    init: list[tuple[ResourceList, bool]] | None = None,
) -> dict[str, Any]:
    """The Pod fields the scheduler's resource accounting reads, in scheduler units. ``app`` and
    ``init`` replace the containers' own requests (with what their status reports)."""
    if app is None:
        app = [c.requests for c in containers]
    if init is None:
        init = [(c.requests, c.is_sidecar) for c in init_containers]
    amounts = pod_resources(app, init, overhead, pod_level, rules)
    total = amounts.requests
    where = "spec.resources.requests" if pod_level and rules.pod_level_resources else "spec.containers"
    return {
        "requests": _check_fits(scheduler_resources(total), total, f"{where} (total request of the pod)"),
        "non_zero_cpu": amounts.non_zero_cpu,
        "non_zero_memory": amounts.non_zero_memory,
        "scoring_requests": {name: to_scheduler_units(name, q) for name, q in amounts.scoring.items()},
    }


_RESIZE_PENDING = "PodResizePending"


def has_resize_status(status: Mapping[str, Any]) -> bool:
    """Whether a pod's status reports on containers (what in-place resizing reads)."""
    return bool(status.get("containerStatuses") or status.get("initContainerStatuses"))


def resize_status(status: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What in-place resizing reads from a pod's status, to compare two versions of it (None when the
    status reports on no container): each container's resources and allocated resources, the resize
    state and the PodResizePending condition's reason."""
    if not has_resize_status(status):
        return None
    listed = [status.get("containerStatuses"), status.get("initContainerStatuses")]
    entries = tuple(
        (cs.get("name"), cs.get("resources"), cs.get("allocatedResources"))
        for items in listed
        if isinstance(items, list)
        for cs in items
        if isinstance(cs, Mapping)
    )
    pending = [
        c.get("reason")
        for c in status.get("conditions") or ()
        if isinstance(c, Mapping) and c.get("type") == _RESIZE_PENDING
    ]
    return entries, status.get("resize"), pending[:1]


def _container_statuses(status: Mapping[str, Any], rules: ResourceRules) -> dict[str, ContainerResizeStatus]:
    """Container statuses by name (v1.34 reads the init containers' too, v1.30 only the containers')."""
    keys = ("containerStatuses", "initContainerStatuses") if rules.v134 else ("containerStatuses",)
    out: dict[str, ContainerResizeStatus] = {}
    for key in keys:
        for i, raw in enumerate(_list(status.get(key), f"status.{key}")):
            cs = _map(raw, f"status.{key}[{i}]")
            path = f"status.{key}[{i}]"
            reported = cs.get("resources")
            requests = (
                None
                if reported is None
                else parse_resource_list(
                    _map(reported, f"{path}.resources").get("requests"), f"{path}.resources.requests"
                )
            )
            allocated = parse_resource_list(cs.get("allocatedResources"), f"{path}.allocatedResources")
            out[str(cs.get("name") or "")] = ContainerResizeStatus(requests, allocated)
    return out


def _resize_infeasible(status: Mapping[str, Any], rules: ResourceRules) -> bool:
    """Whether the kubelet found the pod's pending resize infeasible (v1.34: the PodResizePending
    condition's reason; v1.30: ``status.resize``)."""
    if not rules.v134:
        return status.get("resize") == "Infeasible"
    for condition in _list(status.get("conditions"), "status.conditions"):
        if isinstance(condition, Mapping) and condition.get("type") == _RESIZE_PENDING:
            return condition.get("reason") == "Infeasible"
    return False


def _resized_fields(from_spec: Mapping[str, Any], status: Mapping[str, Any], rules: ResourceRules) -> dict[str, Any]:
    """The accounting fields again, with the resources the containers' statuses report."""
    statuses = _container_statuses(status, rules)
    if not statuses:
        return {}
    infeasible = _resize_infeasible(status, rules)
    containers: tuple[Container, ...] = from_spec["containers"]
    init_containers: tuple[Container, ...] = from_spec["init_containers"]
    app = [resized_requests(c.requests, statuses.get(c.name), infeasible, rules) for c in containers]
    # Only sidecars keep running, and only v1.34 reads their statuses.
    init = [
        (
            resized_requests(c.requests, statuses.get(c.name), infeasible, rules)
            if c.is_sidecar and rules.v134
            else c.requests,
            c.is_sidecar,
        )
        for c in init_containers
    ]
    resized = _resource_fields(
        containers, init_containers, from_spec["overhead"], from_spec["pod_level_requests"], rules, app, init
    )
    if rules.v134:
        del resized["scoring_requests"]  # v1.34's NodeResourcesFit weighs the spec (its scorer reads no status)
    return resized


@dataclass(frozen=True, slots=True)
class ImageState:
    names: tuple[str, ...]
    size_bytes: int


@dataclass(frozen=True, slots=True, eq=False)
class Node:
    raw: Mapping[str, Any] = field(repr=False)
    meta: ObjectMeta
    unschedulable: bool
    taints: tuple[Taint, ...]
    allocatable: Mapping[str, int]
    capacity: Mapping[str, int]
    images: tuple[ImageState, ...]

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def labels(self) -> Mapping[str, str]:
        return self.meta.labels

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Node:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=False)
        return cls(raw=raw, meta=meta, **_node_fields(raw.get("spec"), raw.get("status")))


#: Parsed node shapes by content: nodes of one machine type share taints, capacity and images.
_NODE_MEMO: dict[bytes, dict[str, Any]] = {}


def _node_fields(raw_spec: Any, raw_status: Any) -> dict[str, Any]:
    """The Node fields that come from ``spec`` and ``status``."""
    key: bytes | None = None
    if isinstance(raw_spec, dict | None) and isinstance(raw_status, dict | None):
        spec, status = raw_spec or {}, raw_status or {}
        read = (
            spec.get("unschedulable"),
            spec.get("taints"),
            status.get("capacity"),
            status.get("allocatable"),
            status.get("images"),
        )
        try:
            key = marshal.dumps(read, 2)  # what is parsed below, and nothing else (not conditions)
        except ValueError:
            key = None
        known = _NODE_MEMO.get(key) if key is not None else None
        if known is not None:
            return known
    parsed = _parse_node(raw_spec, raw_status)
    if key is not None:
        if len(_NODE_MEMO) >= _SPEC_MEMO_SIZE:
            _NODE_MEMO.clear()
        _NODE_MEMO[key] = parsed
    return parsed


def _parse_node(raw_spec: Any, raw_status: Any) -> dict[str, Any]:
    spec = _map(raw_spec, "spec")
    status = _map(raw_status, "status")
    capacity = parse_resource_list(status.get("capacity"), "status.capacity")
    alloc_raw = status.get("allocatable")
    allocatable = capacity if alloc_raw is None else parse_resource_list(alloc_raw, "status.allocatable")
    images = []
    for i, img in enumerate(_list(status.get("images"), "status.images")):
        im = _map(img, f"status.images[{i}]")
        names = tuple(str(n) for n in _list(im.get("names"), f"status.images[{i}].names"))
        images.append(ImageState(names=names, size_bytes=_int(im.get("sizeBytes"), f"status.images[{i}].sizeBytes")))
    return {
        "unschedulable": fields.boolean(spec.get("unschedulable"), "spec.unschedulable"),
        "taints": tuple(
            _parse(Taint.from_dict, t, f"spec.taints[{i}]")
            for i, t in enumerate(_list(spec.get("taints"), "spec.taints"))
        ),
        "allocatable": _check_fits(scheduler_resources(allocatable), allocatable, "status.allocatable"),
        "capacity": _check_fits(scheduler_resources(capacity), capacity, "status.capacity"),
        "images": tuple(images),
    }


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool
    preemption_policy: str

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PriorityClass:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=False)
        return cls(
            name=meta.name,
            value=_int(raw.get("value"), "value"),
            global_default=fields.boolean(raw.get("globalDefault"), "globalDefault"),
            preemption_policy=str(raw.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY),
        )


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: Mapping[str, str]

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Namespace:
        meta = ObjectMeta.from_dict(raw.get("metadata"), namespaced=False)
        return cls(name=meta.name, labels=meta.labels)
