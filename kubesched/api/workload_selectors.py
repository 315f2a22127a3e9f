"""A workload's selector must select the pods its template makes, as the API server requires.

A Deployment whose ``spec.selector`` does not match ``spec.template.metadata.labels`` would own none of
the pods it creates (its controller would create them forever), so kube-apiserver refuses it
(``pkg/apis/apps/validation``, ``pkg/apis/batch/validation``):

- Deployment, ReplicaSet, StatefulSet: the selector is required, may not be empty, and must match the
  template's labels;
- DaemonSet: the selector must match the template's labels (an absent one matches nothing) and may
  not be empty;
- ReplicationController: a selector given (a plain label map; an empty one defaults to the template's
  labels) must match them;
- Job: with ``manualSelector: true`` the selector is required and must match the template's labels;
  otherwise the API server generates it from the Job's uid, and a selector given besides must still
  select what the generated labels are (``job-name`` may be named, nothing else).

Values are shown as kube-apiserver's field errors show them: as JSON, map keys sorted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.labels import LabelSelector

#: The kinds whose selector must select their template's pods.
WORKLOAD_KINDS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController"})
_MISMATCH = "`selector` does not match template `labels`"
#: The word upstream's "empty selector is invalid for …" uses, per kind (ReplicaSet's says deployment).
_EMPTY_NAME = {
    "Deployment": "deployment",
    "ReplicaSet": "deployment",
    "StatefulSet": "statefulset",
    "DaemonSet": "daemonset",
}
#: The labels the API server puts on a Job's pod template for its generated selector (besides the uid ones).
_JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")
#: A uid no selector written before the Job existed can name.
_UNKNOWN_UID = "\x00uid"
_JOB_UID_LABELS = ("batch.kubernetes.io/controller-uid", "controller-uid")


def check_workload_selector(obj: Mapping[str, Any]) -> None:
    """Refuse a workload (one of WORKLOAD_KINDS) whose selector cannot select the pods of its template;
    its selector and labels were found well formed already (:func:`~kubesched.api.validation.validate_object`).

    This is a check at creation, kept apart from validate_object, which also checks what a watch
    delivers: there the API server has enforced it already."""
    kind = str(obj.get("kind") or "")
    spec = obj.get("spec") or {}
    raw = spec.get("selector")
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if kind == "Job":
        _job(obj, raw, labels)
        return
    if kind == "ReplicationController":
        if raw and any((labels or {}).get(key) != value for key, value in raw.items()):
            raise ObjectError("spec.template.metadata.labels", f"Invalid value: {_json(labels)}: {_MISMATCH}")
        return
    if raw is None and kind != "DaemonSet":
        raise ObjectError("spec.selector", "Required value")
    selector = LabelSelector.from_dict(raw)
    if kind == "DaemonSet" and (selector is None or not selector.matches(labels or {})):
        raise ObjectError("spec.template.metadata.labels", f"Invalid value: {_json(labels)}: {_MISMATCH}")
    if selector is not None and selector.empty:
        raise ObjectError(
            "spec.selector",
            f"Invalid value: {_json(raw)}: empty selector is invalid for {_EMPTY_NAME.get(kind, kind.lower())}",
        )
    if selector is not None and not selector.matches(labels or {}):
        raise ObjectError("spec.template.metadata.labels", f"Invalid value: {_json(labels)}: {_MISMATCH}")


def _job(obj: Mapping[str, Any], raw: Any, labels: Mapping[str, str] | None) -> None:
    spec = obj.get("spec") or {}
    if spec.get("manualSelector") is True:
        if raw is None:
            raise ObjectError("spec.selector", "Required value")
        selector = LabelSelector.from_dict(raw)
        if selector is not None and not selector.matches(labels or {}):
            raise ObjectError("spec.template.metadata.labels", f"Invalid value: {_json(labels)}: {_MISMATCH}")
        return
    if raw is None:
        return
    name = str((obj.get("metadata") or {}).get("name") or "")
    generated = {**dict.fromkeys(_JOB_NAME_LABELS, name), **dict.fromkeys(_JOB_UID_LABELS, _UNKNOWN_UID)}
    selector = LabelSelector.from_dict(raw)
    if selector is not None and not selector.matches(generated):
        raise ObjectError("spec.selector", f"Invalid value: {_json(raw)}: `selector` not auto-generated")


def _json(value: Any) -> str:
    """``value`` as Go's encoding/json writes it: map keys sorted, a selector's fields in their Go order
    (matchLabels, then matchExpressions of key, operator, values), empty ones left out."""
    if isinstance(value, Mapping) and value.keys() <= {"matchLabels", "matchExpressions"}:
        ordered: dict[str, Any] = {}
        if value.get("matchLabels"):
            ordered["matchLabels"] = dict(sorted(value["matchLabels"].items()))
        if value.get("matchExpressions"):
            ordered["matchExpressions"] = [dict(sorted(e.items())) for e in value["matchExpressions"]]
        return json.dumps(ordered, separators=(",", ":"))
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
