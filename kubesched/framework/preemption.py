"""The generic preemption evaluator shared by preemption PostFilter plugins (kube-scheduler's Evaluator).

A plugin supplies the policy (:class:`PreemptionPolicy`: who may preempt, which victims a node would
give up, how many nodes to try); the :class:`Evaluator` runs the procedure around it:

1. refresh the preemptor from the cluster and ask the policy whether it may preempt at all;
2. find candidate nodes by dry-running victim selection on clones of the nodes where removing pods
   could help, starting at an offset and stopping once enough candidates are known;
3. pick the best candidate (fewest PDB violations, lowest top victim priority, ...);
4. preempt its victims and withdraw lower-priority nominations to that node
   (:mod:`kubesched.framework.preemption_victims`): in the cycle, or, with v1.34's asynchronous
   preemption, off the scheduling loop while the cycle returns the nomination at once.

Everything here is sequential: kube-scheduler dry-runs nodes in parallel, which makes its candidate
order timing-dependent; walking the nodes in order from the offset is one of the orders it can produce
and keeps simulations reproducible.

The emulated version decides a few details: v1.34 reads the status of a nominated node that got no
verdict (deleted, or outside a PreFilterResult) as UnschedulableAndUnresolvable, no longer clears the
preemptor's own nomination when no node could help (the failure's status patch does), and counts every
node in the "no candidate" message.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import compress, filterfalse, repeat
from operator import attrgetter, not_
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.api.disruption_budget import PodDisruptionBudget
from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.cluster.protocol import NotFound
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import fit_error_message
from kubesched.framework.extender import Extender, ExtenderError, Victims
from kubesched.framework.interfaces import PostFilterResult
from kubesched.framework.preemption_victims import PreemptingPods, VictimPreemption
from kubesched.framework.status import Code, Status, code_of, is_success
from kubesched.klog import Logger, kobj, kref

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle

log = logging.getLogger(__name__)

MAX_INT32 = 2**31 - 1
MIN_INT64 = -(2**63)

#: CycleState key of what the extenders' preempt verbs said (for traces).
EXTENDER_VERDICTS_KEY = "Extender/preempt"
NOT_HELPFUL_MSG = "Preemption is not helpful for scheduling"
NO_CANDIDATE_MSG = "no candidate node for preemption"

logger = Logger(__name__)


# -- values -----------------------------------------------------------------------------------------
@dataclass(slots=True)
class Candidate:
    """A node the preemptor could run on once ``victims`` are gone."""

    name: str
    victims: Victims

    @property
    def victim_keys(self) -> list[str]:
        return [p.key for p in self.victims.pods]


ScoreFunc = Callable[[str], int]


class PreemptionPolicy(Protocol):
    """What a preemption plugin decides; the :class:`Evaluator` does the rest."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """Where the dry run starts among the potential nodes, and how many candidates suffice."""
        ...

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]: ...

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        """Whether ``pod`` may preempt at all, and why not."""
        ...

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget]
    ) -> tuple[list[Pod], int, Status | None]:
        """Victims on ``node_info`` (a clone, as is ``state``) and the number violating a PDB."""
        ...

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[ScoreFunc] | None:
        """Score functions used to pick the candidate; None selects the default criteria."""
        ...


# -- pod ordering helpers (pkg/scheduler/util) ------------------------------------------------------
def clock_reading(now: datetime, pods: Iterable[Pod]) -> datetime:
    """What kube-scheduler's ``time.Now()`` stands for when it fills in a missing start time.

    There it is the wall clock, later than the start of every running pod. A simulation's virtual
    clock can lag the start times its manifests carry (they are stamped in document order), and a
    pod bound during the run, which no kubelet ever starts, would then count as started *before*
    pods that are running: the reading is lifted just past the latest start among ``pods``.
    """
    latest = max((p.start_time for p in pods if p.start_time is not None), default=None)
    if latest is not None and latest.tzinfo is None:
        latest = latest.replace(tzinfo=UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    if latest is not None and latest >= now:
        return latest + timedelta(microseconds=1)
    return now


def pod_start_time(pod: Pod, now: datetime) -> datetime:
    """When the pod started; pods not started yet (assumed, or bound without a kubelet) count as now."""
    return pod.start_time if pod.start_time is not None else now


def more_important_pod(a: Pod, b: Pod, now: datetime) -> bool:
    """Higher priority first; equal priorities: the one that started earlier.

    kube-scheduler reads the clock afresh for each pod without a start time, and the second reading
    is later than the first: two such pods compare as "a before b" whichever way round they are asked.
    That inconsistency decides how Go's sort arranges them, so it is reproduced here.
    """
    if a.priority != b.priority:
        return a.priority > b.priority
    if a.start_time is None and b.start_time is None:
        return True
    return pod_start_time(a, now) < pod_start_time(b, now)


def earliest_pod_start_time(victims: Victims, now: datetime) -> datetime | None:
    """The earliest start time among the victims sharing the highest priority."""
    if not victims.pods:
        return None
    earliest = pod_start_time(victims.pods[0], now)
    top = victims.pods[0].priority
    for pod in victims.pods:
        if pod.priority == top:
            started = pod_start_time(pod, now)
            if started < earliest:
                earliest = started
        elif pod.priority > top:
            top = pod.priority
            earliest = pod_start_time(pod, now)
    return earliest


def _unix_nano(t: datetime) -> int:
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    delta = t - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


# -- messages ---------------------------------------------------------------------------------------
def _aggregate_message(errors: Sequence[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): the lone message, or ``[a, b]``."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# -- candidate selection ----------------------------------------------------------------------------
def default_score_funcs(nodes_to_victims: Mapping[str, Victims], now: datetime) -> list[ScoreFunc]:
    """kube-scheduler's criteria, most significant first; each prefers higher scores."""

    def fewest_pdb_violations(node: str) -> int:
        return -nodes_to_victims[node].num_pdb_violations

    def lowest_top_priority(node: str) -> int:
        return -nodes_to_victims[node].pods[0].priority

    def smallest_priority_sum(node: str) -> int:
        # Shifting every priority by 2^31 keeps the sum monotonic in the number of victims even when
        # priorities are negative.
        return -sum(p.priority + MAX_INT32 + 1 for p in nodes_to_victims[node].pods)

    def fewest_victims(node: str) -> int:
        return -len(nodes_to_victims[node].pods)

    def latest_start_of_top_victims(node: str) -> int:
        earliest = earliest_pod_start_time(nodes_to_victims[node], now)
        return MIN_INT64 if earliest is None else _unix_nano(earliest)

    return [
        fewest_pdb_violations,
        lowest_top_priority,
        smallest_priority_sum,
        fewest_victims,
        latest_start_of_top_victims,
    ]


