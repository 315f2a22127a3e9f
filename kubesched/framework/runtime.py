"""The framework runtime: one profile's plugins, wired to the extension points and run in order.

A :class:`Framework` is built from a profile (the effective plugin sets and their args) and a
registry of plugin factories; which plugin sits at which point is worked out in
:mod:`kubesched.framework.extension_points`. It runs each extension point the way kube-scheduler
does (stop at the first rejection, Skip bookkeeping, score weights, permit waiting) and doubles as
the ``Handle`` plugins receive. Filter and Score prefer the plugins' batch forms, so a pass over
thousands of nodes costs a few NumPy operations per plugin.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.cache.snapshot import NodeInfoList, Snapshot
from kubesched.cluster.listers import Listers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extension_points import (
    FrameworkError,
    PluginLists,
    plugins_needed,
)
from kubesched.framework.handle import EventRecorder, NoEvents, Parallelizer, no_pods
from kubesched.framework.interfaces import (
    MAX_NODE_SCORE,
    MAX_TOTAL_SCORE,
    MIN_NODE_SCORE,
    ActionType,
    BatchFilterPlugin,
    BatchFilterResult,
    BatchScorePlugin,
    ClusterEvent,
    EnqueueExtensions,
    FilterPlugin,
    NodeScore,
    Plugin,
    PluginFactory,
    PostFilterResult,
    PreEnqueuePlugin,
    PreFilterResult,
    QueueSortPlugin,
    ScorePlugin,
)
from kubesched.framework.pending import PendingStatus
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting_pods import WaitingPod, WaitingPods
from kubesched.metrics import FrameworkMetrics, status_label, timed_extension_point
from kubesched.plugins import names
from kubesched.plugins.noderesources import fit as noderesources_fit

if TYPE_CHECKING:
    from kubesched.clock import Clock
    from kubesched.cluster.protocol import Cluster
    from kubesched.config.types import Profile
    from kubesched.extender import HTTPExtender
    from kubesched.framework.handle import PodNominator

log = logging.getLogger(__name__)

#: Permit plugins may not hold a pod longer than this.
MAX_PERMIT_TIMEOUT = 15 * 60.0
MIN_INT64 = -(2**63)

#: What a plugin that names no events is assumed to care about: everything.
ALL_EVENTS = ClusterEvent("*", ActionType.ALL, "WildCardEvent")

@dataclass(slots=True)
class FilterOutcome:
    """What the Filter pass found: feasible nodes (snapshot rows, in visiting order) and rejections."""

    feasible: np.ndarray
    rejected_rows: np.ndarray
    rejected_statuses: list[Status]
    processed: int
    error: Status | None = None

    def node_status_map(self, snapshot: Snapshot) -> dict[str, Status]:
        return dict(zip(snapshot.names[self.rejected_rows].tolist(), self.rejected_statuses, strict=True))


@dataclass(slots=True)
class ScoreOutcome:
    """Weighted scores per plugin (arrays aligned with the scored nodes) and their totals."""

    plugin_scores: dict[str, np.ndarray] = field(default_factory=dict)
    total: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    raw_scores: dict[str, np.ndarray] = field(default_factory=dict)


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
        extenders: Sequence[HTTPExtender] = (),
        event_recorder: EventRecorder | None = None,
        pod_lister: Callable[[str | None, Mapping[str, str] | None], Iterable[Pod]] = no_pods,
    ) -> None:
        self.profile_name = profile.scheduler_name
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

        plugins_cfg = profile.plugins
        needed = plugins_needed(plugins_cfg)
        self.plugins: dict[str, Plugin] = {}
        for name in needed:
            factory = registry.get(name)
            if factory is None:
                raise FrameworkError(f'profiles[{self.profile_name}]: plugin "{name}" does not exist')
            args = profile.plugin_config.get(name)
            try:
                plugin = factory(args, self)
            except FrameworkError:
                raise
            except Exception as err:
                raise FrameworkError(f'plugin "{name}": building it failed: {type(err).__name__}: {err}') from err
            self.plugins[name] = plugin

        self.lists = PluginLists.build(plugins_cfg, self.plugins)
        self.points: dict[str, list[Plugin]] = self.lists.by_point()

        if len(self.points["queue_sort"]) != 1:
            raise FrameworkError(
                f"only one queue sort plugin required for profile with scheduler name "
                f'"{self.profile_name}", but got {len(self.points["queue_sort"])}'
            )
        if not self.points["bind"]:
            raise FrameworkError(
                f'at least one bind plugin is needed for profile with scheduler name "{self.profile_name}"'
            )
        self.score_weights: dict[str, int] = {}
        for ref in (*plugins_cfg.score.enabled, *plugins_cfg.multi_point.enabled):
            # Keyed by the built plugin's own name: an import-path plugin is configured as
            # "module:Class" but reports (and is looked up by) the name it declares.
            scorer = self.plugins.get(ref.name)
            if isinstance(scorer, ScorePlugin) and scorer.name not in self.score_weights:
                self.score_weights[scorer.name] = ref.weight or 1

        self._pre_filter_exts: list[tuple[Plugin, Any]] | None = None
        # Which plugins offer batch forms, decided once: protocol isinstance checks are slow.
        self._batch_filter = {p.name: p for p in self.plugins.values() if isinstance(p, BatchFilterPlugin)}
        self._batch_score = {p.name: p for p in self.plugins.values() if isinstance(p, BatchScorePlugin)}

        self.enqueue_events: dict[str, list[ClusterEvent]] = {}
        for plugin in self.plugins.values():
            self.enqueue_events[plugin.name] = _events_of(plugin)

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
    def extenders(self) -> list[HTTPExtender]:
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
                ext, status = _call(lambda p=plugin: (p.pre_filter_extensions(), None))
                if status is not None:  # logged; a plugin whose extensions fail has none to run
                    continue
                if ext is not None:
                    exts.append((plugin, ext))
            self._pre_filter_exts = exts

    # -- PreFilter -----------------------------------------------------------------------------------
    @timed_extension_point("PreFilter")
    def run_pre_filter_plugins(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        result: PreFilterResult | None = None
        with_nodes: list[str] = []
        returned: Status | None = None
        skip: set[str] = set()
        try:
            for plugin in self.lists.pre_filter:
                res, status = _call(plugin.pre_filter, state, pod, expect=PreFilterResult)
                if status is not None and status.code is Code.SKIP:
                    skip.add(plugin.name)
                    continue
                if status is not None and status.code is not Code.SUCCESS:
                    status.plugin = plugin.name
                    if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                        return None, status
                    if status.code is Code.UNSCHEDULABLE:
                        returned = status
                        continue
                    return None, Status(Code.ERROR, (f'running PreFilter plugin "{plugin.name}": {status.message}',),
                                        plugin=plugin.name, error=status.error)
                if res is not None and not res.all_nodes():
                    with_nodes.append(plugin.name)
                result = res if result is None else result.merge(res)
                if result is not None and not result.all_nodes() and not result.node_names:
                    if len(with_nodes) == 1:
                        msg = f"node(s) didn't satisfy plugin {with_nodes[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(with_nodes)}] simultaneously"
                    return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,))
            return result, returned
        finally:
            state.skip_filter_plugins = skip

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod,
                                         node_info: NodeInfo) -> Status | None:
        return self._run_pre_filter_extension("add_pod", "AddPod", state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod,
                                            node_info: NodeInfo) -> Status | None:
        return self._run_pre_filter_extension("remove_pod", "RemovePod", state, pod, pod_to_remove, node_info)

    def _run_pre_filter_extension(self, method: str, label: str, state: CycleState, pod: Pod, other: Pod,
                                  node_info: NodeInfo) -> Status | None:
        """Tell PreFilter plugins (not skipped) that ``other`` joins or leaves ``node_info``."""
        self._run_pre_filter_extension_list()
        assert self._pre_filter_exts is not None
        for plugin, ext in self._pre_filter_exts:
            if plugin.name in state.skip_filter_plugins:
                continue
            status = _call_status(ext.add_pod if method == "add_pod" else ext.remove_pod, state, pod, other,
                                  node_info)
            if status is not None and status.code is not Code.SUCCESS:
                return Status(Code.ERROR, (f'running {label} on PreFilter plugin "{plugin.name}": {status.message}',))
        return None

    # -- Filter --------------------------------------------------------------------------------------
    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """All Filter plugins on one node, stopping at the first that rejects it."""
        for plugin in self.lists.filter:
            if plugin.name in state.skip_filter_plugins:
                continue
            status = _call_status(plugin.filter, state, pod, node_info)
            if status is not None and status.code is not Code.SUCCESS:
                if not status.is_rejected():
                    status = Status(Code.ERROR, (f'running "{plugin.name}" filter plugin: {status.message}',),
                                    error=status.error)
                status.plugin = plugin.name
                return status
        return None

    def _nominated_for(self, pod: Pod, node_name: str) -> list[Pod]:
        nominated = self._nominator.nominations().get(node_name)
        if not nominated:
            return []
        return [p for p in nominated if p.priority >= pod.priority and p.uid != pod.uid]

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod,
                                               node_info: NodeInfo) -> Status | None:
        """Filter a node twice when equal-or-higher-priority pods are nominated to it: with them and without."""
        nominated = self._nominated_for(pod, node_info.name)
        if nominated:
            status = self._filter_with_nominated(state, pod, node_info, nominated)
            if status is not None:
                return status
        return self.run_filter_plugins(state, pod, node_info)

    def _filter_with_nominated(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                               nominated: list[Pod], *, passed_without: bool = False) -> Status | None:
        """The first half of the check above: the node as if ``nominated`` pods were on it.

        ``passed_without``: every filter already passed the node without them, so plugins whose
        verdict ignores the node's pods (``names.NODE_ONLY_FILTERS``) need not run again.
        """
        info_with = node_info.snapshot()
        state_with = state.clone()
        if passed_without:
            state_with.skip_filter_plugins |= names.NODE_ONLY_FILTERS
        for other in nominated:
            info_with.add_pod(other)
            status = self.run_pre_filter_extension_add_pod(state_with, pod, other, info_with)
            if status is not None:
                return status
        return self.run_filter_plugins(state_with, pod, info_with)

    def find_nodes_that_pass_filters(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                                     rows: np.ndarray, num_to_find: int) -> FilterOutcome:
        """Visit ``rows`` in order until ``num_to_find`` feasible nodes are found (or all are visited).

        Batches of nodes go through each plugin's batch form; nodes with nominated pods that could
        change the verdict are re-checked one by one. The result is what a sequential walk would
        give, which is one of the outcomes kube-scheduler's parallel walk can give.
        """
        plugins = [p for p in self.lists.filter if p.name not in state.skip_filter_plugins]
        total = len(rows)
        feasible_parts: list[np.ndarray] = []
        rejected_rows: list[np.ndarray] = []
        rejected_statuses: list[Status] = []
        found = 0
        pos = 0
        chunk = max(num_to_find, 64)
        nominated_rows = self._rows_with_nominated_pods(pod, snapshot)
        fit_checks = self._fit_only_with_nominated(state) if nominated_rows else None
        nominated_array = np.fromiter(nominated_rows, dtype=np.int64, count=len(nominated_rows))
        while pos < total and found < num_to_find:
            batch = rows[pos:pos + chunk]
            status_of = self._filter_batch(plugins, state, pod, snapshot, batch)
            if isinstance(status_of, Status):
                return FilterOutcome(np.zeros(0, np.int64), np.zeros(0, np.int64), [], pos, error=status_of)
            verdict, statuses = status_of
            if nominated_rows:
                # Nodes the batch passed without their nominated pods (the second half of
                # run_filter_plugins_with_nominated_pods) are checked with them (the first half).
                ks = np.flatnonzero(np.isin(batch, nominated_array) & (verdict < 0)).tolist()
                found_with: Iterable[Status | None]
                if fit_checks is not None:
                    found_with = noderesources_fit.filter_with_pods(
                        fit_checks, snapshot, batch[ks], [nominated_rows[int(batch[k])] for k in ks])
                else:  # one node at a time, stopping at an error
                    found_with = (self._filter_with_nominated(state, pod, snapshot.node_infos[int(batch[k])],
                                                              nominated_rows[int(batch[k])], passed_without=True)
                                  for k in ks)
                for k, st in zip(ks, found_with, strict=True):
                    if st is not None:
                        if st.code is Code.ERROR:
                            return FilterOutcome(np.zeros(0, np.int64), np.zeros(0, np.int64), [], pos, error=st)
                        statuses.append(st)
                        verdict[k] = len(statuses) - 1
            passed = np.flatnonzero(verdict < 0)
            need = num_to_find - found
            if len(passed) > need:
                cut = int(passed[need - 1]) + 1  # visit stops right after the last node needed
                batch, verdict, passed = batch[:cut], verdict[:cut], passed[:need]
            feasible_parts.append(batch[passed])
            failed = np.flatnonzero(verdict >= 0)
            rejected_rows.append(batch[failed])
            rejected_statuses.extend(statuses[i] for i in verdict[failed].tolist())
            found += len(passed)
            pos += len(batch)
            chunk = max(chunk * 2, 256)
        feasible = np.concatenate(feasible_parts) if feasible_parts else np.zeros(0, dtype=np.int64)
        rejected = np.concatenate(rejected_rows) if rejected_rows else np.zeros(0, dtype=np.int64)
        return FilterOutcome(feasible, rejected, rejected_statuses, len(feasible) + len(rejected))

    def _fit_only_with_nominated(self, state: CycleState) -> Sequence[tuple[str, int]] | None:
        """NodeResourcesFit's checks when it is the only filter whose verdict nominated pods can
        change (the others are skipped or read only the node) and no PreFilter extension would run:
        then a node that passed without its nominated pods fails with them exactly when these
        resource checks fail."""
        active = [p.name for p in self.points["filter"]
                  if p.name not in state.skip_filter_plugins and p.name not in names.NODE_ONLY_FILTERS]
        if active != [names.NODE_RESOURCES_FIT] or self.active_pre_filter_extensions(state):
            return None
        if not isinstance(self.plugins.get(names.NODE_RESOURCES_FIT), noderesources_fit.NodeResourcesFit):
            return None
        fit_state = state.get(noderesources_fit.PRE_FILTER_STATE_KEY)
        return fit_state.checks if isinstance(fit_state, noderesources_fit.PreFilterState) else None

    def _rows_with_nominated_pods(self, pod: Pod, snapshot: Snapshot) -> dict[int, list[Pod]]:
        rows: dict[int, list[Pod]] = {}
        index, priority, uid = snapshot.index, pod.priority, pod.uid
        for name, pods in self._nominator.nominations().items():
            row = index.get(name)
            if row is not None and (nominated := [p for p in pods if p.priority >= priority and p.uid != uid]):
                rows[row] = nominated
        return rows

    def _filter_batch(self, plugins: Sequence[FilterPlugin], state: CycleState, pod: Pod, snapshot: Snapshot,
                      batch: np.ndarray) -> tuple[np.ndarray, list[Status]] | Status:
        """Per node of ``batch``: -1 when every plugin passed, else the index of the first rejection."""
        verdict = np.full(len(batch), -1, dtype=np.int64)
        statuses: list[Status] = []
        alive = np.arange(len(batch))
        infos = snapshot.node_infos
        for plugin in plugins:
            if len(alive) == 0:
                break
            rows = batch[alive]
            batch_filter = self._batch_filter.get(plugin.name)
            if batch_filter is not None:
                started = time.perf_counter()
                try:
                    result = batch_filter.filter_nodes(state, pod, snapshot, rows)
                    if type(result) is not BatchFilterResult or len(result.status_index) != len(rows):
                        raise PluginReturnError(f"filter_nodes returned {_shown(result)}, expected a "
                                                f"BatchFilterResult for {len(rows)} nodes")
                except Exception as exc:  # a plugin bug must not take the scheduler down
                    log.warning("filter plugin %s failed", plugin.name, exc_info=True)
                    return Status(Code.ERROR, (f'running "{plugin.name}" filter plugin: {exc}',), error=exc)
                if state.plugin_timer is not None:
                    state.plugin_timer.observe(batch_filter.filter_nodes,
                                               result.statuses[0] if result.statuses else None, started)
                idx = result.status_index
                failed = np.flatnonzero(idx >= 0)
                if len(failed):
                    base = len(statuses)
                    for st in result.statuses:
                        if st.code is Code.ERROR or not st.is_rejected():
                            return Status(Code.ERROR, (f'running "{plugin.name}" filter plugin: {st.message}',),
                                          plugin=plugin.name, error=st.error)
                        st.plugin = plugin.name
                    statuses.extend(result.statuses)
                    verdict[alive[failed]] = idx[failed] + base
                    alive = alive[idx < 0]
            else:
                keep = []
                for k, row in zip(alive.tolist(), rows.tolist(), strict=True):
                    verdict_k = _call_status(plugin.filter, state, pod, infos[row])
                    if verdict_k is None or verdict_k.code is Code.SUCCESS:
                        keep.append(k)
                        continue
                    st = verdict_k
                    if not st.is_rejected():
                        return Status(Code.ERROR, (f'running "{plugin.name}" filter plugin: {st.message}',),
                                      plugin=plugin.name, error=st.error)
                    st.plugin = plugin.name
                    statuses.append(st)
                    verdict[k] = len(statuses) - 1
                alive = np.asarray(keep, dtype=np.int64)
        return verdict, statuses

    # -- PostFilter ----------------------------------------------------------------------------------
    @timed_extension_point("PostFilter")
    def run_post_filter_plugins(self, state: CycleState, pod: Pod,
                                node_status: dict[str, Status]) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for plugin in self.lists.post_filter:
            res, status = _call(plugin.post_filter, state, pod, node_status, expect=PostFilterResult)
            if status is None or status.code is Code.SUCCESS:
                return res, status or Status(Code.SUCCESS)
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                status.plugin = plugin.name
                return res, status
            if not status.is_rejected():
                return None, Status(Code.ERROR, (f'running PostFilter plugin "{plugin.name}": {status.message}',),
                                    plugin=plugin.name, error=status.error)
            if res is not None and res.mode != "noop":
                result = res
            reasons.extend(status.reasons)
            rejector = rejector or plugin.name
        return result, Status(Code.UNSCHEDULABLE, tuple(reasons), plugin=rejector)

    # -- Score ---------------------------------------------------------------------------------------
    @timed_extension_point("PreScore")
    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: NodeInfoList) -> Status | None:
        skip: set[str] = set()
        try:
            for plugin in self.lists.pre_score:
                status = _call_status(plugin.pre_score, state, pod, nodes)
                if status is not None and status.code is Code.SKIP:
                    skip.add(plugin.name)
                    continue
                if status is not None and status.code is not Code.SUCCESS:
                    return Status(Code.ERROR, (f'running PreScore plugin "{plugin.name}": {status.message}',),
                                  error=status.error)
            return None
        finally:
            state.skip_score_plugins = skip

    @timed_extension_point("Score")
    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: NodeInfoList,
                          *, record_raw: bool = False) -> ScoreOutcome | Status:
        """Score, normalise and weight every non-skipped Score plugin over ``nodes``."""
        out = ScoreOutcome(total=np.zeros(len(nodes), dtype=np.int64))
        for plugin in self.lists.score:
            if plugin.name in state.skip_score_plugins:
                continue
            try:
                raw, scores = self._score_one(plugin, state, pod, nodes)
            except _PluginFailure as failure:
                return Status(Code.ERROR, (str(failure),))
            if record_raw:
                out.raw_scores[plugin.name] = raw
            if scores.size and (scores.max() > MAX_NODE_SCORE or scores.min() < MIN_NODE_SCORE):
                bad = int(scores.max() if scores.max() > MAX_NODE_SCORE else scores.min())
                return Status(Code.ERROR, (
                    f'applying score defaultWeights on Score plugins: plugin "{plugin.name}" returns an invalid '
                    f"score {bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                ))
            weighted = scores * self.score_weights.get(plugin.name, 1)
            out.plugin_scores[plugin.name] = weighted
            out.total += weighted
        return out

    def _score_one(self, plugin: ScorePlugin, state: CycleState, pod: Pod,
                   nodes: NodeInfoList) -> tuple[np.ndarray, np.ndarray]:
        """Raw and normalised scores of one plugin over ``nodes``."""
        batch_score = self._batch_score.get(plugin.name)
        if batch_score is not None:
            started = time.perf_counter()
            try:
                raw = np.asarray(batch_score.score_nodes(state, pod, nodes), dtype=np.int64)
                if state.plugin_timer is not None:
                    state.plugin_timer.observe(batch_score.score_nodes, None, started)
                    started = time.perf_counter()
                normalized = batch_score.normalize_scores(state, pod, raw.copy())
                if state.plugin_timer is not None:
                    state.plugin_timer.observe(batch_score.normalize_scores, None, started)
                final = raw if normalized is None else np.asarray(normalized, dtype=np.int64)
                if raw.shape != (len(nodes),) or final.shape != (len(nodes),):
                    raise PluginReturnError(f"returned {raw.shape[0] if raw.ndim else 'no'} scores for "
                                            f"{len(nodes)} nodes")
            except Exception as exc:
                log.warning("score plugin %s failed", plugin.name, exc_info=True)
                raise _PluginFailure(f'running Score plugins: plugin "{plugin.name}" failed with: {exc}') from exc
            return raw, final
        values = np.zeros(len(nodes), dtype=np.int64)
        node_scores: list[NodeScore] = []
        for k, info in enumerate(nodes):
            score, status = _call(plugin.score, state, pod, info, expect=_SCORE_TYPES)
            if status is not None and status.code is not Code.SUCCESS:
                raise _PluginFailure(f'running Score plugins: plugin "{plugin.name}" failed with: {status.message}')
            if not MIN_INT64 <= score <= MAX_TOTAL_SCORE:
                raise _PluginFailure(f'running Score plugins: plugin "{plugin.name}" failed with: '
                                     f"score {score} is out of the int64 range")
            values[k] = score
            node_scores.append(NodeScore(info.name, int(score)))
        ext, status = _call(lambda: (plugin.score_extensions(), None))
        if status is not None:
            raise _PluginFailure(f'running Score plugins: plugin "{plugin.name}" failed with: {status.message}')
        if ext is None:
            return values, values
        status = _call_status(ext.normalize_score, state, pod, node_scores)
        if status is not None and status.code is not Code.SUCCESS:
            raise _PluginFailure(
                f'running Normalize on Score plugins: plugin "{plugin.name}" failed with: {status.message}')
        try:
            normalized = np.fromiter((ns.score for ns in node_scores), dtype=np.int64, count=len(node_scores))
        except (TypeError, ValueError, OverflowError) as err:
            raise _PluginFailure(f'running Normalize on Score plugins: plugin "{plugin.name}" failed with: '
                                 f"scores are not all integers: {err}") from err
        return values, normalized

    # -- Reserve / Permit ----------------------------------------------------------------------------
    @timed_extension_point("Reserve")
    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._run_in_order([(p.name, p.reserve) for p in self.lists.reserve], "Reserve", state, pod,
                                  node_name)

    def _run_in_order(self, calls: Sequence[tuple[str, Callable[[CycleState, Pod, str], Status | None]]],
                      label: str, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Run a point's plugins in order until one fails: a rejection as is, anything else an Error."""
        for name, call in calls:
            status = _call_status(call, state, pod, node_name)
            if status is not None and status.code is not Code.SUCCESS:
                if status.is_rejected():
                    status.plugin = name
                    return status
                return Status(Code.ERROR, (f'running {label} plugin "{name}": {status.message}',),
                              plugin=name, error=status.error)
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
                state.plugin_timer.observe(plugin.unreserve, None, started)

    @timed_extension_point("Permit")
    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        waits: dict[str, float] = {}
        for plugin in self.lists.permit:
            started = time.perf_counter()
            try:
                status, timeout = _permit_answer(plugin.permit(state, pod, node_name))
            except Exception as exc:
                log.warning("permit plugin %s failed", plugin.name, exc_info=True)
                status, timeout = Status.from_error(exc), 0.0
            if state.plugin_timer is not None:
                state.plugin_timer.observe(plugin.permit, status, started)
            if status is None or status.code is Code.SUCCESS:
                continue
            if status.is_rejected():
                status.plugin = plugin.name
                return status
            if status.code is Code.WAIT:
                waits[plugin.name] = min(float(timeout), MAX_PERMIT_TIMEOUT)
                continue
            return Status(Code.ERROR, (f'running Permit plugin "{plugin.name}": {status.message}',),
                          plugin=plugin.name, error=status.error)
        if waits:
            self.waiting_pods.add(WaitingPod(pod, waits, self._clock))
            return Status(Code.WAIT, (f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"',))
        return None

    # -- binding -------------------------------------------------------------------------------------
    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str,
                             done: Callable[[Status | None], None]) -> None:
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

        def step(index: int) -> None:
            while index < len(plugins):
                plugin = plugins[index]
                index += 1
                try:
                    answer = plugin.pre_bind(state, pod, node_name)
                    if answer is not None and not isinstance(answer, (Status, PendingStatus)):
                        raise PluginReturnError(f"returned {_shown(answer)}, expected a Status or None")
                except Exception as exc:
                    _log_plugin_failure(plugin.pre_bind, exc)
                    answer = Status.from_error(exc)
                if isinstance(answer, PendingStatus):
                    answer.on_done(functools.partial(after, plugin.name, nxt=index))
                    return
                failure = _pre_bind_failure(plugin.name, answer)
                if failure is not None:
                    done(failure)
                    return
            done(None)

        def after(name: str, status: Status | None, *, nxt: int) -> None:
            failure = _pre_bind_failure(name, status)
            if failure is not None:
                done(failure)
            else:
                step(nxt)

        step(0)

    @timed_extension_point("Bind")
    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.lists.bind:
            return Status(Code.SKIP)
        status: Status | None = None
        for plugin in self.lists.bind:
            status = _call_status(plugin.bind, state, pod, node_name)
            if status is not None and status.code is Code.SKIP:
                continue
            if status is not None and status.code is not Code.SUCCESS:
                if status.is_rejected():
                    status.plugin = plugin.name
                    return status
                return Status(Code.ERROR, (f'running Bind plugin "{plugin.name}": {status.message}',),
                              plugin=plugin.name, error=status.error)
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
                state.plugin_timer.observe(plugin.post_bind, None, started)


def _events_of(plugin: Plugin) -> list[ClusterEvent]:
    """The events a plugin registers (all events when it names none); garbage is a build error."""
    if not isinstance(plugin, EnqueueExtensions):
        return [ALL_EVENTS]
    try:
        events = list(plugin.events_to_register())
    except Exception as err:
        raise FrameworkError(f'plugin "{plugin.name}": events_to_register failed: {type(err).__name__}: {err}') from err
    for event in events:
        if not isinstance(event, ClusterEvent):
            raise FrameworkError(f'plugin "{plugin.name}": events_to_register returned {_shown(event)}, '
                                 "expected ClusterEvent values")
    return events


def _pre_bind_failure(name: str, status: Status | None) -> Status | None:
    """A PreBind plugin's failure as the runner reports it (a rejection as is, else an Error)."""
    if status is None or status.code is Code.SUCCESS:
        return None
    if status.is_rejected():
        status.plugin = name
        return status
    return Status(Code.ERROR, (f'running PreBind plugin "{name}": {status.message}',), plugin=name, error=status.error)


class _PluginFailure(RuntimeError):
    pass


#: What a per-node Score may return as its score (a bool is an int to Python, but no score).
_SCORE_TYPES = (int, np.integer)


class PluginReturnError(TypeError):
    """A plugin returned something its extension point does not allow."""


def _call(fn: Callable[..., Any], *args: Any,
          expect: type | tuple[type, ...] = object) -> tuple[Any, Status | None]:
    """Run a plugin method returning ``(value, status)``; an exception, or a return value that is
    no such pair (``value`` None or an ``expect``), becomes an Error status.

    Callers pass the CycleState first: on sampled cycles it carries the plugin timer.
    """
    timer = args[0].plugin_timer if args else None
    started = time.perf_counter() if timer is not None else 0.0
    result: tuple[Any, Status | None]
    try:
        answer = fn(*args)
        if type(answer) is not tuple or len(answer) != 2:
            raise PluginReturnError(f"returned {_shown(answer)}, expected a (value, Status | None) pair")
        value, status = answer
        if status is not None and type(status) is not Status:
            raise PluginReturnError(f"returned status {_shown(status)}, expected a Status or None")
        if (value is not None or expect is _SCORE_TYPES) and not (
                isinstance(value, expect) and not isinstance(value, bool)):
            raise PluginReturnError(f"returned {_shown(value)}, expected {_type_names(expect)}")
        result = value, status
    except Exception as exc:
        _log_plugin_failure(fn, exc)
        result = None, Status.from_error(exc)
    if timer is not None:
        timer.observe(fn, result, started)
    return result


def _call_status(fn: Callable[..., Status | None], *args: Any) -> Status | None:
    """Run a plugin method returning a Status or None; anything else becomes an Error status."""
    timer = args[0].plugin_timer if args else None
    started = time.perf_counter() if timer is not None else 0.0
    try:
        status = fn(*args)
        if status is not None and type(status) is not Status:
            raise PluginReturnError(f"returned {_shown(status)}, expected a Status or None")
    except Exception as exc:
        _log_plugin_failure(fn, exc)
        status = Status.from_error(exc)
    if timer is not None:
        timer.observe(fn, status, started)
    return status


def _permit_answer(answer: Any) -> tuple[Status | None, float]:
    if type(answer) is not tuple or len(answer) != 2:
        raise PluginReturnError(f"returned {_shown(answer)}, expected a (Status | None, timeout seconds) pair")
    status, timeout = answer
    if status is not None and type(status) is not Status:
        raise PluginReturnError(f"returned status {_shown(status)}, expected a Status or None")
    numeric = isinstance(timeout, (int, float, np.integer, np.floating)) and not isinstance(timeout, bool)
    if not numeric or timeout != timeout:
        raise PluginReturnError(f"returned timeout {_shown(timeout)}, expected seconds as a number")
    return status, float(timeout)


def _log_plugin_failure(fn: Callable[..., Any], exc: BaseException) -> None:
    # A warning with the traceback: shown with -v, never mixed into the normal output.
    log.warning("plugin call %s failed: %s", getattr(fn, "__qualname__", fn), exc, exc_info=True)


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _type_names(expect: type | tuple[type, ...]) -> str:
    types = expect if isinstance(expect, tuple) else (expect,)
    return " or ".join(t.__name__ for t in types) + " or None" * (expect is not _SCORE_TYPES)
