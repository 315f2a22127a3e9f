"""Small out-of-tree plugins for framework and scheduler tests, enabled as ``tests.fakeplugins:Class``.

Each one is a plain Python class written the way a user would write one (per-node forms only, no
batch forms), built by the registry as ``Class(args, handle)``. Behaviour is steered through the
plugin args (a raw dict out of tree) or, for plugins a test must drive after start-up (Permit), through
the instance found in ``scheduler.profiles[...].plugins[name]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import ActionType, ClusterEvent, NodeScore, PreFilterResult
from kubesched.framework.status import Code, Status

MODULE = "tests.fakeplugins"


def ref(cls: type) -> str:
    """The name a config uses to enable ``cls`` (its import path)."""
    return f"{MODULE}:{cls.__name__}"


class _Base:
    """Records the calls it gets, so tests can check what ran and in which order."""

    name = ""

    def __init__(self, args: Any, handle: Any) -> None:
        self.args: dict[str, Any] = dict(args or {})
        self.handle = handle
        self.calls: list[tuple[str, ...]] = []


class PermitPlugin(_Base):
    """Permit: ``mode`` in args is "wait" (with ``timeout`` seconds), "reject", "error" or "allow"."""

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        self.calls.append(("permit", pod.name, node_name))
        mode = self.args.get("mode", "wait")
        if mode == "wait":
            return Status(Code.WAIT), float(self.args.get("timeout", 10))
        if mode == "reject":
            return Status(Code.UNSCHEDULABLE, ("permit says no",)), 0.0
        if mode == "error":
            return Status(Code.ERROR, ("permit broke",)), 0.0
        return None, 0.0

    def allow(self, uid: str) -> None:
        """What a co-scheduling plugin does once the gang is complete."""
        waiting = self.handle.get_waiting_pod(uid)
        assert waiting is not None, f"pod {uid} is not waiting"
        waiting.allow(self.name)

    def reject(self, uid: str, message: str = "gang incomplete") -> None:
        waiting = self.handle.get_waiting_pod(uid)
        assert waiting is not None, f"pod {uid} is not waiting"
        waiting.reject(self.name, message)


class PendingPreBind(_Base):
    """PreBind answers with a PendingStatus per pod; tests resolve it by pod name."""

    name = "PendingPreBind"

    def __init__(self, args: Any, handle: Any) -> None:
        super().__init__(args, handle)
        self.pending: dict[str, Any] = {}

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        from kubesched.framework.pending import PendingStatus

        self.pending[pod.name] = PendingStatus()
        return self.pending[pod.name]


class FailingReserve(_Base):
    """Reserve: rejects (or errors with ``mode: error``) pods whose name is in ``pods`` (all if absent)."""

    def _targets(self, pod: Pod) -> bool:
        pods = self.args.get("pods")
        return pods is None or pod.name in pods

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("reserve", pod.name, node_name))
        if not self._targets(pod):
            return None
        if self.args.get("mode") == "error":
            return Status(Code.ERROR, ("reserve broke",))
        return Status(Code.UNSCHEDULABLE, ("no room in the reservation book",))

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(("unreserve", pod.name, node_name))


class RecordingReserve(_Base):
    """Reserve that always succeeds, recording reserve/unreserve calls (order checks)."""

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("reserve", pod.name, node_name))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(("unreserve", pod.name, node_name))


class StateKeeper(_Base):
    """Reserve writes a mark into the CycleState; PostBind reads it back (one state through both cycles)."""

    MARK = "StateKeeper/mark"

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        state.write(self.MARK, pod.name)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(("unreserve", pod.name, node_name))

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(("post_bind", pod.name, state.get(self.MARK)))


class LabelFilter(_Base):
    """Filter (per-node only): nodes must carry label ``key`` (args; default "fake") set to "yes".

    ``code`` in args picks the rejection code ("Unschedulable" or "UnschedulableAndUnresolvable");
    ``error_on`` names a node on which it returns an Error status instead.
    """

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.calls.append(("filter", pod.name, node_info.name))
        if node_info.name == self.args.get("error_on"):
            return Status(Code.ERROR, ("filter broke",))
        if node_info.node is not None and node_info.node.labels.get(self.args.get("key", "fake")) == "yes":
            return None
        code = (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            if self.args.get("code") == "UnschedulableAndUnresolvable"
            else Code.UNSCHEDULABLE
        )
        return Status(code, (f"node(s) lacked label {self.args.get('key', 'fake')}",))

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL),)


class RejectAllFilter(_Base):
    """Filter that rejects every node with ``reason`` (args); registers no events (wildcard)."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.calls.append(("filter", pod.name, node_info.name))
        return Status(Code.UNSCHEDULABLE, (self.args.get("reason", "rejected by RejectAllFilter"),))


