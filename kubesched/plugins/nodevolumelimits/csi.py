"""NodeVolumeLimits: a node's CSI drivers attach at most ``allocatable.count`` volumes each.

The pod's volumes (claims resolved to their PV's driver and handle, or to the class's provisioner for
unbound claims; inline in-tree disks where migrated) are added to those already attached by the
node's pods, counted once per unique volume; a driver over its limit rejects the node.

v1.30 reads a driver's limit from its CSINode count or else from the node's
``attachable-volumes-csi-<driver>`` allocatable. v1.34 reads CSINode counts only, and also counts
the node's VolumeAttachments of CSI volumes that no pod on the node uses (a new pod's volume is not
matched against them, as upstream does not). Portworx volumes count as CSI ones under
CSIMigrationPortworx (see :mod:`.translation`).

Attached volumes are kept per node and refreshed only for nodes whose pods changed, so the batch
filter over thousands of nodes is a few array operations per driver.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.storage import CSINode
from kubesched.cache.node_info import NodeInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    ActionType,
    BatchFilterResult,
    ClusterEvent,
    ClusterEventWithHint,
    PreFilterExtensions,
    PreFilterResult,
    QueueingHint,
    minus_ones,
    queueing_hints_enabled,
)
from kubesched.framework.status import Status, unresolvable, unschedulable
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS, features_of
from kubesched.plugins.nodevolumelimits import translation
from kubesched.queue import events as qevents
from kubesched.queue.hints import object_meta

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot

NAME = names.NODE_VOLUME_LIMITS
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"


class _Missing(Exception):
    """A claim of the pod being scheduled does not exist (NotFound)."""


class CSILimits:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.random_volume_id_prefix = secrets.token_hex(16)
        features = features_of(handle)
        #: v1.34: limits from CSINode alone, keyed by driver name, and VolumeAttachments count.
        self.v1_34 = features.at_least("1.34")
        self.portworx = features.enabled("CSIMigrationPortworx")
        # Per snapshot row: (node generation, ({unique volume: limit key} counted, of which pods'));
        # rebuilt when rows move or storage objects change.
        self._rows_key: tuple[Any, tuple[int, int]] | None = None
        self._row_gen = np.zeros(0, dtype=np.int64)
        self._row_volumes: list[tuple[dict[str, str], dict[str, str]]] = []
        self._counts: dict[str, np.ndarray] = {}
        self._where: dict[str, dict[int, int]] = {}
        self._limits: dict[str, np.ndarray] | None = None
        self._migrated_mask: tuple[Any, int, np.ndarray] | None = None
        self._attached_index: tuple[int, dict[str, dict[str, str]]] | None = None

    def limit_key(self, driver: str) -> str:
        """What volumes and limits are counted under: the driver (v1.34) or its allocatable name (v1.30)."""
        return driver if self.v1_34 else translation.csi_attach_limit_key(driver)

    def _migration_on(self, csi_node: CSINode | None, plugin: str) -> bool:
        return translation.migration_on(csi_node, plugin, self.portworx)

    # -- which volumes a pod attaches ---------------------------------------------------------------
    def attachable_volumes(self, pod: Pod, csi_node: CSINode | None, *, new_pod: bool) -> dict[str, str]:
        """{driver/handle: limit key} of the pod's CSI (or migrated) volumes."""
        listers = self.handle.listers
        out: dict[str, str] = {}
        for vol in pod.volumes:
            if vol.get("persistentVolumeClaim") is not None:
                claim_name = str(vol["persistentVolumeClaim"].get("claimName") or "")
            elif vol.get("ephemeral") is not None:
                claim_name = f"{pod.name}-{vol.get('name')}"
            else:
                plugin = translation.in_tree_plugin_of(vol)
                if plugin is None or not self._migration_on(csi_node, plugin):
                    continue
                driver, handle = translation.translate(vol, plugin)
                out[f"{driver}/{handle}"] = self.limit_key(driver)
                continue
            if not claim_name:
                raise ValueError("PersistentVolumeClaim had no name")
            claim = listers.pvc(pod.namespace, claim_name)
            if claim is None:
                if new_pod:
                    raise _Missing(
                        f'looking up PVC {pod.namespace}/{claim_name}: persistentvolumeclaim "{claim_name}" not found'
                    )
                continue
            driver, handle = self._driver_info(claim, csi_node)
            if driver and handle:
                out[f"{driver}/{handle}"] = self.limit_key(driver)
        return out

    def _driver_info(self, claim: Any, csi_node: CSINode | None) -> tuple[str, str]:
        listers = self.handle.listers
        pv = listers.pv(claim.volume_name) if claim.volume_name else None
        if pv is None:
            class_name = claim.storage_class
            sc = listers.storage_class(class_name) if class_name else None
            if sc is None:
                return "", ""
            handle = f"{self.random_volume_id_prefix}-{claim.namespace}/{claim.name}"
            if sc.provisioner in translation.MIGRATABLE:
                if not self._migration_on(csi_node, sc.provisioner):
                    return "", ""
                return translation.MIGRATABLE[sc.provisioner][2], handle
            return sc.provisioner, handle
        if pv.source == "csi":
            return pv.csi_driver, str(pv.source_spec.get("volumeHandle") or "")
        plugin = translation.in_tree_plugin_of({pv.source: pv.source_spec})
        if plugin is None or not self._migration_on(csi_node, plugin):
            return "", ""
        return translation.translate({pv.source: pv.source_spec}, plugin)

    def attached_by_attachments(self, node_name: str) -> Mapping[str, str]:
        """{driver/handle: limit key} of the VolumeAttachments of CSI volumes to ``node_name`` (v1.34;
        empty in v1.30). Indexed by node once per storage change."""
        if not self.v1_34:
            return {}
        listers = self.handle.listers
        version = listers.storage_version
        cached = self._attached_index
        if cached is None or cached[0] != version:
            index: dict[str, dict[str, str]] = {}
            for va in listers.volume_attachments():
                if not va.attacher or va.persistent_volume_name is None:
                    continue
                pv = listers.pv(va.persistent_volume_name)
                if pv is None or pv.source != "csi":
                    continue
                unique = f"{va.attacher}/{pv.source_spec.get('volumeHandle') or ''}"
                index.setdefault(va.node_name, {})[unique] = self.limit_key(va.attacher)
            cached = self._attached_index = (version, index)
        return cached[1].get(node_name, {})

    def volume_limits(self, node_info: NodeInfo, csi_node: CSINode | None) -> dict[str, int]:
        """getVolumeLimits of the emulated version, by limit key."""
        if not self.v1_34:
            return volume_limits(node_info, csi_node)
        if csi_node is None:
            return {}
        return {d.name: d.allocatable_count for d in csi_node.drivers if d.allocatable_count is not None}

    # -- PreFilter / Filter ---------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status | None]:
        for vol in pod.volumes:
            if (
                vol.get("persistentVolumeClaim") is not None
                or vol.get("ephemeral") is not None
                or translation.in_tree_plugin_of(vol) is not None
            ):
                return None, None
        return None, SKIP_STATUS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def _new_volumes(self, pod: Pod, csi_node: CSINode | None) -> tuple[dict[str, str], Status | None]:
        try:
            return self.attachable_volumes(pod, csi_node, new_pod=True), None
        except _Missing as err:
            return {}, unresolvable(str(err))
        except ValueError as err:
            return {}, Status.from_error(err)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        node = node_info.node
        assert node is not None
        csi_node = self.handle.listers.csi_node(node.name)
        new, status = self._new_volumes(pod, csi_node)
        if status is not None or not new:
            return status
        limits = self.volume_limits(node_info, csi_node)
        if not limits:
            return None
        attached: dict[str, str] = {}
        for other in node_info.pods:
            attached.update(self.attachable_volumes(other, csi_node, new_pod=False))
        attached_count: dict[str, int] = {}
        for unique, key in attached.items():
            new.pop(unique, None)
            attached_count[key] = attached_count.get(key, 0) + 1
        for unique, key in self.attached_by_attachments(node_info.name).items():
            if unique not in attached:
                attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for key in new.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            limit = limits.get(key)
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, indices: np.ndarray) -> BatchFilterResult:
        rows = np.asarray(indices)
        if not pod.volumes or len(rows) == 0:
            return BatchFilterResult.all_pass(len(rows))
        # The pod's volumes depend on the node only where in-tree kinds are migrated to CSI (nodes
        # with a CSINode): those rows go node by node, the others share one answer.
        dependent = any(translation.in_tree_plugin_of(v) is not None for v in pod.volumes) or self._node_dependent(pod)
        statuses: list[Status] = []
        index = minus_ones(len(rows))
        if dependent:
            migrated = self._migrated_rows(snapshot)[rows]
            if migrated.any():
                sub = self._per_node(state, pod, snapshot, rows[migrated])
                index[migrated] = sub.status_index
                statuses = list(sub.statuses)
                if migrated.all():
                    return BatchFilterResult(index, statuses)
        new, status = self._new_volumes(pod, None)
        if status is not None:
            return BatchFilterResult.all_fail(len(rows), status)
        plain = index < 0
        if dependent:
            plain &= ~self._migrated_rows(snapshot)[rows]
        if not new:
            return BatchFilterResult(index, statuses)
        self._refresh(snapshot)
        limits = self._limit_columns(snapshot)
        passed = np.ones(len(rows), dtype=bool)
        by_key: dict[str, list[str]] = {}
        for unique, key in new.items():
            by_key.setdefault(key, []).append(unique)
        for key, uniques in by_key.items():
            limit = limits.get(key)
            if limit is None:
                continue
            need = np.full(len(rows), len(uniques), dtype=np.int64)
            for unique in uniques:
                where = self._where.get(unique)
                if where:
                    on = np.fromiter((row in where for row in rows.tolist()), dtype=bool, count=len(rows))
                    need -= on
            counts = self._counts.get(key)
            current = counts[rows] if counts is not None else 0
            lim = limit[rows]
            # A node already holding every new volume of this key adds none (upstream only compares
            # keys the pod brings new volumes for), whatever its count.
            passed &= (lim < 0) | (need == 0) | (current + need <= lim)
        failed = plain & ~passed
        if failed.any():
            statuses.append(unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED))
            index[failed] = len(statuses) - 1
        return BatchFilterResult(index, statuses)

    def _migrated_rows(self, snapshot: Snapshot) -> np.ndarray:
        """Rows with a CSINode object (where in-tree kinds count as migrated)."""
        key = (snapshot.names, self.handle.listers.storage_version)
        cached = self._migrated_mask
        if cached is not None and cached[0] is key[0] and cached[1] == key[1]:
            return cached[2]
        listers = self.handle.listers
        mask = np.fromiter(
            (listers.csi_node(info.name) is not None for info in snapshot.node_infos),
            dtype=bool,
            count=len(snapshot.node_infos),
        )
        self._migrated_mask = (key[0], key[1], mask)
        return mask

    def _node_dependent(self, pod: Pod) -> bool:
        listers = self.handle.listers
        for vol in pod.volumes:
            ref = vol.get("persistentVolumeClaim")
            claim_name = (
                str(ref.get("claimName") or "")
                if ref is not None
                else f"{pod.name}-{vol.get('name')}"
                if vol.get("ephemeral") is not None
                else ""
            )
            if not claim_name:
                continue
            claim = listers.pvc(pod.namespace, claim_name)
            if claim is None:
                continue
            pv = listers.pv(claim.volume_name) if claim.volume_name else None
            if pv is None:
                sc = listers.storage_class(claim.storage_class) if claim.storage_class else None
                if sc is not None and sc.provisioner in translation.MIGRATABLE:
                    return True
            elif pv.source != "csi" and translation.in_tree_plugin_of({pv.source: pv.source_spec}):
                return True
        return False

    def _per_node(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: np.ndarray) -> BatchFilterResult:
        infos = snapshot.node_infos
        return BatchFilterResult.from_node_statuses([self.filter(state, pod, infos[row]) for row in rows.tolist()])

    # -- per-node attached volumes, refreshed for changed nodes only ----------------------------------
    def _refresh(self, snapshot: Snapshot) -> None:
        key = (snapshot.names, (self.handle.listers.storage_version, snapshot.node_objects_version))
        infos = snapshot.node_infos
        if self._rows_key is None or self._rows_key[0] is not key[0] or self._rows_key[1] != key[1]:
            self._rows_key = key
            self._row_gen = np.full(len(infos), -1, dtype=np.int64)
            self._row_volumes = [({}, {}) for _ in infos]
            self._counts = {}
            self._where = {}
            self._limits = None
        seen = self._row_gen
        for row in np.flatnonzero(snapshot.row_generation != seen).tolist():
            seen[row] = snapshot.row_generation[row]
            self._set_row(row, infos[row])

    def _set_row(self, row: int, info: NodeInfo) -> None:
        """Recount one row: every volume counts once; only pods' volumes are matched against the new
        pod's (``_where``)."""
        csi_node = self.handle.listers.csi_node(info.name)
        volumes: dict[str, str] = {}
        for other in info.pods:
            if other.volumes:
                volumes.update(self.attachable_volumes(other, csi_node, new_pod=False))
        counted = {**self.attached_by_attachments(info.name), **volumes}
        old_counted, old_volumes = self._row_volumes[row]
        if old_counted == counted and old_volumes == volumes:
            return
        n = len(self._row_gen)
        for key in old_counted.values():
            self._counts[key][row] -= 1
        for unique in old_volumes:
            self._where[unique].pop(row, None)
        for key in counted.values():
            counts = self._counts.get(key)
            if counts is None:
                counts = self._counts[key] = np.zeros(n, dtype=np.int64)
            counts[row] += 1
        for unique in volumes:
            self._where.setdefault(unique, {})[row] = 1
        self._row_volumes[row] = (counted, volumes)

    def _limit_columns(self, snapshot: Snapshot) -> dict[str, np.ndarray]:
        """Per limit key, each row's limit (-1: none)."""
        if self._limits is not None:
            return self._limits
        listers = self.handle.listers
        infos = snapshot.node_infos
        columns: dict[str, np.ndarray] = {}
        for row, info in enumerate(infos):
            for key, value in self.volume_limits(info, listers.csi_node(info.name)).items():
                col = columns.get(key)
                if col is None:
                    col = columns[key] = np.full(len(infos), -1, dtype=np.int64)
                col[row] = value
        self._limits = columns
        return columns

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        if not queueing_hints_enabled(self.handle):
            return (
                ClusterEvent(qevents.CSI_NODE, ActionType.ADD),
                ClusterEvent(qevents.POD, ActionType.DELETE),
                ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
            )
        return (
            ClusterEvent(qevents.CSI_NODE, ActionType.ADD),
            ClusterEventWithHint(
                ClusterEvent(qevents.CSI_NODE, ActionType.UPDATE), is_schedulable_after_csi_node_updated
            ),
            ClusterEventWithHint(ClusterEvent(qevents.POD, ActionType.DELETE), is_schedulable_after_pod_deleted),
            ClusterEventWithHint(
                ClusterEvent(qevents.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), is_schedulable_after_pvc_added
            ),
            ClusterEventWithHint(
                ClusterEvent(qevents.VOLUME_ATTACHMENT, ActionType.DELETE),
                is_schedulable_after_volume_attachment_deleted,
            ),
        )


