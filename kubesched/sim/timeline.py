"""Running timeline steps (:mod:`kubesched.scenario.timeline`) on the cluster when their time comes."""

from __future__ import annotations

from kubesched.cluster.protocol import ApiError
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.scenario.timeline import Step, TimelineError


def run_step(step: Step, cluster: EmbeddedCluster) -> None:
    """Do ``step`` on the cluster; an API error becomes a TimelineError naming the step."""
    try:
        if step.action == "create":
            assert step.obj is not None
            cluster.create(step.obj)
        elif step.action == "delete":
            cluster.delete(step.kind, step.namespace or None, step.name)
        elif step.action in ("cordon", "uncordon", "drain"):
            _set_unschedulable(cluster, step.name, step.action != "uncordon")
            if step.action == "drain":
                _delete_bound_pods(cluster, step.name)
    except ApiError as err:
        raise TimelineError(f"{step.where}: {step.action} failed: {err.message}") from None


def describe_step(step: Step) -> str:
    """The step as a person names it: ``t.yaml: step 2: drain Node/n1``."""
    if step.obj is not None:
        meta = step.obj.get("metadata") or {}
        target = "/".join(str(p) for p in (step.obj.get("kind"), meta.get("namespace"), meta.get("name")) if p)
    else:
        target = "/".join(p for p in (step.kind, step.namespace, step.name) if p)
    return f"{step.where}: {step.action} {target}"


def _set_unschedulable(cluster: EmbeddedCluster, name: str, value: bool) -> None:
    node = cluster.get("Node", None, name)
    spec = node.setdefault("spec", {})
    if bool(spec.get("unschedulable")) == value:
        return
    if value:
        spec["unschedulable"] = True
    else:
        spec.pop("unschedulable", None)
    cluster.update(node)


def _delete_bound_pods(cluster: EmbeddedCluster, node: str) -> None:
    for pod in cluster.list("Pod")[0]:
        if (pod.get("spec") or {}).get("nodeName") == node:
            meta = pod["metadata"]
            cluster.delete("Pod", meta.get("namespace"), meta["name"], uid=meta.get("uid"))
