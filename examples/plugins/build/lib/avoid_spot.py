"""An out-of-tree plugin: a plain Python class, enabled in the config as ``avoid_spot:AvoidSpot``.

kubesched builds it as ``AvoidSpot(args, handle)``: ``args`` is the raw ``pluginConfig`` args dict of
this plugin (None without one), ``handle`` the framework handle. Only the extension points it
defines are used; here Filter (keep critical pods off spot capacity) and Score (prefer a zone).
"""

from typing import Any

from kubesched.framework.status import Code, Status


class AvoidSpot:
    name = "AvoidSpot"

    def __init__(self, args: dict[str, Any] | None, handle: Any) -> None:
        args = args or {}
        self.capacity_label = args.get("capacityLabel", "capacity-type")
        self.preferred_zone = args.get("preferredZone", "")

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        """Reject spot nodes for pods labelled tier=critical."""
        if pod.labels.get("tier") == "critical" and node_info.node.labels.get(self.capacity_label) == "spot":
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) are spot capacity",))
        return None

    def score(self, state: Any, pod: Any, node_info: Any) -> tuple[int, Status | None]:
        """100 for nodes in the preferred zone, 0 elsewhere (already in the 0..100 range)."""
        zone = node_info.node.labels.get("topology.kubernetes.io/zone")
        return (100 if zone == self.preferred_zone else 0), None

    def score_extensions(self) -> None:
        return None  # no NormalizeScore
