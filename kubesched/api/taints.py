"""Node taints and pod tolerations.

Matching follows ``corev1.Toleration.ToleratesTaint`` exactly; parsing additionally enforces
the rules kube-apiserver applies to these fields, so a manifest the real cluster would refuse is
reported instead of being scheduled with surprising results.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.labels import validate_label_key, validate_label_value

__all__ = [
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE",
    "TAINT_EFFECTS",
    "Taint",
    "Toleration",
    "find_untolerated_taint",
]

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
TAINT_EFFECTS: tuple[str, ...] = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)

EQUAL = "Equal"
EXISTS = "Exists"
TOLERATION_OPERATORS: tuple[str, ...] = (EQUAL, EXISTS)


def _mapping(data: object) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ObjectError("", f"expected a mapping, got {type(data).__name__}")
    return data


def _optional_string(data: Mapping[str, Any], name: str) -> str:
    """A string field where omitted and ``null`` both mean the empty string (Go's zero value)."""
    value = data.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        hint = " (quote it in YAML)" if isinstance(value, int | float | bool) else ""
        raise ObjectError(name, f"expected a string, got {type(value).__name__}{hint}")
    return value


def _check_effect(effect: str, *, allow_empty: bool) -> None:
    if effect in TAINT_EFFECTS or (allow_empty and not effect):
        return
    shown = repr(effect) if effect else "empty effect"
    raise ObjectError("effect", f"unsupported {shown}: expected one of {', '.join(TAINT_EFFECTS)}")


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint. Hashable, so identical taint sets across nodes can be grouped."""

    key: str
    value: str
    effect: str

    def __post_init__(self) -> None:
        validate_label_key(self.key)
        validate_label_value(self.value)
        _check_effect(self.effect, allow_empty=False)

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

    @classmethod
    def from_dict(cls, data: object) -> Taint:
        """Parse one ``spec.taints`` entry (``timeAdded`` is irrelevant to scheduling)."""
        body = _mapping(data)
        return cls(
            key=_optional_string(body, "key"),
            value=_optional_string(body, "value"),
            effect=_optional_string(body, "effect"),
        )


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration. ``operator`` is normalised: an omitted operator means ``Equal``.

    An empty ``key`` (only allowed with ``Exists``) matches every key and an empty ``effect``
    every effect, so ``{operator: Exists}`` tolerates all taints.
    """

    key: str = ""
    operator: str = EQUAL
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def __post_init__(self) -> None:
        if not self.operator:
            object.__setattr__(self, "operator", EQUAL)
        if self.key:
            validate_label_key(self.key)
        if self.operator == EQUAL:
            if not self.key:
                raise ObjectError("operator", "must be Exists when key is empty (to tolerate every key)")
            validate_label_value(self.value)
        elif self.operator == EXISTS:
            if self.value:
                raise ObjectError("value", f"must be empty when operator is Exists, got {self.value!r}")
        else:
            raise ObjectError("operator", f"unsupported operator {self.operator!r}: expected Equal or Exists")
        _check_effect(self.effect, allow_empty=True)
        if self.toleration_seconds is not None:
            seconds = self.toleration_seconds
            if isinstance(seconds, bool) or not isinstance(seconds, int):
                raise ObjectError("tolerationSeconds", f"expected an integer, got {type(seconds).__name__}")
            if self.effect != NO_EXECUTE:
                raise ObjectError("tolerationSeconds", "may only be set when effect is NoExecute")

    def tolerates(self, taint: Taint) -> bool:
        """Whether this toleration neutralises ``taint`` (``ToleratesTaint``)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == EXISTS:
            return True
        return self.value == taint.value

    @classmethod
    def from_dict(cls, data: object) -> Toleration:
        """Parse one ``spec.tolerations`` entry."""
        body = _mapping(data)
        return cls(
            key=_optional_string(body, "key"),
            operator=_optional_string(body, "operator"),
            value=_optional_string(body, "value"),
            effect=_optional_string(body, "effect"),
            toleration_seconds=body.get("tolerationSeconds"),
        )


def find_untolerated_taint(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: Collection[str]
) -> Taint | None:
    """The first taint (in node order) with one of ``effects`` that no toleration tolerates.

    The order matters because the first such taint is what the TaintToleration filter reports.
    """
    for taint in taints:
        if taint.effect in effects and not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None
