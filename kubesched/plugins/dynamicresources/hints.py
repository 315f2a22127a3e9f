"""DynamicResources' queueing hints: which claim and pod changes may let a pod it rejected through.

A claim change helps when every claim of the pod now exists and the change either freed devices
(an allocation went away) or touched one of the pod's own claims (created, or its status changed); a
pod change helps the pod itself once all its claims exist (the resourceclaim controller recorded the
claim it made from a template). Anything else is skipped.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from kubesched.api.dra import ResourceClaim
from kubesched.api.errors import ObjectError
from kubesched.api.objects import Pod
from kubesched.framework.interfaces import QueueingHint
from kubesched.plugins.dynamicresources.claims import ClaimsUnavailable, pod_claims
from kubesched.plugins.dynamicresources.dra_manager import ClaimTracker

#: The hint's answers.
QUEUE = QueueingHint.QUEUE
QUEUE_SKIP = QueueingHint.QUEUE_SKIP


#: The event objects parsed last, with their views: the queue asks the hint about one event once per
#: waiting pod, so each object is parsed once (entries hold the object, so its id stays its own).
_PARSED: list[tuple[Any, ResourceClaim | None]] = []
_PARSED_SIZE = 4
_parsed_lock = threading.Lock()


def _claim(obj: Any) -> ResourceClaim | None:
    """A claim event's object: a parsed view, or a dict as the watch hands it (None when unreadable)."""
    if obj is None or isinstance(obj, ResourceClaim):
        return obj
    if not isinstance(obj, Mapping):
        return None
    with _parsed_lock:
        for known, parsed in _PARSED:
            if known is obj:
                return parsed
    try:
        parsed = ResourceClaim.from_dict(obj)
    except ObjectError:
        parsed = None
    with _parsed_lock:
        _PARSED.insert(0, (obj, parsed))
        del _PARSED[_PARSED_SIZE:]
    return parsed


def _status(claim: ResourceClaim) -> Any:
    return claim.raw.get("status") or {}


def is_schedulable_after_claim_change(tracker: ClaimTracker, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """isSchedulableAfterClaimChange (claim additions and updates)."""
    modified = _claim(new_obj)
    if modified is None:
        return QUEUE  # unreadable: let the pod try
    original = _claim(old_obj)
    try:
        uses_claim = any(c.uid == modified.uid for c in pod_claims(pod, tracker))
    except ClaimsUnavailable:
        return QUEUE_SKIP  # still waiting for a claim: this change alone cannot help
    if original is not None and original.allocation is not None and modified.allocation is None:
        return QUEUE  # devices were freed
    if not uses_claim:
        return QUEUE_SKIP
    if original is None:
        return QUEUE  # the pod's claim got created
    if _status(original) == _status(modified):
        return QUEUE_SKIP  # metadata only (a finalizer): nothing the pod waits for
    return QUEUE


def is_schedulable_after_pod_change(tracker: ClaimTracker, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """isSchedulableAfterPodChange (a pod's generated claims recorded in its status)."""
    modified = new_obj if isinstance(new_obj, Pod) else None
    if modified is None or modified.uid != pod.uid:
        return QUEUE_SKIP
    try:
        pod_claims(modified, tracker)
    except ClaimsUnavailable:
        return QUEUE_SKIP
    return QUEUE
