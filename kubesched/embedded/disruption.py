"""The disruption controller of the embedded cluster, and the PodDisruptionBudget status it writes.

Preemption reads PodDisruptionBudget status (disruptionsAllowed) to avoid victims whose eviction would
violate a budget, so the simulation must keep that status as kube-controller-manager would. Like
kube-controller-manager's, the controller reacts to watch events (pods and budgets of a namespace)
rather than being called; :class:`kubesched.embedded.controlplane.ControlPlane` starts it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from kubesched.cluster.protocol import WatchEvent
from kubesched.embedded.apiserver import EmbeddedCluster

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


def scaled_int_or_percent(value: object, total: int, *, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int as is, ``"N%"`` as N% of ``total``.

    Raises ValueError for anything else (a string without ``%`` is not a count).
    """
    if isinstance(value, bool):
        raise ValueError(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.endswith("%"):
        try:
            percent = int(value[:-1])
        except ValueError:
            raise ValueError(f"invalid value for IntOrString: invalid value {value!r}") from None
        scaled = percent * total
        return -(-scaled // 100) if round_up else scaled // 100
    raise ValueError(f"invalid value for IntOrString: invalid type: string is not a percentage: {value!r}")


def compute_pdb_status(
    pdb: dict[str, Any], pods: list[dict[str, Any]], matches: Callable[[dict[str, Any]], bool], now: str
) -> dict[str, Any]:
    """The status the disruption controller would write for ``pdb`` given the pods in its namespace.

    Every bound, non-terminal pod the selector matches is taken as expected and healthy (the simulation
    has no kubelet to make pods unready).
    """
    healthy = sum(
        1
        for pod in pods
        if (pod.get("spec") or {}).get("nodeName")
        and (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES
        and matches(pod)
    )
    expected = healthy
    spec = pdb.get("spec") or {}
    failed = False
    desired = 0
    try:
        if spec.get("maxUnavailable") is not None:
            unavailable = scaled_int_or_percent(spec["maxUnavailable"], expected, round_up=True)
            desired = max(0, expected - unavailable)
        elif spec.get("minAvailable") is not None:
            desired = scaled_int_or_percent(spec["minAvailable"], expected, round_up=True)
    except ValueError:
        failed = True
    allowed = 0 if failed or expected <= 0 else max(0, healthy - desired)
    generation = (pdb.get("metadata") or {}).get("generation", 1)
    old_status = pdb.get("status") or {}
    if failed:
        cond_status, reason = "False", "SyncFailed"
    else:
        cond_status, reason = ("True", "SufficientPods") if allowed > 0 else ("False", "InsufficientPods")
    old_cond = next((c for c in old_status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
    transition = old_cond["lastTransitionTime"] if old_cond and old_cond.get("status") == cond_status else now
    return {
        "observedGeneration": generation,
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "conditions": [
            {
                "type": "DisruptionAllowed",
                "status": cond_status,
                "reason": reason,
                "message": "",
                "observedGeneration": generation,
                "lastTransitionTime": transition,
            }
        ],
    }


def _selector_matcher(selector: object) -> Callable[[dict[str, Any]], bool]:
    """policy/v1 semantics: a missing selector matches no pod, an empty one every pod."""
    from kubesched.api.labels import LabelSelector

    if not isinstance(selector, dict):
        return _no_pod
    parsed = LabelSelector.from_dict(selector)
    if parsed is None:
        return _no_pod
    return lambda pod: bool(parsed.matches((pod.get("metadata") or {}).get("labels") or {}))


class DisruptionController:
    """Keeps PodDisruptionBudget status current from pod and budget watch events.

    A pod event recomputes only the budgets whose selector matches the pod (before or after the
    change), and only when something a budget counts changed: binding, phase, labels, or the pod
    coming or going. Status patches and the like cost one comparison.
    """

    def __init__(self, cluster: EmbeddedCluster) -> None:
        self.cluster = cluster
        self._watch: Any = None
        #: Parsed selectors by budget uid and resourceVersion.
        self._matchers: dict[str, tuple[str, Callable[[dict[str, Any]], bool]]] = {}

    def start(self) -> None:
        self._watch = self.cluster.watch(("Pod", "PodDisruptionBudget"), self.handle_event, private_copies=False)
        update_pdb_status(self.cluster)

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()
            self._watch = None

    def handle_event(self, event: WatchEvent) -> None:
        if event.kind == "Pod" and not self.cluster.count("PodDisruptionBudget"):
            return  # no budget to count the pod in (asked first: most events are pods', most runs have none)
        namespace = (event.obj.get("metadata") or {}).get("namespace") or "default"
        if event.kind != "Pod":
            if event.type == "DELETED":
                self._matchers.pop(str(event.obj["metadata"].get("uid")), None)
            update_pdb_status(self.cluster, namespace)
            return
        if event.type == "MODIFIED" and event.old is not None and not _counted_change(event.old, event.obj):
            return
        pods = [event.obj] if event.old is None else [event.obj, event.old]
        names = [b["metadata"]["name"] for b in self._budgets(namespace) if any(self._matcher(b)(pod) for pod in pods)]
        if names:
            update_pdb_status(self.cluster, namespace, names)

    def _budgets(self, namespace: str) -> Iterable[dict[str, Any]]:
        return (p for p in self.cluster.objects("PodDisruptionBudget") if p["metadata"].get("namespace") == namespace)

    def _matcher(self, budget: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        meta = budget["metadata"]
        uid, version = str(meta.get("uid")), str(meta.get("resourceVersion"))
        known = self._matchers.get(uid)
        if known is None or known[0] != version:
            try:
                matches = _selector_matcher((budget.get("spec") or {}).get("selector"))
            except ValueError:
                matches = _no_pod
            known = self._matchers[uid] = (version, matches)
        return known[1]


def _counted_change(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether a pod update changes what a budget counts: its node, its phase or its labels."""
    return (
        ((old.get("spec") or {}).get("nodeName") != (new.get("spec") or {}).get("nodeName"))
        or ((old.get("status") or {}).get("phase") != (new.get("status") or {}).get("phase"))
        or ((old.get("metadata") or {}).get("labels") != (new.get("metadata") or {}).get("labels"))
    )


def update_pdb_status(
    cluster: EmbeddedCluster, namespace: str | None = None, names: Collection[str] | None = None
) -> int:
    """Recompute the status of every PodDisruptionBudget created without one (in ``namespace``, of
    ``names``, when given); returns how many changed.

    Budgets whose status came with their manifest are left alone, so scenarios can pin a status.
    """
    pdbs, _ = cluster.list("PodDisruptionBudget", namespace)
    pods_by_namespace: dict[str, list[dict[str, Any]]] = {}
    changed = 0
    for pdb in pdbs:
        meta = pdb["metadata"]
        ns, name = meta["namespace"], meta["name"]
        if (names is not None and name not in names) or cluster.pdb_status_is_user_provided(ns, name):
            continue
        if ns not in pods_by_namespace:
            # Read only: the stored pods themselves, not copies.
            pods_by_namespace[ns] = [p for p in cluster.objects("Pod") if p["metadata"].get("namespace") == ns]
        try:
            matches = _selector_matcher((pdb.get("spec") or {}).get("selector"))
        except ValueError:
            matches = _no_pod
        status = compute_pdb_status(pdb, pods_by_namespace[ns], matches, cluster.now())
        if status != pdb.get("status"):
            pdb["status"] = status
            cluster.update(pdb)
            changed += 1
    return changed


def _no_pod(pod: dict[str, Any]) -> bool:
    return False
