"""DefaultPreemption: the PostFilter plugin that evicts lower-priority pods to make room.

The plugin is the *policy* half of preemption (who may preempt, which pods a node would give up, how
many nodes to dry-run); :class:`kubesched.framework.preemption.Evaluator` runs the procedure.

After a successful ``post_filter`` the chosen victims are left in the CycleState for the trace:
``state.read(VICTIMS_KEY)`` is the list of victim keys (``namespace/name``, preemption order) and
``state.read(CANDIDATE_KEY)`` the :class:`~kubesched.framework.preemption.Candidate` (node + pods).
Neither key is written when preemption fails.

v1.30's plugin is a PostFilter plugin only and registers no cluster events. v1.34's
(:class:`AsyncDefaultPreemption`) is also a PreEnqueue plugin: with ``SchedulerAsyncPreemption`` (on by
default) the victims are preempted off the scheduling loop, and while that runs the preemptor is kept
out of activeQ ("waiting for the preemption for this pod to be finished"); it registers pod deletions,
whose hint is always Skip, so that the pod's other rejectors decide when it is retried. v1.34 also
re-sorts a node's victims by importance when some of them violate a PodDisruptionBudget and some do not.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kubesched.api.disruption_budget import PodDisruptionBudget
from kubesched.api.objects import PREEMPT_NEVER, Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.capabilities import FitChecks
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import Victims
from kubesched.framework.interfaces import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    FilterPlugin,
    PostFilterResult,
    QueueingHint,
)
from kubesched.framework.preemption import (
    Candidate,
    Evaluator,
    ScoreFunc,
    clock_reading,
    more_important_pod,
)
from kubesched.framework.preemption_reprieves import ReprieveCache, Reprieved, checks_shapes
from kubesched.framework.preemption_screen import VictimScreen
from kubesched.framework.preemption_victims import (
    DISRUPTION_TARGET,
    REASON_PREEMPTION_BY_SCHEDULER,
    PreemptingPods,
    VictimPreemption,
    pod_conditions,
)
from kubesched.framework.status import Code, Status, code_of, is_success
from kubesched.plugins import names
from kubesched.util.gosort import go_sort_slice

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle

try:  # the config package is optional for this module (tests build the plugin without it)
    from kubesched.config.pluginargs import DefaultPreemptionArgs
except ImportError:  # pragma: no cover
    DefaultPreemptionArgs = None  # type: ignore[assignment,misc]

NAME = names.DEFAULT_PREEMPTION

#: CycleState key: victim pod keys of the last successful preemption in this cycle.
VICTIMS_KEY = "DefaultPreemption/victims"
#: CycleState key: the chosen Candidate (node name and victim pods).
CANDIDATE_KEY = "DefaultPreemption/candidate"

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100

#: What :meth:`Handle.arithmetic_filters` answers: the active Filter plugins, each with its FitChecks.
ArithmeticPlan = list[tuple[FilterPlugin, FitChecks | None]]

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS_MSG = "No preemption victims found for incoming pod"
WAITING_FOR_PREEMPTION_MSG = "waiting for the preemption for this pod to be finished"


def first_offset(num_nodes: int) -> int:
    """An offset function that always starts the dry run at the first potential node."""
    return 0


class DefaultPreemption:
    """v1.30's DefaultPreemption (a PostFilter plugin only); :class:`AsyncDefaultPreemption` is v1.34's."""

    name = NAME
    #: select_victims_on_node copies the node and the cycle state before changing them, so the
    #: evaluator hands over the originals (most nodes are decided without copying anything).
    copies_what_it_changes = True
    #: Preemptors whose victims are being preempted off the loop (None: preemption happens in the cycle).
    preempting: PreemptingPods | None = None

    def __init__(
        self,
        args: Any,
        handle: Handle,
        *,
        rng: random.Random | None = None,
        offset_fn: Callable[[int], int] | None = None,
    ) -> None:
        self.handle = handle
        features = getattr(handle, "features", None)
        self.v134 = features is None or features.at_least("1.34")
        #: v1.30 recognises a pod terminating because of preemption by its DisruptionTarget condition
        #: only when PodDisruptionConditions is on (v1.34 always).
        self.disruption_conditions = self.v134 or features is None or features.enabled("PodDisruptionConditions")
        self.victim_preemption = VictimPreemption(NAME, handle)
        self.min_candidate_nodes_percentage = int(
            getattr(args, "min_candidate_nodes_percentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
        )
        self.min_candidate_nodes_absolute = int(
            getattr(args, "min_candidate_nodes_absolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
        )
        self.rng = rng if rng is not None else random.Random()
        self._plan_for: CycleState | None = None
        self._plan_skip: set[str] = set()
        self._plan: ArithmeticPlan | None = None
        self._shapes: tuple[Hashable, ...] | None = None
        self.screen = VictimScreen()
        self.reprieves = ReprieveCache()
        #: The nodes where the last screen saw the first check pass (name -> generation), and for whom.
        self._passed: dict[str, int] = {}
        self._passed_for: tuple[CycleState, str] | None = None
        self._nominations: Mapping[str, tuple[Pod, ...]] = {}
        #: Where the dry run starts among ``n`` potential nodes; kube-scheduler draws it at random.
        #: Replace it (e.g. with :func:`first_offset`) for reproducible simulations.
        self.offset_fn: Callable[[int], int] = offset_fn if offset_fn is not None else self._random_offset

    def _random_offset(self, num_nodes: int) -> int:
        return self.rng.randrange(num_nodes)

    # -- PostFilter ---------------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: dict[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        evaluator = Evaluator(
            plugin_name=NAME,
            handle=self.handle,
            state=state,
            policy=self,
            preempting=self.preempting,
            victim_preemption=self.victim_preemption,
        )
        result, status = evaluator.preempt(pod, filtered_node_status)
        if evaluator.chosen is not None:
            state.write(VICTIMS_KEY, evaluator.chosen.victim_keys)
            state.write(CANDIDATE_KEY, evaluator.chosen)
        if status is not None and status.message:
            # kube-scheduler tags every message of this plugin; FitError then appends it after the
            # filter histogram ("... 3 Insufficient cpu. preemption: 0/3 nodes are available: ...").
            status = Status(status.code, (f"preemption: {status.message}",), error=status.error)
        return result, status

    # -- the preemption policy (preemption.Interface) ----------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        n = max(n, self.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.offset_fn(num_nodes), self.calculate_num_candidates(num_nodes)

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            # Filters now reject the nominated node outright: look for a new one.
            if code_of(nominated_node_status) is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            info = self.handle.snapshot.get(nominated)
            if info is not None:
                for p in info.pods:
                    if p.priority < pod.priority and pod_terminating_by_preemption(p, self.disruption_conditions):
                        # Earlier victims are still going away: wait for them rather than evict more.
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def select_victims_on_node(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget]
    ) -> tuple[list[Pod], int, Status | None]:
        """The fewest pods (by reprieving the most important first) whose removal lets ``pod`` fit."""
        screened = self._passed_for
        if (
            screened is not None
            and screened[0] is state
            and screened[1] == pod.uid
            and not pdbs
            and self._passed.get(node_info.name) == node_info.generation
            and self._plan_skip == state.skip_filter_plugins
        ):
            # The screen saw the first check pass on this very node: what is left are the reprieves.
            return (*self._kept_reprieves(pod, node_info), None)
        handle = self.handle
        plan = self._arithmetic_plan(state)
        reprieves = (self.reprieves, self._shapes) if self._shapes is not None else None
        quick = (
            _arithmetic_select(handle, state, pod, node_info, pdbs, plan, self.v134, reprieves)
            if plan is not None
            else None
        )
        if quick is not None:
            return quick
        return _procedure_select(handle, state, pod, node_info, pdbs, self.v134)

    def kept_reprieves(
        self, state: CycleState, pod: Pod, infos: Sequence[NodeInfo], pdbs: Sequence[PodDisruptionBudget]
    ) -> list[Reprieved | None]:
        """Per node of ``infos``, what :meth:`select_victims_on_node` would hand back from the reprieves
        kept for it (None: that node must be asked), in one call: after a screen, most nodes the dry run
        tries had their first check pass and kept their outcome from the last preemptor alike."""
        screened, shapes = self._passed_for, self._shapes
        if (
            screened is None
            or screened[0] is not state
            or screened[1] != pod.uid
            or pdbs
            or shapes is None
            or self._plan_skip != state.skip_filter_plugins
        ):
            return [None] * len(infos)
        passed = self._passed.get
        return self.reprieves.kept_all(
            pod, [info if passed(info.name) == info.generation else None for info in infos], self._nominations, shapes
        )

    def screen_victims(self, state: CycleState, pod: Pod, infos: Sequence[NodeInfo]) -> list[Status | None] | None:
        """Per node of ``infos``, the status :meth:`select_victims_on_node` would end with at its first
        check (None: it gets further), all at once; None when that cannot be told without trying."""
        plan = self._arithmetic_plan(state)
        if plan is None:
            return None
        no_victims = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS_MSG,))
        screened = self.screen.statuses(self.handle, state, pod, infos, plan, no_victims)
        if screened is None:
            return None
        statuses, self._passed = screened
        self._passed_for = (state, pod.uid)
        self._nominations = self.handle.nominator.nominations()  # unchanged while the dry run lasts
        return statuses

    def _kept_reprieves(self, pod: Pod, node_info: NodeInfo) -> Reprieved:
        """The reprieves on a node whose first check passed (no PodDisruptionBudget), as kept when
        nothing that decides them changed. Only after a screen (which had a plan)."""
        nominated, shapes = self._nominations.get(node_info.name, ()), self._shapes
        if shapes is not None and (kept := self.reprieves.kept(pod, node_info, nominated, shapes)) is not None:
            return kept
        plan = self._plan
        assert plan is not None
        potential, room = _without_lower(pod, node_info, nominated)
        reprieved = _reprieve(self.handle, pod, potential, (), plan, room, self.v134)
        return (
            reprieved
            if shapes is None
            else self.reprieves.outcome(pod, node_info, nominated, shapes, lambda: reprieved)
        )

    def _arithmetic_plan(self, state: CycleState) -> ArithmeticPlan | None:
        """The plan depends on the cycle state only; the dry run asks with the same state for every
        node it tries, so it is worked out once per state."""
        if self._plan_for is not state or self._plan_skip != state.skip_filter_plugins:
            self._plan_for, self._plan_skip = state, set(state.skip_filter_plugins)
            self._plan = self.handle.arithmetic_filters(state)
            self._shapes = checks_shapes(self._plan) if self._plan is not None else None
            self._passed_for = None  # what the screen saw held for the plan it had
        return self._plan

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[ScoreFunc] | None:
        return None


#: The queueing hint DefaultPreemption gives every pod deletion it registered.
QUEUE_SKIP = QueueingHint.QUEUE_SKIP


class AsyncDefaultPreemption(DefaultPreemption):
    """v1.34's DefaultPreemption: with SchedulerAsyncPreemption the victims are preempted off the loop,
    and the plugin's PreEnqueue keeps the preemptor out of activeQ until the last victim's deletion."""

    def __init__(
        self,
        args: Any,
        handle: Handle,
        *,
        rng: random.Random | None = None,
        offset_fn: Callable[[int], int] | None = None,
    ) -> None:
        super().__init__(args, handle, rng=rng, offset_fn=offset_fn)
        features = getattr(handle, "features", None)
        if features is None or features.enabled("SchedulerAsyncPreemption"):
            self.preempting = PreemptingPods()

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if self.preempting is not None and pod.uid in self.preempting:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (WAITING_FOR_PREEMPTION_MSG,))
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # A gated preemptor waits for the last victim's deletion: this registration makes pod deletions
        # the events a pod it gates hears, while the hint leaves the verdict to the pod's other rejectors.
        if self.preempting is None:
            return ()
        deleted = ClusterEvent("Pod", ActionType.DELETE)
        return (ClusterEventWithHint(deleted, self.is_pod_schedulable_after_pod_deletion),)

    def is_pod_schedulable_after_pod_deletion(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Never this plugin's call: the pod's other rejectors decide whether a deletion helps it."""
        return QUEUE_SKIP


