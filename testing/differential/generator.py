"""Seeded scenarios: a seed becomes a small cluster and a list of pods to schedule one at a time.

A scenario is plain manifests (dicts), the same for both schedulers: 3-12 nodes (cpu, memory, pods,
ephemeral storage, sometimes ``example.com/gpu``; zone, hostname and other labels; taints of every
effect; image lists for ImageLocality), 0-20 pods already bound to them (requests, labels, host ports,
priorities, distinct start times, some with (anti-)affinity of their own), claims bound to volumes with
node affinity, budgets, and 3-10 pending pods mixing resources, selectors, node affinity,
tolerations, topology spread, inter-pod (anti-)affinity, images, host ports, volumes and priorities.

Two rules keep upstream's decisions reproducible rather than random:

* every bound pod has its own ``status.startTime`` (whole seconds apart), so the last criterion of
  preemption's candidate choice (the latest start among the top victims) always separates two
  candidates and the nominated node is never a coin toss;
* volumes are bound statically (a claim names its volume, both are Bound): no provisioning and no
  binding by a controller, whose timing the scheduler would see.

Pods carry ``terminationGracePeriodSeconds: 0`` so that a preemption's deletions are immediate
without a kubelet. Object names carry the seed (``s7-n3``) so that the cluster-scoped objects of two
seeds never meet. With ``dra=True`` about half the seeds also get devices, classes and claims
(:mod:`testing.differential.devices`), leaving everything else as it is.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from testing.differential.devices import devices_for

ZONE_KEY = "topology.kubernetes.io/zone"
HOSTNAME_KEY = "kubernetes.io/hostname"
GPU = "example.com/gpu"
ZONES = ("zone-a", "zone-b", "zone-c")
APPS = ("web", "db", "cache", "batch")
TAINT_KEYS = ("dedicated", "maintenance", "gpu-only")
HOST_PORTS = (8080, 9090)

#: Images as the kubelet reports them, with their sizes. Pods name the last one without its tag
#: (``registry.example/batch``), which ImageLocality must normalise to ``:latest``.
IMAGE_SIZES = {
    "registry.example/web:1.0": 180_000_000,
    "registry.example/db:2.1": 850_000_000,
    "registry.example/cache:7": 45_000_000,
    "registry.example/tiny:1": 5_000_000,
    "registry.example/batch:latest": 1_400_000_000,
}
POD_IMAGES = (*list(IMAGE_SIZES)[:-1], "registry.example/batch", "registry.example/absent:3")

#: Fixed for every seed (names carry the value), so they are created once per control plane.
PRIORITY_CLASSES: tuple[dict[str, Any], ...] = tuple(
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **({"preemptionPolicy": "Never"} if name.endswith("never") else {}),
    }
    for name, value in (
        ("diff-negative", -10),
        ("diff-low", 10),
        ("diff-mid", 100),
        ("diff-high", 1000),
        ("diff-high-never", 1000),
        ("diff-critical", 100_000),
    )
)
LOCAL_CLASS = "diff-local"
IMMEDIATE_CLASS = "diff-immediate"
STORAGE_CLASSES: tuple[dict[str, Any], ...] = tuple(
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": mode,
    }
    for name, mode in ((LOCAL_CLASS, "WaitForFirstConsumer"), (IMMEDIATE_CLASS, "Immediate"))
)
RUNTIME_CLASS = "diff-sandboxed"
#: Pods naming it get its overhead added by the API server's RuntimeClass admission.
RUNTIME_CLASSES: tuple[dict[str, Any], ...] = (
    {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": RUNTIME_CLASS},
        "handler": "sandbox",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
    },
)
#: Cluster-scoped objects every seed shares, created once per control plane.
CLUSTER_OBJECTS = (*PRIORITY_CLASSES, *STORAGE_CLASSES, *RUNTIME_CLASSES)
START = datetime(2025, 6, 1, tzinfo=UTC)


@dataclass
class Scenario:
    """One seed's objects; ``pending`` pods are to be created one at a time, in order."""

    seed: int
    namespace: str
    nodes: list[dict[str, Any]]
    existing: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    volumes: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    budgets: list[dict[str, Any]] = field(default_factory=list)
    #: DRA objects: DeviceClasses and ResourceSlices (cluster-scoped), ResourceClaims and templates.
    devices: list[dict[str, Any]] = field(default_factory=list)

    @property
    def namespace_object(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": self.namespace, "labels": {"differential": "true"}},
        }

    def objects(self) -> list[dict[str, Any]]:
        """Everything but the pending pods, in an order the API server accepts."""
        return [
            *CLUSTER_OBJECTS,
            self.namespace_object,
            *self.nodes,
            *self.volumes,
            *self.claims,
            *self.budgets,
            *self.devices,
            *self.existing,
        ]