#: The in-tree volume sources csi-translation-lib can migrate inline, with their CSI driver.
_INLINE_MIGRATABLE = {
    "gcePersistentDisk": "pd.csi.storage.gke.io",
    "awsElasticBlockStore": "ebs.csi.aws.com",
    "cinder": "cinder.csi.openstack.org",
    "azureDisk": "disk.csi.azure.com",
    "azureFile": "file.csi.azure.com",
    "vsphereVolume": "csi.vsphere.vmware.com",
    "portworxVolume": "pxd.portworx.com",
}


def _inline_driver(volume: Any) -> str | None:
    """The CSI driver an inline in-tree volume migrates to (None: not migratable inline)."""
    return next((driver for source, driver in _INLINE_MIGRATABLE.items() if volume.get(source) is not None), None)


def is_schedulable_after_pod_deleted(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A bound (or nominated) pod with a volume that counts against a limit."""
    deleted: Pod = old_obj
    if not deleted.volumes or not (deleted.node_name or deleted.nominated_node_name):
        return QueueingHint.QUEUE_SKIP
    for vol in deleted.volumes:
        if (
            vol.get("persistentVolumeClaim") is not None
            or vol.get("ephemeral") is not None
            or _inline_driver(vol) is not None
        ):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pvc_added(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A claim the pod uses (by name, or as its generic ephemeral volume) was created."""
    namespace, name = object_meta(new_obj)
    if namespace != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    for vol in pod.volumes:
        if vol.get("persistentVolumeClaim") is not None:
            wanted = str(vol["persistentVolumeClaim"].get("claimName") or "")
        elif vol.get("ephemeral") is not None:
            wanted = f"{pod.name}-{vol.get('name')}"
        else:
            continue
        if wanted == name:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_volume_attachment_deleted(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A volume detached: the pod uses a claim, or an inline volume of the attacher's driver."""
    attacher = ((old_obj or {}).get("spec") or {}).get("attacher")
    for vol in pod.volumes:
        if vol.get("persistentVolumeClaim") is not None:
            return QueueingHint.QUEUE
        driver = _inline_driver(vol)
        if driver is not None and driver == attacher:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_csi_node_updated(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Some driver's attach limit (allocatable.count) went up."""
    old_limits = _driver_limits(old_obj)
    for driver, limit in _driver_limits(new_obj).items():
        if limit > old_limits.get(driver, 0):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _driver_limits(csi_node: Any) -> dict[str, int]:
    """Driver name -> allocatable count (0 when unset) of a CSINode object."""
    drivers = ((csi_node or {}).get("spec") or {}).get("drivers") or ()
    out: dict[str, int] = {}
    for d in drivers:
        count = (d.get("allocatable") or {}).get("count")
        out[str(d.get("name") or "")] = int(count) if isinstance(count, int) else 0
    return out


def volume_limits(node_info: NodeInfo, csi_node: CSINode | None) -> dict[str, int]:
    """getVolumeLimits of v1.30: ``attachable-volumes-*`` allocatable of the node, overridden by CSINode
    counts."""
    limits: dict[str, int] = {}
    node = node_info.node
    if node is not None:
        allocatable = (node.raw.get("status") or {}).get("allocatable") or {}
        for key, value in allocatable.items():
            if str(key).startswith(ATTACHABLE_VOLUMES_PREFIX):
                try:
                    limits[str(key)] = int(value)
                except (TypeError, ValueError):
                    continue
    if csi_node is not None:
        for driver in csi_node.drivers:
            if driver.allocatable_count is not None:
                limits[translation.csi_attach_limit_key(driver.name)] = driver.allocatable_count
    return limits


def new(args: Any, handle: Handle) -> CSILimits:
    return CSILimits(handle)