def new(
    args: Any, handle: Handle, *, rng: random.Random | None = None, offset_fn: Callable[[int], int] | None = None
) -> DefaultPreemption:
    """Factory; ``args`` is a DefaultPreemptionArgs or None (defaults 10% / 100 nodes). The plugin is
    the emulated version's: :class:`AsyncDefaultPreemption` from v1.34 on.

    A scheduler that breaks ties by name (deterministic runs) also starts the candidate search at
    the first node; otherwise the handle's RNG picks the start, as kube-scheduler does at random.
    """
    if args is None and DefaultPreemptionArgs is not None:
        args = DefaultPreemptionArgs()
    extra = getattr(handle, "extra", {}) or {}
    if rng is None:
        rng = extra.get("rng")
    if offset_fn is None and extra.get("tie_break") == "name":
        offset_fn = first_offset
    features = getattr(handle, "features", None)
    plugin = AsyncDefaultPreemption if features is None or features.at_least("1.34") else DefaultPreemption
    return plugin(args, handle, rng=rng, offset_fn=offset_fn)


# -- helpers ----------------------------------------------------------------------------------------
def _procedure_select(
    handle: Handle, state: CycleState, pod: Pod, node_info: NodeInfo, pdbs: Sequence[PodDisruptionBudget], resort: bool
) -> tuple[list[Pod], int, Status | None]:
    """SelectVictimsOnNode as kube-scheduler runs it: remove every lower-priority pod, check the pod
    fits, then add the pods back most important first, keeping each that still lets it fit."""
    # The procedure changes the node and the state: work on copies (``copies_what_it_changes``).
    node_info = node_info.snapshot()
    state = state.clone()

    def remove(victim: Pod) -> Status | None:
        if not node_info.remove_pod(victim):
            return Status(Code.ERROR, (f"no corresponding pod {victim.name} in pods of node {node_info.name}",))
        status = handle.run_pre_filter_extension_remove_pod(state, pod, victim, node_info)
        return None if is_success(status) else _as_error(status)

    def add(victim: Pod) -> Status | None:
        node_info.add_pod(victim)
        status = handle.run_pre_filter_extension_add_pod(state, pod, victim, node_info)
        return None if is_success(status) else _as_error(status)

    potential = [p for p in node_info.pods if p.priority < pod.priority]
    for p in potential:
        if (err := remove(p)) is not None:
            return [], 0, err
    if not potential:
        return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS_MSG,))

    # Even an empty node (of lower-priority pods) does not fit the pod: no preemption here.
    status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
    if not is_success(status):
        return [], 0, status
    # Filters that read only the node object (not its pods) have just passed and cannot change
    # their verdict while victims are reprieved: the reprieve checks leave them out (``state``
    # is this node's own clone).
    state.skip_filter_plugins |= handle.node_only_filters

    now = clock_reading(handle.clock(), potential)
    go_sort_slice(potential, lambda a, b: more_important_pod(a, b, now))
    violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
    victims: list[Pod] = []

    def reprieve(p: Pod) -> tuple[bool, Status | None]:
        if (err := add(p)) is not None:
            return False, err
        fits = is_success(handle.run_filter_plugins_with_nominated_pods(state, pod, node_info))
        if not fits:
            if (err := remove(p)) is not None:
                return False, err
            victims.append(p)
        return fits, None

    num_violating = 0
    for group, counts_as_violation in ((violating, True), (non_violating, False)):
        for p in group:
            fits, err = reprieve(p)
            if err is not None:
                return [], 0, err
            if counts_as_violation and not fits:
                num_violating += 1
    return _ordered(victims, violating, non_violating, now, resort), num_violating, None


