"""The oracle: upstream kube-scheduler deciding a scenario's pending pods on the real control plane.

One :class:`Oracle` serves many seeds on one control plane, with one kube-scheduler process (default
configuration, ``percentageOfNodesToScore: 100``, no leader election) and one kube-controller-manager
running only the disruption controller (budgets' status is its job; preemption reads it) and the
resourceclaim controller (claims made from templates, reservations and allocations released when pods
go). For a seed:

1. its objects are created (nodes, volumes, claims and pods get their status through the status
   subresource, since there is no kubelet), devices and their classes first, then a probe pod proves
   that the scheduler's cache holds exactly this seed's nodes (its FailedScheduling message counts them;
   in a seed with devices it also claims a device of the seed's class, whose PreFilter would fail while
   the class is unknown to the scheduler);
2. each pending pod in turn: wait until budgets are current, record the cluster state (everything
   kube-scheduler decides on), create the pod and follow a watch until its first decision (bound; or
   PodScheduled=False, with a nominated node if it preempted) and until the cluster is quiet again
   (victims gone and the preemptor bound). A bound pod then gets a running, ready status with a start
   time of its own, as a kubelet would report, and the allocations of its claims are read; a pod left
   unschedulable is deleted, so the next state holds bound pods only and nothing is pending behind the
   next pod's back. Claims generated for pods that are gone are deleted (the garbage collector's part),
   and the oracle waits until no claim is reserved for a pod that is gone;
3. the seed's objects are deleted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml

from testing.controlplane.fixture import ControlPlane
from testing.differential.allocations import pod_allocations
from testing.differential.client import ApiError, Client, Watch
from testing.differential.generator import CLUSTER_OBJECTS, START, Scenario
from testing.differential.verdict import BOUND, NONE, PREEMPTED, UNSCHEDULABLE, Verdict

#: Both schedulers run this (kubesched gets it without the client settings).
SCHEDULER_CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "percentageOfNodesToScore": 100,
}
PROBE_RESOURCE = "example.com/differential-probe"
PROBE_CLAIM = "differential-probe"
DRA_CLUSTER_KINDS = ("ResourceSlice", "DeviceClass")
DRA_NAMESPACED_KINDS = ("ResourceClaimTemplate", "ResourceClaim")
OWN_CLUSTER_OBJECTS = {o["metadata"]["name"] for o in CLUSTER_OBJECTS}


@dataclass
class Step:
    """One pending pod: the state upstream decided on, the pod as created, and the decision."""

    seed: int
    index: int
    pod: str
    state: list[dict[str, Any]]
    created: dict[str, Any]
    upstream: Verdict
    #: The FailedScheduling event's text, when the first attempt failed (it should equal the message).
    event: str | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


class OracleError(RuntimeError):
    """The oracle could not set a seed up or reach a quiet cluster; the message says which step."""


class Oracle:
    """See the module docstring. Use as a context manager, or call :meth:`start` and :meth:`stop`."""

    def __init__(
        self,
        plane: ControlPlane,
        work_dir: Path,
        *,
        timeout: float = 30.0,
        preemptor_timeout: float = 10.0,
        verbosity: int = 2,
    ) -> None:
        self.plane = plane
        self.work_dir = work_dir
        #: For a first decision, and for the cluster to settle.
        self.timeout = timeout
        #: How long a preemptor may take to be bound after its first decision. kube-scheduler v1.34 can leave
        #: it pending until the five-minute flush: when the victim's own required anti-affinity is what
        #: kept it off the node, InterPodAffinity's queueing hint for the deletion says Skip (it looks only
        #: at the preemptor's own terms), and so may every other rejecting plugin's.
        self.preemptor_timeout = preemptor_timeout
        #: kube-scheduler's ``--v`` (its log is ``work_dir/kube-scheduler.log``).
        self.verbosity = verbosity
        self.client = Client(plane.url, plane.admin_token, str(plane.ca_file))
        self._procs: dict[str, subprocess.Popen] = {}

    # -- processes ------------------------------------------------------------------------------------
    def start(self) -> Oracle:
        """Clear the cluster of nodes and pods (kube-scheduler would otherwise place foreign pending pods on
        a seed's nodes, and foreign nodes would count in its decisions), create the objects every seed
        shares, and start the two processes."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self._reset()
        for obj in CLUSTER_OBJECTS:
            self._create(obj)
        config = {
            **SCHEDULER_CONFIG,
            "leaderElection": {"leaderElect": False},
            "clientConnection": {"kubeconfig": str(self.plane.scheduler_kubeconfig), "qps": 200, "burst": 400},
        }
        path = self.work_dir / "kube-scheduler-config.yaml"
        path.write_text(yaml.safe_dump(config))
        bin_dir = self.plane.bin_dir
        self._spawn(
            "kube-scheduler",
            [str(bin_dir / "kube-scheduler"), "--config", str(path), "--secure-port", "0", "--v", str(self.verbosity)],
        )
        self._spawn(
            "kube-controller-manager",
            [
                str(bin_dir / "kube-controller-manager"),
                f"--kubeconfig={self.plane.admin_kubeconfig}",
                "--controllers=disruption,resourceclaim-controller",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                "--secure-port=0",
                "--v=1",
            ],
        )
        return self

    def _spawn(self, name: str, cmd: list[str]) -> None:
        with open(self.work_dir / f"{name}.log", "w") as log:
            self._procs[name] = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )

    def _reset(self) -> None:
        for obj in self.client.list("Pod")[0]:
            self._delete(obj, obj["metadata"]["namespace"])
        for obj in self.client.list("Node")[0]:
            self._delete(obj, None)

    def stop(self) -> None:
        """Stop the processes and remove the shared objects (the control plane may serve other tests)."""
        for proc in self._procs.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
        self._procs.clear()
        for obj in CLUSTER_OBJECTS:
            with contextlib.suppress(ApiError, OSError):
                self.client.delete(obj["kind"], obj["metadata"]["name"])

    def __enter__(self) -> Oracle:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_tail(self, name: str = "kube-scheduler", lines: int = 30) -> str:
        path = self.work_dir / f"{name}.log"
        with contextlib.suppress(OSError):
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        return "(no log)"

    def _check_alive(self) -> None:
        for name, proc in self._procs.items():
            if proc.poll() is not None:
                raise OracleError(f"{name} exited ({proc.returncode}); log tail:\n{self.log_tail(name)}")

    # -- a seed ---------------------------------------------------------------------------------------
    def play(self, scenario: Scenario, on_step: Callable[[Step], None] | None = None) -> list[Step]:
        """Every pending pod of ``scenario``, one at a time (see the module docstring)."""
        self._check_alive()
        steps: list[Step] = []
        try:
            self._setup(scenario)
            self._sync_scheduler(scenario)
            for index, pod in enumerate(scenario.pending):
                step = self._step(scenario, index, pod)
                steps.append(step)
                if on_step is not None:
                    on_step(step)
        finally:
            self._cleanup(scenario)
        return steps

    def _create(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Create ``obj`` (None if it exists); status, which create drops, goes through the subresource."""
        body = {k: v for k, v in obj.items() if k != "status"}
        try:
            created = self.client.create(body)
        except ApiError as err:
            if err.status == 409:
                return None
            raise OracleError(f"creating {obj['kind']} {obj['metadata']['name']}: {err}") from None
        if obj.get("status") and obj["kind"] in (
            "Node",
            "Pod",
            "PersistentVolume",
            "PersistentVolumeClaim",
            "ResourceClaim",
        ):
            meta = obj["metadata"]
            created = self.client.patch(
                obj["kind"], meta["name"], {"status": obj["status"]}, meta.get("namespace"), subresource="status"
            )
        return created

    def _setup(self, scenario: Scenario) -> None:
        cluster_scoped = [o for o in scenario.devices if o["kind"] in DRA_CLUSTER_KINDS]
        namespaced = [o for o in scenario.devices if o["kind"] not in DRA_CLUSTER_KINDS]
        for obj in cluster_scoped:
            self._create(obj)
        self._create(scenario.namespace_object)
        if scenario.devices:
            self._create(_probe_claim(scenario))
        for obj in (
            *scenario.nodes,
            *scenario.volumes,
            *scenario.claims,
            *scenario.budgets,
            *namespaced,
            *scenario.existing,
        ):
            self._create(obj)

    def _sync_scheduler(self, scenario: Scenario) -> None:
        """Wait until kube-scheduler's cache holds this seed's nodes and no others.

        A probe pod only this seed's nodes could take, requesting a resource no node has, fails with
        ``0/N nodes are available: K Insufficient <probe>, ...``: the cache is right when N = K = the
        seed's node count. (The pod informer is ordered, so the seed's bound pods are in by then too.)"""
        names = [n["metadata"]["name"] for n in scenario.nodes]
        deadline = time.monotonic() + 3 * self.timeout
        claim = PROBE_CLAIM if scenario.devices else None
        for attempt in range(1000):
            message = self._probe(scenario.namespace, f"probe-{attempt}", names, claim)
            match = re.match(
                r"0/(\d+) nodes are available: (?:.*?)(\d+) Insufficient " + re.escape(PROBE_RESOURCE), message or ""
            )
            if match and int(match.group(1)) == int(match.group(2)) == len(names):
                return
            if time.monotonic() > deadline:
                raise OracleError(
                    f"kube-scheduler's cache does not hold the {len(names)} nodes of seed "
                    f"{scenario.seed}: probe said {message!r}; log tail:\n{self.log_tail()}"
                )
            time.sleep(0.2)

    def _probe(self, namespace: str, name: str, nodes: list[str], claim: str | None = None) -> str | None:
        probe: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "terminationGracePeriodSeconds": 0,
                "tolerations": [{"operator": "Exists"}],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                                for node in nodes
                            ]
                        }
                    }
                },
                "containers": [
                    {
                        "name": "probe",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {PROBE_RESOURCE: "1"}, "limits": {PROBE_RESOURCE: "1"}},
                    }
                ],
            },
        }
        if claim is not None:
            probe["spec"]["resourceClaims"] = [{"name": "probe", "resourceClaimName": claim}]
        _, rv = self.client.list("Pod", namespace, limit=1)
        message = None
        with self.client.watch("Pod", namespace, rv) as watch:
            self.client.create(probe)
            deadline = time.monotonic() + self.timeout
            while message is None and time.monotonic() < deadline:
                event = watch.next(deadline - time.monotonic())
                if event is not None and event[1]["metadata"]["name"] == name:
                    message = (_scheduled_condition(event[1]) or {}).get("message")
            self.client.delete("Pod", name, namespace)
        return message

    def _cleanup(self, scenario: Scenario) -> None:
        ns, seed_prefix = scenario.namespace, f"s{scenario.seed}-"
        for kind in ("Pod", "PodDisruptionBudget", "PersistentVolumeClaim", *DRA_NAMESPACED_KINDS):
            for obj in self.client.list(kind, ns)[0]:
                self._delete(obj, ns)
        for kind in ("PersistentVolume", "Node", *DRA_CLUSTER_KINDS):
            for obj in self.client.list(kind)[0]:
                if obj["metadata"]["name"].startswith(seed_prefix):
                    self._delete(obj, None)

    def _delete(self, obj: dict[str, Any], namespace: str | None) -> None:
        """Delete at once: protection finalizers would wait for controllers this plane does not run."""
        kind, name = obj["kind"], obj["metadata"]["name"]
        if obj["metadata"].get("finalizers"):
            with contextlib.suppress(ApiError):
                self.client.patch(kind, name, {"metadata": {"finalizers": None}}, namespace)
        self.client.delete(kind, name, namespace)

    # -- a pending pod --------------------------------------------------------------------------------
    def _step(self, scenario: Scenario, index: int, pod: dict[str, Any]) -> Step:
        ns, name = scenario.namespace, pod["metadata"]["name"]
        self._wait_budgets(ns)
        state, pods_rv = self.snapshot(scenario)
        started = time.monotonic()
        with self.client.watch("Pod", ns, pods_rv) as watch:
            created = self._create(pod)
            assert created is not None, f"pod {ns}/{name} already exists"
            follow = _Follower(name)
            self._follow(watch, follow, ns)
            if follow.first is not None and follow.first.kind == PREEMPTED:
                self._settle_preemption(watch, follow, ns, created["metadata"]["uid"])
        seconds = time.monotonic() - started
        verdict = follow.verdict()
        if verdict.kind == BOUND and pod["spec"].get("resourceClaims"):
            verdict = dataclasses.replace(verdict, devices=self._allocations(ns, name))
        step = Step(scenario.seed, index, name, state, _clean(created), verdict, seconds=seconds, notes=follow.notes)
        if follow.first is None:
            step.notes.append(f"no decision within {self.timeout:.0f}s")
            self.client.delete("Pod", name, ns)
        if follow.bound_to is not None:
            start = START + timedelta(seconds=index + 1)  # after every existing pod's, and distinct
            try:
                self.client.patch("Pod", name, {"status": _running_status(start)}, ns, subresource="status")
            except ApiError as err:  # gone since it was bound: the next states simply lack it
                if err.status != 404:
                    raise
                step.notes.append("deleted after it was bound, before it could be marked running")
        if step.upstream.kind in (UNSCHEDULABLE, PREEMPTED):
            step.event = self._failed_scheduling_event(ns, name)
            if step.event is not None and step.event != step.upstream.message:
                step.notes.append(f"event text differs from the condition: {step.event!r}")
        if scenario.devices:
            self._settle_claims(ns)
        return step

    def _allocations(self, ns: str, name: str) -> dict[str, dict[str, Any]]:
        """The allocations of a bound pod's claims (written by PreBind, before the binding)."""
        pod = self.client.get("Pod", name, ns)
        claims = {c["metadata"]["name"]: c for c in self.client.list("ResourceClaim", ns)[0]}
        return pod_allocations(pod, claims)

    def _settle_claims(self, ns: str) -> None:
        """Delete the claims of pods that are gone (as the garbage collector would), then wait until the
        resourceclaim controller has released every reservation of a pod that is gone, so that the next
        state holds no claim in the middle of being freed."""
        deadline = time.monotonic() + self.timeout
        while True:
            pods = {p["metadata"]["uid"] for p in self.client.list("Pod", ns)[0]}
            claims = self.client.list("ResourceClaim", ns)[0]
            for claim in claims:
                owners = [o for o in claim["metadata"].get("ownerReferences") or () if o.get("kind") == "Pod"]
                reserved = (claim.get("status") or {}).get("reservedFor")
                if owners and all(o["uid"] not in pods for o in owners) and not reserved:
                    self._delete(claim, ns)
            stale = [
                c["metadata"]["name"]
                for c in claims
                if any(r.get("uid") not in pods for r in (c.get("status") or {}).get("reservedFor") or ())
            ]
            if not stale:
                return
            if time.monotonic() > deadline:
                raise OracleError(
                    f"claims {stale} of {ns} still reserved for pods that are gone after "
                    f"{self.timeout:.0f}s; log tail:\n{self.log_tail('kube-controller-manager')}"
                )
            time.sleep(0.1)

    def _follow(self, watch: Watch, follow: _Follower, ns: str) -> None:
        """Read pod events until the first decision and a quiet cluster (or the timeouts)."""
        deadline = time.monotonic() + self.timeout
        deleted = False
        while not follow.finished and (left := deadline - time.monotonic()) > 0:
            event = watch.next(min(left, 1.0))
            if event is None:
                continue
            decided = follow.first is not None
            follow.observe(*event)
            if not decided and follow.first is not None and follow.first.kind == PREEMPTED:
                deadline = min(deadline, time.monotonic() + self.preemptor_timeout)
            if follow.wants_delete and not deleted:
                self.client.delete("Pod", follow.name, ns)
                deleted = True
        if not follow.finished and follow.first is not None and not deleted:
            # A preemptor not bound in time: its first decision is what counts; take it away.
            follow.notes.append(f"preemptor not bound {self.preemptor_timeout:.0f}s after its first decision; deleted")
            self.client.delete("Pod", follow.name, ns)
            self._wait_gone(watch, follow)

    def _settle_preemption(self, watch: Watch, follow: _Follower, ns: str, uid: str) -> None:
        """Until every victim the scheduler reports (a ``Preempted`` event naming the preemptor) is gone.

        The preemptor can be bound before the last victim is deleted (v1.34 deletes it after lifting the
        gate on the preemptor, which may then fit elsewhere), so its binding does not mean quiet."""
        deadline = time.monotonic() + self.timeout
        selector = "reason=Preempted"
        reported: set[str] = set()
        steady_since = time.monotonic()
        while time.monotonic() < deadline:
            while (event := watch.next(0.05)) is not None:
                follow.observe(*event)
            events = self.client.list("Event", ns, fieldSelector=selector)[0]
            now = {e["involvedObject"]["name"] for e in events if uid in (e.get("message") or "")}
            if now != reported or set(follow.victims) != now:
                reported, steady_since = now, time.monotonic()
            elif reported and time.monotonic() - steady_since >= 0.5:
                return
        follow.notes.append(
            f"victims not settled after {self.timeout:.0f}s: reported {sorted(reported)}, "
            f"deleted {sorted(follow.victims)}"
        )

    def _wait_gone(self, watch: Watch, follow: _Follower) -> None:
        deadline = time.monotonic() + self.timeout
        while not follow.gone and (left := deadline - time.monotonic()) > 0:
            event = watch.next(min(left, 1.0))
            if event is not None:
                follow.observe(*event)

    def _failed_scheduling_event(self, ns: str, name: str) -> str | None:
        """The note of the pod's first FailedScheduling event (events are written asynchronously)."""
        deadline = time.monotonic() + 5.0
        selector = f"involvedObject.name={name},reason=FailedScheduling"
        while time.monotonic() < deadline:
            events = self.client.list("Event", ns, fieldSelector=selector)[0]
            if events:
                first = min(events, key=lambda e: e.get("eventTime") or e.get("firstTimestamp") or "")
                return str(first.get("message") or first.get("note") or "")
            time.sleep(0.1)
        return None

    def _wait_budgets(self, ns: str) -> None:
        """Until every budget's status counts the namespace's pods as they are now."""
        deadline = time.monotonic() + self.timeout
        while True:
            pdbs = self.client.list("PodDisruptionBudget", ns)[0]
            if not pdbs:
                return
            pods = self.client.list("Pod", ns)[0]
            if all(_budget_current(pdb, pods) for pdb in pdbs):
                return
            if time.monotonic() > deadline:
                raise OracleError(
                    f"budgets of {ns} not current after {self.timeout:.0f}s: {[p.get('status') for p in pdbs]}"
                )
            time.sleep(0.1)

    def snapshot(self, scenario: Scenario) -> tuple[list[dict[str, Any]], str]:
        """Every object the scheduler decides on (the seed's own), and the pod list's resourceVersion."""
        ns, prefix = scenario.namespace, f"s{scenario.seed}-"
        state: list[dict[str, Any]] = []
        for kind in ("PriorityClass", "StorageClass", "RuntimeClass"):
            state += [o for o in self.client.list(kind)[0] if o["metadata"]["name"] in OWN_CLUSTER_OBJECTS]
        namespace = self.client.get("Namespace", ns)
        state.append({"apiVersion": "v1", "kind": "Namespace", **namespace})
        for kind in ("Node", "PersistentVolume"):
            state += [o for o in self.client.list(kind)[0] if o["metadata"]["name"].startswith(prefix)]
        for kind in DRA_CLUSTER_KINDS:
            state += [o for o in self.client.list(kind)[0] if o["metadata"]["name"].startswith(prefix)]
        for kind in ("PersistentVolumeClaim", "PodDisruptionBudget", *DRA_NAMESPACED_KINDS):
            state += [o for o in self.client.list(kind, ns)[0] if o["metadata"]["name"] != PROBE_CLAIM]
        pods, rv = self.client.list("Pod", ns)
        state += pods
        return [_clean(o) for o in state], rv


