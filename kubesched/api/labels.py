"""Label selectors (``metav1.LabelSelector``) and node selectors (``corev1.NodeSelector``).

Both are conjunctions of per-key requirements. Every requirement exposes
``matches_value(value)``, where ``None`` means "the label is absent": a vectorised evaluator can
then decide a requirement once per distinct value of a key instead of once per object, which is
only correct if absent labels are handled exactly as Kubernetes does (``NotIn`` and
``DoesNotExist`` match them, everything else does not).

Parsing is strict: anything kube-apiserver would refuse (unknown operator, wrong number of
values, invalid label key or value, a non-integer ``Gt``/``Lt`` bound) raises
:class:`~kubesched.api.errors.ObjectError` naming the offending field. kube-scheduler instead
lets a node selector term that fails to parse silently match nothing; we prefer to report the
manifest bug up front, since a cluster could never have held such an object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.errors import ObjectError

__all__ = [
    "LabelRequirement",
    "LabelSelector",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "PreferredSchedulingTerm",
    "selector_from_set",
    "selector_matches",
    "validate_label_key",
    "validate_label_value",
]

IN = "In"
NOT_IN = "NotIn"
EXISTS = "Exists"
DOES_NOT_EXIST = "DoesNotExist"
GT = "Gt"
LT = "Lt"

LABEL_SELECTOR_OPERATORS: tuple[str, ...] = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
NODE_SELECTOR_OPERATORS: tuple[str, ...] = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)
NODE_FIELD_OPERATORS: tuple[str, ...] = (IN, NOT_IN)
# The only node field a matchFields requirement may name.
NODE_NAME_FIELD = "metadata.name"

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

# Label syntax from apimachinery's validation package (qualified names and label values).
_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_INT64_RE = re.compile(r"[+-]?[0-9]+")


# --------------------------------------------------------------------------------------------
# Small helpers shared by the parsers


def validate_label_key(key: str, path: str = "key") -> None:
    """Refuse keys that are not ``[prefix/]name`` qualified names, as the apiserver would."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or "/" in prefix):
        raise ObjectError(path, f"invalid label key {key!r}: expected at most one '/' after a non-empty prefix")
    if slash and (len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.fullmatch(prefix)):
        raise ObjectError(path, f"invalid label key {key!r}: prefix must be a DNS subdomain")
    if not name:
        raise ObjectError(path, f"invalid label key {key!r}: name part must not be empty")
    if len(name) > 63 or not _NAME_RE.fullmatch(name):
        raise ObjectError(
            path,
            f"invalid label key {key!r}: name part must be at most 63 alphanumerics, '-', '_' or '.', "
            "starting and ending with an alphanumeric",
        )