class RejectAllFilterNoEvents(_Base):
    """Filter that rejects every node and registers no cluster event at all (an empty list)."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status(Code.UNSCHEDULABLE, ("never",))

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return ()


class RejectsUntilNodeDeleted(_Base):
    """Filter rejecting every node; registers only node deletions."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status(Code.UNSCHEDULABLE, ("waiting for a node to go",))

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return [ClusterEvent("Node", ActionType.DELETE)]


class RejectsUntilPodAdded(RejectsUntilNodeDeleted):
    """Filter rejecting every node; registers only pod additions."""

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return [ClusterEvent("Pod", ActionType.ADD)]


class RejectsUntilAttachmentDeleted(RejectsUntilNodeDeleted):
    """Filter rejecting every node; registers only VolumeAttachment deletions (as v1.34's CSI limits)."""

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return [ClusterEvent("storage.k8s.io/VolumeAttachment", ActionType.DELETE)]


class NameScore(_Base):
    """Score (per-node) with normalize_score: raw score = ``scores[node]`` from args (default 0).

    With ``normalize: true`` the scores are rescaled so the best is 100 (kube-scheduler's
    DefaultNormalizeScore); ``bad_normalize`` makes NormalizeScore return an out-of-range score.
    """

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        self.calls.append(("score", pod.name, node_info.name))
        return int(self.args.get("scores", {}).get(node_info.name, 0)), None

    def score_extensions(self) -> NameScore | None:
        return self if self.args.get("normalize") or self.args.get("bad_normalize") else None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        self.calls.append(("normalize",))
        if self.args.get("bad_normalize"):
            for ns in scores:
                ns.score = 101
            return None
        best = max((ns.score for ns in scores), default=0)
        for ns in scores:
            ns.score = 100 * ns.score // best if best else 0
        return None


class PreFilterNodes(_Base):
    """PreFilter returning ``PreFilterResult(nodes)`` (args ``nodes``); ``skip: true`` returns Skip."""

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        self.calls.append(("pre_filter", pod.name))
        if self.args.get("skip"):
            return None, Status(Code.SKIP)
        nodes = self.args.get("nodes")
        return (PreFilterResult(frozenset(nodes)) if nodes is not None else None), None

    def pre_filter_extensions(self) -> None:
        return None


class PreFilterNodesB(PreFilterNodes):
    """A second PreFilterResult plugin, to check how results of two plugins merge."""


class PostFilterSays(_Base):
    """PostFilter answering a fixed status: args ``code`` (a Code name, default Unschedulable) and ``reason``."""

    def post_filter(self, state: CycleState, pod: Pod, statuses: Any) -> tuple[None, Status]:
        self.calls.append(("post_filter", pod.name))
        return None, Status(Code[self.args.get("code", "UNSCHEDULABLE")], (self.args.get("reason", "no"),))


class PostFilterSaysToo(PostFilterSays):
    """A second one, to see which of two ran."""


class SkippingFilter(_Base):
    """PreFilter returning Skip plus a Filter that rejects everything: the Filter must never run."""

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.calls.append(("filter", pod.name, node_info.name))
        return Status(Code.UNSCHEDULABLE, ("SkippingFilter ran although skipped",))


class PreFilterStatus(_Base):
    """PreFilter returning a fixed status: args ``code`` (a Code name) and ``reason``."""

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        self.calls.append(("pre_filter", pod.name))
        code = Code[self.args.get("code", "UNSCHEDULABLE")]
        return None, Status(code, (self.args.get("reason", "prefilter said so"),))

    def pre_filter_extensions(self) -> None:
        return None


class AlwaysErrorPreFilter(_Base):
    """PreFilter that always fails with an Error: a pod it sees would be retried forever."""

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        self.calls.append(("pre_filter", pod.name))
        return None, Status(Code.ERROR, ("boom",))

    def pre_filter_extensions(self) -> None:
        return None


class ErrorBinder(_Base):
    """Bind plugin that fails for pods named in ``pods`` (all if absent) and binds the others itself."""

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("bind", pod.name, node_name))
        pods = self.args.get("pods")
        if pods is None or pod.name in pods:
            return Status(Code.ERROR, ("binding exploded",))
        self.handle.cluster.bind(pod.namespace, pod.name, node_name, uid=pod.uid)
        return None


class SkipBinder(_Base):
    """Bind plugin that declines every pod (Skip), leaving the next binder to bind."""

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.calls.append(("bind", pod.name, node_name))
        return Status(Code.SKIP)


class ExtraSort(_Base):
    """A second QueueSort plugin (a profile may only have one)."""

    def less(self, a: Any, b: Any) -> bool:
        return False


class NoName:
    """A plugin class whose instances get their name from the registry (the import path)."""

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


