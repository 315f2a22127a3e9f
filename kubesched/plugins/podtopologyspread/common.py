"""What PodTopologySpread's filtering and scoring share: constraints as the plugin uses them.

kube-scheduler keeps this in its plugin's common.go: turning the API's constraints (or the
configured default ones, with a selector deduced from the pod's Services and controller) into the
internal constraint type, and deciding which nodes a constraint counts pods on (its node inclusion
policies). Both PreFilter and PreScore build their state from these, so they live here, together
with Go's exact ``math.Log`` that scoring weights depend on.

``PodTopologySpreadBase`` holds the plugin's configuration and the per-plugin caches, and the
helpers both extension points call; the filtering and scoring mixins derive from it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.errors import ObjectError
from kubesched.api.labels import LabelRequirement, LabelSelector, selector_from_set
from kubesched.api.node_affinity import RequiredNodeAffinity
from kubesched.api.objects import Pod
from kubesched.api.taints import find_untolerated_taint
from kubesched.api.topology_spread import HONOR, IGNORE, SCHEDULE_ANYWAY, TopologySpreadConstraint
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins import names
from kubesched.plugins.helper import features_of
from kubesched.plugins.nodeaffinity import SelectorEvaluator
from kubesched.plugins.tainttoleration import DO_NOT_SCHEDULE_EFFECTS

if TYPE_CHECKING:
    from kubesched.cache.snapshot import Snapshot

# The default-constraint selector, deduced once per cycle and shared by PreFilter and PreScore.
_DEFAULT_SELECTOR_KEY = "DefaultSelector" + names.POD_TOPOLOGY_SPREAD

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

#: kube-scheduler's built-in defaults (defaultingType System).
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(
        max_skew=3, topology_key=HOSTNAME_LABEL, when_unsatisfiable=SCHEDULE_ANYWAY, selector=None
    ),
    TopologySpreadConstraint(max_skew=5, topology_key=ZONE_LABEL, when_unsatisfiable=SCHEDULE_ANYWAY, selector=None),
)


# -- constraints as the plugin uses them --------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Constraint:
    """A constraint with its defaults resolved and matchLabelKeys folded into the selector.

    ``selector`` None selects nothing (an omitted labelSelector).
    """

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int
    honor_affinity: bool
    honor_taints: bool

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.selector is not None and self.selector.matches(labels)

    @property
    def counts_pods(self) -> bool:
        """Whether existing pods can count at all: kube-scheduler counts none for an empty selector."""
        return self.selector is not None and not self.selector.empty


def resolve_constraints(
    constraints: Sequence[TopologySpreadConstraint],
    pod_labels: Mapping[str, str],
    action: str,
    selector: LabelSelector | None = None,
    use_own_selector: bool = True,
) -> list[Constraint]:
    """The constraints of one ``whenUnsatisfiable`` action, as kube-scheduler's filterTopologySpreadConstraints.

    ``use_own_selector`` False replaces each selector by ``selector`` (default constraints, whose
    matchLabelKeys are then ignored).
    """
    out: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        sel = c.selector if use_own_selector else selector
        # Default constraints get the deduced selector as is: kube-scheduler overwrites the merged one.
        if use_own_selector and c.match_label_keys and sel is not None:
            extra = [
                LabelRequirement(key, "In", frozenset((pod_labels[key],)))
                for key in dict.fromkeys(c.match_label_keys)
                if key in pod_labels
            ]
            if extra:
                sel = LabelSelector((*extra, *sel.requirements))
        out.append(
            Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=sel,
                min_domains=c.min_domains if c.min_domains is not None else 1,
                honor_affinity=(c.node_affinity_policy or HONOR) == HONOR,
                honor_taints=(c.node_taints_policy or IGNORE) == HONOR,
            )
        )
    return out


def default_selector(pod: Pod, listers: Any) -> LabelSelector:
    """The selector default constraints use: kube-scheduler's helper.DefaultSelector.

    Selectors of the pod's namespace's Services that select it (merged, later ones winning on a
    key), then its controller: a ReplicationController's selector map is merged in too; a
    ReplicaSet's or StatefulSet's label selector requirements are added.
    """
    label_set: dict[str, str] = {}
    if listers is not None:
        for svc in listers.list("Service", pod.namespace):
            wanted = (svc.get("spec") or {}).get("selector")
            if wanted is None or not isinstance(wanted, Mapping):
                continue
            if all(pod.labels.get(k) == v for k, v in wanted.items()):
                label_set.update({str(k): str(v) for k, v in wanted.items()})
    extra: tuple[LabelRequirement, ...] = ()
    owners = pod.meta.owner_references
    owner = next((o for o in owners if o.get("controller") is True), None) if owners else None
    if owner is not None and listers is not None:
        group_version = str(owner.get("apiVersion") or "")
        kind, name = owner.get("kind"), str(owner.get("name") or "")
        parts = group_version.split("/")
        gv = ("", parts[0]) if len(parts) == 1 else (parts[0], parts[1]) if len(parts) == 2 else None
        if gv == ("", "v1") and kind == "ReplicationController":
            rc = listers.get("ReplicationController", pod.namespace, name)
            if rc is not None:
                label_set.update((rc.get("spec") or {}).get("selector") or {})
        elif gv == ("apps", "v1") and kind in ("ReplicaSet", "StatefulSet"):
            obj = listers.get(kind, pod.namespace, name)
            if obj is not None:
                try:
                    sel = LabelSelector.from_dict((obj.get("spec") or {}).get("selector"))
                except ObjectError:
                    sel = None
                if sel is not None:
                    extra = sel.requirements
    if not label_set and not extra:  # no Service and no controller selects the pod (the common case)
        return _NO_SELECTOR
    try:
        base = selector_from_set(label_set)
    except ObjectError:
        base = LabelSelector()
    return LabelSelector((*base.requirements, *extra))


_NO_SELECTOR = LabelSelector()


# -- kube-scheduler's arithmetic ----------------------------------------------------------------------
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_L1, _L2, _L3, _L4 = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
)
_L5, _L6, _L7 = 1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01
_HALF_SQRT2 = math.sqrt(2) / 2


def go_log(x: float) -> float:
    """Natural log computed as Go's math.Log does (same reduction and polynomial), bit for bit.

    Scores round ``count * log(size + 2)``, so a last-bit difference from the C library's log could
    flip a rounding; this keeps the weights identical to kube-scheduler's.
    """
    if x <= 0 or math.isnan(x) or math.isinf(x):
        return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)
    f1, ki = math.frexp(x)
    if f1 < _HALF_SQRT2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


# -- the plugin's shared part ---------------------------------------------------------------------------
class PodTopologySpreadBase:
    """Configuration, caches and the helpers both PreFilter and PreScore build their state with."""

    def __init__(
        self, default_constraints: Sequence[TopologySpreadConstraint], system_defaulted: bool, handle: Any = None
    ) -> None:
        self.handle = handle
        self.default_constraints = tuple(default_constraints)
        #: The ``whenUnsatisfiable`` actions the default constraints have (most profiles: ScheduleAnyway only).
        self._default_actions = frozenset(c.when_unsatisfiable for c in self.default_constraints)
        self.system_defaulted = system_defaulted
        #: v1.34 counts each constraint on its own; v1.30 keyed counts by topology key, so that
        #: constraints sharing a key shared (and mixed) them.
        self.per_constraint_state = features_of(handle).at_least("1.34")
        self._eval = SelectorEvaluator()

    def _snapshot(self) -> Snapshot:
        snapshot: Snapshot = self.handle.snapshot
        return snapshot

    def _listers(self) -> Any:
        return getattr(self.handle, "listers", None)

    def _default_selector(self, state: CycleState, pod: Pod) -> LabelSelector:
        sel = state.get(_DEFAULT_SELECTOR_KEY)
        if not isinstance(sel, LabelSelector):
            sel = default_selector(pod, self._listers())
            state.write(_DEFAULT_SELECTOR_KEY, sel)
        return sel

    def _constraints(self, state: CycleState, pod: Pod, action: str) -> list[Constraint]:
        """The pod's own constraints of ``action``, or else the default ones (when a selector is deduced)."""
        if pod.topology_spread_constraints:
            return resolve_constraints(pod.topology_spread_constraints, pod.labels, action)
        if action not in self._default_actions:
            return []
        sel = self._default_selector(state, pod)
        if sel.empty:
            return []
        return resolve_constraints(self.default_constraints, pod.labels, action, sel, use_own_selector=False)

    # -- node inclusion policies ----------------------------------------------------------------------
    def _inclusion_masks(
        self, snapshot: Snapshot, pod: Pod, constraints: Sequence[Constraint], required: RequiredNodeAffinity
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Rows passing the pod's required node affinity, and rows whose taints the pod tolerates.

        None stands for "every row" (or "not needed by any constraint").
        """
        n = len(snapshot)
        affinity = None
        if any(c.honor_affinity for c in constraints) and (required.node_selector or required.required is not None):
            affinity = self._eval.required_mask(snapshot, required, np.arange(n))
        taints = None
        if any(c.honor_taints for c in constraints):
            group_of_row, group_taints = snapshot.taint_groups()
            ok = np.fromiter(
                (find_untolerated_taint(t, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is None for t in group_taints),
                dtype=bool,
                count=len(group_taints),
            )
            if not ok.all():
                taints = ok[group_of_row]
        return affinity, taints

    @staticmethod
    def _eligible(
        c: Constraint, base: np.ndarray | None, affinity: np.ndarray | None, taints: np.ndarray | None, n: int
    ) -> np.ndarray:
        mask = np.ones(n, dtype=bool) if base is None else base.copy()
        if c.honor_affinity and affinity is not None:
            mask &= affinity
        if c.honor_taints and taints is not None:
            mask &= taints
        return mask

    def _count(self, snapshot: Snapshot, pod: Pod, c: Constraint) -> np.ndarray:
        """Matching, non-terminating pods of the pod's namespace per snapshot row."""
        n = len(snapshot)
        if not c.counts_pods:
            return np.zeros(n, dtype=np.int64)
        return snapshot.pods.count_per_node(n, (pod.namespace,), c.selector, skip_terminating=True)