def validate_label_value(value: str, path: str = "value") -> None:
    """Refuse label values the apiserver would refuse (empty is allowed)."""
    if value and (len(value) > 63 or not _NAME_RE.fullmatch(value)):
        raise ObjectError(
            path,
            f"invalid label value {value!r}: must be at most 63 alphanumerics, '-', '_' or '.', "
            "starting and ending with an alphanumeric",
        )


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: plain decimal, optional sign, int64 range; else None."""
    if not _INT64_RE.fullmatch(text):
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def _mapping(data: object, path: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ObjectError(path, f"expected a mapping, got {type(data).__name__}")
    return data


def _list(data: object, path: str) -> Sequence[Any]:
    """A YAML list; ``null`` counts as empty, like an omitted Go slice."""
    if data is None:
        return ()
    if not isinstance(data, list | tuple):
        raise ObjectError(path, f"expected a list, got {type(data).__name__}")
    return data


def _string(data: object, path: str, *, default: str | None = None) -> str:
    if data is None and default is not None:
        return default
    if not isinstance(data, str):
        hint = " (quote it in YAML)" if isinstance(data, int | float | bool) else ""
        raise ObjectError(path, f"expected a string, got {type(data).__name__}{hint}")
    return data


def _string_values(data: object, path: str) -> tuple[str, ...]:
    return tuple(_string(item, f"{path}[{i}]") for i, item in enumerate(_list(data, path)))


def _string_map(data: object, path: str) -> dict[str, str]:
    if data is None:
        return {}
    return {
        _string(key, path): _string(value, f"{path}.{key}" if path else str(key))
        for key, value in _mapping(data, path).items()
    }


def _indexed(error: ObjectError, field_name: str, index: int) -> ObjectError:
    return error.under(f"{field_name}[{index}]")


# --------------------------------------------------------------------------------------------
# metav1.LabelSelector


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """One clause of a label selector (``matchLabels`` entries become ``In`` with one value)."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        validate_label_key(self.key)
        if self.operator in (IN, NOT_IN):
            if not self.values:
                raise ObjectError("values", f"must not be empty for operator {self.operator}")
        elif self.operator in (EXISTS, DOES_NOT_EXIST):
            if self.values:
                raise ObjectError("values", f"must be empty for operator {self.operator}")
        else:
            expected = ", ".join(LABEL_SELECTOR_OPERATORS)
            raise ObjectError("operator", f"unsupported operator {self.operator!r}: expected {expected}")
        for value in sorted(self.values):
            validate_label_value(value, "values")

    def matches_value(self, value: str | None) -> bool:
        """Whether a label value satisfies this clause; ``None`` is an absent label."""
        operator = self.operator
        if operator == IN:
            return value is not None and value in self.values
        if operator == NOT_IN:
            return value is None or value not in self.values
        if operator == EXISTS:
            return value is not None
        return value is None  # DoesNotExist

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.matches_value(labels.get(self.key))

    @classmethod
    def from_dict(cls, data: object) -> LabelRequirement:
        """Parse one ``matchExpressions`` entry."""
        entry = _mapping(data, "")
        key = _string(entry.get("key"), "key")
        operator = _string(entry.get("operator"), "operator")
        values = _string_values(entry.get("values"), "values")
        return cls(key, operator, frozenset(values))


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A ``metav1.LabelSelector``: all requirements must hold; no requirement matches everything.

    Whether an *absent* selector matches nothing or everything depends on the API field, so that
    case is left to callers (see :func:`selector_matches`).
    """

    requirements: tuple[LabelRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        """True for ``{}``, which selects every object."""
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(requirement.matches(labels) for requirement in self.requirements)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> LabelSelector | None:
        """Parse a selector; ``None`` (field omitted) stays ``None`` so callers can tell it apart."""
        if data is None:
            return None
        body = _mapping(data, "")
        requirements: list[LabelRequirement] = []
        for key, value in _string_map(body.get("matchLabels"), "matchLabels").items():
            try:
                requirements.append(LabelRequirement(key, IN, frozenset((value,))))
            except ObjectError as error:
                # Point at the matchLabels entry itself rather than at a synthetic requirement.
                raise ObjectError(f"matchLabels.{key}", error.reason) from None
        for index, item in enumerate(_list(body.get("matchExpressions"), "matchExpressions")):
            try:
                requirements.append(LabelRequirement.from_dict(item))
            except ObjectError as error:
                raise _indexed(error, "matchExpressions", index) from None
        return cls(tuple(requirements))


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """Match with an absent selector selecting nothing (the convention of most selector fields)."""
    return selector is not None and selector.matches(labels)


def selector_from_set(labels: Mapping[str, str]) -> LabelSelector:
    """A selector requiring every given label to be equal (``nodeSelector``, Service selectors).

    An empty mapping selects everything. Errors name the offending key, so callers prefix them
    with the field they read the mapping from.
    """
    requirements = []
    for key, value in _string_map(labels, "").items():
        try:
            requirements.append(LabelRequirement(key, IN, frozenset((value,))))
        except ObjectError as error:
            raise ObjectError(key, error.reason) from None
    return LabelSelector(tuple(requirements))


# --------------------------------------------------------------------------------------------
# corev1.NodeSelector (node affinity)


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    """One clause of a node selector term, over a node label or (in matchFields) the node name.

    Construction checks what holds for every use (known operator, value count, integer bounds);
    the extra rules of label expressions and of field expressions are applied by
    :class:`NodeSelectorTerm`.
    """

    key: str
    operator: str
    values: frozenset[str] = frozenset()
    # The parsed Gt/Lt bound, so matching does not re-parse it for every node.
    _bound: int | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        operator = self.operator
        if operator in (IN, NOT_IN):
            if not self.values:
                raise ObjectError("values", f"must not be empty for operator {operator}")
        elif operator in (EXISTS, DOES_NOT_EXIST):
            if self.values:
                raise ObjectError("values", f"must be empty for operator {operator}")
        elif operator in (GT, LT):
            if len(self.values) != 1:
                raise ObjectError("values", f"operator {operator} needs exactly one value")
            (text,) = self.values
            bound = _parse_int64(text)
            if bound is None:
                raise ObjectError("values[0]", f"operator {operator} needs an integer value, got {text!r}")
            object.__setattr__(self, "_bound", bound)
        else:
            expected = ", ".join(NODE_SELECTOR_OPERATORS)
            raise ObjectError("operator", f"unsupported operator {operator!r}: expected one of {expected}")

    def matches_value(self, value: str | None) -> bool:
        """Whether a label value (``None``: label absent) satisfies this clause.

        ``Gt``/``Lt`` compare as integers and never match an absent or non-integer label.
        """
        operator = self.operator
        if operator == IN:
            return value is not None and value in self.values
        if operator == NOT_IN:
            return value is None or value not in self.values
        if operator == EXISTS:
            return value is not None
        if operator == DOES_NOT_EXIST:
            return value is None
        if value is None or self._bound is None:
            return False
        number = _parse_int64(value)
        if number is None:
            return False
        return number > self._bound if operator == GT else number < self._bound

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.matches_value(labels.get(self.key))

    @classmethod
    def from_dict(cls, data: object) -> NodeSelectorRequirement:
        entry = _mapping(data, "")
        key = _string(entry.get("key"), "key")
        operator = _string(entry.get("operator"), "operator")
        values = _string_values(entry.get("values"), "values")
        return cls(key, operator, frozenset(values))


def _check_label_expression(requirement: NodeSelectorRequirement) -> None:
    validate_label_key(requirement.key)
    for value in sorted(requirement.values):
        validate_label_value(value, "values")


def _check_field_expression(requirement: NodeSelectorRequirement) -> None:
    if requirement.key != NODE_NAME_FIELD:
        raise ObjectError("key", f"unsupported field {requirement.key!r}: only {NODE_NAME_FIELD} can be selected")
    if requirement.operator not in NODE_FIELD_OPERATORS:
        raise ObjectError(
            "operator", f"unsupported operator {requirement.operator!r} for a field: expected In or NotIn"
        )
    if len(requirement.values) != 1:
        raise ObjectError("values", "must have exactly one element for a field requirement")


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """Label and field requirements, all ANDed. A term with neither matches no node at all."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()

    def __post_init__(self) -> None:
        for index, requirement in enumerate(self.match_expressions):
            try:
                _check_label_expression(requirement)
            except ObjectError as error:
                raise _indexed(error, "matchExpressions", index) from None
        for index, requirement in enumerate(self.match_fields):
            try:
                _check_field_expression(requirement)
            except ObjectError as error:
                raise _indexed(error, "matchFields", index) from None

    @property
    def empty(self) -> bool:
        return not self.match_expressions and not self.match_fields

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Whether the node with these labels and this name satisfies the term.

        As in kube-scheduler, field requirements are skipped for a node without a name (only
        possible for hand-built test nodes).
        """
        if self.empty:
            return False
        if not all(requirement.matches(labels) for requirement in self.match_expressions):
            return False
        if not node_name:
            return True
        return all(requirement.matches_value(node_name) for requirement in self.match_fields)

    @classmethod
    def from_dict(cls, data: object) -> NodeSelectorTerm:
        body = _mapping(data, "")

        def requirements(name: str) -> tuple[NodeSelectorRequirement, ...]:
            parsed = []
            for index, item in enumerate(_list(body.get(name), name)):
                try:
                    parsed.append(NodeSelectorRequirement.from_dict(item))
                except ObjectError as error:
                    raise _indexed(error, name, index) from None
            return tuple(parsed)

        return cls(requirements("matchExpressions"), requirements("matchFields"))


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """A ``corev1.NodeSelector``: the terms are ORed; no terms (or only empty ones) match nothing."""

    terms: tuple[NodeSelectorTerm, ...] = ()

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return any(term.matches(labels, node_name) for term in self.terms)

    @classmethod
    def from_dict(cls, data: object) -> NodeSelector:
        """Parse ``{"nodeSelectorTerms": [...]}``; a missing or empty list gives a selector of no terms."""
        body = _mapping(data, "")
        terms = []
        for index, item in enumerate(_list(body.get("nodeSelectorTerms"), "nodeSelectorTerms")):
            try:
                terms.append(NodeSelectorTerm.from_dict(item))
            except ObjectError as error:
                raise _indexed(error, "nodeSelectorTerms", index) from None
        return cls(tuple(terms))


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    """A weighted term of preferred node affinity; the weight counts for nodes the term matches."""

    weight: int
    preference: NodeSelectorTerm

    def __post_init__(self) -> None:
        if isinstance(self.weight, bool) or not isinstance(self.weight, int):
            raise ObjectError("weight", f"expected an integer, got {type(self.weight).__name__}")
        if not 1 <= self.weight <= 100:
            raise ObjectError("weight", f"must be in the range 1-100, got {self.weight}")

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return self.preference.matches(labels, node_name)

    @classmethod
    def from_dict(cls, data: object) -> PreferredSchedulingTerm:
        body = _mapping(data, "")
        try:
            # An omitted preference is the empty term, which matches no node.
            raw = body.get("preference")
            preference = NodeSelectorTerm.from_dict({} if raw is None else raw)
        except ObjectError as error:
            raise error.under("preference") from None
        return cls(body.get("weight"), preference)  # type: ignore[arg-type]  # checked in __post_init__