class MultiPointPlugin(_Base):
    """Filter + Score in one class, to check multiPoint expansion and weights."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return int(self.args.get("scores", {}).get(node_info.name, 10)), None

    def score_extensions(self) -> None:
        return None

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (ClusterEvent("Node", ActionType.ADD),)


# -- a scheduler on an embedded cluster, driven step by step ---------------------------------------
API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def config_dict(*profiles: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A KubeSchedulerConfiguration dict with the given profiles (the default one when none)."""
    cfg: dict[str, Any] = dict(API, **top)
    if profiles:
        cfg["profiles"] = [dict({"schedulerName": "default-scheduler"}, **p) for p in profiles]
    return cfg


def profile_with(plugins: dict[str, Any], plugin_config: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A profile dict: ``plugins`` as in YAML, ``plugin_config`` as {name: args}."""
    prof: dict[str, Any] = {"plugins": plugins, **extra}
    if plugin_config:
        prof["pluginConfig"] = [{"name": n, "args": a} for n, a in plugin_config.items()]
    return prof


class Harness:
    """A :class:`Scheduler` on an :class:`EmbeddedCluster` and a :class:`VirtualClock`, stepped by hand."""

    def __init__(
        self,
        config: dict[str, Any] | None = None,
        *,
        tie_break: str = "name",
        seed: int = 0,
        objects: Sequence[dict[str, Any]] = (),
        version: str | None = None,
    ) -> None:
        """``version``: the emulated kube-scheduler version of the cluster and the scheduler (the newest
        when None)."""
        import random

        from kubesched.clock import VirtualClock
        from kubesched.config import load_config
        from kubesched.config.features import feature_gates
        from kubesched.embedded.apiserver import EmbeddedCluster
        from kubesched.recording import FullRecorder
        from kubesched.scheduler import Scheduler
        from kubesched.sim.driver import Driver

        features = feature_gates(version)
        self.clock = VirtualClock()
        self.cluster = EmbeddedCluster(clock=self.clock.now, features=features)
        for obj in objects:
            self.cluster.create(obj)
        self.scheduler = Scheduler(
            self.cluster,
            load_config(config or dict(API), features=features),
            clock=self.clock,
            tie_break=tie_break,
            rng=random.Random(seed),
        )
        self.recorder = FullRecorder()
        self.scheduler.recorder = self.recorder
        # The simulator's loop, without its loop detection: tests decide themselves when to stop.
        self.driver = Driver(self.cluster, self.scheduler, self.clock, detect_loops=False)
        self.driver.start()

    @property
    def records(self) -> list[Any]:
        """Every finished attempt so far, as trace records."""
        return list(self.recorder.records)

    def plugin(self, cls: type, profile: str = "default-scheduler") -> Any:
        return self.scheduler.profiles[profile].plugins[ref(cls)]

    def create(self, *objs: dict[str, Any]) -> None:
        for obj in objs:
            self.cluster.create(obj)
        self.driver.drain()

    def step(self) -> bool:
        """One scheduling cycle, then every binding task and the watch events they caused."""
        popped = self.scheduler.schedule_next()
        self.settle()
        return popped

    def settle(self) -> None:
        """Deliver every watch event and run every binding task (the clock stays where it is)."""
        self.driver.drain()

    def run(self, max_cycles: int = 50) -> int:
        """Schedule until the active queue is empty (no clock movement); returns the cycles run."""
        n = 0
        while n < max_cycles and self.step():
            n += 1
        return n

    def pod(self, name: str, namespace: str = "default") -> dict[str, Any]:
        return self.cluster.get("Pod", namespace, name)

    def node_of(self, name: str) -> str | None:
        return (self.pod(name).get("spec") or {}).get("nodeName")

    def condition(self, name: str) -> dict[str, Any]:
        """The pod's PodScheduled condition ({} when it has none)."""
        for c in (self.pod(name).get("status") or {}).get("conditions") or []:
            if c.get("type") == "PodScheduled":
                return dict(c)
        return {}

    def events(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.cluster.list("Event")[0] if (e.get("involvedObject") or {}).get("name") == name]

    def where(self, name: str) -> str | None:
        """Which sub-queue holds the pod (None when it is in none)."""
        uid = self.pod(name)["metadata"]["uid"]
        return self.scheduler.queue.queue_of(uid)


class NamedScore(NameScore):
    """A Score plugin that names itself (not after its import path)."""

    name = "NamedScore"


class FactoryBuilt(_Base):
    """Built through its ``new`` classmethod, which marks the instance."""

    built_by_new = False

    @classmethod
    def new(cls, args: Any, handle: Any) -> FactoryBuilt:
        plugin = cls(args, handle)
        plugin.built_by_new = True
        return plugin

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None