class _Follower:
    """Reads one pending pod's watch events: its first decision, the victims, and when all is quiet."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.first: Verdict | None = None
        self.bound_to: str | None = None
        self.victims: list[str] = []
        self.terminating: set[str] = set()
        self.gone = False
        self.notes: list[str] = []

    def observe(self, kind: str, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if name != self.name:
            if kind == "DELETED":
                self.victims.append(name)
                self.terminating.discard(name)
            elif obj["metadata"].get("deletionTimestamp"):
                self.terminating.add(name)
            return
        if kind == "DELETED":
            self.gone = True
            return
        node = obj["spec"].get("nodeName")
        if node:
            self.bound_to = node
        condition = _scheduled_condition(obj)
        if self.first is None:
            if node:
                self.first = Verdict(BOUND, node)
            elif condition is not None and condition.get("status") == "False":
                nominated = (obj.get("status") or {}).get("nominatedNodeName")
                self.first = Verdict(PREEMPTED if nominated else UNSCHEDULABLE, nominated, condition.get("message"))

    @property
    def wants_delete(self) -> bool:
        """A pod left unschedulable is taken away once its decision is known."""
        return self.first is not None and self.first.kind == UNSCHEDULABLE

    @property
    def finished(self) -> bool:
        if self.first is None:
            return False
        if self.first.kind == UNSCHEDULABLE:
            return self.gone
        return self.bound_to is not None and not self.terminating

    def verdict(self) -> Verdict:
        if self.first is None:
            return Verdict(NONE)
        if self.first.kind == PREEMPTED:
            return Verdict(PREEMPTED, self.first.node, self.first.message, tuple(sorted(self.victims)))
        if self.victims:
            self.notes.append(f"pods deleted without a preemption: {sorted(self.victims)}")
        return self.first


def _scheduled_condition(pod: dict[str, Any]) -> dict[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            return dict(condition)
    return None


def _running_status(start: Any) -> dict[str, Any]:
    stamp = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "phase": "Running",
        "startTime": stamp,
        "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "True", "lastTransitionTime": stamp},
        ],
    }


def _labels_match(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """matchLabels only: the generator's budgets use nothing else."""
    return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


