"""One configured extender and its four verbs, in kube-scheduler's wire format (extender/v1).

The documents are Go structs without JSON tags, so their keys are the Go field names
(``Pod``, ``Nodes``, ``NodeNames``, ``FailedNodes``…); answers are read case-insensitively, as Go's
decoder reads them. A node-cache-capable extender is sent node names and pod UIDs only; any other
is sent whole Node and Pod objects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.objects import Pod
from kubesched.cache.node_info import NodeInfo
from kubesched.extender.config import ExtenderConfig
from kubesched.extender.transport import Transport, make_transport
from kubesched.framework.extender import ExtenderError, FilterAnswer, Victims

#: extender/v1 MaxExtenderPriority: extender scores run 0..10 and are scaled to MaxNodeScore.
MAX_EXTENDER_PRIORITY = 10


#: The victims on one node, as the preempt verb exchanges them (the framework's type).
ExtenderVictims = Victims


class HTTPExtender:
    """kube-scheduler's HTTPExtender: filter, prioritize, preempt and bind over a transport
    (an implementation of :class:`kubesched.framework.extender.Extender`)."""

    def __init__(self, config: ExtenderConfig, transport: Transport | None = None) -> None:
        self.config = config
        self.transport = transport if transport is not None else make_transport(config)
        self.managed = frozenset(r.name for r in config.managed_resources)

    @property
    def name(self) -> str:
        """The urlPrefix names an extender, as in kube-scheduler."""
        return self.config.url_prefix

    @property
    def weight(self) -> int:
        return self.config.weight

    def is_ignorable(self) -> bool:
        return self.config.ignorable

    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    def is_interested(self, pod: Pod) -> bool:
        """Every pod, unless managedResources is set: then pods requesting (or limiting) one of them."""
        if not self.managed:
            return True
        return any(name in self.managed for c in (*pod.containers, *pod.init_containers) for name in c.requests)

    # -- verbs ---------------------------------------------------------------------------------------
    def _args(self, pod: Pod, nodes: Sequence[NodeInfo]) -> dict[str, Any]:
        if self.config.node_cache_capable:
            return {"Pod": pod.raw, "Nodes": None, "NodeNames": [n.name for n in nodes]}
        items = [dict(n.node.raw) for n in nodes if n.node is not None]
        return {"Pod": pod.raw, "Nodes": {"metadata": {}, "items": items}, "NodeNames": None}

    def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> FilterAnswer:
        if not self.config.filter_verb:
            return FilterAnswer([n.name for n in nodes], {}, {})
        answer = _mapping(self.transport.send(self.config.filter_verb, self._args(pod, nodes)), "filter", self.name)
        error = _get(answer, "Error")
        if error:
            raise ExtenderError(str(error))
        known = {n.name for n in nodes}
        names = _get(answer, "NodeNames")
        node_list = _get(answer, "Nodes")
        kept: list[str] = []
        if self.config.node_cache_capable and names is not None:
            kept = [str(n) for n in _sequence(names, "NodeNames", self.name)]
        elif node_list is not None:
            items = _get(_mapping(node_list, "filter", self.name), "Items") or []
            kept = [
                str(((item or {}).get("metadata") or {}).get("name") or "")
                for item in _sequence(items, "Nodes.items", self.name)
            ]
        for name in kept:
            if name not in known:
                raise ExtenderError(
                    f'extender "{self.name}" claims a filtered node "{name}" which is not found in the input node list'
                )
        return FilterAnswer(
            kept,
            _failed(_get(answer, "FailedNodes"), self.name),
            _failed(_get(answer, "FailedAndUnresolvableNodes"), self.name),
        )

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[dict[str, int], int]:
        """Node -> score (0..10) and this extender's weight; no verb means zero for all, weight 0."""
        if not self.config.prioritize_verb:
            return {n.name: 0 for n in nodes}, 0
        answer = self.transport.send(self.config.prioritize_verb, self._args(pod, nodes))
        scores: dict[str, int] = {}
        for entry in _sequence(answer, "HostPriorityList", self.name):
            entry = _mapping(entry, "prioritize", self.name)
            score = _get(entry, "Score")
            if isinstance(score, bool) or not isinstance(score, int):
                raise ExtenderError(f'extender "{self.name}": HostPriority score {score!r} is not an integer')
            scores[str(_get(entry, "Host") or "")] = score
        return scores, self.config.weight

    def process_preemption(
        self, pod: Pod, victims: Mapping[str, Victims], node_infos: Mapping[str, NodeInfo]
    ) -> dict[str, Victims]:
        """Ask the preempt verb which candidate nodes and victims it accepts."""
        if not self.config.preempt_verb:
            raise ExtenderError(f"preempt verb is not defined for extender {self.name} but run with interest")
        if self.config.node_cache_capable:
            args: dict[str, Any] = {
                "Pod": pod.raw,
                "NodeNameToVictims": None,
                "NodeNameToMetaVictims": {
                    node: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                    for node, v in victims.items()
                },
            }
        else:
            args = {
                "Pod": pod.raw,
                "NodeNameToMetaVictims": None,
                "NodeNameToVictims": {
                    node: {"Pods": [p.raw for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                    for node, v in victims.items()
                },
            }
        answer = _mapping(self.transport.send(self.config.preempt_verb, args), "preempt", self.name)
        out: dict[str, Victims] = {}
        for node, meta in (_mapping(_get(answer, "NodeNameToMetaVictims") or {}, "preempt", self.name)).items():
            info = node_infos.get(node)
            if info is None:
                raise ExtenderError(f'extender "{self.name}": node "{node}" not found')
            if meta is None:
                out[node] = Victims([])
                continue
            meta = _mapping(meta, "preempt", self.name)
            by_uid = {p.uid: p for p in info.pods}
            pods = []
            for entry in _sequence(_get(meta, "Pods") or [], "Pods", self.name):
                uid = str(_get(_mapping(entry, "preempt", self.name), "UID") or "")
                if uid not in by_uid:
                    raise ExtenderError(
                        f"extender: {self.name} claims to preempt pod (UID: {uid}) on node: "
                        f"{node}, but the pod is not found on that node"
                    )
                pods.append(by_uid[uid])
            out[node] = Victims(pods, int(_get(meta, "NumPDBViolations") or 0))
        return out

    def bind(self, pod: Pod, node: str) -> None:
        if not self.config.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.uid, "Node": node}
        answer = self.transport.send(self.config.bind_verb, args)
        if answer is not None:
            error = _get(_mapping(answer, "bind", self.name), "Error")
            if error:
                raise ExtenderError(str(error))


# -- reading answers as Go's case-insensitive decoder does ---------------------------------------
def _get(doc: Mapping[str, Any], key: str) -> Any:
    if key in doc:
        return doc[key]
    lower = key.lower()
    for k, v in doc.items():
        if isinstance(k, str) and k.lower() == lower:
            return v
    return None


def _mapping(value: Any, verb: str, name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ExtenderError(f'extender "{name}": {verb} answer is not a JSON object: {str(value)[:80]}')
    return value


def _sequence(value: Any, what: str, name: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ExtenderError(f'extender "{name}": {what} is not a JSON array: {str(value)[:80]}')
    return value


def _failed(value: Any, name: str) -> dict[str, str]:
    if value is None:
        return {}
    return {str(k): str(v) for k, v in _mapping(value, "filter", name).items()}