def _arithmetic_select(
    handle: Handle,
    state: CycleState,
    pod: Pod,
    node_info: NodeInfo,
    pdbs: Sequence[PodDisruptionBudget],
    plan: ArithmeticPlan,
    resort: bool,
    reprieves: tuple[ReprieveCache, tuple[Hashable, ...]] | None = None,
) -> tuple[list[Pod], int, Status | None] | None:
    """SelectVictimsOnNode as arithmetic on the node's pod count and requests, when that is exact.

    It is when every Filter plugin still active for the pod reads only the node or declares
    FitChecks, and no PreFilter extension would run (``plan``: :meth:`Handle.arithmetic_filters`).
    Then each check the procedure makes (the node without any lower-priority pod, then with each
    reprieved pod back, always with the pods nominated there at equal or higher priority, fitting
    with which implies fitting without) is decided by the node-only plugins once and by the
    FitChecks. Nothing is copied or run per reprieved pod. None when a node-only plugin fails with
    an error (the general procedure words it). ``reprieves``: where the outcome of earlier dry runs'
    reprieves is kept, and the shapes of the plan's FitChecks.
    """
    nominated = handle.nominator.nominations().get(node_info.name, ())
    potential, room = _without_lower(pod, node_info, nominated)
    if not potential:
        return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS_MSG,))
    decided, status = _first_check(plan, state, pod, node_info, room)
    if not decided:
        return None
    if status is not None:
        return [], 0, status
    if reprieves is None or pdbs:
        return (*_reprieve(handle, pod, potential, pdbs, plan, room, resort), None)
    cache, shapes = reprieves
    return (
        *cache.outcome(
            pod, node_info, nominated, shapes, lambda: _reprieve(handle, pod, potential, pdbs, plan, room, resort)
        ),
        None,
    )


