"""What kube-controller-manager's workload controllers share: owner references, pod templates, names, hashes.

Every controller here creates pods through ``cluster.create`` exactly as a controller would through the
API server, so admission (defaulting, priority) applies to them as to any pod.
"""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Mapping
from typing import Any

#: What the API server's names.SimpleNameGenerator appends (k8s.io/apimachinery/pkg/util/rand's alphabet).
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_LENGTH = 5
#: A generated name stays within a DNS label (63 characters) with its random suffix.
MAX_GENERATED_NAME_LENGTH = 63 - RANDOM_LENGTH

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
CONTROLLER_REVISION_HASH_LABEL = "controller-revision-hash"

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


class NameGenerator:
    """names.SimpleNameGenerator on a seeded RNG: ``base`` + five characters of :data:`NAME_ALPHABET`."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def generate(self, base: str) -> str:
        base = base[:MAX_GENERATED_NAME_LENGTH]
        return base + "".join(self.rng.choice(NAME_ALPHABET) for _ in range(RANDOM_LENGTH))


def fnv32a(data: bytes, state: int = _FNV32_OFFSET) -> int:
    """FNV-1a, 32 bits (Go's hash/fnv New32a)."""
    for byte in data:
        state = ((state ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return state


def safe_encode_string(text: str) -> str:
    """rand.SafeEncodeString: every character mapped into the alphabet that has no vowels (no words)."""
    return "".join(NAME_ALPHABET[ord(ch) % len(NAME_ALPHABET)] for ch in text)


def compute_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    """controller.ComputeHash: FNV-32a over the pod template, then the collision count, SafeEncodeString'd.

    kube-controller-manager hashes a spew dump of the typed Go struct; the typed struct does not exist
    here, so the template's canonical JSON (sorted keys) is hashed instead. The steps around it (the
    collision count as 8 little-endian bytes, the decimal rendering, the encoding) are the same, so
    equal templates get equal hashes and a collision moves the hash as it does there.
    """
    state = fnv32a(json.dumps(template, sort_keys=True, separators=(",", ":")).encode())
    if collision_count is not None:
        state = fnv32a(struct.pack("<I", collision_count & 0xFFFFFFFF) + b"\0\0\0\0", state)
    return safe_encode_string(str(state))


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def key_of(obj: Mapping[str, Any]) -> tuple[str, str]:
    m = meta(obj)
    return str(m.get("namespace") or ""), str(m.get("name") or "")


def owner_reference(owner: Mapping[str, Any]) -> dict[str, Any]:
    """metav1.NewControllerRef: the owner as this object's managing controller."""
    m = meta(owner)
    return {
        "apiVersion": owner.get("apiVersion"),
        "kind": owner.get("kind"),
        "name": m.get("name"),
        "uid": m.get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """metav1.GetControllerOf: the owner reference with controller=true, if any."""
    for ref in meta(obj).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return ref
    return None


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    ref = controller_of(obj)
    return str(ref.get("uid")) if ref is not None else None


def pod_from_template(
    owner: Mapping[str, Any],
    template: Mapping[str, Any],
    *,
    name: str,
    generate_name: str | None = None,
    extra_labels: Mapping[str, str] | None = None,
    extra_annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """controller.GetPodFromTemplate: the template's labels, annotations and spec, owned by ``owner``."""
    tmeta = template.get("metadata") or {}
    labels = dict(tmeta.get("labels") or {})
    labels.update(extra_labels or {})
    annotations = dict(tmeta.get("annotations") or {})
    annotations.update(extra_annotations or {})
    pod_meta: dict[str, Any] = {
        "name": name,
        "namespace": meta(owner).get("namespace") or "default",
        "labels": labels,
        "ownerReferences": [owner_reference(owner)],
    }
    if generate_name:
        pod_meta["generateName"] = generate_name
    if annotations:
        pod_meta["annotations"] = annotations
    if tmeta.get("finalizers"):
        pod_meta["finalizers"] = list(tmeta["finalizers"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "spec": json.loads(json.dumps(template.get("spec") or {})),
    }


def is_active(pod: Mapping[str, Any]) -> bool:
    """controller.IsPodActive: not Succeeded, not Failed, not being deleted."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and not meta(pod).get(
        "deletionTimestamp"
    )


def is_bound(pod: Mapping[str, Any]) -> bool:
    """Running and ready as far as the simulation goes: there is no kubelet, so a bound pod runs."""
    return bool(spec(pod).get("nodeName")) and is_active(pod)


def int_field(value: Any, default: int) -> int:
    """An optional integer field; absent or malformed values take the API default."""
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value