@dataclass
class _Node:
    """What the generator keeps of a node while placing pods on it."""

    obj: dict[str, Any]
    allocatable_cpu: int  # millicores
    cpu: int  # millicores free
    memory: int  # MiB free
    pods: int  # pod slots free
    gpu: int
    #: Host ports held by the pods placed here: (host IP, protocol, port).
    ports: list[tuple[str, str, int]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def zone(self) -> str | None:
        return self.obj["metadata"]["labels"].get(ZONE_KEY)

    @property
    def taints(self) -> list[dict[str, Any]]:
        return list(self.obj["spec"].get("taints") or [])


@dataclass
class _Context:
    rng: random.Random
    seed: int
    namespace: str
    nodes: list[_Node]
    #: Claims a pending pod may use: name -> access mode.
    claims: dict[str, str] = field(default_factory=dict)
    #: Claims nothing can satisfy: unbound with no volume to take (nothing provisions), or missing.
    broken_claims: list[str] = field(default_factory=list)


def generate(seed: int, *, dra: bool = False) -> Scenario:
    """The scenario of ``seed``: the same objects on every call and every machine; ``dra`` adds devices
    and claims in some seeds."""
    rng = random.Random(seed)
    namespace = f"diff-{seed}"
    zones = ZONES[: rng.randint(1, 3)]
    nodes = [_node(rng, f"s{seed}-n{i}", zones[i % len(zones)]) for i in range(rng.randint(3, 12))]
    ctx = _Context(rng, seed, namespace, nodes)
    volumes, claims = _volumes(ctx)
    existing = _existing_pods(ctx)
    _claims_in_use(ctx, volumes, claims, existing)
    budgets = _budgets(ctx)
    pending = [_pending_pod(ctx, k) for k in range(rng.randint(3, 10))]
    devices = devices_for(seed, namespace, [n.name for n in nodes], pending) if dra else []
    return Scenario(seed, namespace, [n.obj for n in nodes], existing, pending, volumes, claims, budgets, devices)


# -- nodes ------------------------------------------------------------------------------------------
def _node(rng: random.Random, name: str, zone: str) -> _Node:
    cpu = rng.choice((2, 4, 8))
    memory = rng.choice((4, 8, 16)) * 1024
    pods = rng.choice((6, 12, 110))
    capacity = {"cpu": str(cpu), "memory": f"{memory}Mi", "pods": str(pods), "ephemeral-storage": "100Gi"}
    allocatable = dict(capacity)
    if rng.random() < 0.5:  # system reservations, as a kubelet reports them
        cpu_m, memory = cpu * 1000 - 100, memory - 256
        allocatable.update(cpu=f"{cpu_m}m", memory=f"{memory}Mi")
    else:
        cpu_m = cpu * 1000
    gpu = rng.randint(1, 4) if rng.random() < 0.3 else 0
    if gpu:
        capacity[GPU] = allocatable[GPU] = str(gpu)
    labels = {HOSTNAME_KEY: name, "disktype": rng.choice(("ssd", "hdd")), "cores": str(cpu)}
    if rng.random() < 0.93:  # a few nodes lack the zone label: topology spread must skip them
        labels[ZONE_KEY] = zone
    spec: dict[str, Any] = {}
    if rng.random() < 0.35:
        spec["taints"] = _taints(rng)
    if rng.random() < 0.05:
        spec["unschedulable"] = True
    images = [
        {"names": [image], "sizeBytes": IMAGE_SIZES[image]}
        for image in rng.sample(sorted(IMAGE_SIZES), rng.randint(0, 3))
    ]
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "images": images,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    return _Node(obj, cpu_m, cpu_m, memory, pods, gpu)


def _taints(rng: random.Random) -> list[dict[str, Any]]:
    keys = rng.sample(TAINT_KEYS, rng.choice((1, 1, 2)))
    return [
        {
            "key": key,
            "value": rng.choice(("a", "b")),
            "effect": rng.choice(("NoSchedule", "PreferNoSchedule", "NoExecute")),
        }
        for key in keys
    ]


# -- volumes ----------------------------------------------------------------------------------------
def _volumes(ctx: _Context) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Claims bound to volumes pinned to a node or a zone, plus claims that can never be satisfied."""
    rng, volumes, claims = ctx.rng, [], []
    for i in range(rng.choice((0, 0, 1, 2, 3))):
        node = rng.choice(ctx.nodes)
        mode = "ReadWriteOncePod" if rng.random() < 0.25 else "ReadWriteOnce"
        claim, pv = f"data-{i}", f"s{ctx.seed}-pv{i}"
        zone = node.zone
        key, value = (ZONE_KEY, zone) if zone is not None and rng.random() < 0.4 else (HOSTNAME_KEY, node.name)
        labels: dict[str, str] = {}
        if node.zone is not None and rng.random() < 0.4:  # VolumeZone reads these labels
            labels[ZONE_KEY] = node.zone if rng.random() < 0.8 else rng.choice(ZONES)
        volumes.append(_pv(pv, claim, ctx.namespace, mode, {key: value}, labels))
        claims.append(_pvc(claim, ctx.namespace, mode, volume=pv))
        ctx.claims[claim] = mode
    if rng.random() < 0.3:
        claims.append(_pvc("unbound-local", ctx.namespace, "ReadWriteOnce", storage_class=LOCAL_CLASS))
        ctx.broken_claims.append("unbound-local")
    if rng.random() < 0.3:
        claims.append(_pvc("unbound-immediate", ctx.namespace, "ReadWriteOnce", storage_class=IMMEDIATE_CLASS))
        ctx.broken_claims.append("unbound-immediate")
    ctx.broken_claims.append("missing")
    return volumes, claims


def _pv(
    name: str, claim: str, namespace: str, mode: str, where: dict[str, str], labels: dict[str, str]
) -> dict[str, Any]:
    ((key, value),) = where.items()
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels, "annotations": {"pv.kubernetes.io/bound-by-controller": "yes"}},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": [mode],
            "storageClassName": LOCAL_CLASS,
            "persistentVolumeReclaimPolicy": "Retain",
            "local": {"path": f"/mnt/{name}"},
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]
                }
            },
        },
        "status": {"phase": "Bound"},
    }


def _pvc(
    name: str, namespace: str, mode: str, *, volume: str | None = None, storage_class: str = LOCAL_CLASS
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    spec: dict[str, Any] = {
        "accessModes": [mode],
        "resources": {"requests": {"storage": "5Gi"}},
        "storageClassName": storage_class,
    }
    status: dict[str, Any] = {"phase": "Pending"}
    if volume is not None:
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
        spec["volumeName"] = volume
        status = {"phase": "Bound", "accessModes": [mode], "capacity": {"storage": "10Gi"}}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec, "status": status}


def _claims_in_use(
    ctx: _Context, volumes: list[dict[str, Any]], claims: list[dict[str, Any]], existing: list[dict[str, Any]]
) -> None:
    """Some bound claims are already mounted by an existing pod on a node their volume allows."""
    labels = {n.name: n.obj["metadata"]["labels"] for n in ctx.nodes}
    for claim in claims:
        volume = claim["spec"].get("volumeName")
        if volume is None or ctx.rng.random() < 0.5:
            continue
        pv = next(v for v in volumes if v["metadata"]["name"] == volume)
        req = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
        users = [
            p
            for p in existing
            if labels[p["spec"]["nodeName"]].get(req["key"]) in req["values"] and "volumes" not in p["spec"]
        ]
        if users:
            pod = ctx.rng.choice(users)
            name = claim["metadata"]["name"]
            pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": name}}]


# -- pods -------------------------------------------------------------------------------------------
def _pod(ctx: _Context, name: str, cpu: int, memory: int, *, app: str | None = None) -> dict[str, Any]:
    """A one-container pod requesting ``cpu`` millicores and ``memory`` MiB (none when both are 0)."""
    rng = ctx.rng
    resources: dict[str, Any] = {}
    requests = {
        k: v
        for k, v in (("cpu", _cpu(rng, cpu) if cpu else None), ("memory", _memory(rng, memory) if memory else None))
        if v
    }
    if rng.random() < 0.1:
        requests["ephemeral-storage"] = rng.choice(("1Gi", "20Gi", "150Gi"))
    if requests:
        resources["requests"] = requests
    labels = {"app": app or rng.choice(APPS)}
    if rng.random() < 0.3:
        labels["tier"] = rng.choice(("front", "back"))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ctx.namespace, "labels": labels},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "main", "image": rng.choice(POD_IMAGES), "resources": resources}],
        },
    }


def _cpu(rng: random.Random, millis: int) -> str:
    """Millicores in one of the spellings users write (the API server keeps its canonical form)."""
    if millis % 500 == 0 and rng.random() < 0.5:
        return f"{millis / 1000:g}"
    return f"{millis}m"


def _memory(rng: random.Random, mib: int) -> str:
    choice = rng.random()
    if mib % 512 == 0 and choice < 0.3:
        return f"{mib / 1024:g}Gi"
    if choice > 0.85:
        return str(mib * 2**20)  # bytes
    return f"{mib}Mi"


def _existing_pods(ctx: _Context) -> list[dict[str, Any]]:
    """Pods already bound, each with its own start time, filling the nodes part of the way (close to
    full in a third of the seeds, where preemption has work to do)."""
    rng = ctx.rng
    count = 40 if rng.random() < 0.35 else rng.randint(0, 20)
    starts = sorted(rng.sample(range(60, 200_000), count), reverse=True)
    pods: list[dict[str, Any]] = []
    for i in range(count):
        if len(pods) == 20:
            break
        node = rng.choice(ctx.nodes)
        cpu, memory = rng.choice((100, 250, 500, 1000, 1500)), rng.choice((128, 256, 512, 1024, 2048))
        if node.pods < 1 or cpu > node.cpu or memory > node.memory:
            continue
        node.cpu, node.memory, node.pods = node.cpu - cpu, node.memory - memory, node.pods - 1
        pod = _pod(ctx, f"e{i}", cpu, memory)
        spec = pod["spec"]
        spec["nodeName"] = node.name
        if node.taints:
            spec["tolerations"] = [{"key": t["key"], "operator": "Exists"} for t in node.taints]
        if (cls := rng.choice((None, None, "diff-negative", "diff-low", "diff-mid", "diff-high"))) is not None:
            spec["priorityClassName"] = cls
        if node.gpu and rng.random() < 0.3:
            node.gpu -= 1
            _set_gpu(pod, 1)
        if rng.random() < 0.12:
            _host_port(rng, pod)
            _keep_ports_apart(node, pod)
        if rng.random() < 0.12:
            _existing_pod_affinity(rng, pod)
        if rng.random() < 0.05:
            spec["runtimeClassName"] = RUNTIME_CLASS
        pod["status"] = _running_status(START - timedelta(seconds=starts[i]))
        pods.append(pod)
    return pods


def _running_status(start: datetime) -> dict[str, Any]:
    """What a kubelet reports for a running pod: ready, so budgets count it as healthy."""
    stamp = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "phase": "Running",
        "startTime": stamp,
        "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "True", "lastTransitionTime": stamp},
        ],
    }


def _existing_pod_affinity(rng: random.Random, pod: dict[str, Any]) -> None:
    """An existing pod's own terms: incoming pods must respect its required anti-affinity, and its
    preferred terms (and required affinity, by hardPodAffinityWeight) score them."""
    term = {
        "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
        "topologyKey": rng.choice((HOSTNAME_KEY, ZONE_KEY)),
    }
    kind = rng.choice(("podAntiAffinity", "podAffinity"))
    rule: dict[str, Any]
    if rng.random() < 0.5:
        rule = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    else:
        rule = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.choice((10, 50, 100)), "podAffinityTerm": term}
            ]
        }
    pod["spec"]["affinity"] = {kind: rule}


def _set_gpu(pod: dict[str, Any], count: int) -> None:
    resources = pod["spec"]["containers"][0]["resources"]
    resources.setdefault("requests", {})[GPU] = str(count)
    resources.setdefault("limits", {})[GPU] = str(count)  # extended resources: limits equal requests


def _host_port(rng: random.Random, pod: dict[str, Any]) -> None:
    port = {"containerPort": 80, "hostPort": rng.choice(HOST_PORTS), "protocol": rng.choice(("TCP", "TCP", "UDP"))}
    if rng.random() < 0.2:
        port["hostIP"] = "127.0.0.1"
    pod["spec"]["containers"][0]["ports"] = [port]


def _keep_ports_apart(node: _Node, pod: dict[str, Any]) -> None:
    """Drop the pod's host port if another pod on the node holds it: no kubelet runs two such pods, and
    kube-scheduler's NodeInfo keeps ports as a set, so the state would not mean what it says."""
    (port,) = pod["spec"]["containers"][0]["ports"]
    ip, key = port.get("hostIP", "0.0.0.0"), (port["protocol"], port["hostPort"])
    if any(
        key == (protocol, number) and (ip == other or "0.0.0.0" in (ip, other))
        for other, protocol, number in node.ports
    ):
        del pod["spec"]["containers"][0]["ports"]
    else:
        node.ports.append((ip, *key))


def _budgets(ctx: _Context) -> list[dict[str, Any]]:
    rng, budgets = ctx.rng, []
    # One budget per app: kube-controller-manager refreshes only one of the budgets covering a pod when
    # the pod changes, which would leave the other's status stale.
    for i, app in enumerate(rng.sample(APPS, rng.choice((0, 0, 1, 1, 2)))):
        spec: dict[str, Any] = {"selector": {"matchLabels": {"app": app}}}
        if rng.random() < 0.15:
            spec["maxUnavailable"] = 1
        else:
            spec["minAvailable"] = rng.choice((0, 1, 2))
        budgets.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": f"pdb-{i}", "namespace": ctx.namespace},
                "spec": spec,
            }
        )
    return budgets