def _without_lower(pod: Pod, node_info: NodeInfo, nominated: Sequence[Pod]) -> tuple[list[Pod], _Room]:
    """The node's pods below the preemptor's priority, and the node's room once they are gone and the
    ``nominated`` pods it must leave room for (equal or higher priority, not itself) are in place."""
    potential = [p for p in node_info.pods if p.priority < pod.priority]
    room = _Room(node_info)
    for p in potential:
        room.shift(p, -1)
    for other in nominated:
        if other.priority >= pod.priority and other.uid != pod.uid:
            room.shift(other, +1)
    return potential, room


class _Room:
    """A node's pod count and requested amounts as pods come and go (the node itself is left as it is)."""

    __slots__ = ("allocatable", "count", "requested")

    def __init__(self, node_info: NodeInfo) -> None:
        self.allocatable = node_info.allocatable
        self.requested = dict(node_info.requested)
        self.count = len(node_info.pods)

    def shift(self, p: Pod, sign: int) -> None:
        self.count += sign
        requested = self.requested
        for name, value in p.requests.items():
            requested[name] = requested.get(name, 0) + sign * value


def _first_check(
    plan: ArithmeticPlan, state: CycleState, pod: Pod, node_info: NodeInfo, room: _Room
) -> tuple[bool, Status | None]:
    """The pod on the node with every lower-priority pod gone, asked of the plan's plugins in profile
    order: ``(True, None)`` when it fits, ``(True, rejection)``, or ``(False, None)`` when a node-only
    plugin fails with an error (the framework words errors)."""
    for plugin, checks in plan:
        if checks is None:
            status = plugin.filter(state, pod, node_info)
        else:
            reasons = checks.shortages(room.allocatable, room.requested, room.count)
            status = Status(Code.UNSCHEDULABLE, reasons) if reasons else None
        if status is not None and status.code is not Code.SUCCESS:
            if not status.is_rejected():
                return False, None
            status.plugin = plugin.name
            return True, status
    return True, None