def _best_by_default(nodes_to_victims: Mapping[str, Victims], now: datetime) -> str:
    """The first node with the greatest scores by :func:`default_score_funcs`' criteria compared in
    order (ties to the next): each criterion is worked out only for the nodes tied on those before."""
    entries = list(nodes_to_victims.items())
    entries = _keep_best(entries, [-v.num_pdb_violations for _, v in entries])
    if len(entries) > 1:
        entries = _keep_best(entries, [-v.pods[0].priority for _, v in entries])
    if len(entries) > 1:
        entries = _keep_best(entries, [-sum(p.priority + MAX_INT32 + 1 for p in v.pods) for _, v in entries])
    if len(entries) > 1:
        entries = _keep_best(entries, [-len(v.pods) for _, v in entries])
    if len(entries) > 1:
        starts = [earliest_pod_start_time(v, now) for _, v in entries]
        entries = _keep_best(entries, [MIN_INT64 if t is None else _unix_nano(t) for t in starts])
    return entries[0][0]


def _keep_best(entries: list[tuple[str, Victims]], scores: list[int]) -> list[tuple[str, Victims]]:
    """The entries with the greatest score, in their order."""
    best = max(scores)
    return [entry for entry, score in zip(entries, scores, strict=True) if score == best]


def pick_one_node_for_preemption(
    nodes_to_victims: Mapping[str, Victims], score_funcs: list[ScoreFunc] | None, now: datetime
) -> str:
    """The node to preempt on: the best by each score function in turn; remaining ties -> first.

    Candidates are considered in ``nodes_to_victims`` order (kube-scheduler iterates a Go map, so any
    order is one it could use).
    """
    if not nodes_to_victims:
        return ""
    if not score_funcs:
        # The criteria in turn, ties to the next: the first node with the greatest scores in that order.
        return _best_by_default(nodes_to_victims, now)
    remaining = list(nodes_to_victims)
    funcs = score_funcs
    for func in funcs:
        best = MIN_INT64
        selected: list[str] = []
        for node in remaining:
            score = func(node)
            if score > best:
                best = score
                selected = []
            if score == best:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        remaining = selected
    return remaining[0]


