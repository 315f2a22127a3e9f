"""Offline simulation: the real scheduler against an embedded cluster on a virtual clock.

The driver plays a scenario the way the conformance corpus was recorded: every object but the
pending pods is created first; pending pods then arrive one at a time, each once the scheduler has
gone idle (no cycle or binding in flight, active and backoff queues empty). Before each scheduling
cycle every pending cluster event is delivered and every backoff is allowed to finish, as a slow
scheduling loop would see it, so the queue order alone decides which pod goes next.

When some pending pod carries ``kubesched.io/arrival`` the run is timed instead: each pod is created at
its arrival (pods without one at time 0, in document order) and the scheduler works on the virtual clock
as it would live. ``kubesched.io/duration`` deletes a bound pod as completed once it has run that long, and
timeline steps (:mod:`kubesched.scenario.timeline`) run at their times; both work in either mode (after the
last arrival, an untimed run keeps going on the clock until neither is left).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kubesched.api.timestamps import format_time
from kubesched.clock import VirtualClock
from kubesched.cluster.protocol import ApiError
from kubesched.config import ConfigError, KubeSchedulerConfiguration, load_config
from kubesched.config.features import FeatureGateError
from kubesched.config.features import feature_gates as make_feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.embedded.controlplane import ControlPlane
from kubesched.recording import (
    AttemptSummary,
    AttemptTally,
    Recorder,
    SummaryDicts,
    TraceWriter,
    recorders_for,
)
from kubesched.recording.trace import AttemptRecord
from kubesched.scenario.manifests import Manifest, ManifestError
from kubesched.scenario.pipeline import Scenario, check_options, field_validation, load_scenario
from kubesched.scenario.pipeline import SimulationError as SimulationError  # part of simulate()'s interface
from kubesched.scenario.timeline import Step, TimelineError, load_timeline
from kubesched.scenario.timing import arrival_seconds
from kubesched.scheduler import Scheduler
from kubesched.sim.deletions import PREEMPTED, TIMELINE, Deletion
from kubesched.sim.driver import Driver
from kubesched.sim.timeline import describe_step, run_step
from kubesched.sim.timeseries import TimeSeries
from kubesched.util.gc_tuning import long_lived_heap

START_TIME = datetime(2024, 1, 1, tzinfo=UTC)


@dataclass
class SimulationResult:
    """What happened: every attempt and where each pending pod ended up.

    What ``attempts`` holds depends on ``record``: with "summary" (the default) one summary dict per
    attempt (:meth:`AttemptSummary.to_dict`), with "full" the conformance-shaped trace record, with
    "none" nothing. ``records`` (trace records) is filled with "full" only, ``summaries`` with both.
    """

    attempts: Sequence[dict[str, Any]]
    final: dict[str, str | None]
    records: Sequence[AttemptRecord] = field(repr=False, default_factory=list)
    summaries: Sequence[AttemptSummary] = field(repr=False, default_factory=list)
    record: str = "summary"
    #: How many scheduling attempts ended, whatever was recorded.
    attempt_count: int = 0
    nominated: dict[str, str] = field(default_factory=dict)
    #: Preemption victims (``namespace/name``), in the order they were deleted.
    deleted: list[str] = field(default_factory=list)
    #: Every pod deleted during the run, in order, with why (:mod:`kubesched.sim.deletions`).
    deletions: list[Deletion] = field(default_factory=list)
    #: Pods of ``final`` that are gone at the end for any reason but completion (preempted, deleted by
    #: the timeline, scaled down): neither scheduled nor pending.
    removed: list[str] = field(default_factory=list)
    never_attempted: list[str] = field(default_factory=list)
    looping: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Pending pods whose ResourceClaims could not be made from their templates, with why: they wait
    #: for the claims (kube-scheduler's PreEnqueue) and are never attempted.
    claims_not_made: dict[str, str] = field(default_factory=dict)
    cluster: EmbeddedCluster | None = field(default=None, repr=False)
    scheduler: Scheduler | None = field(default=None, repr=False)
    virtual_seconds: float = 0.0
    #: Pod -> ``Kind namespace/name`` of the workload whose controller created it.
    workloads: dict[str, str] = field(default_factory=dict)
    #: Pods deleted as completed once their ``kubesched.io/duration`` ran out.
    completed: int = 0
    #: Whether pods arrived at their ``kubesched.io/arrival`` times.
    timed: bool = False
    #: Pending pods, requested / allocatable per resource and bind latency over virtual time.
    series: TimeSeries | None = field(default=None, repr=False)
    #: The kube-scheduler that decided: its version, and any gate set beside it (``1.34``,
    #: ``1.34 (SchedulerAsyncPreemption=false)``).
    emulated: str = ""

    def latency(self) -> dict[str, float]:
        """Creation-to-bound latency percentiles in virtual seconds (p50, p95, p99)."""
        return self.series.latency_percentiles() if self.series is not None else {}

    def pods(self) -> list[dict[str, Any]]:
        assert self.cluster is not None
        return self.cluster.list("Pod")[0]

    def nodes(self) -> list[dict[str, Any]]:
        assert self.cluster is not None
        return self.cluster.list("Node")[0]


#: What a version-4 UUID keeps of its 128 random bits, and the version and variant bits it sets.
_UUID4_KEEP = ~((0xF000 << 64) | (0xC000 << 48)) & ((1 << 128) - 1)
_UUID4_SET = (4 << 76) | (0x8000 << 48)


def _deterministic_uids(seed: int) -> Callable[[], str]:
    """Version-4 UUIDs from a seeded generator (``uuid.UUID(int=..., version=4)`` as text, formatted
    directly: one per created object)."""
    bits = random.Random(f"uids-{seed}").getrandbits

    def uid() -> str:
        h = (bits(128) & _UUID4_KEEP | _UUID4_SET).to_bytes(16).hex()  # the 32 digits, cheaper than "%032x"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    return uid


def _is_pending_pod(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == "Pod" and not (obj.get("spec") or {}).get("nodeName")


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


class Simulation:
    """A scenario loaded into an embedded cluster with a scheduler attached, ready to run.

    The scheduler is moved by the one :class:`Driver` loop; the simulation adds the scenario (from
    :func:`~kubesched.scenario.pipeline.load_scenario`): which objects exist from the start, when pending
    pods arrive, and the timeline's steps.
    """

    def __init__(
        self,
        scenario: Scenario,
        config: KubeSchedulerConfiguration,
        *,
        seed: int = 0,
        tie_break: str = "random",
        progress: Callable[[int, int], None] | None = None,
        timeline: Sequence[Step] = (),
        record: str = "summary",
        recorders: Sequence[Recorder] = (),
        arrivals: Iterable[Mapping[str, Any]] | None = None,
    ) -> None:
        self.clock = VirtualClock(START_TIME)
        # The scheduler and the driver never change what their watches hand them: no copies needed.
        self.control_plane = ControlPlane(
            EmbeddedCluster(
                clock=self.clock.now,
                uid_factory=_deterministic_uids(seed),
                read_only_watchers=True,
                features=config.features,
            ),
            rng=random.Random(f"names-{seed}"),
        )
        self.control_plane.start()
        self.cluster = self.control_plane.cluster
        self.workloads = self.control_plane.workloads
        self.scheduler = Scheduler(self.cluster, config, clock=self.clock, rng=random.Random(seed), tie_break=tie_break)
        self.record = record
        #: How every attempt ended, kept whatever is recorded: the never-attempted pods come from it.
        self.outcomes = AttemptTally()  # counts only: nothing kept per attempt
        self.summary, self.full = recorders_for(record)
        for recorder in (self.outcomes, self.summary, self.full, *recorders):
            if recorder is not None:
                self.scheduler.add_recorder(recorder)
        self.series = TimeSeries()
        self.driver = Driver(self.cluster, self.scheduler, self.clock, series=self.series, progress=progress)
        self.workloads.pod_deletion_listener = self.driver.deletions.note_workload_deletion
        self.manifests = scenario.manifests
        self.timeline = list(timeline)
        self.warnings: list[str] = [*self.scheduler.warnings, *scenario.warnings]
        self.pending: list[Manifest] = []
        #: Arrival second of each pending pod (same order as ``pending``); all None when untimed.
        self.arrivals: list[float | None] = []
        #: A lazy, time-ordered stream of further pending pods, each created when it is due.
        self.stream = arrivals
        self._streamed: list[str] = []
        self._created: list[str] = []

    @property
    def looping(self) -> list[str]:
        return self.driver.looping

    @property
    def timed(self) -> bool:
        """Whether some pending pod carries a ``kubesched.io/arrival`` (or pods arrive as a stream)."""
        if self.stream is not None:
            return True
        return any(a is not None for a in self.arrivals)

    # -- loading -------------------------------------------------------------------------------------
    def load(self) -> None:
        """Create every object except pending pods, in document order, and start the scheduler."""
        for index, m in enumerate(self.manifests):
            # Only metadata is changed here, and the cluster copies what it stores.
            raw_meta = m.obj.get("metadata")
            if raw_meta is not None and not isinstance(raw_meta, dict):
                self._create(m, m.obj)  # refused by the cluster, naming the document
            meta = dict(raw_meta or {})
            obj = {**m.obj, "metadata": meta}
            if _is_pending_pod(obj):
                try:  # checked by the pipeline already: read here for its value
                    arrival = arrival_seconds(obj, f"{m.source}: document {m.doc_index}")
                except ValueError as err:
                    raise SimulationError(str(err)) from None
                if arrival is None:
                    meta.setdefault("creationTimestamp", format_time(START_TIME + timedelta(seconds=index)))
                else:
                    meta.pop("creationTimestamp", None)  # the cluster stamps the moment it arrives
                self.pending.append(Manifest(m.source, m.doc_index, obj))
                self.arrivals.append(arrival)
                continue
            meta.setdefault("creationTimestamp", format_time(START_TIME + timedelta(seconds=index)))
            self._create(m, obj)
        # Controllers settle what was loaded (claims bound, budgets counted) before scheduling starts.
        self.cluster.deliver_pending()
        self.driver.expect(_key(m.obj) for m in self.pending)
        self.driver.start()
        for step in self.timeline:
            self.driver.at(step.at, self._step_runner(step))

    def _step_runner(self, step: Step) -> Callable[[], None]:
        def run() -> None:
            try:
                with self.driver.deletions.span(TIMELINE, describe_step(step)):
                    run_step(step, self.cluster)
            except TimelineError as err:
                self.warnings.append(str(err))

        return run

    def _create(self, m: Manifest, obj: dict[str, Any]) -> None:
        try:
            self.cluster.load(obj)
        except ApiError as err:
            if obj.get("kind") == "Namespace" and err.code == 409:
                return  # already created because an earlier object referenced it
            raise ManifestError.at(m, "", err.message) from None
        if obj.get("kind") == "Pod":
            self._created.append(_key(obj))

    # -- running -------------------------------------------------------------------------------------
    def run(self, *, burst: bool = False) -> SimulationResult:
        """Play the pending pods (see the module docstring), then whatever the clock still holds:
        pod completions and timeline steps."""
        if self.workloads.has_workloads():
            self.driver.settle()  # the controllers create their pods as the workloads' watch events arrive
        if self.timed:
            self._run_timed()
        elif burst:
            for m in self.pending:
                self._create(m, m.obj)
            self.driver.settle()
        else:
            for m in self.pending:
                self._create(m, m.obj)
                self.driver.settle()
        self.driver.run()
        self.driver.finish()
        self.series.sample(self.driver.seconds())
        return self.result()

    def _run_timed(self) -> None:
        """Pods arrive at their ``kubesched.io/arrival`` (time 0 without one, in document order)."""
        order = sorted(range(len(self.pending)), key=lambda i: self.arrivals[i] or 0.0)
        scenario = (
            (self.arrivals[i] or 0.0, functools.partial(self._create, self.pending[i], self.pending[i].obj))
            for i in order
        )
        if self.stream is None:
            self.driver.feed(scenario)
        elif not order:  # streamed pods only: nothing to merge them with
            self.driver.feed(self._stream_arrivals(self.stream))
        else:
            self.driver.feed(heapq.merge(scenario, self._stream_arrivals(self.stream), key=lambda a: a[0]))

    def _stream_arrivals(self, stream: Iterable[Mapping[str, Any]]) -> Iterator[tuple[float, Callable[[], None]]]:
        """``(second, create)`` for each streamed pod, read only when the previous one is due.

        Streamed pods are checked as the API server would check them when they are created (a pod the
        scheduler cannot read gets an event and stays pending, as in a live cluster): parsing each one
        twice would cost what streaming saves."""
        last = 0.0
        for index, obj in enumerate(stream, 1):
            where = f"arrivals: item {index}"
            is_mapping = type(obj) is dict or isinstance(obj, Mapping)  # dict first: the abstract check is slower
            if not is_mapping or obj.get("kind") != "Pod" or not _is_pending_pod(obj):
                raise SimulationError(f"{where}: expected a Pod without spec.nodeName")
            try:
                at = arrival_seconds(obj, where) or 0.0
            except ValueError as err:
                raise SimulationError(str(err)) from None
            if at < last:
                raise SimulationError(f"{where}: arrivals must come in time order ({at:g}s after {last:g}s)")
            last = at
            yield at, functools.partial(self._arrive_streamed, obj, where)

    def _arrive_streamed(self, obj: Mapping[str, Any], where: str) -> None:
        try:
            self.cluster.load(obj if type(obj) is dict else dict(obj))  # load copies what it stores
        except ApiError as err:
            raise SimulationError(f"{where}: {err.message}") from None
        key = _key(obj)
        self._streamed.append(key)
        self._created.append(key)

    # -- results -------------------------------------------------------------------------------------
    def result(self) -> SimulationResult:
        pods = {(_key(p)): p for p in self.cluster.objects("Pod")}  # read only: no copies
        deletions = list(self.driver.deletions.deletions)
        final, nominated = self._final(pods, deletions)
        attempted = self.outcomes.attempted
        never = sorted(k for k in final if k not in attempted and k not in self.looping)
        warnings = list(self.warnings) + self.control_plane.warnings
        for key in never:
            pod = pods.get(key)
            name = ((pod or {}).get("spec") or {}).get("schedulerName", "default-scheduler")
            if pod is not None and name not in self.scheduler.profiles:
                warnings.append(f'pod {key}: schedulerName "{name}" matches no profile; never scheduled')
        warnings += [f"workload controllers: {e}" for e in self.workloads.errors]
        full = self.full.in_cycle_order() if self.full is not None else None
        summaries = self.summary.in_cycle_order() if self.summary is not None else []
        # Attempts are in scheduling-cycle order (a binding that waited reports late).
        return SimulationResult(
            attempts=full.dicts if full is not None else SummaryDicts(summaries),
            final=final,
            records=full.records if full is not None else [],
            summaries=summaries,
            record=self.record,
            attempt_count=self.outcomes.count,
            nominated=nominated,
            deleted=list(dict.fromkeys(d.pod for d in deletions if d.reason == PREEMPTED)),
            deletions=deletions,
            removed=[k for k in final if k not in pods and k not in self.driver.completed],
            never_attempted=never,
            looping=sorted(set(self.looping)),
            warnings=warnings,
            claims_not_made={k: m for k, m in self.control_plane.claims_not_made.items() if final.get(k, "") is None},
            cluster=self.cluster,
            scheduler=self.scheduler,
            virtual_seconds=(self.clock.now() - START_TIME).total_seconds(),
            workloads={k: w for k, w in self.workloads.pod_workloads.items() if k in final},
            completed=len(self.driver.completed),
            timed=self.timed,
            series=self.series,
            emulated=self.scheduler.features.describe(),
        )

    def _final(
        self, pods: Mapping[str, Mapping[str, Any]], deletions: Sequence[Deletion]
    ) -> tuple[dict[str, str | None], dict[str, str]]:
        """Where each pod to schedule ended up (its node, the node it completed on, or None), and the
        nominations of those left without one.

        The pods the workload controllers made count when they are there at the end or were placed
        before they went (completed, preempted, scaled down); one removed before it was ever placed
        is left out.
        """
        completed = self.driver.completed
        placed = {d.pod for d in deletions if d.node}
        made = (k for k in self.workloads.created_pods if k in pods or k in placed)
        final: dict[str, str | None] = {}
        nominated: dict[str, str] = {}
        for key in itertools.chain((_key(m.obj) for m in self.pending), self._streamed, made):
            pod = pods.get(key)
            final[key] = ((pod.get("spec") or {}).get("nodeName") or None) if pod else completed.get(key)
            nnn = ((pod or {}).get("status") or {}).get("nominatedNodeName")
            if pod and nnn and not final[key]:
                nominated[key] = nnn
        return final, nominated


def resolve_config(
    config: str | Path | Mapping[str, Any] | KubeSchedulerConfiguration | None,
    *,
    emulated_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
) -> KubeSchedulerConfiguration:
    """Load a config from a path or dict for the emulated version and gates asked for (the newest
    version's defaults when neither is given), or take a built one (which was loaded for its own)."""
    try:
        features = (
            None
            if emulated_version is None and feature_gates is None
            else make_feature_gates(emulated_version, feature_gates)
        )
    except FeatureGateError as err:
        raise SimulationError(str(err)) from None
    if isinstance(config, KubeSchedulerConfiguration):
        if features is not None and features != config.features:
            raise SimulationError(
                f"the configuration was loaded for kube-scheduler {config.features.describe()}, not "
                f"{features.describe()}: load it with load_config(..., features=...) for that version"
            )
        return config
    try:
        return load_config(config, features=features)
    except ConfigError:
        raise
    except (OSError, ValueError) as err:
        raise SimulationError(f"{config}: {err}") from None


def simulate(
    objects_or_paths: Iterable[Any] | str | Path,
    config: str | Path | Mapping[str, Any] | KubeSchedulerConfiguration | None = None,
    seed: int = 0,
    burst: bool = False,
    tie_break: str = "random",
    *,
    progress: Callable[[int, int], None] | None = None,
    timeline: str | Path | Sequence[Mapping[str, Any]] | None = None,
    record: str = "summary",
    trace: str | Path | None = None,
    recorders: Sequence[Recorder] = (),
    arrivals: Iterable[Mapping[str, Any]] | None = None,
    emulated_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    validate: str | bool = "strict",
) -> SimulationResult:
    """Simulate scheduling the pending pods of a scenario; see the module docstring for the timing.

    ``objects_or_paths`` takes manifest files or folders, or object dicts (a mix is fine).
    ``timeline`` takes a timeline YAML file or a list of step dicts (see :mod:`kubesched.scenario.timeline`).
    ``record`` is "summary" (a compact summary per attempt, the default), "full" (every trace record,
    built when read) or "none"; ``trace`` streams every attempt's trace record to a ``.jsonl`` (or
    ``.jsonl.gz``) file as the run goes; ``recorders`` are further :class:`~kubesched.recording.Recorder`
    sinks to report attempts to. ``arrivals`` is a lazy, time-ordered iterable of pending pod dicts
    carrying ``kubesched.io/arrival`` (e.g. :func:`kubesched.scenario.generate.poisson.poisson_pods`): each is read
    only when the previous one is due, so a million arrivals never sit in memory together; giving it
    makes the run timed. ``validate`` treats unknown and duplicate fields of the scenario and the
    timeline as kubectl's ``--validate`` does: "strict" refuses them, "warn" drops each and reports it
    once in the warnings, "ignore" drops them (see :mod:`kubesched.scenario.field_validation`).
    ``emulated_version`` ("1.30" or "1.34", the default) and ``feature_gates`` (``{"Name": bool}`` or
    ``"Name=true,..."``) choose which kube-scheduler decides, as its ``--emulated-version`` and
    ``--feature-gates`` do; a config given already loaded carries its own.
    """
    with long_lived_heap():  # the scenario's objects live for the whole call (see kubesched.util.gc_tuning)
        return _simulate(
            objects_or_paths,
            config,
            seed,
            burst,
            tie_break,
            progress=progress,
            timeline=timeline,
            record=record,
            trace=trace,
            recorders=recorders,
            arrivals=arrivals,
            validate=validate,
            emulated_version=emulated_version,
            feature_gates=feature_gates,
        )


def _simulate(
    objects_or_paths: Iterable[Any] | str | Path,
    config: str | Path | Mapping[str, Any] | KubeSchedulerConfiguration | None,
    seed: int,
    burst: bool,
    tie_break: str,
    *,
    progress: Callable[[int, int], None] | None,
    timeline: str | Path | Sequence[Mapping[str, Any]] | None,
    record: str,
    trace: str | Path | None,
    recorders: Sequence[Recorder],
    arrivals: Iterable[Mapping[str, Any]] | None,
    emulated_version: str | None,
    feature_gates: Mapping[str, bool] | str | None,
    validate: str | bool,
) -> SimulationResult:
    check_options(config, seed, burst, tie_break, progress)
    try:
        recorders_for(record)
    except ValueError as err:
        raise SimulationError(str(err)) from None
    fields = field_validation(validate)
    try:  # read first, so that the scenario's warnings include the timeline's
        steps = load_timeline(timeline, fields) if timeline is not None else []
    except TimelineError as err:
        raise SimulationError(str(err)) from None
    scenario = load_scenario(objects_or_paths, fields)
    cfg = resolve_config(config, emulated_version=emulated_version, feature_gates=feature_gates)
    writer = TraceWriter(trace) if trace is not None else None
    try:
        sim = Simulation(
            scenario,
            cfg,
            seed=seed,
            tie_break=tie_break,
            progress=progress,
            timeline=steps,
            record=record,
            recorders=[*recorders, *([writer] if writer is not None else [])],
            arrivals=arrivals,
        )
        sim.load()
        return sim.run(burst=burst)
    finally:
        if writer is not None:
            writer.close()