def _pending_pod(ctx: _Context, k: int) -> dict[str, Any]:
    rng = ctx.rng
    cpu = rng.choice((0, 100, 250, 500, 1000, 2000, 3000)) if rng.random() > 0.08 else 0
    memory = rng.choice((0, 128, 512, 1024, 2048, 4096, 6144)) if cpu else 0
    pod = _pod(ctx, f"p{k}", cpu, memory)
    spec = pod["spec"]
    spec["priorityClassName"] = rng.choice(
        ("diff-low", "diff-mid", "diff-high", "diff-high", "diff-critical", "diff-high-never")
    )
    if rng.random() < 0.15:
        del spec["priorityClassName"]
    for probability, feature in PENDING_FEATURES:
        if rng.random() < probability:
            feature(ctx, pod)
    return pod


# -- features of pending pods -----------------------------------------------------------------------
def _node_labels(ctx: _Context, key: str) -> list[str]:
    return sorted({v for n in ctx.nodes if (v := n.obj["metadata"]["labels"].get(key)) is not None})


def _f_node_selector(ctx: _Context, pod: dict[str, Any]) -> None:
    key = ctx.rng.choice((ZONE_KEY, "disktype"))
    values = _node_labels(ctx, key) or ["none"]
    pod["spec"]["nodeSelector"] = {key: ctx.rng.choice(values)}


