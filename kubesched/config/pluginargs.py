"""Typed arguments of the in-tree plugins that take configuration.

Each args class knows three things: how to read itself from the ``args``
object of a ``pluginConfig`` entry (strictly, with kube-scheduler's per-field
defaults filling whatever the user left out), its defaults when the user gave
nothing at all, and how to validate itself.  ``PLUGIN_ARGS`` is the single
table tying plugin names to those classes; everything else (defaulting of
profiles, ``default_args``) goes through it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar, Protocol, Self

from kubesched.config.decode import Fields, as_duration, as_int, as_list, as_mapping, as_str
from kubesched.config.errors import (
    ConfigError,
    child,
    duplicate,
    forbidden,
    index,
    invalid,
    not_supported,
    required,
)

# Upper bound of a score produced by a utilisation shape (config.MaxCustomPriorityScore).
MAX_CUSTOM_PRIORITY_SCORE = 10

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

# Keys of core/v1 TopologySpreadConstraint, for strict decoding of defaultConstraints.
_TOPOLOGY_SPREAD_KEYS = frozenset(
    {
        "maxSkew",
        "topologyKey",
        "whenUnsatisfiable",
        "labelSelector",
        "minDomains",
        "nodeAffinityPolicy",
        "nodeTaintsPolicy",
        "matchLabelKeys",
    }
)


# --------------------------------------------------------------------------
# Name validation shared by several args (a Kubernetes "qualified name").

_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def qualified_name_problems(value: str) -> list[str]:
    """Why ``value`` is not a valid label key / qualified name (empty if valid)."""
    problems: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            problems.append("prefix part must be non-empty")
        elif len(prefix) > 253 or not all(_DNS_LABEL.match(p) for p in prefix.split(".")):
            problems.append("prefix part must be a lowercase RFC 1123 subdomain")
    else:
        return ["a qualified name must be a name with an optional DNS subdomain prefix and '/'"]
    if not name:
        problems.append("name part must be non-empty")
    else:
        if len(name) > 63:
            problems.append("name part must be no more than 63 characters")
        if not _NAME_PART.match(name):
            problems.append(
                "name part must consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character"
            )
    return problems


def _validate_label_name(value: str, path: str) -> list[ConfigError]:
    return [invalid(path, value, msg) for msg in qualified_name_problems(value)]


# --------------------------------------------------------------------------
# Building blocks.


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A resource and its weight in a score (weight 0 in input defaults to 1)."""

    name: str
    weight: int = 1

    @classmethod
    def from_dict(cls, data: object, path: str) -> Self:
        f = Fields(data, path)
        name = f.get_str("name")
        weight = f.get_int("weight", 0, bits=64)
        f.done()
        return cls(name=name, weight=weight or 1)


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    """One point of a piecewise-linear utilisation → score function."""

    utilization: int
    score: int

    @classmethod
    def from_dict(cls, data: object, path: str) -> Self:
        f = Fields(data, path)
        point = cls(utilization=f.get_int("utilization", 0), score=f.get_int("score", 0))
        f.done()
        return point


def _parse_shape(raw: object, path: str) -> tuple[UtilizationShapePoint, ...]:
    items = as_list(raw, path) if raw is not None else []
    return tuple(UtilizationShapePoint.from_dict(p, index(path, i)) for i, p in enumerate(items))


