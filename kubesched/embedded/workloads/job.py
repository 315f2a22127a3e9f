"""The Job controller: run pods until ``completions`` of them succeed, ``parallelism`` at a time.

Active pods are kept at ``min(parallelism, completions - succeeded)`` (pkg/controller/job's
manageJob). A pod counts as succeeded when it reaches phase Succeeded; one that fails or is deleted
before succeeding counts as failed and is replaced until ``backoffLimit`` failures. Without
``completions`` the job is done when any pod succeeds. Indexed jobs give each pod its completion index
(name ``<job>-<index>-<random>``, the ``batch.kubernetes.io/job-completion-index`` label and
annotation) and rerun only the indexes not yet succeeded.

Pods get the labels the Job controller's selector uses (``batch.kubernetes.io/controller-uid``,
``batch.kubernetes.io/job-name`` and their legacy forms). In a simulation a pod succeeds when whatever
drives time finishes it (phase Succeeded); nothing here finishes pods by itself.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kubesched.api.errors import ObjectError
from kubesched.api.objects import parse_time
from kubesched.cluster.protocol import WatchEvent
from kubesched.config.decode import as_duration
from kubesched.config.errors import ConfigError
from kubesched.embedded.workloads.common import controller_uid, int_field, is_active, meta, pod_from_template, spec

if TYPE_CHECKING:
    from kubesched.embedded.workloads.manager import ControllerManager

CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
DEFAULT_BACKOFF_LIMIT = 6
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
#: How long a pod runs once bound, in simulations that drive time.
DURATION_ANNOTATION = "kubesched.io/duration"


def _phase(pod: dict[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


class JobController:
    kind = "Job"

    def __init__(self, manager: ControllerManager) -> None:
        self.manager = manager
        #: Per job uid: the pods seen finished, keyed by pod uid -> "Succeeded" | "Failed" (and index).
        self._finished: dict[str, dict[str, tuple[str, int | None]]] = {}

    def observe(self, event: WatchEvent) -> None:
        """Count a job pod's end: Succeeded/Failed phases, or a deletion before it finished."""
        pod = event.obj
        job = self.manager.owner_of(pod)
        if job is None or job[0] != "Job":
            return
        ref_uid = str(controller_uid(pod))
        phase = _phase(pod)
        finishing = phase in ("Succeeded", "Failed") or bool(meta(pod).get("deletionTimestamp"))
        if event.type != "DELETED" and finishing and TRACKING_FINALIZER in (meta(pod).get("finalizers") or []):
            # Counted now: let the pod go (a cluster that honours finalizers would keep it otherwise).
            rest = [f for f in meta(pod)["finalizers"] if f != TRACKING_FINALIZER]
            self.manager.update({**pod, "metadata": {**meta(pod), "finalizers": rest}})
        if phase not in ("Succeeded", "Failed") and event.type != "DELETED":
            return
        if phase in ("Succeeded", "Failed"):
            outcome = phase
        else:
            outcome = "Succeeded" if self._ran_its_duration(pod) else "Failed"
        index = (meta(pod).get("annotations") or {}).get(COMPLETION_INDEX)
        finished = self._finished.setdefault(ref_uid, {})
        finished.setdefault(str(meta(pod).get("uid")), (outcome, int(str(index)) if str(index).isdigit() else None))

    def _ran_its_duration(self, pod: dict[str, Any]) -> bool:
        """Whether a deleted pod was bound for its whole ``kubesched.io/duration`` (a finished run, then).

        Simulations that give pods a duration delete them when it is over; a preemption victim or an
        evicted pod is deleted earlier. Times carry whole seconds, hence the second of slack.
        """
        text = (meta(pod).get("annotations") or {}).get(DURATION_ANNOTATION)
        bound = next(
            (
                c.get("lastTransitionTime")
                for c in (pod.get("status") or {}).get("conditions") or []
                if c.get("type") == "PodScheduled" and c.get("status") == "True"
            ),
            None,
        )
        if not text or not bound or not spec(pod).get("nodeName"):
            return False
        try:
            duration = as_duration(text, DURATION_ANNOTATION)
            start = parse_time(bound, "status.conditions")
            now = parse_time(self.manager.cluster_now(), "now")
        except (ConfigError, ObjectError):
            return False
        if start is None or now is None:
            return False
        return now >= start + duration - timedelta(seconds=1)

    def sync(self, namespace: str, name: str) -> None:
        job = self.manager.get("Job", namespace, name)
        if job is None or meta(job).get("deletionTimestamp") or self._is_finished(job):
            return
        s = spec(job)
        if s.get("suspend"):
            return
        finished = self._finished.get(str(meta(job).get("uid")), {})
        succeeded = sum(1 for outcome, _ in finished.values() if outcome == "Succeeded")
        failed = len(finished) - succeeded
        parallelism = int_field(s.get("parallelism"), 1)
        completions = s.get("completions")
        indexed = s.get("completionMode") == "Indexed" and isinstance(completions, int)
        running, _ = self.manager.pod_counts(job)
        done = (succeeded >= completions) if isinstance(completions, int) else succeeded > 0
        if not done and failed <= int_field(s.get("backoffLimit"), DEFAULT_BACKOFF_LIMIT):
            if isinstance(completions, int):
                want = min(parallelism, completions - succeeded)
            else:
                want = parallelism if succeeded == 0 else 0
            if indexed:
                assert isinstance(completions, int)
                active = [p for p in self.manager.owned(job, "Pod") if is_active(p)]
                taken = {
                    int(str(i))
                    for i in ((meta(p).get("annotations") or {}).get(COMPLETION_INDEX) for p in active)
                    if str(i).isdigit()
                }
                taken |= {i for outcome, i in finished.values() if outcome == "Succeeded" and i is not None}
                free = [i for i in range(completions) if i not in taken]
                for index in free[: max(0, want - len(active))]:
                    self._create_pod(job, index)
            else:
                for _ in range(max(0, want - running)):
                    self._create_pod(job, None)
        self._update_status(job, succeeded, failed, done)

    def _is_finished(self, job: dict[str, Any]) -> bool:
        return any(
            c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
            for c in (job.get("status") or {}).get("conditions") or []
        )

    def _create_pod(self, job: dict[str, Any], index: int | None) -> None:
        namespace, name = str(meta(job).get("namespace")), str(meta(job).get("name"))
        uid = str(meta(job).get("uid"))
        labels = {
            CONTROLLER_UID_LABEL: uid,
            JOB_NAME_LABEL: name,
            LEGACY_CONTROLLER_UID_LABEL: uid,
            LEGACY_JOB_NAME_LABEL: name,
        }
        annotations = {}
        base = f"{name}-"
        if index is not None:
            labels[COMPLETION_INDEX] = str(index)
            annotations[COMPLETION_INDEX] = str(index)
            base = f"{name}-{index}-"
        pod_name = self.manager.free_pod_name(namespace, base)
        pod = pod_from_template(
            job,
            spec(job).get("template") or {},
            name=pod_name,
            generate_name=base,
            extra_labels=labels,
            extra_annotations=annotations,
        )
        # The finalizer the Job controller tracks its pods with (it lets go once the pod is counted).
        pod["metadata"]["finalizers"] = [*pod["metadata"].get("finalizers", []), TRACKING_FINALIZER]
        self.manager.create(pod)

    def _update_status(self, job: dict[str, Any], succeeded: int, failed: int, done: bool) -> None:
        active, _ = self.manager.pod_counts(job)
        status: dict[str, Any] = {"active": active, "succeeded": succeeded, "failed": failed}
        current = job.get("status") or {}
        backoff = int_field(spec(job).get("backoffLimit"), DEFAULT_BACKOFF_LIMIT)
        condition = None
        if done and active == 0:
            condition = {"type": "Complete", "status": "True", "lastTransitionTime": self.manager.cluster_now()}
        elif failed > backoff and active == 0:
            condition = {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "lastTransitionTime": self.manager.cluster_now(),
            }
        if condition is not None:
            status["conditions"] = [*(current.get("conditions") or []), condition]
            if condition["type"] == "Complete":
                status["completionTime"] = condition["lastTransitionTime"]
        if {k: current.get(k) for k in status} != status:
            self.manager.update({**job, "status": {**current, **status}})
