"""Topology spread constraints, parsed once per pod (and for PodTopologySpread's default constraints)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubesched.api.errors import ObjectError
from kubesched.api.labels import LabelSelector

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    """One ``topologySpreadConstraints`` entry as written (policies left ``None`` when unset)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    selector: LabelSelector | None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, raw: object) -> TopologySpreadConstraint:
        if not isinstance(raw, Mapping):
            raise ObjectError("", f"expected an object, got {type(raw).__name__}")
        max_skew = raw.get("maxSkew")
        if isinstance(max_skew, bool) or not isinstance(max_skew, int) or max_skew <= 0:
            raise ObjectError("maxSkew", f"must be greater than zero, got {max_skew!r}")
        key = raw.get("topologyKey")
        if not isinstance(key, str) or not key:
            raise ObjectError("topologyKey", "required value")
        when = raw.get("whenUnsatisfiable")
        if when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            raise ObjectError(
                "whenUnsatisfiable", f"unsupported value {when!r}: expected {DO_NOT_SCHEDULE} or {SCHEDULE_ANYWAY}"
            )
        min_domains = raw.get("minDomains")
        if min_domains is not None:
            if isinstance(min_domains, bool) or not isinstance(min_domains, int) or min_domains <= 0:
                raise ObjectError("minDomains", f"must be greater than zero, got {min_domains!r}")
            if when != DO_NOT_SCHEDULE:
                raise ObjectError("minDomains", f"can only use minDomains if whenUnsatisfiable={DO_NOT_SCHEDULE}")
        policies = []
        for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = raw.get(name)
            if policy is not None and policy not in (HONOR, IGNORE):
                raise ObjectError(name, f"unsupported value {policy!r}: expected {HONOR} or {IGNORE}")
            policies.append(policy)
        keys = raw.get("matchLabelKeys") or ()
        if not isinstance(keys, Sequence) or isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise ObjectError("matchLabelKeys", "expected a list of strings")
        try:
            selector = LabelSelector.from_dict(raw.get("labelSelector"))
        except ObjectError as error:
            raise error.under("labelSelector") from None
        return cls(
            max_skew=max_skew,
            topology_key=key,
            when_unsatisfiable=when,
            selector=selector,
            min_domains=min_domains,
            node_affinity_policy=policies[0],
            node_taints_policy=policies[1],
            match_label_keys=tuple(keys),
        )


def parse_constraints(raw: Sequence[object], path: str) -> tuple[TopologySpreadConstraint, ...]:
    """Parse a list of constraints; errors name ``path[i].field``."""
    out = []
    for i, item in enumerate(raw):
        try:
            out.append(TopologySpreadConstraint.from_dict(item))
        except ObjectError as error:
            raise error.under(f"{path}[{i}]") from None
    return tuple(out)