def _reprieve(
    handle: Handle,
    pod: Pod,
    potential: list[Pod],
    pdbs: Sequence[PodDisruptionBudget],
    plan: ArithmeticPlan,
    room: _Room,
    resort: bool,
) -> Reprieved:
    """Put the lower-priority pods back, most important first (PodDisruptionBudget violators before the
    others), each that still lets the pod fit: the rest are the victims."""
    now = clock_reading(handle.clock(), potential)
    go_sort_slice(potential, lambda a, b: more_important_pod(a, b, now))
    violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
    shortages = [checks.shortages for _, checks in plan if checks is not None]
    allocatable, requested = room.allocatable, room.requested
    victims: list[Pod] = []
    num_violating = 0
    for group, counts_as_violation in ((violating, True), (non_violating, False)):
        for p in group:
            for missing in shortages:
                if missing(allocatable, requested, room.count, p.requests):
                    victims.append(p)
                    num_violating += counts_as_violation
                    break
            else:  # it fits back: reprieved
                room.shift(p, +1)
    return _ordered(victims, violating, non_violating, now, resort), num_violating


def _ordered(
    victims: list[Pod], violating: Sequence[Pod], non_violating: Sequence[Pod], now: datetime, resort: bool
) -> list[Pod]:
    """The victims in the order they are preempted (and the candidate's top victim first): the budget
    violators, then the others; with ``resort`` (v1.34) by importance when there were both kinds."""
    if resort and violating and non_violating:
        go_sort_slice(victims, lambda a, b: more_important_pod(a, b, now))
    return victims


def _as_error(status: Status | None) -> Status:
    """A failed extension call aborts victim selection as an error, whatever its code."""
    assert status is not None
    return Status(Code.ERROR, (status.message,), status.plugin, status.error)


def pod_terminating_by_preemption(pod: Pod, disruption_conditions: bool = True) -> bool:
    """Being deleted because the scheduler preempted it: its DisruptionTarget condition says so (without
    PodDisruptionConditions, a v1.30 gate, any deletion counts)."""
    if pod.meta.deletion_timestamp is None:
        return False
    if not disruption_conditions:
        return True
    for condition in pod_conditions(pod):
        if condition.get("type") == DISRUPTION_TARGET:
            return condition.get("status") == "True" and condition.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
    return False


def filter_pods_with_pdb_violation(
    pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[Pod], list[Pod]]:
    """Split ``pods`` (order kept) into those whose eviction would exceed a PDB's budget and the rest.

    Budgets are consumed in order, so with one disruption allowed the first matching pod is fine and
    the second violates. Pods already listed in a PDB's disruptedPods do not consume its budget.
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if not pdb.selects(pod) or pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating
