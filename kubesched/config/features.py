"""Emulated versions and feature gates: which kube-scheduler kubesched behaves as.

kubesched implements the default behaviour of two releases, v1.30 and v1.34. A version selects the
defaults of every feature gate the scheduler (and the API server in front of it) reads; gates can then
be set one by one, as ``--feature-gates`` does for kube-scheduler. The gate table holds, per version,
a gate's default, its stage and whether it is locked to its default: setting a locked gate the other
way, a gate the version does not know (upstream calls such a gate pre-alpha), or a gate nobody knows
is refused with upstream's words.

Unlike a v1.34 binary, which only emulates back to 1.31, ``--emulated-version 1.30`` reproduces the
v1.30.6 release itself: its gate defaults, and the code paths v1.34 removed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

V1_30 = "1.30"
V1_34 = "1.34"
#: The versions kubesched can emulate, oldest first.
EMULATED_VERSIONS: tuple[str, ...] = (V1_30, V1_34)
DEFAULT_EMULATED_VERSION = V1_34


class Stage(Enum):
    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = "GA"
    DEPRECATED = "DEPRECATED"


@dataclass(frozen=True, slots=True)
class GateSpec:
    """One gate as one release ships it."""

    default: bool
    stage: Stage
    locked: bool = False


def _spec(default: bool, stage: Stage, locked: bool = False) -> GateSpec:
    return GateSpec(default, stage, locked)


_A, _B, _GA, _DEP = Stage.ALPHA, Stage.BETA, Stage.GA, Stage.DEPRECATED

#: Every gate that changes what kube-scheduler (or the API server, for what the scheduler sees) does,
#: by version. A version missing from a gate's row does not know the gate.
GATES: Mapping[str, Mapping[str, GateSpec]] = {
    # The scheduling queue.
    "SchedulerQueueingHints": {V1_30: _spec(False, _B), V1_34: _spec(True, _GA, locked=True)},
    "SchedulerPopFromBackoffQ": {V1_34: _spec(True, _B)},
    "SchedulerAsyncPreemption": {V1_34: _spec(True, _B)},
    "SchedulerAsyncAPICalls": {V1_34: _spec(False, _B)},
    "NominatedNodeNameForExpectation": {V1_34: _spec(False, _A)},
    "PodSchedulingReadiness": {V1_30: _spec(True, _GA, locked=True), V1_34: _spec(True, _GA, locked=True)},
    # Resources.
    "PodLevelResources": {V1_34: _spec(True, _B)},
    "InPlacePodVerticalScaling": {V1_30: _spec(False, _A), V1_34: _spec(True, _B)},
    "SidecarContainers": {V1_30: _spec(True, _B), V1_34: _spec(True, _GA, locked=True)},
    # Placement constraints (the API server merges the keys of pod affinity and, in 1.34, of spread).
    "MatchLabelKeysInPodAffinity": {V1_30: _spec(False, _A), V1_34: _spec(True, _GA, locked=True)},
    "MatchLabelKeysInPodTopologySpread": {V1_30: _spec(True, _B), V1_34: _spec(True, _B)},
    "MatchLabelKeysInPodTopologySpreadSelectorMerge": {V1_34: _spec(True, _B)},
    "NodeInclusionPolicyInPodTopologySpread": {V1_30: _spec(True, _B), V1_34: _spec(True, _GA, locked=True)},
    # Preemption.
    "PodDisruptionConditions": {V1_30: _spec(True, _B)},
    "PodObservedGenerationTracking": {V1_34: _spec(True, _B)},
    # Storage.
    "VolumeCapacityPriority": {V1_30: _spec(False, _A)},
    "StorageCapacityScoring": {V1_34: _spec(False, _A)},
    "VolumeAttributesClass": {V1_30: _spec(False, _A), V1_34: _spec(True, _GA)},
    "CSIMigrationPortworx": {V1_30: _spec(False, _B), V1_34: _spec(True, _GA, locked=True)},
    "CSIMigrationRBD": {V1_30: _spec(False, _DEP)},
    # Dynamic resource allocation.
    "DynamicResourceAllocation": {V1_30: _spec(False, _A), V1_34: _spec(True, _GA)},
    "DRASchedulerFilterTimeout": {V1_34: _spec(True, _B)},
    "DRAPrioritizedList": {V1_34: _spec(True, _B)},
    "DRAAdminAccess": {V1_34: _spec(True, _B)},
    "DRAResourceClaimDeviceStatus": {V1_34: _spec(True, _B)},
    "DRAExtendedResource": {V1_34: _spec(False, _A)},
    "DRADeviceTaints": {V1_34: _spec(False, _A)},
    "DRADeviceBindingConditions": {V1_34: _spec(False, _A)},
    "DRAPartitionableDevices": {V1_34: _spec(False, _A)},
    "DRAConsumableCapacity": {V1_34: _spec(False, _A)},
}


class FeatureGateError(ValueError):
    """An unknown emulated version, or a gate that cannot be set as asked."""


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """The gates in force: the emulated version's defaults with the user's settings on top.

    Read once when a scheduler is built, as kube-scheduler reads its gates at start-up.
    """

    version: str
    enabled_gates: frozenset[str]
    #: What the user set explicitly (for ``kubesched version`` and the summary).
    overrides: tuple[tuple[str, bool], ...] = ()

    def enabled(self, name: str) -> bool:
        """Whether gate ``name`` is on; a gate the version does not know is off."""
        return name in self.enabled_gates

    def at_least(self, version: str) -> bool:
        """Whether the emulated version is ``version`` or newer."""
        return _version_key(self.version) >= _version_key(version)

    def describe(self) -> str:
        """``1.34`` or ``1.34 (SchedulerAsyncPreemption=false)``."""
        if not self.overrides:
            return self.version
        return f"{self.version} ({','.join(f'{k}={str(v).lower()}' for k, v in self.overrides)})"


def feature_gates(
    version: str | None = None, settings: Mapping[str, bool] | str | Iterable[str] | None = None
) -> FeatureGates:
    """The gates of ``version`` (default: the newest) with ``settings`` applied.

    ``settings`` is a mapping of gate names to booleans, or ``--feature-gates`` text
    (``Name=true,Other=false``). Raises :class:`FeatureGateError` with upstream's words for what
    upstream refuses.
    """
    version = check_version(version)
    if settings is None:
        wanted: dict[str, bool] = {}
    elif isinstance(settings, Mapping):
        wanted = dict(settings)
    else:
        wanted = parse_feature_gates(settings)
    enabled = {name for name, specs in GATES.items() if (spec := specs.get(version)) is not None and spec.default}
    overrides: list[tuple[str, bool]] = []
    for name, value in wanted.items():
        if not isinstance(value, bool):
            raise FeatureGateError(f"invalid value of {name}={value!r}: must be true or false")
        specs = GATES.get(name)
        if specs is None:
            raise FeatureGateError(f"unrecognized feature gate: {name}")
        spec = specs.get(version)
        if spec is None:
            raise FeatureGateError(
                f"cannot set feature gate {name} to {str(value).lower()}, feature is PreAlpha at emulated version "
                f"{version}"
            )
        if spec.locked and value != spec.default:
            raise FeatureGateError(
                f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to "
                f"{str(spec.default).lower()}"
            )
        (enabled.add if value else enabled.discard)(name)
        overrides.append((name, value))
    return FeatureGates(version, frozenset(enabled), tuple(sorted(overrides)))


def check_version(version: str | None) -> str:
    """``version`` as kubesched spells it (``1.34``, also from ``v1.34`` or ``1.34.4``), or the default."""
    if version is None or version == "":
        return DEFAULT_EMULATED_VERSION
    text = str(version).strip().removeprefix("v")
    major_minor = ".".join(text.split(".")[:2])
    if major_minor not in EMULATED_VERSIONS:
        raise FeatureGateError(
            f"emulated version {version} is not supported: kubesched emulates {' and '.join(EMULATED_VERSIONS)}"
        )
    return major_minor


_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_feature_gates(text: str | Iterable[str]) -> dict[str, bool]:
    """``Name=true,Other=false`` (one string, or several as a repeated flag gives them) as a mapping.

    Booleans are spelt as Go's ParseBool accepts them, as kube-scheduler's flag does.
    """
    parts = [text] if isinstance(text, str) else list(text)
    result: dict[str, bool] = {}
    for part in parts:
        for item in part.split(","):
            item = item.strip()
            if not item:
                continue
            name, sep, value = item.partition("=")
            name, value = name.strip(), value.strip()
            if not sep or not name:
                raise FeatureGateError(f"missing bool value for {item}")
            if value in _TRUE:
                result[name] = True
            elif value in _FALSE:
                result[name] = False
            else:
                raise FeatureGateError(
                    f'invalid value of {name}={value}, err: strconv.ParseBool: parsing "{value}": invalid syntax'
                )
    return result


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))
