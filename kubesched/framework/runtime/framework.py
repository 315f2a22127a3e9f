"""The framework runtime: one profile's plugins, wired to the extension points and run in order.

A :class:`Framework` is built from a profile (the effective plugin sets and their args) and a
registry of plugin factories; which plugin sits at which point is worked out in
:mod:`kubesched.framework.extension_points`. It runs each extension point the way kube-scheduler
does (stop at the first rejection, Skip bookkeeping, score weights, permit waiting) and doubles as
the ``Handle`` plugins receive. Filter and Score prefer the plugins' batch forms, so a pass over
thousands of nodes costs a few NumPy operations per plugin; they run in :mod:`.filtering` and
:mod:`.scoring`, and every plugin call goes through the guards of :mod:`.calls`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.snapshot import NodeInfoList, Snapshot
from kubesched.cluster.listers import Listers
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.framework.capabilities import FitChecks, FitFilterPlugin, reads_node_only
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import Extender
from kubesched.framework.extension_points import FrameworkError, PluginLists, plugins_needed
from kubesched.framework.handle import EventRecorder, NoEvents, Parallelizer, PluginFactory, no_pods
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterPlugin,
    BatchScorePlugin,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Plugin,
    PostFilterResult,
    PreEnqueuePlugin,
    PreFilterResult,
    QueueSortPlugin,
    ScorePlugin,
)
from kubesched.framework.runtime import filtering, scoring
from kubesched.framework.runtime.calls import (
    call_plugin,
    call_status,
    log_plugin_failure,
    permit_answer,
    shown,
    timed_extension_point,
)
from kubesched.framework.runtime.filtering import FilterOutcome
from kubesched.framework.runtime.prebind import run_pre_bind
from kubesched.framework.runtime.scoring import ScoreOutcome
from kubesched.framework.status import Code, Status, status_label
from kubesched.framework.waiting_pods import WaitingPod, WaitingPods
from kubesched.metrics import FrameworkMetrics

if TYPE_CHECKING:
    from kubesched.clock import Clock
    from kubesched.cluster.protocol import Cluster
    from kubesched.config.profiles import Profile
    from kubesched.framework.handle import PodNominator

log = logging.getLogger(__name__)

#: Permit plugins may not hold a pod longer than this.
MAX_PERMIT_TIMEOUT = 15 * 60.0

#: What a plugin that names no events is assumed to care about: everything.
ALL_EVENTS = ClusterEvent("*", ActionType.ALL, "WildCardEvent")


class Framework:
    """One scheduling profile: its plugins per extension point, score weights and waiting pods."""

    #: Extension point and plugin timings (set by the scheduler; None times nothing).
    metrics: FrameworkMetrics | None = None

    def __init__(
        self,
        profile: Profile,
        registry: Mapping[str, PluginFactory],
        *,
        cluster: Cluster,
        clock: Clock,
        nominator: PodNominator,
        snapshot_fn: Callable[[], Snapshot],
        listers: Listers | None = None,
        parallelism: int = 16,
        percentage_of_nodes_to_score: int | None = None,
        extra_handle: Mapping[str, Any] | None = None,
        extenders: Sequence[Extender] = (),
        event_recorder: EventRecorder | None = None,
        pod_lister: Callable[[str | None, Mapping[str, str] | None], Iterable[Pod]] = no_pods,
        features: FeatureGates | None = None,
    ) -> None:
        self.profile_name = profile.scheduler_name
        self._features = features or feature_gates()
        #: v1.34 names the PreFilter plugins that narrowed the nodes in sorted order (profile order before).
        self._sorted_pre_filter_plugins = self._features.at_least("1.34")
        self.percentage_of_nodes_to_score = (
            profile.percentage_of_nodes_to_score
            if profile.percentage_of_nodes_to_score is not None
            else percentage_of_nodes_to_score
        )
        self._cluster = cluster
        self._clock = clock
        self._nominator = nominator
        self._snapshot_fn = snapshot_fn
        self._listers = listers if listers is not None else Listers()
        self._parallelism = parallelism
        self.extra = dict(extra_handle or {})
        self._extenders = list(extenders)
        self._event_recorder: EventRecorder = event_recorder if event_recorder is not None else NoEvents()
        self._pod_lister = pod_lister
        self._parallelizer = Parallelizer(parallelism)
        self.waiting_pods = WaitingPods()
        self.warnings: list[str] = []
        self._index_plugins(profile, registry)

    def _index_plugins(self, profile: Profile, registry: Mapping[str, PluginFactory]) -> None:
        """Build the profile's plugins and index them once: per extension point, by weight, by batch form
        and capability, and by the events they registered."""
        self.plugins: dict[str, Plugin] = self._build_plugins(profile, registry)
        self.lists = PluginLists.build(profile.plugins, self.plugins)
        self.points: dict[str, list[Plugin]] = self.lists.by_point()
        self._check_points()
        self.score_weights = self._score_weights(profile)

        self._pre_filter_exts: list[tuple[Plugin, Any]] | None = None
        # Batch forms and capabilities, decided once: protocol isinstance checks are slow.
        self.batch_filters = {p.name: p for p in self.plugins.values() if isinstance(p, BatchFilterPlugin)}
        self.batch_scorers = {p.name: p for p in self.plugins.values() if isinstance(p, BatchScorePlugin)}
        self._node_only_filters = frozenset(p.name for p in self.lists.filter if reads_node_only(p))
        self._fit_filters = {p.name: p for p in self.lists.filter if isinstance(p, FitFilterPlugin)}

        #: Per plugin: the events it registered, each with its queueing hint (None: always queue).
        self.enqueue_hints: dict[str, list[ClusterEventWithHint]] = {
            plugin.name: _events_of(plugin) for plugin in self.plugins.values()
        }
        #: Per plugin: the events it registered.
        self.enqueue_events: dict[str, list[ClusterEvent]] = {
            name: [e.event for e in events] for name, events in self.enqueue_hints.items()
        }

    def _build_plugins(self, profile: Profile, registry: Mapping[str, PluginFactory]) -> dict[str, Plugin]:
        """Every plugin the profile enables anywhere, built by its factory with this framework as handle."""
        plugins: dict[str, Plugin] = {}
        for name in plugins_needed(profile.plugins):
            factory = registry.get(name)
            if factory is None:
                raise FrameworkError(f'profiles[{self.profile_name}]: plugin "{name}" does not exist')
            args = profile.plugin_config.get(name)
            try:
                plugins[name] = factory(args, self)
            except FrameworkError:
                raise
            except Exception as err:
                raise FrameworkError(f'plugin "{name}": building it failed: {type(err).__name__}: {err}') from err
        return plugins

    def _score_weights(self, profile: Profile) -> dict[str, int]:
        weights: dict[str, int] = {}
        for ref in (*profile.plugins.score.enabled, *profile.plugins.multi_point.enabled):
            # Keyed by the built plugin's own name: an import-path plugin is configured as
            # "module:Class" but reports (and is looked up by) the name it declares.
            scorer = self.plugins.get(ref.name)
            if isinstance(scorer, ScorePlugin) and scorer.name not in weights:
                weights[scorer.name] = ref.weight or 1
        return weights

    def _check_points(self) -> None:
        if len(self.points["queue_sort"]) != 1:
            raise FrameworkError(
                f"only one queue sort plugin required for profile with scheduler name "
                f'"{self.profile_name}", but got {len(self.points["queue_sort"])}'
            )
        if not self.points["bind"]:
            raise FrameworkError(
                f'at least one bind plugin is needed for profile with scheduler name "{self.profile_name}"'
            )

    # -- handle --------------------------------------------------------------------------------------
    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot_fn()

    @property
    def cluster(self) -> Cluster:
        return self._cluster

    @property
    def listers(self) -> Listers:
        return self._listers

    @property
    def nominator(self) -> PodNominator:
        return self._nominator

    @property
    def clock(self) -> Callable[[], datetime]:
        return self._clock.now

    def call_later(self, delay: float, callback: Callable[[], None]) -> Any:
        """Run ``callback`` after ``delay`` seconds of the scheduler's clock (virtual in simulations)."""
        return self._clock.call_later(delay, callback)

    @property
    def parallelism(self) -> int:
        return self._parallelism

    @property
    def extenders(self) -> list[Extender]:
        """The configured extenders (ignorable ones last), shared by every profile."""
        return self._extenders

    def snapshot_shared_lister(self) -> Snapshot:
        return self._snapshot_fn()

    @property
    def event_recorder(self) -> EventRecorder:
        return self._event_recorder

    @property
    def parallelizer(self) -> Parallelizer:
        return self._parallelizer

    def list_pods(self, namespace: str | None = None, labels: Mapping[str, str] | None = None) -> list[Pod]:
        return list(self._pod_lister(namespace, labels))

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        for waiting in self.waiting_pods.all():
            callback(waiting)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        waiting = self.waiting_pods.get(uid)
        if waiting is None:
            return False
        waiting.reject("", "removed")
        return True

    # -- queue ---------------------------------------------------------------------------------------
    @property
    def queue_sort(self) -> QueueSortPlugin:
        return self.lists.queue_sort[0]

    @property
    def pre_enqueue_plugins(self) -> list[PreEnqueuePlugin]:
        return self.lists.pre_enqueue

    def has_filter_plugins(self) -> bool:
        return bool(self.points["filter"])

    def has_post_filter_plugins(self) -> bool:
        return bool(self.points["post_filter"])

    def has_score_plugins(self) -> bool:
        return bool(self.points["score"])

    def plugin_names(self, point: str) -> list[str]:
        return [p.name for p in self.points[point]]

    def active_pre_filter_extensions(self, state: CycleState) -> list[str]:
        """PreFilter plugins not skipped in ``state`` whose extensions AddPod/RemovePod would run."""
        self._run_pre_filter_extension_list()
        assert self._pre_filter_exts is not None
        return [plugin.name for plugin, _ in self._pre_filter_exts if plugin.name not in state.skip_filter_plugins]

    def _run_pre_filter_extension_list(self) -> None:
        if self._pre_filter_exts is None:
            # Asked once: preemption calls the extensions for every pod it moves on every node it tries.
            exts: list[tuple[Plugin, Any]] = []
            for plugin in self.lists.pre_filter:
                ext, status = call_plugin(lambda p=plugin: (p.pre_filter_extensions(), None))
                if status is not None:  # logged; a plugin whose extensions fail has none to run
                    continue
                if ext is not None:
                    exts.append((plugin, ext))
            self._pre_filter_exts = exts

    # -- PreFilter -----------------------------------------------------------------------------------
    @timed_extension_point("PreFilter")
    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod
    ) -> tuple[PreFilterResult | None, Status | None, list[str]]:
        """The merged PreFilterResult, the status that stops the cycle (None to go on), and the
        plugins whose result narrowed the nodes (sorted from v1.34, in profile order before)."""
        result: PreFilterResult | None = None
        with_nodes: list[str] = []
        returned: Status | None = None
        skip: set[str] = set()
        try:
            for plugin in self.lists.pre_filter:
                res, status = call_plugin(plugin.pre_filter, state, pod, expect=PreFilterResult)
                if status is not None and status.code is Code.SKIP:
                    skip.add(plugin.name)
                    continue
                if status is not None and status.code is not Code.SUCCESS:
                    status.plugin = plugin.name
                    if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                        return None, status, []
                    if status.code is Code.UNSCHEDULABLE:
                        returned = status
                        continue
                    return (
                        None,
                        Status(
                            Code.ERROR,
                            (f'running PreFilter plugin "{plugin.name}": {status.message}',),
                            plugin=plugin.name,
                            error=status.error,
                        ),
                        [],
                    )
                if res is not None and not res.all_nodes():
                    with_nodes.append(plugin.name)
                    if self._sorted_pre_filter_plugins:
                        with_nodes.sort()
                result = res if result is None else result.merge(res)
                if result is not None and not result.all_nodes() and not result.node_names:
                    empty = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (_no_common_node(with_nodes),))
                    return result, empty, with_nodes
            return result, returned, with_nodes
        finally:
            state.skip_filter_plugins = skip

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extension("add_pod", "AddPod", state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extension("remove_pod", "RemovePod", state, pod, pod_to_remove, node_info)

    def _run_pre_filter_extension(
        self, method: str, label: str, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Tell PreFilter plugins (not skipped) that ``other`` joins or leaves ``node_info``."""
        self._run_pre_filter_extension_list()
        assert self._pre_filter_exts is not None
        for plugin, ext in self._pre_filter_exts:
            if plugin.name in state.skip_filter_plugins:
                continue
            status = call_status(ext.add_pod if method == "add_pod" else ext.remove_pod, state, pod, other, node_info)
            if status is not None and status.code is not Code.SUCCESS:
                return Status(Code.ERROR, (f'running {label} on PreFilter plugin "{plugin.name}": {status.message}',))
        return None

    # -- Filter --------------------------------------------------------------------------------------
    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """All Filter plugins on one node, stopping at the first that rejects it."""
        return filtering.run_filter_plugins(self.lists.filter, state, pod, node_info)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter a node twice when equal-or-higher-priority pods are nominated to it: with them and without."""
        nominated = filtering.nominated_for(self, pod, node_info.name)
        if nominated:
            status = filtering.filter_with_nominated(self, state, pod, node_info, nominated)
            if status is not None:
                return status
        return self.run_filter_plugins(state, pod, node_info)

    def find_nodes_that_pass_filters(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: np.ndarray, num_to_find: int
    ) -> FilterOutcome:
        """Visit ``rows`` in order until ``num_to_find`` feasible nodes are found (or all are visited)."""
        return filtering.find_nodes_that_pass_filters(self, state, pod, snapshot, rows, num_to_find)

    @property
    def features(self) -> FeatureGates:
        return self._features

    @property
    def filter_plugins(self) -> list[FilterPlugin]:
        """The Filter plugins, in profile order."""
        return self.lists.filter

    @property
    def node_only_filters(self) -> frozenset[str]:
        """Filter plugins that declare their verdict ignores the pods on the node."""
        return self._node_only_filters

    def arithmetic_filters(self, state: CycleState) -> list[tuple[FilterPlugin, FitChecks | None]] | None:
        """The Filter plugins still active in ``state``, in order, when a node's verdict with pods added
        or removed is arithmetic: each one reads only the node (paired with None) or declares FitChecks
        (paired with this cycle's), and no PreFilter extension would run. None when that is not so."""
        plan: list[tuple[FilterPlugin, FitChecks | None]] = []
        for plugin in self.lists.filter:
            if plugin.name in state.skip_filter_plugins:
                continue
            if plugin.name in self._node_only_filters:
                plan.append((plugin, None))
                continue
            fit = self._fit_filters.get(plugin.name)
            try:
                checks = fit.fit_checks(state) if fit is not None else None
            except Exception as exc:  # no shortcut: the plain path reports what is wrong
                log_plugin_failure(fit.fit_checks if fit is not None else plugin.filter, exc)
                checks = None
            if checks is None:
                return None
            plan.append((plugin, checks))
        if self.active_pre_filter_extensions(state):
            return None
        return plan

    # -- PostFilter ----------------------------------------------------------------------------------
    @timed_extension_point("PostFilter")
    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, node_status: dict[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for plugin in self.lists.post_filter:
            res, status = call_plugin(plugin.post_filter, state, pod, node_status, expect=PostFilterResult)
            if status is None or status.code is Code.SUCCESS:
                return res, (status or Status(Code.SUCCESS)).with_plugin(plugin.name)
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                status.plugin = plugin.name
                return res, status
            if not status.is_rejected():
                return None, _post_filter_error(plugin.name, status)
            if res is not None and res.mode != "noop":
                result = res
            reasons.extend(status.reasons)
            rejector = rejector or plugin.name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), plugin=rejector)

    def post_filter_plugins_ran(self, status: Status) -> list[str]:
        """The PostFilter plugins a run that ended in ``status`` called: every one when it ended
        Unschedulable, else those up to the plugin that ended it."""
        names = self.plugin_names("post_filter")
        if status.code is Code.UNSCHEDULABLE or status.plugin not in names:
            return names
        return names[: names.index(status.plugin) + 1]

    # -- Score ---------------------------------------------------------------------------------------
    @timed_extension_point("PreScore")
    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> Status | None:
        skip: set[str] = set()
        try:
            for plugin in self.lists.pre_score:
                status = call_status(plugin.pre_score, state, pod, nodes)
                if status is not None and status.code is Code.SKIP:
                    skip.add(plugin.name)
                    continue
                if status is not None and status.code is not Code.SUCCESS:
                    return Status(
                        Code.ERROR, (f'running PreScore plugin "{plugin.name}": {status.message}',), error=status.error
                    )
            return None
        finally:
            state.skip_score_plugins = skip

    @timed_extension_point("Score")
    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: NodeInfoList, *, record_raw: bool = False
    ) -> ScoreOutcome | Status:
        """Score, normalise and weight every non-skipped Score plugin over ``nodes``."""
        return scoring.run_score_plugins(
            self.lists.score, self.batch_scorers, self.score_weights, state, pod, nodes, record_raw=record_raw
        )

    # -- Reserve / Permit ----------------------------------------------------------------------------
    @timed_extension_point("Reserve")
    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._run_in_order([(p.name, p.reserve) for p in self.lists.reserve], "Reserve", state, pod, node_name)

    def _run_in_order(
        self,
        calls: Sequence[tuple[str, Callable[[CycleState, Pod, str], Status | None]]],
        label: str,
        state: CycleState,
        pod: Pod,
        node_name: str,
    ) -> Status | None:
        """Run a point's plugins in order until one fails: a rejection as is, anything else an Error."""
        for name, call in calls:
            status = call_status(call, state, pod, node_name)
            if status is not None and status.code is not Code.SUCCESS:
                if status.is_rejected():
                    status.plugin = name
                    return status
                return Status(
                    Code.ERROR, (f'running {label} plugin "{name}": {status.message}',), plugin=name, error=status.error
                )
        return None

    @timed_extension_point("Unreserve")
    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in reversed(self.lists.reserve):
            started = time.perf_counter()
            try:
                plugin.unreserve(state, pod, node_name)
            except Exception:
                log.warning("unreserve of plugin %s failed", plugin.name, exc_info=True)
            if state.plugin_timer is not None:
                state.plugin_timer.observe(plugin.unreserve, status_label(None), started)

    @timed_extension_point("Permit")
    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        waits: dict[str, float] = {}
        for plugin in self.lists.permit:
            started = time.perf_counter()
            try:
                status, timeout = permit_answer(plugin.permit(state, pod, node_name))
            except Exception as exc:
                log.warning("permit plugin %s failed", plugin.name, exc_info=True)
                status, timeout = Status.from_error(exc), 0.0
            if state.plugin_timer is not None:
                state.plugin_timer.observe(plugin.permit, status_label(status), started)
            if status is None or status.code is Code.SUCCESS:
                continue
            if status.is_rejected():
                status.plugin = plugin.name
                return status
            if status.code is Code.WAIT:
                waits[plugin.name] = min(float(timeout), MAX_PERMIT_TIMEOUT)
                continue
            return Status(
                Code.ERROR,
                (f'running Permit plugin "{plugin.name}": {status.message}',),
                plugin=plugin.name,
                error=status.error,
            )
        if waits:
            self.waiting_pods.add(WaitingPod(pod, waits, self._clock))
            return Status(Code.WAIT, (f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"',))
        return None

    # -- binding -------------------------------------------------------------------------------------
    def run_pre_bind_plugins(
        self, state: CycleState, pod: Pod, node_name: str, done: Callable[[Status | None], None]
    ) -> None:
        """Run PreBind plugins in order and call ``done`` with the outcome.

        A plugin may answer with a :class:`PendingStatus` (it waits for the cluster, e.g. for claims
        to be bound); the remaining plugins then run when it resolves, from whatever resolves it.
        The extension point is timed (framework_extension_point_duration_seconds) up to ``done``.
        """
        plugins = self.lists.pre_bind
        metrics: FrameworkMetrics | None = self.metrics
        if metrics is not None:
            started = time.perf_counter()
            finish = done

            def done(status: Status | None) -> None:
                metrics.observe_extension_point("PreBind", status_label(status), time.perf_counter() - started)
                finish(status)

        run_pre_bind(plugins, state, pod, node_name, done, 0)

    @timed_extension_point("Bind")
    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.lists.bind:
            return Status(Code.SKIP)
        status: Status | None = None
        for plugin in self.lists.bind:
            status = call_status(plugin.bind, state, pod, node_name)
            if status is not None and status.code is Code.SKIP:
                continue
            if status is not None and status.code is not Code.SUCCESS:
                if status.is_rejected():
                    status.plugin = plugin.name
                    return status
                return Status(
                    Code.ERROR,
                    (f'running Bind plugin "{plugin.name}": {status.message}',),
                    plugin=plugin.name,
                    error=status.error,
                )
            return status
        return status

    @timed_extension_point("PostBind")
    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in self.lists.post_bind:
            started = time.perf_counter()
            try:
                plugin.post_bind(state, pod, node_name)
            except Exception:
                log.warning("post-bind plugin %s failed", plugin.name, exc_info=True)
            if state.plugin_timer is not None:
                state.plugin_timer.observe(plugin.post_bind, status_label(None), started)


def _events_of(plugin: Plugin) -> list[ClusterEventWithHint]:
    """The events a plugin registers (all events when it names none), with their hints; garbage is a
    build error."""
    if not isinstance(plugin, EnqueueExtensions):
        return [ClusterEventWithHint(ALL_EVENTS)]
    try:
        events = list(plugin.events_to_register())
    except Exception as err:
        raise FrameworkError(f'plugin "{plugin.name}": events_to_register failed: {type(err).__name__}: {err}') from err
    out: list[ClusterEventWithHint] = []
    for event in events:
        if isinstance(event, ClusterEvent):
            event = ClusterEventWithHint(event)
        if not (
            isinstance(event, ClusterEventWithHint)
            and isinstance(event.event, ClusterEvent)
            and (event.queueing_hint_fn is None or callable(event.queueing_hint_fn))
        ):
            raise FrameworkError(
                f'plugin "{plugin.name}": events_to_register returned {shown(event)}, '
                "expected ClusterEvent or ClusterEventWithHint values"
            )
        out.append(event)
    return out


def _post_filter_error(name: str, status: Status) -> Status:
    """A PostFilter plugin's Error as the cycle reports it: its own words, as kube-scheduler passes them
    on; a plugin that raised or answered garbage (no Status of its own) is named."""
    message = status.message if status.error is None else f'running PostFilter plugin "{name}": {status.message}'
    return Status(Code.ERROR, (message,), plugin=name, error=status.error)


def _no_common_node(plugins: Sequence[str]) -> str:
    """Why no node is left when the PreFilterResults of ``plugins`` have nothing in common."""
    if len(plugins) == 1:
        return f"node(s) didn't satisfy plugin {plugins[0]}"
    return f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}] simultaneously"
