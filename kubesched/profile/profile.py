"""Profiles: one framework per configured scheduler name, as kube-scheduler's profile.Map.

:func:`new_map` resolves each configured profile against the plugin registry (which plugins run at
which extension point, with which args), hands NodeResourcesFit the extended resources that extenders
manage themselves (their ``ignoredByScheduler`` resources), and builds a Framework for it. The
:class:`ProfileMap` then answers what the rest of the scheduler needs from the profiles: the first
profile's queue sort, each profile's PreEnqueue plugins and queueing-hint (v1.34) or cluster-event
(v1.30) map for the scheduling queue, the object kinds plugins register events for beyond those always
watched, and which profiles preempt.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.cache.snapshot import Snapshot
from kubesched.clock import Clock
from kubesched.cluster.kinds import KNOWN_KINDS
from kubesched.cluster.listers import Listers
from kubesched.cluster.protocol import Cluster
from kubesched.config.types import KubeSchedulerConfiguration, Profile
from kubesched.extender import EXTENDER_NAME, HTTPExtender, ignored_by_scheduler
from kubesched.framework.handle import EventRecorder, PluginFactory, PodNominator
from kubesched.framework.interfaces import (
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    PermitPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    QueueSortPlugin,
    ReservePlugin,
)
from kubesched.framework.runtime import Framework
from kubesched.metrics import SchedulerMetrics
from kubesched.plugins.names import DEFAULT_PREEMPTION, NODE_RESOURCES_FIT
from kubesched.plugins.registry import in_tree_registry, resolve_profile
from kubesched.queue import events as qevents
from kubesched.queue.hints import QueueingHintMap, build_queueing_hint_map, unrolled_wildcard_events
from kubesched.queue.queued_pod_info import QueuedPodInfo

log = logging.getLogger(__name__)

Less = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
SortKey = Callable[[QueuedPodInfo], Any]


@dataclass(frozen=True, slots=True)
class FrameworkOptions:
    """What every profile's framework is built with besides its profile (upstream's framework options)."""

    cluster: Cluster
    clock: Clock
    #: The scheduler's snapshot, as the cycle last updated it.
    snapshot: Callable[[], Snapshot]
    listers: Listers
    extenders: Sequence[HTTPExtender]
    event_recorder: EventRecorder
    #: Known pods by namespace and labels (the scheduler's informer view).
    pod_lister: Callable[[str | None, Mapping[str, str] | None], Iterable[Pod]]
    #: Anything else plugins read from the handle's ``extra`` (the tie-break RNG, the pod getter).
    extra_handle: Mapping[str, Any]


class QueueNominator:
    """The scheduling queue's nominator, for frameworks built before the queue exists (the queue needs
    them first); :meth:`ProfileMap.set_pod_nominator` connects it, as upstream's SetPodNominator."""

    def __init__(self) -> None:
        self.nominator: PodNominator | None = None

    def _queue(self) -> PodNominator:
        if self.nominator is None:
            raise RuntimeError("the profiles' nominator is asked before the scheduling queue exists")
        return self.nominator

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        return self._queue().nominated_pods_for_node(node_name)

    def nominations(self) -> Mapping[str, tuple[Pod, ...]]:
        return self._queue().nominations()


class ProfileMap:
    """The frameworks by scheduler name, and what the queue and the watch need to know of them."""

    def __init__(self, frameworks: dict[str, Framework], warnings: list[str], nominator: QueueNominator) -> None:
        #: Scheduler name -> its framework, in configuration order.
        self.frameworks = frameworks
        #: One line per kube-scheduler plugin a profile names that kubesched leaves out.
        self.warnings = warnings
        self._nominator = nominator

    def handles(self, scheduler_name: str) -> bool:
        return scheduler_name in self.frameworks

    def set_pod_nominator(self, nominator: PodNominator) -> None:
        """Where every framework's handle finds nominated pods from now on (the scheduling queue)."""
        self._nominator.nominator = nominator

    def queue_sort(self) -> tuple[Less, SortKey | None]:
        """The queue's order, from the first profile (every profile must use the same QueueSort): a
        ``sort_key`` when the plugin offers one, and a ``less`` that never breaks the queue."""
        sort = next(iter(self.frameworks.values())).queue_sort
        sort_key: SortKey | None = getattr(sort, "sort_key", None)
        return (sort.less if sort_key is not None else guarded_less(sort)), sort_key

    def pre_enqueue_plugins(self) -> dict[str, Sequence[PreEnqueuePlugin]]:
        return {name: fwk.pre_enqueue_plugins for name, fwk in self.frameworks.items()}

    def queueing_hint_maps(self, hints_enabled: bool, extenders: bool = False) -> dict[str, QueueingHintMap]:
        """Per profile: registered cluster event -> the hint of each plugin that registered it (v1.34).

        As kube-scheduler, only plugins that can reject a pod (PreEnqueue, PreFilter, Filter, Reserve,
        Permit) register; with extenders, "Extender" hears every event."""
        maps: dict[str, QueueingHintMap] = {}
        for name, fwk in self.frameworks.items():
            registrations: list[tuple[str, list[ClusterEvent] | list[ClusterEventWithHint]]] = []
            if extenders:
                registrations.append((EXTENDER_NAME, unrolled_wildcard_events()))
            by_name = {plugin.name: plugin for plugin in fwk.plugins.values()}
            for plugin_name, events in fwk.enqueue_hints.items():
                plugin = by_name.get(plugin_name)
                if not _may_reject(plugin):
                    continue
                # A plugin that says nothing of events hears every action of every resource kind.
                registrations.append(
                    (plugin_name, events if isinstance(plugin, EnqueueExtensions) else unrolled_wildcard_events())
                )
            maps[name] = build_queueing_hint_map(registrations, hints_enabled)
        return maps

    def cluster_event_maps(self) -> dict[str, qevents.ClusterEventMap]:
        """Per profile: registered cluster event -> the plugins that registered it (v1.30)."""
        return {
            name: qevents.build_cluster_event_map(
                _Registration(plugin, events) for plugin, events in fwk.enqueue_events.items()
            )
            for name, fwk in self.frameworks.items()
        }

    def extra_kinds(self, watched: Collection[str]) -> list[str]:
        """Kinds beyond ``watched`` that plugins register events for (Coscheduling's PodGroup): the
        scheduler watches them into its listers and sends their changes to the queue."""
        kinds = {
            qevents.RESOURCE_KINDS.get(e.resource, e.resource)
            for fwk in self.frameworks.values()
            for events in fwk.enqueue_events.values()
            for e in events
        }
        return sorted(kind for kind in kinds if kind in KNOWN_KINDS and kind not in watched)

    def preempting(self) -> dict[str, str]:
        """Profiles whose PostFilter runs DefaultPreemption, and that plugin's name: a PostFilter run that
        calls it is a preemption attempt, as upstream counts them."""
        return {
            name: DEFAULT_PREEMPTION
            for name, fwk in self.frameworks.items()
            if DEFAULT_PREEMPTION in fwk.plugin_names("post_filter")
        }

    def instrument(self, metrics: SchedulerMetrics) -> None:
        """Time every framework's extension points into ``metrics``, labelled with its profile."""
        for name, fwk in self.frameworks.items():
            fwk.metrics = metrics.for_profile(name)