def _requirement(ctx: _Context) -> dict[str, Any]:
    rng = ctx.rng
    choice = rng.randrange(5)
    if choice == 0:
        return {"key": ZONE_KEY, "operator": "In", "values": rng.sample(ZONES, rng.randint(1, 2))}
    if choice == 1:
        return {"key": "disktype", "operator": rng.choice(("In", "NotIn")), "values": [rng.choice(("ssd", "hdd"))]}
    if choice == 2:
        return {"key": "cores", "operator": rng.choice(("Gt", "Lt")), "values": [rng.choice(("2", "4", "7"))]}
    if choice == 3:
        return {"key": HOSTNAME_KEY, "operator": "NotIn", "values": [rng.choice(ctx.nodes).name]}
    return {"key": ZONE_KEY, "operator": rng.choice(("Exists", "DoesNotExist"))}


def _f_required_node_affinity(ctx: _Context, pod: dict[str, Any]) -> None:
    terms = [
        {"matchExpressions": [_requirement(ctx) for _ in range(ctx.rng.randint(1, 2))]}
        for _ in range(ctx.rng.choice((1, 1, 2)))
    ]
    if ctx.rng.random() < 0.15:  # by name (one per term): NodeAffinity's PreFilter narrows the nodes
        terms = [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n.name]}]}
            for n in ctx.rng.sample(ctx.nodes, ctx.rng.randint(1, 2))
        ]
    affinity = pod["spec"].setdefault("affinity", {}).setdefault("nodeAffinity", {})
    affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}


