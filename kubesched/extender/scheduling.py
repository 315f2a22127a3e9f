"""Where extenders join the scheduling and binding cycles, as kube-scheduler calls them.

- Filter: after the Filter plugins, each interested extender in turn narrows the feasible nodes
  (``findNodesThatPassExtenders``); the nodes it drops join the diagnosis with its reasons, and an
  error fails the attempt unless the extender is ignorable.
- Prioritize: each interested extender's scores, scaled by weight x MaxNodeScore /
  MaxExtenderPriority, are added to the plugins' totals; its errors are ignored.
- Preempt: preemption (:mod:`kubesched.framework.preemption`) calls the preempt verbs through the
  framework's Extender protocol.
- Bind: the first interested extender with a bind verb binds instead of the Bind plugins.

Verdicts are written into an optional ``verdicts`` dict (``{"filter": {extender: …}, …}``) for
traces and annotations.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.config.errors import ConfigError
from kubesched.extender.config import ExtenderConfig
from kubesched.extender.http_extender import MAX_EXTENDER_PRIORITY, HTTPExtender
from kubesched.framework.extender import Extender, ExtenderError
from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.framework.status import Code, Status

log = logging.getLogger(__name__)

#: The name kube-scheduler's diagnosis gives every extender among the unschedulable plugins.
EXTENDER_NAME = "Extender"


def build_extenders(configs: Iterable[Mapping[str, Any]]) -> list[HTTPExtender]:
    """Extenders in configuration order, the ignorable ones moved to the end (as kube-scheduler does)."""
    built = []
    for i, raw in enumerate(configs):
        try:
            built.append(HTTPExtender(ExtenderConfig.from_dict(raw, f"extenders[{i}]")))
        except ValueError as err:
            raise ConfigError(f"extenders[{i}].urlPrefix", str(err)) from None
    return [e for e in built if not e.is_ignorable()] + [e for e in built if e.is_ignorable()]


def ignored_by_scheduler(configs: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """Managed resources the scheduler's own NodeResourcesFit must not check."""
    return tuple(
        str(r.get("name")) for raw in configs for r in raw.get("managedResources") or () if r.get("ignoredByScheduler")
    )


def find_nodes_that_pass_extenders(
    extenders: Sequence[Extender],
    pod: Pod,
    nodes: list[NodeInfo],
    statuses: dict[str, Status],
    verdicts: dict[str, Any] | None = None,
) -> list[NodeInfo]:
    """The feasible nodes every interested extender keeps; rejections go into ``statuses``.

    Raises ExtenderError when a non-ignorable extender fails.
    """
    for ext in extenders:
        if not nodes:
            break
        if not ext.is_interested(pod):
            continue
        try:
            answer = ext.filter(pod, nodes)
        except ExtenderError as err:
            if verdicts is not None:
                verdicts.setdefault("filter", {})[ext.name] = {"error": str(err), "ignored": ext.is_ignorable()}
            if ext.is_ignorable():
                log.info("skipping extender %s as it returned error and has ignorable flag set: %s", ext.name, err)
                continue
            raise
        # Unresolvable failures replace whatever the node had (keeping its reasons) so that
        # preemption skips the node; they take precedence over plain failures for the same node.
        for name, msg in answer.failed_and_unresolvable.items():
            earlier = statuses.get(name)
            reasons = (*(earlier.reasons if earlier else ()), msg)
            statuses[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin=EXTENDER_NAME)
        for name, msg in answer.failed.items():
            if name in answer.failed_and_unresolvable:
                continue
            earlier = statuses.get(name)
            if earlier is None:
                statuses[name] = Status(Code.UNSCHEDULABLE, (msg,), plugin=EXTENDER_NAME)
            else:
                # Statuses may be shared between nodes (batch filters): never change one in place.
                statuses[name] = Status(earlier.code, (*earlier.reasons, msg), plugin=earlier.plugin)
        if verdicts is not None:
            verdicts.setdefault("filter", {})[ext.name] = {
                "nodes": list(answer.nodes),
                "failedNodes": dict(answer.failed),
                "failedAndUnresolvableNodes": dict(answer.failed_and_unresolvable),
            }
        by_name = {n.name: n for n in nodes}
        nodes = [by_name[name] for name in answer.nodes]
    return nodes


def prioritize(
    extenders: Sequence[Extender], pod: Pod, nodes: Sequence[NodeInfo], verdicts: dict[str, Any] | None = None
) -> dict[str, list[int]]:
    """Extender name -> final score per node of ``nodes`` (score x weight x 100 / 10)."""
    out: dict[str, list[int]] = {}
    scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
    for ext in extenders:
        if not ext.is_interested(pod):
            continue
        try:
            scores, weight = ext.prioritize(pod, nodes)
        except ExtenderError as err:
            # Prioritize errors are ignored: the plugins and other extenders decide.
            log.info("extender %s failed to prioritize; no score given by it: %s", ext.name, err)
            if verdicts is not None:
                verdicts.setdefault("prioritize", {})[ext.name] = {"error": str(err)}
            continue
        if verdicts is not None:
            verdicts.setdefault("prioritize", {})[ext.name] = dict(scores)
        out[ext.name] = [scores.get(n.name, 0) * weight * scale for n in nodes]
    return out


def extenders_binding(
    extenders: Sequence[Extender], pod: Pod, node: str, verdicts: dict[str, Any] | None = None
) -> tuple[bool, Status | None]:
    """(True, status) when an extender took the binding; (False, None) for the Bind plugins to do it."""
    for ext in extenders:
        if not ext.is_binder() or not ext.is_interested(pod):
            continue
        try:
            ext.bind(pod, node)
        except ExtenderError as err:
            if verdicts is not None:
                verdicts.setdefault("bind", {})[ext.name] = str(err)
            if ext.is_ignorable():
                log.info(
                    "skipping extender %s in bind as it returned error and has ignorable flag set: %s", ext.name, err
                )
                continue
            return True, Status(Code.ERROR, (str(err),), plugin=EXTENDER_NAME, error=err)
        if verdicts is not None:
            verdicts.setdefault("bind", {})[ext.name] = "success"
        return True, None
    return False, None
