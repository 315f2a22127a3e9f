"""The scheduler's volume binder (``volumebinding/binder.go``), on listers and the cluster protocol.

Per pod it sorts claims into bound, unbound with delayed binding (WaitForFirstConsumer) and unbound
immediate; per node it checks bound PVs' node affinity and finds, for each delayed claim, the
smallest matching Available PV or else a class that can provision there. Reserve assumes the chosen
bindings in the assume caches; PreBind writes them through the cluster and waits for the PV
controller to finish, polling every second up to ``bindTimeoutSeconds`` on the clock's timers
(never a blocked thread).

What v1.34 changed here: the node-affinity reason's wording, and (VolumeAttributesClass gate) a
delayed claim only matches volumes of its volumeAttributesClassName. Portworx volumes are translated
to CSI in v1.34 (CSIMigrationPortworx) before their node affinity is checked, but that translation
keeps the affinity as it is, so it changes nothing the binder decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.api.storage import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    CLAIM_LOST,
    NOT_SUPPORTED_PROVISIONER,
    PersistentVolume,
    PersistentVolumeClaim,
    find_matching_volume,
)
from kubesched.framework.handle import Handle
from kubesched.framework.pending import PendingStatus
from kubesched.framework.status import Code, Status
from kubesched.plugins.volumebinding.assume_cache import AssumeCache

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
#: The node-affinity reason from v1.34 on.
ERR_REASON_NODE_AFFINITY_MISMATCH = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

POLL_INTERVAL_SECONDS = 1.0


class BinderError(Exception):
    """An error the plugin reports as an Error status (kube-scheduler's ``AsStatus(err)``)."""


@dataclass(slots=True)
class BindingInfo:
    pvc: PersistentVolumeClaim
    pv: PersistentVolume


@dataclass(slots=True)
class PodVolumes:
    static_bindings: list[BindingInfo] = field(default_factory=list)
    dynamic_provisions: list[PersistentVolumeClaim] = field(default_factory=list)


@dataclass(slots=True)
class PodVolumeClaims:
    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    #: Storage class -> its PVs, for the delayed claims.
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = field(default_factory=dict)


def claim_name_of(pod: Pod, volume: Any) -> tuple[str, bool] | None:
    """(claim name, generic ephemeral) of a PVC-backed pod volume; None for other volumes."""
    if volume.get("persistentVolumeClaim") is not None:
        return str(volume["persistentVolumeClaim"].get("claimName") or ""), False
    if volume.get("ephemeral") is not None:
        return f"{pod.name}-{volume.get('name')}", True
    return None


def volume_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """ephemeral.VolumeIsForPod: the claim of an ephemeral volume must be controlled by the pod."""
    for ref in pvc.meta.owner_references:
        if ref.get("controller") and ref.get("uid") == pod.uid:
            return None
    return f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"


class VolumeBinder:
    def __init__(
        self,
        handle: Handle,
        bind_timeout_seconds: float,
        *,
        node_conflict_reason: str = ERR_REASON_NODE_CONFLICT,
        match_attributes_class: bool = False,
    ) -> None:
        self.handle = handle
        self.listers = handle.listers
        self.pv_cache: AssumeCache[PersistentVolume] = AssumeCache(self.listers, "PersistentVolume")
        self.pvc_cache: AssumeCache[PersistentVolumeClaim] = AssumeCache(self.listers, "PersistentVolumeClaim")
        self.bind_timeout = bind_timeout_seconds
        #: The reason of a node that a bound claim's PV does not reach (worded per version).
        self.node_conflict_reason = node_conflict_reason
        #: The VolumeAttributesClass gate.
        self.match_attributes_class = match_attributes_class

    # -- PreFilter ------------------------------------------------------------------------------------
    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        claims = PodVolumeClaims()
        for vol in pod.volumes:
            found = claim_name_of(pod, vol)
            if found is None:
                continue
            key = f"{pod.namespace}/{found[0]}"
            pvc = self.pvc_cache.get(key)
            if pvc is None:
                raise BinderError(f'error getting PVC "{key}": could not find v1.PersistentVolumeClaim "{key}"')
            if pvc.fully_bound:
                claims.bound.append(pvc)
            elif self._delay_binding(pvc) and not pvc.volume_name:
                claims.unbound_delay_binding.append(pvc)
            else:
                claims.unbound_immediate.append(pvc)
        for pvc in claims.unbound_delay_binding:
            cls = pvc.storage_class
            claims.unbound_volumes_delay_binding[cls] = self.pv_cache.list_pvs(cls)
        return claims

    def _delay_binding(self, pvc: PersistentVolumeClaim) -> bool:
        """IsDelayBindingMode: the claim's class waits for the first consumer."""
        name = pvc.storage_class
        if not name:
            return False
        sc = self.listers.storage_class(name)
        if sc is None:
            return False
        if sc.volume_binding_mode is None:
            raise BinderError(f'VolumeBindingMode not set for StorageClass "{name}"')
        return sc.wait_for_first_consumer

    def get_eligible_nodes(self, bound: list[PersistentVolumeClaim]) -> set[str] | None:
        """Node names that local PVs of bound claims pin the pod to; None when nothing pins it
        (v1.30 only: v1.34 lets every node through to Filter)."""
        eligible: set[str] | None = None
        for pvc in bound:
            pv = self.pv_cache.get(pvc.volume_name)
            if pv is None:
                return None
            names = pv.local_node_names()
            if names:
                eligible = set(names) if eligible is None else eligible & set(names)
        return eligible

    # -- Filter ---------------------------------------------------------------------------------------
    def find_pod_volumes(self, pod: Pod, claims: PodVolumeClaims, node: Node) -> tuple[PodVolumes, list[str]]:
        """The bindings and provisioning that would let ``pod`` use its volumes on ``node``, and the
        reasons it cannot (empty when it can)."""
        volumes = PodVolumes()
        bound_ok = True
        unbound_ok = True
        sufficient = True
        pvs_found = True
        if claims.bound:
            bound_ok, pvs_found = self._check_bound_claims(claims.bound, node)
        if claims.unbound_delay_binding:
            to_provision: list[PersistentVolumeClaim] = []
            to_match: list[PersistentVolumeClaim] = []
            for claim in claims.unbound_delay_binding:
                selected = claim.annotations.get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node.name:
                        unbound_ok = False
                        return volumes, self._reasons(bound_ok, unbound_ok, sufficient, pvs_found)
                    to_provision.append(claim)
                else:
                    to_match.append(claim)
            if to_match:
                unbound_ok, volumes.static_bindings, unmatched = self._find_matching_volumes(
                    to_match, claims.unbound_volumes_delay_binding, node
                )
                to_provision.extend(unmatched)
            if to_provision:
                unbound_ok, sufficient, volumes.dynamic_provisions = self._check_volume_provisions(to_provision, node)
        return volumes, self._reasons(bound_ok, unbound_ok, sufficient, pvs_found)

    def _reasons(self, bound_ok: bool, unbound_ok: bool, sufficient: bool, pvs_found: bool) -> list[str]:
        return _reasons(bound_ok, unbound_ok, sufficient, pvs_found, self.node_conflict_reason)

    def _check_bound_claims(self, bound: list[PersistentVolumeClaim], node: Node) -> tuple[bool, bool]:
        for pvc in bound:
            pv = self.pv_cache.get(pvc.volume_name)
            if pv is None:
                return True, False
            if not pv.matches_node(node.labels):
                return False, True
        return True, True

    def _find_matching_volumes(
        self,
        claims: list[PersistentVolumeClaim],
        by_class: dict[str, list[PersistentVolume]],
        node: Node,
    ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        chosen: set[str] = set()
        bindings: list[BindingInfo] = []
        unmatched: list[PersistentVolumeClaim] = []
        found = True
        for pvc in sorted(claims, key=lambda c: c.request):
            pv = find_matching_volume(
                pvc,
                by_class.get(pvc.storage_class, []),
                node.labels,
                chosen,
                match_attributes_class=self.match_attributes_class,
            )
            if pv is None:
                unmatched.append(pvc)
                found = False
                continue
            chosen.add(pv.name)
            bindings.append(BindingInfo(pvc, pv))
        return found, bindings, unmatched

    def _check_volume_provisions(
        self,
        claims: list[PersistentVolumeClaim],
        node: Node,
    ) -> tuple[bool, bool, list[PersistentVolumeClaim]]:
        provisions: list[PersistentVolumeClaim] = []
        for claim in claims:
            class_name = claim.storage_class
            if not class_name:
                raise BinderError(f'no class for claim "{claim.key}"')
            sc = self.listers.storage_class(class_name)
            if sc is None:
                raise BinderError(f'failed to find storage class "{class_name}"')
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not sc.allows_topology(node.labels):
                return False, True, []
            if not self._has_enough_capacity(sc.provisioner, claim, class_name, node):
                return True, False, []
            provisions.append(claim)
        return True, True, provisions

    def _has_enough_capacity(self, provisioner: str, claim: PersistentVolumeClaim, class_name: str, node: Node) -> bool:
        """Storage capacity tracking: only drivers that publish CSIStorageCapacity objects are checked."""
        if claim.request <= 0 and "storage" not in (
            ((claim.raw.get("spec") or {}).get("resources") or {}).get("requests") or {}
        ):
            return True
        driver = self.listers.csi_driver(provisioner)
        if driver is None or not driver.storage_capacity:
            return True
        from kubesched.api.labels import LabelSelector
        from kubesched.api.quantity import int_value

        for cap in self.listers.list("CSIStorageCapacity"):
            if cap.get("storageClassName") != class_name:
                continue
            limit = cap.get("maximumVolumeSize", cap.get("capacity"))
            if limit is None or int_value(limit) < claim.request:
                continue
            topology = cap.get("nodeTopology")
            if topology is None:
                continue
            selector = LabelSelector.from_dict(topology)
            if selector is not None and selector.matches(node.labels):
                return True
        return False

    # -- Reserve / Unreserve --------------------------------------------------------------------------
    def pod_volumes_bound(self, pod: Pod) -> bool:
        for vol in pod.volumes:
            found = claim_name_of(pod, vol)
            if found is None:
                continue
            pvc = self.pvc_cache.get(f"{pod.namespace}/{found[0]}")
            if pvc is None or not pvc.fully_bound:
                return False
        return True

    def assume_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """Record the chosen bindings in the assume caches; True when every claim is already bound."""
        if self.pod_volumes_bound(pod):
            return True
        new_bindings: list[BindingInfo] = []
        provisioned: list[PersistentVolumeClaim] = []
        try:
            for binding in volumes.static_bindings:
                pv = bind_volume_to_claim(binding.pv, binding.pvc)
                if pv is not binding.pv:
                    self.pv_cache.assume(pv)
                new_bindings.append(BindingInfo(binding.pvc, pv))
            for claim in volumes.dynamic_provisions:
                clone = _with_annotation(claim, ANN_SELECTED_NODE, node_name)
                self.pvc_cache.assume(clone)
                provisioned.append(clone)
        except (KeyError, ValueError) as err:
            self._revert(new_bindings, provisioned)
            raise BinderError(str(err)) from None
        volumes.static_bindings = new_bindings
        volumes.dynamic_provisions = provisioned
        return False

    def revert_assumed_pod_volumes(self, volumes: PodVolumes) -> None:
        self._revert(volumes.static_bindings, volumes.dynamic_provisions)

    def _revert(self, bindings: list[BindingInfo], claims: list[PersistentVolumeClaim]) -> None:
        for binding in bindings:
            self.pv_cache.restore(binding.pv.name)
        for claim in claims:
            self.pvc_cache.restore(claim.key)

    # -- PreBind --------------------------------------------------------------------------------------
    def bind_pod_volumes(
        self, pod: Pod, volumes: PodVolumes, call_later: Callable[[float, Callable[[], None]], Any]
    ) -> PendingStatus | Status:
        """Write the bindings, then wait (on timers) until the PV controller has completed them."""
        try:
            self._bind_api_update(volumes)
        except Exception as err:
            return Status.from_error(err)
        pending = PendingStatus()
        deadline = self.bind_timeout
        waited = [0.0]

        def poll() -> None:
            if pending.done:
                return
            waited[0] += POLL_INTERVAL_SECONDS
            try:
                done = self._check_bindings(pod, volumes)
            except BinderError as err:
                pending.resolve(Status(Code.ERROR, (f"binding volumes: {err}",), error=err))
                return
            if done:
                pending.resolve(None)
            elif waited[0] >= deadline:
                pending.resolve(Status(Code.ERROR, ("binding volumes: context deadline exceeded",)))
            else:
                call_later(POLL_INTERVAL_SECONDS, poll)

        if deadline <= 0:
            # A zero timeout leaves no time to poll (wait.PollUntilContextTimeout without immediate).
            pending.resolve(Status(Code.ERROR, ("binding volumes: context deadline exceeded",)))
        else:
            call_later(min(POLL_INTERVAL_SECONDS, deadline), poll)
        return pending

    def _bind_api_update(self, volumes: PodVolumes) -> None:
        cluster = self.handle.cluster
        done_bindings = 0
        done_claims = 0
        try:
            for binding in volumes.static_bindings:
                stored = cluster.update(_writable(binding.pv.raw))
                binding.pv = PersistentVolume.from_dict(stored)
                done_bindings += 1
            for i, claim in enumerate(volumes.dynamic_provisions):
                stored = cluster.update(_writable(claim.raw))
                volumes.dynamic_provisions[i] = PersistentVolumeClaim.from_dict(stored)
                done_claims += 1
        finally:
            self._revert(volumes.static_bindings[done_bindings:], volumes.dynamic_provisions[done_claims:])

    def _check_bindings(self, pod: Pod, volumes: PodVolumes) -> bool:
        node_info = self.handle.snapshot.get(pod.node_name) if pod.node_name else None
        node = node_info.node if node_info is not None else None
        if node is None:
            raise BinderError(f'failed to get node "{pod.node_name}": node "{pod.node_name}" not found')
        lister = getattr(self.handle, "extra", {}).get("pod_lister")
        if lister is not None:  # the scheduler's informer view (upstream's podLister), no live GET
            if lister(pod) is None:
                raise BinderError(f'pod does not exist any more: pods "{pod.name}" not found')
        else:
            try:
                self.handle.cluster.get("Pod", pod.namespace, pod.name)
            except Exception as err:
                raise BinderError(f"pod does not exist any more: {err}") from None
        for binding in volumes.static_bindings:
            pv = self.pv_cache.get_api(binding.pv.name)
            pvc = self.pvc_cache.get_api(binding.pvc.key)
            if pv is None or pvc is None:
                raise BinderError(f"failed to check binding: {'pv' if pv is None else 'pvc'} not found")
            if _rv_of(binding.pv) > _rv_of(pv):
                return False
            if not pv.matches_node(node.labels):
                raise BinderError(
                    f'pv "{pv.name}" node affinity doesn\'t match node "{node.name}": no matching NodeSelectorTerms'
                )
            if pv.claim_ref is None or not pv.claim_ref.uid:
                raise BinderError(f'ClaimRef got reset for pv "{pv.name}"')
            if not pvc.fully_bound:
                return False
        for claim in volumes.dynamic_provisions:
            pvc = self.pvc_cache.get_api(claim.key)
            if pvc is None:
                raise BinderError(f"failed to check provisioning pvc: pvc {claim.key} not found")
            if _rv_of(claim) > _rv_of(pvc):
                return False
            if pvc.annotations.get(ANN_SELECTED_NODE) != pod.node_name:
                raise BinderError(f'provisioning failed for PVC "{pvc.name}"')
            if pvc.volume_name:
                pv = self.pv_cache.get_api(pvc.volume_name)
                if pv is None:
                    return False
                if not pv.matches_node(node.labels):
                    raise BinderError(
                        f'pv "{pv.name}" node affinity doesn\'t match node "{node.name}": no matching NodeSelectorTerms'
                    )
            if not pvc.fully_bound:
                return False
        return True


def pod_has_pvcs(pod: Pod, listers: Any) -> tuple[bool, str | None]:
    """podHasPVCs: whether the pod uses claims, and why it cannot be scheduled yet if one is unusable."""
    has = False
    for vol in pod.volumes:
        found = claim_name_of(pod, vol)
        if found is None:
            continue
        has = True
        name, ephemeral = found
        pvc = listers.pvc(pod.namespace, name)
        if pvc is None:
            if ephemeral:
                return has, f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
            return has, f'persistentvolumeclaim "{name}" not found'
        if pvc.phase == CLAIM_LOST:
            return has, (
                f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume "{pvc.volume_name}"'
            )
        if pvc.meta.deletion_timestamp is not None:
            return has, f'persistentvolumeclaim "{pvc.name}" is being deleted'
        if ephemeral:
            problem = volume_is_for_pod(pod, pvc)
            if problem is not None:
                return has, problem
    return has, None


def bind_volume_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> PersistentVolume:
    """GetBindVolumeToClaim: ``pv`` with its claimRef pointing at ``claim`` (and bound-by-controller
    when the binder set it); the same object when nothing changes."""
    raw = _writable(pv.raw)
    spec = raw.setdefault("spec", {})
    ref = spec.get("claimRef") or {}
    dirty = False
    should_annotate = not pv.is_bound_to(claim)
    if ref.get("name") != claim.name or ref.get("namespace") != claim.namespace or ref.get("uid", "") != claim.meta.uid:
        spec["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            "namespace": claim.namespace,
            "name": claim.name,
            "uid": claim.meta.uid,
            "resourceVersion": claim.meta.resource_version,
        }
        dirty = True
    annotations = raw.setdefault("metadata", {}).setdefault("annotations", {})
    if should_annotate and ANN_BOUND_BY_CONTROLLER not in annotations:
        annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        dirty = True
    return PersistentVolume.from_dict(raw) if dirty else pv


def _with_annotation(claim: PersistentVolumeClaim, key: str, value: str) -> PersistentVolumeClaim:
    raw = _writable(claim.raw)
    raw.setdefault("metadata", {}).setdefault("annotations", {})[key] = value
    return PersistentVolumeClaim.from_dict(raw)


def _writable(raw: Any) -> dict[str, Any]:
    """A private copy of a stored object (JSON-shaped) to change and write back."""
    import copy

    return copy.deepcopy(dict(raw))


def _rv_of(obj: Any) -> int:
    try:
        return int(obj.meta.resource_version or 0)
    except ValueError:
        return 0


def _reasons(
    bound_ok: bool,
    unbound_ok: bool,
    sufficient: bool,
    pvs_found: bool,
    node_conflict_reason: str = ERR_REASON_NODE_CONFLICT,
) -> list[str]:
    reasons = []
    if not bound_ok:
        reasons.append(node_conflict_reason)
    if not unbound_ok:
        reasons.append(ERR_REASON_BIND_CONFLICT)
    if not sufficient:
        reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
    if not pvs_found:
        reasons.append(ERR_REASON_PV_NOT_EXIST)
    return reasons
