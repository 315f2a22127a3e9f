"""The PersistentVolume controller of the embedded cluster, with an external provisioner built in.

It does what kube-controller-manager's PV binder and a CSI external-provisioner do to the objects the
scheduler reads, reacting to watch events (never called by a driver):

- a claim naming a volume, or a volume whose claimRef names a claim, gets the binding completed:
  the volume ``Bound``; the claim ``volumeName``, ``pv.kubernetes.io/bind-completed`` and ``Bound``.
  This is also how VolumeBinding's PreBind is finished: it sets a PV's claimRef, and the controller
  completes the binding;
- an Immediate claim is bound to the smallest matching Available volume, or else provisioned by its
  class's provisioner (no topology); with neither it stays Pending and a warning says so;
- a WaitForFirstConsumer claim waits until the scheduler annotates it with
  ``volume.kubernetes.io/selected-node``; then it is provisioned with node affinity to that node's
  hostname (``kubernetes.io/no-provisioner`` classes never provision);
- a volume without claimRef is ``Available``.

Provisioned volumes are named ``pvc-<claim uid>`` as external-provisioner names them. With the
VolumeAttributesClass gate (on from v1.34) a claim only binds a volume of its volumeAttributesClassName.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    CLAIM_BOUND,
    NOT_SUPPORTED_PROVISIONER,
    VOLUME_AVAILABLE,
    VOLUME_BOUND,
    VOLUME_RELEASED,
    PersistentVolume,
    PersistentVolumeClaim,
    volume_attributes_class_mismatch,
)
from kubesched.cluster.protocol import ApiError, WatchEvent

log = logging.getLogger(__name__)

HOSTNAME_LABEL = "kubernetes.io/hostname"
WATCHED = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass")


class PVController:
    """Watch-driven PV binder and provisioner for an :class:`EmbeddedCluster`."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        #: Claims that cannot be bound at all (no volume, no provisioner), one line each.
        self.warnings: list[str] = []
        self._warned: set[str] = set()
        self._watch: Any = None
        features = getattr(cluster, "features", None)
        self.match_attributes_class = features is not None and features.enabled("VolumeAttributesClass")

    def start(self) -> None:
        """Watch storage objects, then bring every existing one up to date."""
        # Read-only handler (every write starts from a deep copy): no per-event copies needed.
        self._watch = self.cluster.watch(WATCHED, self.handle_event, private_copies=False)
        self.resync()

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()

    def resync(self) -> None:
        for pv in self.cluster.list("PersistentVolume")[0]:
            self._sync_volume(pv)
        for pvc in self.cluster.list("PersistentVolumeClaim")[0]:
            self._sync_claim(pvc)

    def handle_event(self, event: WatchEvent) -> None:
        try:
            if event.kind == "PersistentVolumeClaim" and event.type != "DELETED":
                self._sync_claim(event.obj)
            elif event.kind == "PersistentVolume":
                if event.type == "DELETED":
                    self._volume_deleted(event.obj)
                else:
                    self._sync_volume(event.obj)
            elif event.kind == "StorageClass" and event.type == "ADDED":
                # A class that arrives after its claims lets them bind or provision now.
                name = (event.obj.get("metadata") or {}).get("name")
                for pvc in self.cluster.list("PersistentVolumeClaim")[0]:
                    if PersistentVolumeClaim.from_dict(pvc).storage_class == name:
                        self._sync_claim(pvc)
        except (ApiError, ObjectError) as err:
            # A conflict means a newer version is on its way as another event: sync again then.
            log.debug("pv controller: %s %s: %s", event.kind, event.type, err)

    # -- claims ---------------------------------------------------------------------------------------
    def _sync_claim(self, raw: dict[str, Any]) -> None:
        claim = PersistentVolumeClaim.from_dict(raw)
        if claim.fully_bound:
            return
        if claim.volume_name:
            pv_raw = self.cluster.lookup("PersistentVolume", None, claim.volume_name)
            if pv_raw is None:
                return  # pre-bound to a volume that does not exist (yet)
            pv = PersistentVolume.from_dict(pv_raw)
            if pv.claim_ref is None or pv.is_bound_to(claim):
                self._bind(pv, claim)
            return
        volumes = [PersistentVolume.from_dict(v) for v in self.cluster.list("PersistentVolume")[0]]
        if self.match_attributes_class:
            volumes = [v for v in volumes if not volume_attributes_class_mismatch(claim, v)]
        # Volumes pre-bound to this claim (a user's claimRef, or VolumeBinding's PreBind) come first.
        pre_bound = next(
            (
                v
                for v in volumes
                if v.is_bound_to(claim) and v.capacity >= claim.request and v.volume_mode == claim.volume_mode
            ),
            None,
        )
        if pre_bound is not None:
            self._bind(pre_bound, claim)
            return
        class_name = claim.storage_class
        sc_raw = self.cluster.lookup("StorageClass", None, class_name) if class_name else None
        delayed = sc_raw is not None and sc_raw.get("volumeBindingMode") == "WaitForFirstConsumer"
        selected = claim.annotations.get(ANN_SELECTED_NODE)
        if delayed and selected is None:
            return  # waits for the scheduler to pick a node
        if not delayed:
            # Immediate binding knows no node: match against the volumes as such.
            match = _smallest_immediate_match(claim, volumes)
            if match is not None:
                self._bind(match, claim)
                return
        provisioner = str((sc_raw or {}).get("provisioner") or "")
        if sc_raw is None or not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
            if not delayed:
                self._warn(claim, "Immediate claim with no matching PV and no provisioner; it stays unbound")
            return
        self._provision(claim, sc_raw, selected)

    def _provision(self, claim: PersistentVolumeClaim, sc: dict[str, Any], selected_node: str | None) -> None:
        provisioner = str(sc.get("provisioner"))
        name = f"pvc-{claim.meta.uid}"
        if self.cluster.lookup("PersistentVolume", None, name) is not None:
            return
        spec: dict[str, Any] = {
            "capacity": {
                "storage": ((claim.raw.get("spec") or {}).get("resources") or {})
                .get("requests", {})
                .get("storage", "0")
            },
            "accessModes": list(claim.access_modes),
            "persistentVolumeReclaimPolicy": str(sc.get("reclaimPolicy") or "Delete"),
            "storageClassName": claim.storage_class,
            "volumeMode": claim.volume_mode,
            "csi": {"driver": provisioner, "volumeHandle": name},
            "claimRef": _claim_ref(claim),
        }
        if selected_node is not None:
            node = self.cluster.lookup("Node", None, selected_node)
            hostname = ((node or {}).get("metadata", {}).get("labels") or {}).get(HOSTNAME_LABEL, selected_node)
            spec["nodeAffinity"] = {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": HOSTNAME_LABEL, "operator": "In", "values": [hostname]}]}
                    ]
                }
            }
        pv = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {ANN_DYNAMICALLY_PROVISIONED: provisioner}},
            "spec": spec,
        }
        annotations = dict(claim.annotations)
        if annotations.get(ANN_STORAGE_PROVISIONER) != provisioner:
            raw = copy.deepcopy(dict(claim.raw))
            raw["metadata"].setdefault("annotations", {})[ANN_STORAGE_PROVISIONER] = provisioner
            self.cluster.update(raw)
        self.cluster.create(pv)

    def _bind(self, pv: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        """Complete a binding: volume first (claimRef, Bound), then the claim, as the PV controller does."""
        pv_raw = copy.deepcopy(dict(pv.raw))
        spec = pv_raw.setdefault("spec", {})
        changed = False
        if not pv.is_bound_to(claim) or (spec.get("claimRef") or {}).get("uid") != claim.meta.uid:
            spec["claimRef"] = _claim_ref(claim)
            pv_raw["metadata"].setdefault("annotations", {}).setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
            changed = True
        if (pv_raw.get("status") or {}).get("phase") != VOLUME_BOUND:
            pv_raw["status"] = {**(pv_raw.get("status") or {}), "phase": VOLUME_BOUND}
            changed = True
        if changed:
            self.cluster.update(pv_raw)
        claim_raw = copy.deepcopy(dict(claim.raw))
        annotations = claim_raw["metadata"].setdefault("annotations", {})
        annotations[ANN_BIND_COMPLETED] = "yes"
        if claim.volume_name != pv.name:
            annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        claim_raw.setdefault("spec", {})["volumeName"] = pv.name
        claim_raw["status"] = {
            **(claim_raw.get("status") or {}),
            "phase": CLAIM_BOUND,
            "accessModes": list(pv.access_modes),
            "capacity": dict((pv.raw.get("spec") or {}).get("capacity") or {}),
        }
        self.cluster.update(claim_raw)

    # -- volumes --------------------------------------------------------------------------------------
    def _sync_volume(self, raw: dict[str, Any]) -> None:
        pv = PersistentVolume.from_dict(raw)
        if pv.claim_ref is None:
            if pv.phase != VOLUME_AVAILABLE:
                self._set_phase(raw, VOLUME_AVAILABLE)
            return
        claim_raw = self.cluster.lookup("PersistentVolumeClaim", pv.claim_ref.namespace, pv.claim_ref.name)
        if claim_raw is None:
            if pv.claim_ref.uid and pv.phase == VOLUME_BOUND:
                self._set_phase(raw, VOLUME_RELEASED)
            return
        claim = PersistentVolumeClaim.from_dict(claim_raw)
        if not pv.is_bound_to(claim):
            return
        if claim.volume_name in ("", pv.name) and not claim.fully_bound:
            self._bind(pv, claim)
        elif claim.volume_name == pv.name and pv.phase != VOLUME_BOUND:
            self._set_phase(raw, VOLUME_BOUND)

    def _volume_deleted(self, raw: dict[str, Any]) -> None:
        name = (raw.get("metadata") or {}).get("name")
        for claim_raw in self.cluster.list("PersistentVolumeClaim")[0]:
            if (claim_raw.get("spec") or {}).get("volumeName") == name:
                updated = copy.deepcopy(claim_raw)
                updated["status"] = {**(updated.get("status") or {}), "phase": "Lost"}
                self.cluster.update(updated)

    def _set_phase(self, raw: dict[str, Any], phase: str) -> None:
        updated = copy.deepcopy(raw)
        updated["status"] = {**(updated.get("status") or {}), "phase": phase}
        self.cluster.update(updated)

    def _warn(self, claim: PersistentVolumeClaim, text: str) -> None:
        if claim.key in self._warned:
            return
        self._warned.add(claim.key)
        self.warnings.append(f"pvc {claim.key}: {text}")


def _smallest_immediate_match(claim: PersistentVolumeClaim, volumes: list[PersistentVolume]) -> PersistentVolume | None:
    """FindMatchingVolume without a node: the smallest Available volume of the claim's class that
    fits its size, volume mode, selector and access modes."""
    best: PersistentVolume | None = None
    for volume in volumes:
        if volume.claim_ref is not None or volume.phase != VOLUME_AVAILABLE:
            continue
        if volume.capacity < claim.request or volume.volume_mode != claim.volume_mode:
            continue
        if volume.meta.deletion_timestamp is not None or volume.storage_class != claim.storage_class:
            continue
        if claim.selector is not None and not claim.selector.matches(volume.labels):
            continue
        if not all(mode in volume.access_modes for mode in claim.access_modes):
            continue
        if best is None or volume.capacity < best.capacity:
            best = volume
    return best


def _claim_ref(claim: PersistentVolumeClaim) -> dict[str, str]:
    return {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": claim.namespace,
        "name": claim.name,
        "uid": claim.meta.uid,
        "resourceVersion": claim.meta.resource_version,
    }