def _validate_shape(shape: tuple[UtilizationShapePoint, ...], path: str) -> list[ConfigError]:
    if not shape:
        return [required(path, "at least one point must be specified")]
    errs: list[ConfigError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                invalid(
                    child(index(path, i), "utilization"),
                    shape[i].utilization,
                    "utilization values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(invalid(child(index(path, i), "utilization"), point.utilization, "not in valid range [0, 100]"))
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                invalid(
                    child(index(path, i), "score"),
                    point.score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errs


def _parse_resources(raw: list[Any], path: str) -> tuple[ResourceSpec, ...]:
    return tuple(ResourceSpec.from_dict(r, index(path, i)) for i, r in enumerate(raw))


DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@dataclass(frozen=True, slots=True)
class RequestedToCapacityRatioParam:
    """Shape used by the RequestedToCapacityRatio scoring strategy."""

    shape: tuple[UtilizationShapePoint, ...] = ()


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    """How NodeResourcesFit turns requested/allocatable into a score."""

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None

    @classmethod
    def from_dict(cls, data: object, path: str) -> Self:
        f = Fields(data, path)
        # An explicit strategy does not get a default type (same as upstream):
        # leaving it out is reported by validation as an unsupported "".
        stype = f.get_str("type")
        resources = _parse_resources(f.get_list("resources"), f.at("resources")) or DEFAULT_RESOURCES
        rtcr_raw = f.get_mapping("requestedToCapacityRatio")
        rtcr = None
        if rtcr_raw is not None:
            rf = Fields(rtcr_raw, f.at("requestedToCapacityRatio"))
            rtcr = RequestedToCapacityRatioParam(shape=_parse_shape(rf.raw("shape"), rf.at("shape")))
            rf.done()
        f.done()
        return cls(type=stype, resources=resources, requested_to_capacity_ratio=rtcr)


# --------------------------------------------------------------------------
# Plugin args.


class PluginArgs(Protocol):
    """What every typed args class offers."""

    plugin_name: ClassVar[str]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, path: str = "args") -> Self: ...

    def validate(self, path: str = "args") -> list[ConfigError]: ...


def _args_fields(cls: type, data: Mapping[str, Any] | None, path: str) -> Fields:
    """Open ``data`` strictly, accepting the optional apiVersion/kind type meta."""
    f = Fields(data if data is not None else {}, path)
    kind = f.opt_str("kind")
    expected = f"{cls.plugin_name}Args"  # type: ignore[attr-defined]
    if kind is not None and kind != expected:
        raise invalid(f.at("kind"), kind, f"args for plugin {cls.plugin_name} must be of kind {expected}")  # type: ignore[attr-defined]
    f.opt_str("apiVersion")
    return f


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    """Args of NodeResourcesFit: resources to ignore and the scoring strategy."""

    plugin_name: ClassVar[str] = "NodeResourcesFit"

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, path: str = "args") -> Self:
        f = _args_fields(cls, data, path)
        ignored = f.get_str_list("ignoredResources")
        groups = f.get_str_list("ignoredResourceGroups")
        raw_strategy = f.raw("scoringStrategy")
        strategy = (
            ScoringStrategy()
            if raw_strategy is None
            else ScoringStrategy.from_dict(raw_strategy, f.at("scoringStrategy"))
        )
        f.done()
        return cls(ignored_resources=ignored, ignored_resource_groups=groups, scoring_strategy=strategy)

    def validate(self, path: str = "args") -> list[ConfigError]:
        errs: list[ConfigError] = []
        for i, ignored in enumerate(self.ignored_resources):
            errs += _validate_label_name(ignored, index(child(path, "ignoredResources"), i))
        for i, group in enumerate(self.ignored_resource_groups):
            p = index(child(path, "ignoredResourceGroups"), i)
            if "/" in group:
                errs.append(invalid(p, group, "resource group name can't contain '/'"))
            errs += _validate_label_name(group, p)
        sp = child(path, "scoringStrategy")
        strategy = self.scoring_strategy
        if strategy.type not in SCORING_STRATEGY_TYPES:
            errs.append(not_supported(child(sp, "type"), strategy.type, sorted(SCORING_STRATEGY_TYPES)))
        for i, res in enumerate(strategy.resources):
            if not 0 < res.weight <= 100:
                errs.append(
                    invalid(
                        child(index(child(sp, "resources"), i), "weight"),
                        res.weight,
                        f"resource weight of {res.name} not in valid range (0, 100]",
                    )
                )
        rtcr_path = child(sp, "requestedToCapacityRatio")
        if strategy.requested_to_capacity_ratio is not None:
            errs += _validate_shape(strategy.requested_to_capacity_ratio.shape, child(rtcr_path, "shape"))
        elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            # Upstream would dereference a nil shape when building the scorer.
            errs.append(required(rtcr_path, f"required when type is {REQUESTED_TO_CAPACITY_RATIO}"))
        return errs


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    """Args of NodeResourcesBalancedAllocation: which resources to balance."""

    plugin_name: ClassVar[str] = "NodeResourcesBalancedAllocation"

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, path: str = "args") -> Self:
        f = _args_fields(cls, data, path)
        resources = _parse_resources(f.get_list("resources"), f.at("resources"))
        f.done()
        return cls(resources=resources or DEFAULT_RESOURCES)

    def validate(self, path: str = "args") -> list[ConfigError]:
        errs: list[ConfigError] = []
        seen: set[str] = set()
        for i, res in enumerate(self.resources):
            rp = index(child(path, "resources"), i)
            if res.name in seen:
                errs.append(duplicate(child(rp, "name"), res.name))
            seen.add(res.name)
            if res.weight != 1:
                errs.append(invalid(child(rp, "weight"), res.weight, "must be 1"))
        return errs


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    """Args of InterPodAffinity."""

    plugin_name: ClassVar[str] = "InterPodAffinity"

    # Score weight given to an existing pod's *required* affinity term that the
    # incoming pod matches (symmetry); 0 disables that contribution.
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, path: str = "args") -> Self:
        f = _args_fields(cls, data, path)
        args = cls(
            hard_pod_affinity_weight=f.get_int("hardPodAffinityWeight", 1),
            ignore_preferred_terms_of_existing_pods=f.get_bool("ignorePreferredTermsOfExistingPods", False),
        )
        f.done()
        return args

    def validate(self, path: str = "args") -> list[ConfigError]:
        if not 0 <= self.hard_pod_affinity_weight <= 100:
            return [
                invalid(
                    child(path, "hardPodAffinityWeight"),
                    self.hard_pod_affinity_weight,
                    "not in valid range [0, 100]",
                )
            ]
        return []


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    """Args of PodTopologySpread.

    ``defaulting_type`` "System" means pods without constraints get the
    built-in zone/hostname constraints; "List" means ``default_constraints``
    (kept as raw core/v1 TopologySpreadConstraint dicts) are used instead.
    """

    plugin_name: ClassVar[str] = "PodTopologySpread"

    default_constraints: tuple[dict[str, Any], ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, path: str = "args") -> Self:
        f = _args_fields(cls, data, path)
        cp = f.at("defaultConstraints")
        constraints: list[dict[str, Any]] = []
        for i, raw in enumerate(f.get_list("defaultConstraints")):
            ip = index(cp, i)
            c = dict(as_mapping(raw, ip))
            for key in c:
                if key not in _TOPOLOGY_SPREAD_KEYS:
                    raise ConfigError(child(ip, key), "unknown field")
            if c.get("maxSkew") is not None:
                as_int(c["maxSkew"], child(ip, "maxSkew"))
            for key in ("topologyKey", "whenUnsatisfiable"):
                if c.get(key) is not None:
                    as_str(c[key], child(ip, key))
            constraints.append(c)
        dtype = f.get_str("defaultingType") or SYSTEM_DEFAULTING
        f.done()
        return cls(default_constraints=tuple(constraints), defaulting_type=dtype)

    def validate(self, path: str = "args") -> list[ConfigError]:
        errs: list[ConfigError] = []
        tp = child(path, "defaultingType")
        if self.defaulting_type not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errs.append(not_supported(tp, self.defaulting_type, [SYSTEM_DEFAULTING, LIST_DEFAULTING]))
        elif self.defaulting_type == SYSTEM_DEFAULTING and self.default_constraints:
            errs.append(invalid(tp, self.defaulting_type, "when .defaultConstraints are not empty"))
        cp = child(path, "defaultConstraints")
        seen: set[tuple[str, str]] = set()
        for i, c in enumerate(self.default_constraints):
            ip = index(cp, i)
            skew = c.get("maxSkew") or 0
            if skew <= 0:
                errs.append(invalid(child(ip, "maxSkew"), skew, "not in valid range (0, inf)"))
            key = c.get("topologyKey") or ""
            if not key:
                errs.append(required(child(ip, "topologyKey"), "can not be empty"))
            else:
                errs += _validate_label_name(key, child(ip, "topologyKey"))
            action = c.get("whenUnsatisfiable") or ""
            if not action:
                errs.append(required(child(ip, "whenUnsatisfiable"), "can not be empty"))
            elif action not in ("DoNotSchedule", "ScheduleAnyway"):
                errs.append(not_supported(child(ip, "whenUnsatisfiable"), action, ["DoNotSchedule", "ScheduleAnyway"]))
            if c.get("labelSelector") is not None:
                errs.append(
                    forbidden(
                        child(ip, "labelSelector"),
                        "constraint must not define a selector, as they deduced for each pod",
                    )
                )
            if (key, action) in seen:
                errs.append(duplicate(ip, f"{{{key}, {action}}}"))
            seen.add((key, action))
        return errs


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    """How many candidate nodes preemption dry-runs before picking victims.

    The number tried is max(nodes * percentage / 100, absolute), capped at the
    cluster size.
    """

    plugin_name: ClassVar[str] = "DefaultPreemption"

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, path: str = "args") -> Self:
        f = _args_fields(cls, data, path)
        args = cls(
            min_candidate_nodes_percentage=f.get_int("minCandidateNodesPercentage", 10),
            min_candidate_nodes_absolute=f.get_int("minCandidateNodesAbsolute", 100),
        )
        f.done()
        return args

    def validate(self, path: str = "args") -> list[ConfigError]:
        errs: list[ConfigError] = []
        pp = child(path, "minCandidateNodesPercentage")
        ap = child(path, "minCandidateNodesAbsolute")
        pct, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        if not 0 <= pct <= 100:
            errs.append(invalid(pp, pct, "not in valid range [0, 100]"))
        if absolute < 0:
            errs.append(invalid(ap, absolute, "not in valid range [0, inf)"))
        if pct == 0 and absolute == 0:
            errs.append(invalid(pp, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
            errs.append(invalid(ap, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
        return errs


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    """Args of VolumeBinding.

    ``shape`` only applies with the alpha VolumeCapacityPriority feature gate,
    which is off in v1.30, so a non-empty shape is rejected by validation.
    """

    plugin_name: ClassVar[str] = "VolumeBinding"

    bind_timeout_seconds: int = 600
    shape: tuple[UtilizationShapePoint, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, path: str = "args") -> Self:
        f = _args_fields(cls, data, path)
        args = cls(
            bind_timeout_seconds=f.get_int("bindTimeoutSeconds", 600, bits=64),
            shape=_parse_shape(f.raw("shape"), f.at("shape")),
        )
        f.done()
        return args

    def validate(self, path: str = "args") -> list[ConfigError]:
        errs: list[ConfigError] = []
        if self.bind_timeout_seconds < 0:
            errs.append(
                invalid(
                    child(path, "bindTimeoutSeconds"),
                    self.bind_timeout_seconds,
                    "invalid BindTimeoutSeconds, should not be a negative value",
                )
            )
        if self.shape:
            errs.append(
                invalid(
                    child(path, "shape"),
                    [{"utilization": p.utilization, "score": p.score} for p in self.shape],
                    "unexpected field `shape`, remove it or turn on the feature gate VolumeCapacityPriority",
                )
            )
        return errs


@dataclass(frozen=True, slots=True)
class DynamicResourcesArgs:
    """Args of DynamicResources (v1.34): how long Filter may spend allocating for one node. Accepted and
    checked as kube-scheduler checks it; a simulated Filter is not timed, so it never runs out."""

    plugin_name: ClassVar[str] = "DynamicResources"

    filter_timeout: timedelta = timedelta(seconds=10)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, path: str = "args") -> Self:
        f = _args_fields(cls, data, path)
        raw = f.raw("filterTimeout")
        args = cls() if raw is None else cls(filter_timeout=as_duration(raw, f.at("filterTimeout")))
        f.done()
        return args

    def validate(self, path: str = "args") -> list[ConfigError]:
        if self.filter_timeout < timedelta(0):
            return [
                invalid(
                    child(path, "filterTimeout"),
                    f"{self.filter_timeout.total_seconds():g}s",
                    "must be zero or positive",
                )
            ]
        return []


_SELECTOR_OPERATORS = ("DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn")


def _validate_node_selector_term(raw_term: object, tp: str) -> list[ConfigError]:
    """Structural checks of a core/v1 NodeSelectorTerm (operators and value counts)."""
    errs: list[ConfigError] = []
    term = as_mapping(raw_term, tp)
    for term_key in term:
        if term_key not in ("matchExpressions", "matchFields"):
            errs.append(ConfigError(child(tp, term_key), "unknown field"))
    for j, raw_req in enumerate(as_list(term.get("matchExpressions") or [], child(tp, "matchExpressions"))):
        rp = index(child(tp, "matchExpressions"), j)
        req = as_mapping(raw_req, rp)
        op = req.get("operator")
        values = as_list(req.get("values") or [], child(rp, "values"))
        key = req.get("key")
        if not isinstance(key, str) or not key:
            errs.append(required(child(rp, "key")))
        else:
            errs += _validate_label_name(key, child(rp, "key"))
        if op not in _SELECTOR_OPERATORS:
            errs.append(not_supported(child(rp, "operator"), op, _SELECTOR_OPERATORS))
        elif op in ("In", "NotIn") and not values:
            errs.append(required(child(rp, "values"), "for 'in', 'notin' operators, values set can't be empty"))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(
                forbidden(child(rp, "values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            )
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(required(child(rp, "values"), "for 'Gt', 'Lt' operators, exactly one value is required"))
            elif not (isinstance(values[0], str) and re.fullmatch(r"-?\d+", values[0])):
                errs.append(
                    invalid(
                        index(child(rp, "values"), 0),
                        values[0],
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for j, raw_req in enumerate(as_list(term.get("matchFields") or [], child(tp, "matchFields"))):
        rp = index(child(tp, "matchFields"), j)
        req = as_mapping(raw_req, rp)
        op = req.get("operator")
        values = as_list(req.get("values") or [], child(rp, "values"))
        if op not in ("In", "NotIn"):
            errs.append(not_supported(child(rp, "operator"), op, ["In", "NotIn"]))
        elif len(values) != 1:
            errs.append(invalid(child(rp, "values"), values, "must have one element"))
    return errs


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    """Args of NodeAffinity.

    ``added_affinity`` is the raw core/v1 NodeAffinity dict applied to every
    pod on top of its own; parsing it into selectors belongs to the plugin.
    """

    plugin_name: ClassVar[str] = "NodeAffinity"

    added_affinity: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, path: str = "args") -> Self:
        f = _args_fields(cls, data, path)
        raw = f.get_mapping("addedAffinity")
        f.done()
        return cls(added_affinity=dict(raw) if raw is not None else None)

    def validate(self, path: str = "args") -> list[ConfigError]:
        if self.added_affinity is None:
            return []
        ap = child(path, "addedAffinity")
        errs: list[ConfigError] = []
        req_key = "requiredDuringSchedulingIgnoredDuringExecution"
        pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
        for key in self.added_affinity:
            if key not in (req_key, pref_key):
                errs.append(ConfigError(child(ap, key), "unknown field"))
        req = self.added_affinity.get(req_key)
        if req is not None:
            rp = child(ap, req_key)
            sel = as_mapping(req, rp)
            tsp = child(rp, "nodeSelectorTerms")
            for i, term in enumerate(as_list(sel.get("nodeSelectorTerms") or [], tsp)):
                errs += _validate_node_selector_term(term, index(tsp, i))
        pref = self.added_affinity.get(pref_key)
        if pref is not None:
            pp = child(ap, pref_key)
            for i, raw_term in enumerate(as_list(pref, pp)):
                tp = index(pp, i)
                term = as_mapping(raw_term, tp)
                weight = term.get("weight")
                if weight is not None:
                    as_int(weight, child(tp, "weight"))
                preference = term.get("preference") or {}
                errs += _validate_node_selector_term(preference, child(tp, "preference"))
        return errs


# --------------------------------------------------------------------------
# Registry.


@dataclass(frozen=True, slots=True)
class PluginArgsSpec:
    """Registry entry: the args class and the function that parses raw args."""

    args_type: type
    parse: Callable[[Mapping[str, Any] | None, str], Any]


def _spec(cls: Any) -> PluginArgsSpec:
    return PluginArgsSpec(args_type=cls, parse=cls.from_dict)


# Plugin name → args.  The only place that knows which in-tree plugins are configurable.
PLUGIN_ARGS: Mapping[str, PluginArgsSpec] = {
    cls.plugin_name: _spec(cls)
    for cls in (
        DefaultPreemptionArgs,
        DynamicResourcesArgs,
        InterPodAffinityArgs,
        NodeAffinityArgs,
        NodeResourcesBalancedAllocationArgs,
        NodeResourcesFitArgs,
        PodTopologySpreadArgs,
        VolumeBindingArgs,
    )
}


def default_args(plugin_name: str) -> Any | None:
    """Fully defaulted args for an in-tree plugin, or None if it takes none."""
    spec = PLUGIN_ARGS.get(plugin_name)
    return None if spec is None else spec.parse(None, "args")


def parse_plugin_args(plugin_name: str, raw: object, path: str) -> object:
    """Typed, defaulted args for known plugins; an untouched dict otherwise."""
    spec = PLUGIN_ARGS.get(plugin_name)
    if spec is None:
        return {} if raw is None else dict(as_mapping(raw, path))
    return spec.parse(None if raw is None else as_mapping(raw, path), path)


def validate_plugin_args(args: object, path: str) -> list[ConfigError]:
    """Validate typed args; raw (out-of-tree) args are the plugin's business."""
    validate = getattr(args, "validate", None)
    if validate is None or not isinstance(args, tuple(s.args_type for s in PLUGIN_ARGS.values())):
        return []
    result: list[ConfigError] = validate(path)
    return result