def new_map(
    config: KubeSchedulerConfiguration, options: FrameworkOptions, registry: Mapping[str, PluginFactory] | None = None
) -> ProfileMap:
    """A framework per profile of ``config``, with plugins from ``registry`` (the in-tree one by default).

    Import-path plugins a profile names are added to a copy of the registry; a name that cannot be
    resolved raises :class:`~kubesched.plugins.registry.PluginLoadError`."""
    plugin_registry = dict(in_tree_registry() if registry is None else registry)
    ignored = ignored_by_scheduler(config.extenders)
    nominator = QueueNominator()
    frameworks: dict[str, Framework] = {}
    warnings: list[str] = []
    for profile in config.profiles:
        if ignored:
            profile = ignore_resources_in_fit(profile, ignored)
        effective, left_out = resolve_profile(profile, plugin_registry)
        warnings.extend(left_out)
        frameworks[profile.scheduler_name] = Framework(
            effective,
            plugin_registry,
            cluster=options.cluster,
            clock=options.clock,
            nominator=nominator,
            snapshot_fn=options.snapshot,
            listers=options.listers,
            parallelism=config.parallelism,
            percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
            extra_handle=options.extra_handle,
            extenders=options.extenders,
            event_recorder=options.event_recorder,
            pod_lister=options.pod_lister,
            features=config.features,
        )
    for warning in warnings:
        log.warning(warning)
    return ProfileMap(frameworks, warnings, nominator)


def ignore_resources_in_fit(profile: Profile, ignored: tuple[str, ...]) -> Profile:
    """Extender resources marked ignoredByScheduler become NodeResourcesFit's ignoredResources
    (replacing the configured ones, as kube-scheduler does)."""
    args = profile.plugin_config.get(NODE_RESOURCES_FIT)
    if args is None or not hasattr(args, "ignored_resources"):
        return profile
    config = dict(profile.plugin_config)
    config[NODE_RESOURCES_FIT] = dataclasses.replace(args, ignored_resources=ignored)  # type: ignore[type-var]
    return dataclasses.replace(profile, plugin_config=config)


def _may_reject(plugin: object) -> bool:
    """Whether a plugin has an extension point that can reject a pod (and so registers events)."""
    return isinstance(plugin, (PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, ReservePlugin, PermitPlugin))


def guarded_less(sort: QueueSortPlugin) -> Less:
    """A QueueSort plugin's ``less`` that cannot break the queue: on an exception (or a non-bool
    answer) the pods are ordered by priority, then by when they were queued, as PrioritySort does."""
    less = sort.less

    def guarded(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        try:
            answer = less(a, b)
            if isinstance(answer, (bool, np.bool_)):
                return bool(answer)
            raise TypeError(f"returned {type(answer).__name__}, expected bool")
        except Exception as err:
            log.warning('queue sort plugin "%s" failed: %s', sort.name, err, exc_info=True)
            if a.pod.priority != b.pod.priority:
                return a.pod.priority > b.pod.priority
            return a.timestamp < b.timestamp

    return guarded


class _Registration:
    """A plugin's registered events, in the shape the queue's event-map builder reads."""

    def __init__(self, name: str, events: list[ClusterEvent]) -> None:
        self.name = name
        self._events = events

    def events_to_register(self) -> list[ClusterEvent]:
        return self._events
