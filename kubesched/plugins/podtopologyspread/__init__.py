"""PodTopologySpread: keep pods matching a selector evenly spread over topology domains.

``DoNotSchedule`` constraints filter (a node is refused when placing the pod there would make its
domain exceed the global minimum by more than ``maxSkew``), ``ScheduleAnyway`` constraints score
(fewer matching pods in a node's domains is better). Pods without constraints of their own get the
configured default constraints, with a selector deduced from the Services and the controller that
select the pod.

The package follows kube-scheduler's own split of the plugin: ``common`` builds the constraints
and decides which nodes count, ``filtering`` holds PreFilter / AddPod / RemovePod / Filter,
``scoring`` holds PreScore / Score / NormalizeScore. This module composes the plugin class from
the filtering and scoring mixins, builds it from its args (``new``, the registry's entry point)
and re-exports the names callers use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.topology_spread import parse_constraints
from kubesched.config.errors import ConfigError
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import ActionType, ClusterEvent, ClusterEventWithHint, queueing_hints_enabled
from kubesched.plugins import names
from kubesched.plugins.podtopologyspread.common import (
    HOSTNAME_LABEL,
    LIST_DEFAULTING,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SYSTEM_DEFAULTING,
    ZONE_LABEL,
    Constraint,
    default_selector,
    go_log,
    resolve_constraints,
)
from kubesched.plugins.podtopologyspread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    CriticalPaths,
    FilteringMixin,
)
from kubesched.plugins.podtopologyspread.hints import HintsMixin
from kubesched.plugins.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    ScoringMixin,
    go_round,
    topology_normalizing_weight,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "HOSTNAME_LABEL",
    "LIST_DEFAULTING",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "ZONE_LABEL",
    "Constraint",
    "CriticalPaths",
    "PodTopologySpread",
    "default_selector",
    "go_log",
    "go_round",
    "new",
    "resolve_constraints",
    "topology_normalizing_weight",
]

NAME = names.POD_TOPOLOGY_SPREAD


class PodTopologySpread(FilteringMixin, ScoringMixin, HintsMixin):
    """The plugin: PreFilter / Filter from ``FilteringMixin``, PreScore / Score from ``ScoringMixin``,
    the queueing hints from ``HintsMixin``."""

    name = NAME

    def events_to_register(self) -> Sequence[ClusterEvent | ClusterEventWithHint]:
        if queueing_hints_enabled(self.handle):
            pod_actions = (
                ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATION | ActionType.DELETE
            )
            node_actions = (
                ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
            )
            return (
                ClusterEventWithHint(ClusterEvent("Pod", pod_actions), self.is_schedulable_after_pod_change),
                ClusterEventWithHint(ClusterEvent("Node", node_actions), self.is_schedulable_after_node_change),
            )
        return (
            ClusterEvent("Pod", ActionType.ALL),
            ClusterEvent(
                "Node", ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
            ),
        )


def new(args: Any, handle: Handle) -> PodTopologySpread:
    """Build the plugin from ``PodTopologySpreadArgs`` (or its raw dict form; None: kube-scheduler's defaults).

    Bad default constraints are reported here, naming the offending field.
    """
    from kubesched.config.pluginargs import PodTopologySpreadArgs

    if args is None:
        args = PodTopologySpreadArgs()
    elif isinstance(args, Mapping):
        args = PodTopologySpreadArgs.from_dict(args)
    err = ConfigError.aggregate(args.validate())
    if err is not None:
        raise err
    if args.defaulting_type == SYSTEM_DEFAULTING:
        return PodTopologySpread(SYSTEM_DEFAULT_CONSTRAINTS, True, handle)
    try:
        defaults = parse_constraints(list(args.default_constraints), "defaultConstraints")
    except ObjectError as error:
        raise ConfigError(f"args.{error.path}", error.reason) from None
    return PodTopologySpread(defaults, False, handle)