def _f_preferred_node_affinity(ctx: _Context, pod: dict[str, Any]) -> None:
    prefs = [
        {"weight": ctx.rng.choice((1, 20, 50, 100)), "preference": {"matchExpressions": [_requirement(ctx)]}}
        for _ in range(ctx.rng.randint(1, 2))
    ]
    affinity = pod["spec"].setdefault("affinity", {}).setdefault("nodeAffinity", {})
    affinity["preferredDuringSchedulingIgnoredDuringExecution"] = prefs


def _f_tolerations(ctx: _Context, pod: dict[str, Any]) -> None:
    rng = ctx.rng
    taints = [t for n in ctx.nodes for t in n.taints]
    if not taints or rng.random() < 0.1:
        pod["spec"]["tolerations"] = [{"operator": "Exists"}]
        return
    out = []
    for taint in rng.sample(taints, min(len(taints), rng.randint(1, 2))):
        if rng.random() < 0.5:
            effect = {"effect": taint["effect"]} if rng.random() < 0.7 else {}  # none: every effect
            out.append({"key": taint["key"], "operator": "Equal", "value": taint["value"], **effect})
        else:
            out.append({"key": taint["key"], "operator": "Exists"})
    pod["spec"]["tolerations"] = out


def _f_topology_spread(ctx: _Context, pod: dict[str, Any]) -> None:
    rng = ctx.rng
    constraints = []
    keys = rng.sample((ZONE_KEY, HOSTNAME_KEY), rng.choice((1, 1, 2)))
    for key in keys:
        hard = rng.random() < 0.6
        c: dict[str, Any] = {
            "maxSkew": rng.choice((1, 1, 2)),
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": pod["metadata"]["labels"]["app"]}},
        }
        if hard and rng.random() < 0.2:
            c["minDomains"] = rng.randint(2, 4)
        if rng.random() < 0.2:
            c["nodeTaintsPolicy"] = "Honor"
        if rng.random() < 0.1:
            c["nodeAffinityPolicy"] = "Ignore"
        if rng.random() < 0.15:  # merged into the selector (by the API server too, since v1.34)
            c["matchLabelKeys"] = ["tier"]
        constraints.append(c)
    pod["spec"]["topologySpreadConstraints"] = constraints