def _budget_current(pdb: dict[str, Any], pods: list[dict[str, Any]]) -> bool:
    """Whether kube-controller-manager has counted ``pods`` into ``pdb``'s status yet."""
    status = pdb.get("status") or {}
    if status.get("observedGeneration") != pdb["metadata"].get("generation"):
        return False
    matching = [p for p in pods if _labels_match(pdb["spec"].get("selector") or {}, p["metadata"].get("labels") or {})]
    healthy = sum(1 for p in matching if not p["metadata"].get("deletionTimestamp") and _ready(p))
    if status.get("currentHealthy", 0) != healthy:
        return False
    return "minAvailable" not in pdb["spec"] or status.get("expectedPods", 0) == len(matching)


def _ready(pod: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _probe_claim(scenario: Scenario) -> dict[str, Any]:
    """A claim for one device of the seed's class: the probe names it, so that its PreFilter fails while
    kube-scheduler does not know the class yet (it is never allocated: Fit rejects the probe first)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": PROBE_CLAIM, "namespace": scenario.namespace},
        "spec": {"devices": {"requests": [{"name": "probe", "exactly": {"deviceClassName": f"s{scenario.seed}-gpu"}}]}},
    }


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    """Without managedFields (bulk nobody reads); everything else as the API server returned it."""
    meta = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    return {**obj, "metadata": meta}
