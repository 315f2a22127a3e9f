"""What csi-translation-lib tells the volume-limit plugins about in-tree volumes.

In-tree volume kinds migrated to CSI are counted against the CSI driver's limit on nodes where the
migration is on. For AWS EBS, GCE PD, Azure Disk and Cinder (their migration is GA) the volume-limit
plugins take it as on as soon as the node has a CSINode object. Portworx is migrated only under its
feature gate (CSIMigrationPortworx: off in v1.30, on in v1.34) and only on nodes whose CSINode lists
it in the ``storage.alpha.kubernetes.io/migrated-plugins`` annotation. Azure File and vSphere volumes
can be translated but are never counted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from kubesched.api.storage import CSINode

AWS_EBS = "kubernetes.io/aws-ebs"
GCE_PD = "kubernetes.io/gce-pd"
AZURE_DISK = "kubernetes.io/azure-disk"
CINDER = "kubernetes.io/cinder"
PORTWORX = "kubernetes.io/portworx-volume"
AZURE_FILE = "kubernetes.io/azure-file"
VSPHERE = "kubernetes.io/vsphere-volume"

#: In-tree plugin -> (pod/PV volume source key, id field, CSI driver name), for every plugin
#: csi-translation-lib can translate.
MIGRATABLE: Mapping[str, tuple[str, str, str]] = {
    AWS_EBS: ("awsElasticBlockStore", "volumeID", "ebs.csi.aws.com"),
    GCE_PD: ("gcePersistentDisk", "pdName", "pd.csi.storage.gke.io"),
    AZURE_DISK: ("azureDisk", "diskName", "disk.csi.azure.com"),
    CINDER: ("cinder", "volumeID", "cinder.csi.openstack.org"),
    PORTWORX: ("portworxVolume", "volumeID", "pxd.portworx.com"),
    AZURE_FILE: ("azureFile", "shareName", "file.csi.azure.com"),
    VSPHERE: ("vsphereVolume", "volumePath", "csi.vsphere.vmware.com"),
}
_BY_SOURCE = {source: plugin for plugin, (source, _, _) in MIGRATABLE.items()}
#: Migrated wherever a CSINode exists.
_GA = frozenset((AWS_EBS, GCE_PD, AZURE_DISK, CINDER))

CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
RESOURCE_NAME_LENGTH_LIMIT = 63


def csi_attach_limit_key(driver: str) -> str:
    """GetCSIAttachLimitKey: the allocatable resource name of a driver's volume limit."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver


def migration_on(csi_node: CSINode | None, plugin: str, portworx: bool = False) -> bool:
    """isCSIMigrationOn (nodevolumelimits); ``portworx`` is the CSIMigrationPortworx gate."""
    if csi_node is None:
        return False
    if plugin in _GA:
        return True
    return plugin == PORTWORX and portworx and PORTWORX in csi_node.migrated_plugins()


def in_tree_plugin_of(volume: Mapping[str, Any]) -> str | None:
    """The in-tree plugin name of an inline volume or a PV spec, when it is a translatable kind."""
    for source, plugin in _BY_SOURCE.items():
        if volume.get(source) is not None:
            return plugin
    return None


def translate(volume: Mapping[str, Any], plugin: str) -> tuple[str, str]:
    """(CSI driver, volume handle) of a migratable in-tree volume source."""
    source, id_field, driver = MIGRATABLE[plugin]
    body = volume.get(source) or {}
    handle = str(body.get(id_field) or "")
    if plugin == AWS_EBS and handle.startswith("aws://"):
        handle = handle.rsplit("/", 1)[-1]  # aws://zone/vol-id -> vol-id
    return driver, handle