def _pod_affinity_term(ctx: _Context) -> dict[str, Any]:
    term: dict[str, Any] = {
        "labelSelector": {"matchLabels": {"app": ctx.rng.choice(APPS)}},
        "topologyKey": ctx.rng.choice((HOSTNAME_KEY, ZONE_KEY, ZONE_KEY)),
    }
    if ctx.rng.random() < 0.1:  # the v1.34 API server merges it into the selector at creation
        term["matchLabelKeys"] = ["tier"]
    choice = ctx.rng.random()
    if choice < 0.1:  # every namespace (only this seed's holds pods)
        term["namespaceSelector"] = {}
    elif choice < 0.2:  # by the namespace's labels
        term["namespaceSelector"] = {"matchLabels": {"differential": "true"}}
    elif choice < 0.3:
        term["namespaces"] = [ctx.namespace]
    return term


def _f_pod_affinity(ctx: _Context, pod: dict[str, Any]) -> None:
    rng = ctx.rng
    kind = rng.choice(("podAffinity", "podAntiAffinity", "podAntiAffinity"))
    rule: dict[str, Any] = {}
    if rng.random() < 0.5:
        rule["requiredDuringSchedulingIgnoredDuringExecution"] = [_pod_affinity_term(ctx)]
    if rng.random() < 0.7 or not rule:
        rule["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.choice((1, 30, 100)), "podAffinityTerm": _pod_affinity_term(ctx)}
            for _ in range(rng.randint(1, 2))
        ]
    pod["spec"].setdefault("affinity", {})[kind] = rule


def _f_host_port(ctx: _Context, pod: dict[str, Any]) -> None:
    _host_port(ctx.rng, pod)


def _f_gpu(ctx: _Context, pod: dict[str, Any]) -> None:
    _set_gpu(pod, ctx.rng.choice((1, 1, 2, 4)))


def _f_volume(ctx: _Context, pod: dict[str, Any]) -> None:
    usable = sorted(ctx.claims)
    # Mostly a claim bound to a volume; otherwise one nothing can satisfy (unbound or missing).
    claim = ctx.rng.choice(usable) if usable and ctx.rng.random() < 0.7 else ctx.rng.choice(ctx.broken_claims)
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]


def _f_second_container(ctx: _Context, pod: dict[str, Any]) -> None:
    pod["spec"]["containers"].append(
        {
            "name": "side",
            "image": ctx.rng.choice(POD_IMAGES),
            "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
        }
    )


def _f_big_and_important(ctx: _Context, pod: dict[str, Any]) -> None:
    """Most of some node's cpu at the top priority: preemption, with candidates to choose from."""
    cpu = ctx.rng.choice(ctx.nodes).allocatable_cpu * ctx.rng.choice((5, 7, 9)) // 10
    pod["spec"]["containers"][0].setdefault("resources", {}).setdefault("requests", {})["cpu"] = f"{cpu}m"
    pod["spec"]["priorityClassName"] = "diff-critical"


def _f_runtime_class(ctx: _Context, pod: dict[str, Any]) -> None:
    pod["spec"]["runtimeClassName"] = RUNTIME_CLASS


def _f_host_network(ctx: _Context, pod: dict[str, Any]) -> None:
    """The API server gives every container port a hostPort equal to it."""
    pod["spec"]["hostNetwork"] = True
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": ctx.rng.choice(HOST_PORTS)}]


def _f_init_container(ctx: _Context, pod: dict[str, Any]) -> None:
    pod["spec"]["initContainers"] = [
        {
            "name": "init",
            "image": ctx.rng.choice(POD_IMAGES),
            "resources": {"requests": {"cpu": ctx.rng.choice(("200m", "2")), "memory": "256Mi"}},
        }
    ]


Feature = Callable[[_Context, dict[str, Any]], None]

#: Probability of each feature on a pending pod, applied in this order.
PENDING_FEATURES: tuple[tuple[float, Feature], ...] = (
    (0.15, _f_node_selector),
    (0.2, _f_required_node_affinity),
    (0.25, _f_preferred_node_affinity),
    (0.3, _f_tolerations),
    (0.3, _f_topology_spread),
    (0.3, _f_pod_affinity),
    (0.12, _f_host_port),
    (0.12, _f_gpu),
    (0.15, _f_volume),
    (0.1, _f_second_container),
    (0.08, _f_init_container),
    (0.1, _f_big_and_important),
    (0.06, _f_runtime_class),
    (0.04, _f_host_network),
)
