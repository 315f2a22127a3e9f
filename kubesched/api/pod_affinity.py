"""Pod (anti-)affinity terms, parsed once per pod.

A term selects pods by labels within a set of namespaces (or a namespace selector) and names the
node label (``topologyKey``) whose value defines "the same place". Both InterPodAffinity and the
queue (which moves pods waiting on affinity when a matching pod gets bound) read these.

``matchLabelKeys`` / ``mismatchLabelKeys`` are kept as written: the API server folds them into the
label selector when the pod is created (MatchLabelKeysInPodAffinity, on from v1.34), so the
scheduler itself never applies them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.api.errors import ObjectError
from kubesched.api.labels import LabelSelector, selector_matches


class SelectablePod(Protocol):
    """What a term reads of a pod: its namespace and labels (a :class:`~kubesched.api.objects.Pod`)."""

    @property
    def namespace(self) -> str: ...

    @property
    def labels(self) -> Mapping[str, str]: ...


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """One ``PodAffinityTerm`` with its namespaces resolved against the owning pod.

    ``namespaces`` is the owning pod's own namespace when the term names neither namespaces nor a
    namespace selector. An absent ``selector`` / ``namespace_selector`` selects nothing; ``{}``
    selects everything.
    """

    namespaces: frozenset[str]
    selector: LabelSelector | None
    namespace_selector: LabelSelector | None
    topology_key: str
    #: Label keys whose values (the owning pod's) the API server ANDed into ``selector`` as
    #: ``In`` / ``NotIn`` requirements at creation.
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()

    def matches(self, pod: SelectablePod, namespace_labels: Mapping[str, str] | None) -> bool:
        """Whether ``pod`` (whose namespace carries ``namespace_labels``) is selected by this term."""
        if pod.namespace in self.namespaces or selector_matches(self.namespace_selector, namespace_labels or {}):
            return selector_matches(self.selector, pod.labels)
        return False

    @classmethod
    def from_dict(cls, raw: object, owner_namespace: str) -> PodAffinityTerm:
        if not isinstance(raw, Mapping):
            raise ObjectError("", f"expected an object, got {type(raw).__name__}")
        namespaces_raw = _strings(raw.get("namespaces"), "namespaces")
        namespace_selector = _selector(raw.get("namespaceSelector"), "namespaceSelector")
        namespaces = frozenset(namespaces_raw)
        if not namespaces and raw.get("namespaceSelector") is None:
            namespaces = frozenset((owner_namespace,))
        key = raw.get("topologyKey")
        if not isinstance(key, str) or not key:
            raise ObjectError("topologyKey", "required value")
        return cls(
            namespaces=namespaces,
            selector=_selector(raw.get("labelSelector"), "labelSelector"),
            namespace_selector=namespace_selector,
            topology_key=key,
            match_label_keys=_strings(raw.get("matchLabelKeys"), "matchLabelKeys"),
            mismatch_label_keys=_strings(raw.get("mismatchLabelKeys"), "mismatchLabelKeys"),
        )


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    """A preferred term: its weight (1-100) counts for every node in the matched topology domain."""

    term: PodAffinityTerm
    weight: int

    @classmethod
    def from_dict(cls, raw: object, owner_namespace: str) -> WeightedPodAffinityTerm:
        if not isinstance(raw, Mapping):
            raise ObjectError("", f"expected an object, got {type(raw).__name__}")
        weight = raw.get("weight")
        if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= 100:
            raise ObjectError("weight", f"must be an integer in the range 1-100, got {weight!r}")
        try:
            term = PodAffinityTerm.from_dict(raw.get("podAffinityTerm"), owner_namespace)
        except ObjectError as error:
            raise error.under("podAffinityTerm") from None
        return cls(term=term, weight=weight)


@dataclass(frozen=True, slots=True)
class PodAffinity:
    """All pod (anti-)affinity terms of one pod, in spec order."""

    required_affinity: tuple[PodAffinityTerm, ...] = ()
    required_anti_affinity: tuple[PodAffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedPodAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedPodAffinityTerm, ...] = ()
    #: The spec has a podAffinity or podAntiAffinity block at all (even empty), as kube-scheduler's
    #: "pods with affinity" lists count it.
    declared: bool = False

    @property
    def has_terms(self) -> bool:
        return bool(
            self.required_affinity
            or self.required_anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )

    @classmethod
    def from_affinity(cls, affinity: Mapping[str, Any], owner_namespace: str) -> PodAffinity:
        """Parse ``spec.affinity``; errors carry the path below ``spec.affinity``."""
        aff = affinity.get("podAffinity")
        anti = affinity.get("podAntiAffinity")
        if aff is None and anti is None:
            return _NONE
        return cls(
            required_affinity=_terms(aff, "podAffinity", REQUIRED, owner_namespace),
            required_anti_affinity=_terms(anti, "podAntiAffinity", REQUIRED, owner_namespace),
            preferred_affinity=_weighted(aff, "podAffinity", owner_namespace),
            preferred_anti_affinity=_weighted(anti, "podAntiAffinity", owner_namespace),
            declared=True,
        )


REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_NONE = PodAffinity()


def _strings(raw: object, path: str) -> tuple[str, ...]:
    """A list of strings (absent or null: empty)."""
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str) or not all(isinstance(v, str) for v in raw):
        raise ObjectError(path, "expected a list of strings")
    return tuple(raw)


def _selector(raw: object, path: str) -> LabelSelector | None:
    try:
        return LabelSelector.from_dict(raw)  # type: ignore[arg-type]
    except ObjectError as error:
        raise error.under(path) from None


def _block(raw: object, path: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ObjectError(path, f"expected an object, got {type(raw).__name__}")
    return raw


def _items(block: Mapping[str, Any], path: str, field_name: str) -> list[Any]:
    items = block.get(field_name) or []
    if not isinstance(items, list):
        raise ObjectError(f"{path}.{field_name}", f"expected a list, got {type(items).__name__}")
    return items


def _terms(raw: object, path: str, field_name: str, owner_namespace: str) -> tuple[PodAffinityTerm, ...]:
    block = _block(raw, path)
    out = []
    for i, item in enumerate(_items(block, path, field_name)):
        try:
            out.append(PodAffinityTerm.from_dict(item, owner_namespace))
        except ObjectError as error:
            raise error.under(f"{path}.{field_name}[{i}]") from None
    return tuple(out)


def _weighted(raw: object, path: str, owner_namespace: str) -> tuple[WeightedPodAffinityTerm, ...]:
    block = _block(raw, path)
    out = []
    for i, item in enumerate(_items(block, path, PREFERRED)):
        try:
            out.append(WeightedPodAffinityTerm.from_dict(item, owner_namespace))
        except ObjectError as error:
            raise error.under(f"{path}.{PREFERRED}[{i}]") from None
    return tuple(out)
