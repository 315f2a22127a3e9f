"""Where objects live: the Cluster protocol the scheduler talks to, and the in-memory implementation."""

from kubesched.cluster.controllers import update_pdb_status
from kubesched.cluster.embedded import EmbeddedCluster
from kubesched.cluster.kinds import KNOWN_KINDS, KindInfo, kind_info
from kubesched.cluster.manifests import Manifest, ManifestError, load_manifests
from kubesched.cluster.protocol import (
    AlreadyExists,
    ApiError,
    Cluster,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    Watch,
    WatchEvent,
)

__all__ = [
    "KNOWN_KINDS",
    "AlreadyExists",
    "ApiError",
    "Cluster",
    "Conflict",
    "EmbeddedCluster",
    "Forbidden",
    "Invalid",
    "KindInfo",
    "Manifest",
    "ManifestError",
    "NotFound",
    "Watch",
    "WatchEvent",
    "kind_info",
    "load_manifests",
    "update_pdb_status",
]
