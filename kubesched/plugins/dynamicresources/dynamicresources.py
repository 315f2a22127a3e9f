"""DynamicResources: devices a pod asks for through ResourceClaims (resource.k8s.io), allocated by the scheduler.

kube-scheduler v1.34 runs it in the default profile (DynamicResourceAllocation is GA and on):

- PreEnqueue holds a pod back until each of its claims exists (a template's claim made by the
  resourceclaim controller and recorded in the pod's status), belongs to it and is not being deleted.
- PreFilter reads the claims, checks that the classes they name exist, and, when some claim is not
  allocated yet, builds the structured allocator over the cluster's ResourceSlices and the devices
  already taken (every allocated claim, and the allocations other pods have in flight).
- Filter asks, per node, whether the unallocated claims can be allocated there and whether the
  allocated ones are reachable from it (their allocation's node selector); it remembers the
  allocation for Reserve.
- PostFilter, when no node fits, deallocates one allocated claim that kept the pod from some node and
  that no other pod uses; for a pod without claims it says "no new claims to deallocate", which joins
  the preemption text of every failure message.
- Reserve marks the chosen allocations in flight, so the next pod sees those devices taken; Unreserve
  undoes that and takes the pod out of the claims' reservations.
- PreBind writes each claim's allocation and the pod's reservation (``status.reservedFor``) through
  the cluster client.

There is no Score: v1.34 ranks no node by its devices. When DynamicResourceAllocation is off (v1.30's
default) the plugin is built disabled and does nothing, as upstream's is.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.dra import ResourceClaim
from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.cluster.listers import Listers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    ClusterEventWithHint,
    PostFilterResult,
    PreFilterResult,
    QueueingHint,
    minus_ones,
)
from kubesched.framework.status import Code, Status, unresolvable
from kubesched.plugins import names
from kubesched.plugins.dynamicresources import hints
from kubesched.plugins.dynamicresources.allocator import AllocationError, Allocator, Features
from kubesched.plugins.dynamicresources.binding import BindError, bind_claim, deallocate, unreserve
from kubesched.plugins.dynamicresources.claims import (
    ClaimInfo,
    ClaimsUnavailable,
    StateData,
    has_claims,
    pod_claims,
    waits_for_pod,
)
from kubesched.plugins.dynamicresources.device_counts import selector_mask, simple_request
from kubesched.plugins.dynamicresources.dra_manager import ClaimNotFound, DRAManager, OutOfSync, manager_for
from kubesched.plugins.helper import SKIP_STATUS, features_of
from kubesched.queue import events as qevents

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot

log = logging.getLogger(__name__)

NAME = names.DYNAMIC_RESOURCES
STATE_KEY = NAME

#: Status texts, as kube-scheduler words them.
NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
DEALLOCATED = "deallocation of ResourceClaim completed"
STILL_NOT_SCHEDULABLE = "still not schedulable"
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
PLUGIN_DISABLED = "plugin disabled"
#: A CycleState read that found nothing (fwk.ErrNotFound).
NOT_FOUND = "not found"


def _kobj(claim: ResourceClaim) -> str:
    return f"{claim.namespace}/{claim.name}"


class DynamicResources:
    name = NAME
    #: Filter reads the node (name, labels), the claims and the slices, never the pods on the node.
    filter_reads_node_only = True

    def __init__(self, args: Any, handle: Handle | None) -> None:
        gates = features_of(handle)
        self.enabled = gates.enabled("DynamicResourceAllocation")
        self.features = Features.from_gates(gates.enabled)
        self.queueing_hints = gates.enabled("SchedulerQueueingHints")
        self.handle = handle
        extra = getattr(handle, "extra", None) or {}
        #: PostFilter picks among the claims to deallocate at random, as upstream does (by index when the
        #: scheduler breaks ties by name, for reproducible runs).
        self.rng: random.Random | None = None if extra.get("tie_break") == "name" else extra.get("rng")
        listers = getattr(handle, "listers", None)
        self.manager: DRAManager = manager_for(
            listers if isinstance(listers, Listers) else Listers(), partitionable=self.features.partitionable_devices
        )
        self.tracker = self.manager.claims

    # -- PreEnqueue -----------------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not self.enabled or not has_claims(pod):
            return None
        try:
            pod_claims(pod, self.tracker)
        except ClaimsUnavailable as err:
            return unresolvable(str(err))
        return None

    def gate_holds_through(self, pod: Pod, event: ClusterEvent) -> bool:
        """For the queue: while the pod alone keeps its claims unusable (see :func:`.claims.waits_for_pod`),
        the claim hint answers QueueSkip to every claim event."""
        return self.queueing_hints and event.resource == qevents.RESOURCE_CLAIM and waits_for_pod(pod)

    # -- PreFilter ------------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        if not self.enabled:
            return None, SKIP_STATUS
        if not has_claims(pod):
            state.write(STATE_KEY, _NO_CLAIMS)  # so that PostFilter knows PreFilter ran
            return None, SKIP_STATUS
        s = StateData()
        state.write(STATE_KEY, s)  # first, so that PostFilter knows PreFilter ran
        try:
            claims = pod_claims(pod, self.tracker)
        except ClaimsUnavailable as err:
            return None, unresolvable(str(err))
        if not claims:
            return None, SKIP_STATUS
        infos = [ClaimInfo() for _ in claims]
        to_allocate = 0
        for index, claim in enumerate(claims):
            if claim.allocation is not None:
                infos[index].available_on_nodes = claim.allocation.node_selector
                continue
            to_allocate += 1
            if self.tracker.has_pending_allocation(claim.uid):
                return None, unresolvable(f"resource claim {_kobj(claim)} is in the process of being allocated")
            status = self._check_requests(claim)
            if status is not None:
                return None, status
        if to_allocate:
            self._prepare_allocation(s, claims)
        s.infos = infos
        s.claims = claims
        return None, None

    def _prepare_allocation(self, s: StateData, claims: list[ResourceClaim]) -> None:
        """The cycle's allocator and, when the claims to allocate allow it, the free-device counts that
        decide Filter without a search."""
        in_use, slices = self.tracker.allocated_devices(), self.manager.slices()
        s.allocator = Allocator(self.features, in_use, self.manager.device_class, slices)
        pending = [claim for claim in claims if claim.allocation is None]
        request = simple_request(self.features, pending, self.manager.device_class)
        if request is not None:
            s.counts = self.manager.counts.node_counts(self.features, slices, request, in_use)
        s.node_allocations.allocator, s.node_allocations.claims = s.allocator, pending

    def _check_requests(self, claim: ResourceClaim) -> Status | None:
        """Each request's class must exist: scheduling cannot proceed without it, on any node."""
        for request in claim.spec.requests:
            if request.exactly is not None:
                status = self._check_class(request.exactly.device_class_name, request.name)
            elif request.first_available:
                if not self.features.prioritized_list:
                    return unresolvable(
                        f"resource claim {_kobj(claim)}, request {request.name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                status = next(
                    (
                        st
                        for sub in request.first_available
                        if (st := self._check_class(sub.device_class_name, f"{request.name}/{sub.name}"))
                    ),
                    None,
                )
            else:
                return unresolvable(f"resource claim {_kobj(claim)}, request {request.name}: unknown request type")
            if status is not None:
                return status
        return None

    def _check_class(self, class_name: str, request: str) -> Status | None:
        if not class_name:
            return Status(Code.ERROR, (f"request {request}: unsupported request type",))
        if self.manager.device_class(class_name) is None:
            return unresolvable(f"request {request}: device class {class_name} does not exist")
        return None

    def pre_filter_extensions(self) -> None:
        return None

    # -- Filter ---------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        s: StateData | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, (NOT_FOUND,))
        if not s.claims:
            return None
        node = node_info.node
        if node is None:
            return Status(Code.ERROR, ("node not found",))
        unavailable = [
            i
            for i, info in enumerate(s.infos)
            if info.available_on_nodes is not None and not info.available_on_nodes.matches(node.labels, node.name)
        ]
        allocations = None
        fits = None if s.counts is None else s.counts.fits(node.name)
        if fits is False:
            return unresolvable(CANNOT_ALLOCATE)
        if s.allocator is not None and fits is None:
            to_allocate = [claim for _, claim in s.to_allocate()]
            try:
                allocations = s.allocator.allocate(node.name, node.labels, to_allocate)
            except AllocationError as err:
                # Something is wrong with a claim, a class or a slice: scheduling the pod is aborted.
                return Status(Code.ERROR, (str(err),), error=err)
            if allocations is None or len(allocations) != len(to_allocate):
                return unresolvable(CANNOT_ALLOCATE)
        if unavailable:
            with s.lock:
                s.unavailable.update(unavailable)
            return unresolvable(NOT_AVAILABLE)
        if allocations is not None:
            with s.lock:
                s.node_allocations[node.name] = allocations
        elif fits:
            s.node_allocations.counted.add(node.name)
        return None

    def filter_nodes(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray
    ) -> BatchFilterResult | None:
        """Filter on many nodes at once where arrays decide every one of them: the free-device counts
        for the claim to allocate (when there is one), the node selectors of the allocated claims.
        Else (a claim the counts cannot decide, a node where the search may fail) node by node."""
        if not self.enabled:
            return BatchFilterResult.all_pass(len(indices))
        s: StateData | None = state.get(STATE_KEY)
        if s is not None and not s.claims:
            return BatchFilterResult.all_pass(len(indices))
        if s is None:
            return None
        fits = np.ones(len(indices), dtype=bool)
        if s.allocator is not None:
            found = None if s.counts is None else s.counts.fits_rows(snapshot, indices)
            if found is None:
                return None
            fits = found
        reached = np.ones(len(indices), dtype=bool)
        for index, info in enumerate(s.infos):
            if info.available_on_nodes is not None:
                reach = selector_mask(info.available_on_nodes, snapshot, indices)
                if (fits & ~reach).any():
                    with s.lock:
                        s.unavailable.add(index)
                reached &= reach
        if s.allocator is not None:
            s.node_allocations.counted.update(snapshot.names[indices[fits & reached]].tolist())
        return _verdicts(fits, reached)

    # -- PostFilter -----------------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: dict[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        if not self.enabled:
            return None, Status(Code.UNSCHEDULABLE, (PLUGIN_DISABLED,))
        s: StateData | None = state.get(STATE_KEY)
        if s is None:
            return None, Status(Code.ERROR, (NOT_FOUND,))
        if not s.claims:
            return None, Status(Code.UNSCHEDULABLE, (NO_CLAIMS_TO_DEALLOCATE,))
        order = sorted(s.unavailable)
        if self.rng is not None:
            self.rng.shuffle(order)
        for index in order:
            claim = s.claims[index]
            reserved = claim.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.uid):
                try:
                    deallocate(self._cluster(), claim)
                except BindError as err:
                    return None, Status(Code.ERROR, (str(err),), error=err)
                return None, Status(Code.UNSCHEDULABLE, (DEALLOCATED,))
        return None, Status(Code.UNSCHEDULABLE, (STILL_NOT_SCHEDULABLE,))

    # -- Reserve --------------------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        s: StateData | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, (NOT_FOUND,))
        if not s.claims:  # nothing to allocate (most pods)
            return None
        to_allocate = s.to_allocate()
        if not to_allocate or s.allocator is None:
            return None  # allocated claims are reserved for the pod in PreBind
        try:
            allocations = s.node_allocations[node_name]
        except KeyError:
            allocations = None
        except AllocationError as err:
            return Status(Code.ERROR, (str(err),), error=err)
        if not allocations:
            return Status(Code.ERROR, ("claim allocation not found for node",))
        if len(allocations) != len(to_allocate):
            return Status(
                Code.ERROR,
                (
                    f"internal error, have {len(allocations)} allocations, {len(to_allocate)} "
                    f"claims to allocate, want {len(to_allocate)} claims",
                ),
            )
        for (index, claim), allocation in zip(to_allocate, allocations, strict=True):
            s.infos[index].allocation = allocation
            # The devices count as taken from now on, for every other pod's cycle.
            self.tracker.signal_pending_allocation(claim.uid, dataclasses.replace(claim, allocation=allocation))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        if not self.enabled:
            return
        s: StateData | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return
        for claim in s.claims:
            if self.tracker.remove_pending_allocation(claim.uid):
                self.tracker.restore(claim.namespace, claim.name)
            if claim.allocation is not None and claim.is_reserved_for(pod.uid):
                unreserve(self._cluster(), claim, pod)

    # -- PreBind --------------------------------------------------------------------------------------
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        s: StateData | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, (NOT_FOUND,))
        for index, claim in enumerate(s.claims):
            if claim.is_reserved_for(pod.uid):
                continue
            try:
                s.claims[index] = self._bind_claim(s, index, pod)
            except BindError as err:
                return Status(Code.ERROR, (str(err),), error=err)
        return None

    def _bind_claim(self, s: StateData, index: int, pod: Pod) -> ResourceClaim:
        """Write the claim; once the scheduler's allocation is written (or failed), it is no longer in flight."""
        claim = s.claims[index]
        allocation = s.infos[index].allocation
        try:
            updated = bind_claim(self._cluster(), claim, allocation, pod)
        finally:
            if allocation is not None:
                self.tracker.remove_pending_allocation(claim.uid)
        if allocation is not None:
            try:
                self.tracker.assume(updated)
            except (ClaimNotFound, OutOfSync) as err:
                log.debug("claim %s not stored in the assume cache: %s", _kobj(updated), err)
        return updated

    def _cluster(self) -> Any:
        cluster = getattr(self.handle, "cluster", None)
        if cluster is None:
            raise BindError("no cluster client to write claims through")
        return cluster

    # -- cluster events -------------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        """Nodes (topology, capacity), claims, classes and slices; with queueing hints, claim changes and
        the pod's own update that records a generated claim go through this plugin's hints."""
        if not self.enabled:
            return ()
        node = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
        add_update = ActionType.ADD | ActionType.UPDATE
        if not self.queueing_hints:
            node |= ActionType.UPDATE_NODE_TAINT  # upstream adds it for the pre-check of node additions
            return (
                ClusterEvent(qevents.NODE, node),
                ClusterEvent(qevents.RESOURCE_CLAIM, add_update),
                ClusterEvent(qevents.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                ClusterEvent(qevents.DEVICE_CLASS, add_update),
                ClusterEvent(qevents.RESOURCE_SLICE, add_update),
            )
        return (
            ClusterEvent(qevents.NODE, node),
            ClusterEventWithHint(
                ClusterEvent(qevents.RESOURCE_CLAIM, add_update), self.is_schedulable_after_claim_change
            ),
            ClusterEventWithHint(
                ClusterEvent(qevents.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEvent(qevents.DEVICE_CLASS, add_update),
            ClusterEvent(qevents.RESOURCE_SLICE, add_update),
        )

    def is_schedulable_after_claim_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """The queueing hint of ResourceClaim additions and updates (see :mod:`.hints`)."""
        return hints.is_schedulable_after_claim_change(self.tracker, pod, old_obj, new_obj)

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """The queueing hint of a pod's UpdatePodGeneratedResourceClaim (see :mod:`.hints`)."""
        return hints.is_schedulable_after_pod_change(self.tracker, pod, old_obj, new_obj)


#: The state of every pod naming no claim, shared: with ``claims`` empty, Filter, PostFilter, Reserve,
#: Unreserve and PreBind all stop before writing anything into a state, so it stays empty.
_NO_CLAIMS = StateData()


def _verdicts(fits: np.ndarray, reached: np.ndarray) -> BatchFilterResult:
    """Per node: passed, or the first reason Filter gives (no allocation here, else an allocated claim
    out of reach)."""
    index = minus_ones(len(fits))
    statuses: list[Status] = []
    for failed, message in ((~fits, CANNOT_ALLOCATE), (fits & ~reached, NOT_AVAILABLE)):
        if failed.any():
            index[failed] = len(statuses)
            statuses.append(unresolvable(message))
    return BatchFilterResult(index, statuses)


def new(args: Any, handle: Handle) -> DynamicResources:
    return DynamicResources(args, handle)