def nodes_where_preemption_might_help(
    nodes: Sequence[NodeInfo], statuses: Mapping[str, Status], absent: Status | None = None
) -> tuple[list[NodeInfo], dict[str, Status]]:
    """Nodes whose filters said plain Unschedulable; the rest are reported as not helped.

    A node absent from ``statuses`` has the ``absent`` status (v1.34's absent-nodes status), else it is
    treated like an UnschedulableAndUnresolvable one (v1.30: such nodes were excluded by a
    PreFilterResult); nodes with any other code are left out of both.
    """
    potential: list[NodeInfo] = []
    not_helped: dict[str, Status] = {}
    unresolvable = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL_MSG,))
    absent_code = code_of(absent) if absent is not None else Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    # By status object: nodes rejected alike share one.
    distinct = dict(zip(map(id, statuses.values()), statuses.values(), strict=True))
    codes = {key: code_of(listed) for key, listed in distinct.items()}
    if (
        len(statuses) == len(nodes)
        and all(code is Code.UNSCHEDULABLE for code in codes.values())
        and all(map(statuses.__contains__, map(attrgetter("name"), nodes)))
    ):
        return list(nodes), not_helped  # every node rejected, and only for what preemption may change
    for info in nodes:
        name = info.name
        status = statuses.get(name)
        if status is not None:
            code = codes[id(status)]
        elif name in statuses:
            code = code_of(status)
        else:
            code = absent_code
        if code is Code.UNSCHEDULABLE:
            potential.append(info)
        elif code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            not_helped[name] = unresolvable
    return potential, not_helped


def _absent_status(statuses: Mapping[str, Status]) -> Status:
    """The status of nodes without a verdict of their own (v1.34's NodeToStatus absent-nodes status)."""
    absent = getattr(statuses, "absent_nodes_status", None)
    if isinstance(absent, Status):
        return absent
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


class _CandidateList:
    """A fixed-capacity list: adds beyond capacity are dropped, as kube-scheduler's are."""

    __slots__ = ("capacity", "items")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: list[Candidate] = []

    def add(self, candidate: Candidate) -> None:
        if len(self.items) < self.capacity:
            self.items.append(candidate)

    def __len__(self) -> int:
        return len(self.items)


def _judged(
    info: NodeInfo,
    victims: list[Pod],
    violations: int,
    status: Status | None,
    found: tuple[_CandidateList, _CandidateList],
) -> Status | None:
    """What victim selection on ``info`` ended with: None when the node is a candidate (added to
    ``found``, PDB-respecting or violating), else why not."""
    if is_success(status) and victims:
        found[0 if violations == 0 else 1].add(Candidate(info.name, Victims(victims, violations)))
        return None
    if is_success(status):
        return Status(Code.ERROR, (f'expected at least one victim pod on node "{info.name}"',))
    assert status is not None
    return status


def _extender_victims(
    ext: Extender, pod: Pod, victims: dict[str, Victims], infos: Mapping[str, NodeInfo], verdicts: dict[str, Any]
) -> dict[str, Victims]:
    """One extender's preempt verb: the nodes (and victims) it keeps; what it said goes into
    ``verdicts``. An ignorable extender that fails keeps ``victims`` as they are."""
    try:
        answer = ext.process_preemption(pod, victims, infos)
    except ExtenderError as err:
        verdicts.setdefault("preempt", {})[ext.name] = {"error": str(err), "ignored": ext.is_ignorable()}
        if not ext.is_ignorable():
            raise
        log.info("skipped extender %s as it returned error and has ignorable flag set: %s", ext.name, err)
        return victims
    for node in list(answer):
        if answer[node].pods:
            continue
        if not ext.is_ignorable():
            raise ExtenderError(f'expected at least one victim pod on node "{node}"')
        del answer[node]
    verdicts.setdefault("preempt", {})[ext.name] = {node: sorted(p.key for p in v.pods) for node, v in answer.items()}
    return answer


# -- the evaluator ----------------------------------------------------------------------------------
@dataclass
class Evaluator:
    """Runs one preemption attempt for ``policy`` (one instance per PostFilter call)."""

    plugin_name: str
    handle: Handle
    state: CycleState
    policy: PreemptionPolicy
    #: The preemptors whose victims are being preempted off the loop: given, the victims of a chosen
    #: candidate are preempted asynchronously (v1.34's SchedulerAsyncPreemption); None, in the cycle.
    preempting: PreemptingPods | None = None
    #: What preempts the victims (made from the handle when not given).
    victim_preemption: VictimPreemption | None = None
    #: The candidate chosen by the last successful :meth:`preempt` (None otherwise).
    chosen: Candidate | None = field(default=None, init=False)
    #: Whether the v1.34 rules apply (the emulated version, as the victim preemption read it).
    v134: bool = field(default=True, init=False)

    def __post_init__(self) -> None:
        if self.victim_preemption is None:
            self.victim_preemption = VictimPreemption(self.plugin_name, self.handle)
        self.v134 = self.victim_preemption.v134

    @property
    def logger_name(self) -> str:
        """The name kube-scheduler's framework gives the plugin's logger (its lines' ``logger=`` key)."""
        return f"PostFilter.{self.plugin_name}"

    # 0-5: the whole procedure
    def preempt(self, pod: Pod, statuses: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status | None]:
        """``(PostFilterResult, None)`` on success; otherwise a status, with a result when the
        preemptor's nomination should be cleared (no candidate at all)."""
        try:
            pod = self._latest(pod)
        except Exception as err:
            logger.error(
                err,
                "Could not get the updated preemptor pod object",
                "logger",
                self.logger_name,
                "pod",
                kref(pod.namespace, pod.name),
            )
            return None, Status.from_error(err)
        if (refusal := self._not_eligible(pod, statuses)) is not None:
            return None, refusal

        try:
            candidates, node_statuses, errors = self.find_candidates(pod, statuses)
        except Exception as err:
            return None, Status.from_error(err)
        if errors and not candidates:
            return None, Status(Code.ERROR, (_aggregate_message(errors),))
        if not candidates:
            if v := logger.v(2):
                v.info(
                    "No preemption candidate is found; preemption is not helpful for scheduling",
                    "logger",
                    self.logger_name,
                    "pod",
                    kobj(pod),
                )
            return (
                PostFilterResult(""),
                Status(Code.UNSCHEDULABLE, (fit_error_message(len(node_statuses), node_statuses),)),
            )

        candidates, status = self.call_extenders(pod, candidates)
        if status is not None:
            return None, status
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, (NO_CANDIDATE_MSG,))
        if v := logger.v(2):
            v.info(
                "the target node for the preemption is determined",
                "logger",
                self.logger_name,
                "node",
                best.name,
                "pod",
                kobj(pod),
            )
        status = self.prepare_candidate(best, pod)
        if not is_success(status):
            return None, status
        self.chosen = best
        return PostFilterResult(best.name), None

    # 1) eligibility
    def _not_eligible(self, pod: Pod, statuses: Mapping[str, Status]) -> Status | None:
        """Why the preemptor may not preempt (an Unschedulable status), or None when it may."""
        ok, message = self.policy.pod_eligible_to_preempt_others(
            pod, self.nominated_node_status(statuses, pod.nominated_node_name)
        )
        if ok:
            return None
        if v := logger.v(5):
            v.info(
                "Pod is not eligible for preemption", "logger", self.logger_name, "pod", kobj(pod), "reason", message
            )
        return Status(Code.UNSCHEDULABLE, (message,))

    def nominated_node_status(self, statuses: Mapping[str, Status], node: str) -> Status | None:
        """The filters' verdict on the nominated node. A node without one (deleted, or left out by a
        PreFilterResult) counted as passing in v1.30 and counts as UnschedulableAndUnresolvable in
        v1.34 (unless the statuses say otherwise for such nodes: ``absent_nodes_status``)."""
        if node in statuses or not self.v134:
            return statuses.get(node)
        return _absent_status(statuses)

    # 5) the victims
    def prepare_candidate(self, candidate: Candidate, pod: Pod) -> Status | None:
        """Preempt the candidate's victims: in the cycle, or (asynchronous preemption) start doing so
        off the loop and succeed at once."""
        assert self.victim_preemption is not None
        if self.preempting is not None:
            self.victim_preemption.prepare_candidate_async(candidate, pod, self.preempting)
            return None
        return self.victim_preemption.prepare_candidate(candidate, pod)

    # 3) extenders with a preempt verb may drop candidates or change their victims
    def call_extenders(self, pod: Pod, candidates: list[Candidate]) -> tuple[list[Candidate], Status | None]:
        """The candidates every interested preempting extender accepts, in turn (an ignorable
        extender that fails is skipped); an Error status when another one fails."""
        extenders = self.handle.extenders
        if not extenders or not candidates:
            return candidates, None
        victims = {c.name: Victims(list(c.victims.pods), c.victims.num_pdb_violations) for c in candidates}
        infos = {name: info for name in victims if (info := self.handle.snapshot.get(name)) is not None}
        verdicts: dict[str, Any] = {}
        self.state.write(EXTENDER_VERDICTS_KEY, verdicts)
        for ext in extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod):
                continue
            try:
                victims = _extender_victims(ext, pod, victims, infos, verdicts)
            except ExtenderError as err:
                return [], Status.from_error(err)
            if not victims:
                break  # no node left: no extender can bring one back
        return [Candidate(name, Victims(v.pods, v.num_pdb_violations)) for name, v in victims.items()], None

    def _latest(self, pod: Pod) -> Pod:
        """The preemptor as the cluster has it now (its nomination may have changed since queueing): from
        the scheduler's pod lister when the handle has one (as upstream's podLister), never a live GET."""
        lister = getattr(self.handle, "extra", {}).get("pod_lister")
        if lister is not None:
            latest: Pod | None = lister(pod)
            if latest is None:
                raise NotFound.of("pods", pod.name)
            return latest
        getter = getattr(self.handle.cluster, "get", None)
        if getter is None:
            return pod
        return Pod.from_dict(getter("Pod", pod.namespace, pod.name))

    # 2) candidates
    def find_candidates(
        self, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Candidates, the status of every node that is not one, and dry-run error messages."""
        all_nodes = list(self.handle.snapshot.node_infos)
        if not all_nodes:
            raise RuntimeError("no nodes available")
        absent = _absent_status(statuses) if self.v134 else None
        potential, not_helped = nodes_where_preemption_might_help(all_nodes, statuses, absent)
        if not potential:
            if v := logger.v(3):
                v.info(
                    "Preemption will not help schedule pod on any node", "logger", self.logger_name, "pod", kobj(pod)
                )
            if not self.v134:
                assert self.victim_preemption is not None
                self.victim_preemption.clear_nominated_node_name([pod])
            return [], self._not_helped(all_nodes, {}, not_helped), []
        pdbs = self.list_pdbs()
        offset, num_candidates = self.policy.get_offset_and_num_candidates(len(potential))
        candidates, node_statuses, errors = self.dry_run_preemption(pod, potential, pdbs, offset, num_candidates)
        return candidates, self._not_helped(all_nodes, node_statuses, not_helped), errors

    def _not_helped(
        self, all_nodes: Sequence[NodeInfo], dry_run: dict[str, Status], not_helped: dict[str, Status]
    ) -> dict[str, Status]:
        """The dry run's statuses and the nodes preemption cannot help: v1.30 names those whose filters
        said UnschedulableAndUnresolvable (or nothing), v1.34 every node the dry run did not try."""
        if not self.v134:
            dry_run.update(not_helped)
            return dry_run
        unresolvable = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL_MSG,))
        # Every node not tried, in node order (a C-level pass: this runs for every preemptor).
        dry_run.update(zip(filterfalse(dry_run.__contains__, map(attrgetter("name"), all_nodes)), repeat(unresolvable)))
        return dry_run

    def list_pdbs(self) -> list[PodDisruptionBudget]:
        """From the scheduler's lister (never a live LIST in the scheduling cycle)."""
        items = self.handle.listers.list("PodDisruptionBudget")
        return [PodDisruptionBudget.from_dict(dict(item)) for item in items]

    def dry_run_preemption(
        self,
        pod: Pod,
        potential: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Try nodes from ``offset`` on (wrapping) until a PDB-respecting candidate is known and
        candidates of both kinds reach ``num_candidates``; PDB-respecting ones come first. Nodes a
        policy can tell apart without trying (``screen_victims``) are not tried one by one."""
        found = (_CandidateList(num_candidates), _CandidateList(num_candidates))  # PDB-respecting, violating
        errors: list[str] = []
        n = len(potential)
        offset %= n
        order = [*potential[offset:], *potential[:offset]]
        screen = getattr(self.policy, "screen_victims", None)
        screened = screen(self.state, pod, potential) if screen is not None else None
        # Per node in visiting order, why it is no candidate (None: it is one, or was not tried).
        marks: list[Status | None] = [*screened[offset:], *screened[:offset]] if screened is not None else [None] * n
        stop = self._walk(pod, order, marks, pdbs, found, num_candidates, errors)
        visited = marks[:stop]
        node_statuses = dict(compress(zip(map(attrgetter("name"), order[:stop]), visited, strict=True), visited))
        return found[0].items + found[1].items, node_statuses, errors

    def _walk(
        self,
        pod: Pod,
        order: Sequence[NodeInfo],
        marks: list[Status | None],
        pdbs: Sequence[PodDisruptionBudget],
        found: tuple[_CandidateList, _CandidateList],
        num_candidates: int,
        errors: list[str],
    ) -> int:
        """Try the unmarked nodes in order until enough candidates are known; marks what each node tried
        is not, returns how many nodes of ``order`` were visited. The nodes are taken a stretch at a time,
        as many as candidates are still missing (none of them can end the walk early): a policy that keeps
        outcomes (``kept_reprieves``) hands those of a whole stretch back at once."""
        copies_itself = getattr(self.policy, "copies_what_it_changes", False)
        kept_reprieves = getattr(self.policy, "kept_reprieves", None) if copies_itself else None
        todo = list(compress(range(len(order)), map(not_, marks)))  # the unmarked nodes (statuses are truthy)
        start = 0
        while start < len(todo):
            stretch = todo[start : start + max(num_candidates - len(found[0]) - len(found[1]), 1)]
            start += len(stretch)
            infos = [order[i] for i in stretch]
            kept = kept_reprieves(self.state, pod, infos, pdbs) if kept_reprieves is not None else None
            for j, i in enumerate(stretch):
                outcome = kept[j] if kept is not None else None
                if outcome is None:
                    status = self._try_node(pod, infos[j], pdbs, found, copies_itself)
                elif outcome[0]:  # a candidate (what _judged makes of victims and a success)
                    found[0 if outcome[1] == 0 else 1].add(Candidate(infos[j].name, Victims(*outcome)))
                    status = None
                else:
                    status = _judged(infos[j], outcome[0], outcome[1], None, found)
                if status is None:
                    if len(found[0]) > 0 and len(found[0]) + len(found[1]) >= num_candidates:
                        return i + 1
                    continue
                if status.code is Code.ERROR:
                    errors.append(status.message)
                marks[i] = status
        return len(order)

    def _try_node(
        self,
        pod: Pod,
        info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
        found: tuple[_CandidateList, _CandidateList],
        copies_itself: bool,
    ) -> Status | None:
        """Victim selection on one node: None when it is a candidate (added to ``found``), else why not.
        A policy that ``copies_itself`` what it changes gets the snapshot's node and the cycle's state as
        they are (DefaultPreemption often decides without changing either)."""
        victims, violations, status = self.policy.select_victims_on_node(
            self.state if copies_itself else self.state.clone(), pod, info if copies_itself else info.snapshot(), pdbs
        )
        return _judged(info, victims, violations, status, found)

    # 4) selection
    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims_map = self.policy.candidates_to_victims_map(candidates)
        funcs = self.policy.ordered_score_funcs(victims_map)
        now = clock_reading(self.handle.clock(), (p for v in victims_map.values() for p in v.pods))
        node = pick_one_node_for_preemption(victims_map, funcs, now)
        if node in victims_map:
            return Candidate(node, victims_map[node])
        return candidates[0]
