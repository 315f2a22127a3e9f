"""The resourceclaim controller of kube-controller-manager, for the embedded cluster.

For a pod whose ``spec.resourceClaims`` names a ResourceClaimTemplate, it makes the pod's own claim
from the template (``<pod>-<claim>-<five random characters>``, annotated
``resource.kubernetes.io/pod-claim-name``, controlled by the pod) and records it in the pod's
``status.resourceClaimStatuses``; the scheduler waits for that. Once a pod is done (Succeeded,
Failed, deleted) its reservations go from its claims' ``status.reservedFor``; a claim the scheduler
allocated (it carries the ``resource.kubernetes.io/delete-protection`` finalizer) that nobody reserves
any more is deallocated, and a generated claim whose pod is done or gone is deleted (the latter is the
garbage collector's doing on a real cluster: the claim's owner is gone). A bound pod whose claim is
allocated but not reserved for it gets the reservation.

Watch-driven and synchronous: each pod, claim or template event is handled at once (kube-controller-
manager queues and retries; here a failed claim creation is tried again when the pod changes or a
template appears, and is reported as a ``FailedResourceClaimCreation`` event on the pod, as upstream does;
:attr:`ResourceClaimController.not_made` keeps the reason while it lasts, for the pending pod's report).

One addition for loaded scenarios: a claim whose pod (by name) records it in its status but has another
uid than the claim's owner reference is re-pointed to that pod rather than deleted (see :meth:`_adopt`).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from kubesched.api.dra import ClaimNotCreated, PodResourceClaim, claim_name, pod_resource_claims
from kubesched.api.errors import ObjectError
from kubesched.cluster.protocol import ApiError, WatchEvent
from kubesched.embedded.apiserver import EmbeddedCluster

log = logging.getLogger(__name__)

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
FINALIZER = "resource.kubernetes.io/delete-protection"
#: How many deleted pods' uids are remembered (a reservation of one of them is dropped at once).
MAX_DELETED_UIDS = 500
#: A generated name keeps 57 characters for its base, then a hyphen and five random ones (63 in all).
MAX_BASE_LENGTH = 57
EVENT_SOURCE = "resource_claim"


class ClaimCreationError(Exception):
    """A pod's claim could not be made; the message is what the pod's event says."""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("status") or {}


def is_pod_done(pod: Mapping[str, Any]) -> bool:
    """isPodDone: it ran to completion, or was deleted before it was scheduled."""
    return _status(pod).get("phase") in ("Succeeded", "Failed") or bool(
        _meta(pod).get("deletionTimestamp") and not (pod.get("spec") or {}).get("nodeName")
    )


def is_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    """The claim is in the pod's namespace and the pod is its controller."""
    uid = _meta(pod).get("uid")
    return _meta(claim).get("namespace") == _meta(pod).get("namespace") and any(
        r.get("controller") is True and r.get("uid") == uid
        for r in _meta(claim).get("ownerReferences") or ()
        if isinstance(r, Mapping)
    )


def owning_pod(claim: Mapping[str, Any]) -> tuple[str, str]:
    """The pod controlling the claim (name, uid), or ("", "")."""
    for ref in _meta(claim).get("ownerReferences") or ():
        if (
            isinstance(ref, Mapping)
            and ref.get("controller") is True
            and ref.get("apiVersion") == "v1"
            and ref.get("kind") == "Pod"
        ):
            return str(ref.get("name") or ""), str(ref.get("uid") or "")
    return "", ""


def generate_name_base(pod_name: str, claim: str) -> str:
    """The generateName of a pod's claim: ``<pod>-<claim>-``, both parts shortened in proportion when
    the whole would leave no room for the random suffix."""
    base = f"{pod_name}-{claim}-"
    if len(base) > MAX_BASE_LENGTH:
        base = (
            pod_name[: len(pod_name) * MAX_BASE_LENGTH // len(base)]
            + "-"
            + claim[: len(claim) * MAX_BASE_LENGTH // len(base)]
        )
    return base


def _claims_of(pod: Mapping[str, Any]) -> tuple[PodResourceClaim, ...]:
    try:
        return pod_resource_claims(pod)
    except ObjectError:
        return ()


def _resolved_name(pod: Mapping[str, Any], entry: PodResourceClaim) -> str | None:
    """The claim behind a pod claim, when it is known (else None)."""
    try:
        return claim_name(pod, entry)[0]
    except (ClaimNotCreated, ObjectError):
        return None


class ResourceClaimController:
    """Reconciles pods with claims and their claims; :meth:`start` subscribes it to the cluster."""

    def __init__(self, cluster: EmbeddedCluster) -> None:
        self.cluster = cluster
        features = cluster.features
        self.admin_access = features.enabled("DRAAdminAccess")
        self.prioritized_list = features.enabled("DRAPrioritizedList")
        self._watch: Any = None
        self._deleted: OrderedDict[str, None] = OrderedDict()
        #: Pods by the claims they use and the templates they name ((namespace, name) -> pod names), and
        #: what each pod was indexed under, so that a claim or template event finds its pods at once.
        self._users: dict[tuple[str, str], set[str]] = {}
        self._waiting: dict[tuple[str, str], set[str]] = {}
        self._indexed: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {}
        #: Claims made for pods: pod uid -> pod claim -> claim name (claimPodOwnerIndex).
        self._owned: dict[str, dict[str, str]] = {}
        self._parsed: dict[tuple[str, str], tuple[Mapping[str, Any], tuple[PodResourceClaim, ...]]] = {}
        self._reserved: tuple[Mapping[str, Any] | None, frozenset[Any]] = (None, frozenset())
        #: Pod ``namespace/name`` -> why its claims could not be made (the event's message), while so.
        self.not_made: dict[str, str] = {}

    # -- wiring ---------------------------------------------------------------------------------------
    def start(self) -> None:
        self._watch = self.cluster.watch(
            ("Pod", "ResourceClaim", "ResourceClaimTemplate"), self.handle_event, private_copies=False
        )
        for claim in self.cluster.list("ResourceClaim")[0]:
            self._index_claim(claim, deleted=False)
        for pod in self.cluster.list("Pod")[0]:
            self.on_pod(pod, deleted=False)
        for claim in self.cluster.list("ResourceClaim")[0]:
            self.sync_claim(str(_meta(claim).get("namespace")), str(_meta(claim).get("name")))

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()

    def handle_event(self, event: WatchEvent) -> None:
        try:
            if event.kind == "Pod":
                self.on_pod(event.obj, deleted=event.type == "DELETED")
            elif event.kind == "ResourceClaim":
                self.on_claim(event.obj, deleted=event.type == "DELETED")
            elif event.type != "DELETED":
                self.on_template(event.obj)
        except ApiError as err:  # the next event about the object tries again
            log.info("resourceclaim controller: %s %s: %s", event.kind, _meta(event.obj).get("name"), err)

    # -- events ---------------------------------------------------------------------------------------
    def on_pod(self, pod: Mapping[str, Any], *, deleted: bool) -> None:
        """enqueuePod: a done pod's claims are looked at; a pod that needs its claims made or reserved is synced."""
        spec = pod.get("spec")
        if isinstance(spec, dict) and not spec.get("resourceClaims"):
            # Most pods use no claim: nothing to read, and nothing to index unless an earlier
            # version of the pod (or of one by its name) did use some.
            if not self._parsed and not self._indexed:
                return  # no pod uses claims: nothing of this one to forget
            key = (str(_meta(pod).get("namespace") or "default"), str(_meta(pod).get("name")))
            self._parsed.pop(key, None)
            if key not in self._indexed:
                return
        entries = self._claims_of(pod)
        self._index_pod(pod, entries, deleted=deleted)
        if deleted:
            self._parsed.pop((str(_meta(pod).get("namespace") or "default"), str(_meta(pod).get("name"))), None)
        if not entries:
            return
        namespace = str(_meta(pod).get("namespace") or "default")
        if deleted:
            self._deleted[str(_meta(pod).get("uid"))] = None
            while len(self._deleted) > MAX_DELETED_UIDS:
                self._deleted.popitem(last=False)
        if deleted or is_pod_done(pod):
            for entry in entries:
                name = _resolved_name(pod, entry)
                if name:
                    self.sync_claim(namespace, name)
        if not deleted:
            for claim in self._recorded(pod):
                self._adopt(claim, pod)
        if not deleted and self._pod_needs_work(pod, entries):
            self.sync_pod(namespace, str(_meta(pod).get("name")))

    def on_claim(self, claim: Mapping[str, Any], *, deleted: bool) -> None:
        """enqueueResourceClaim: the claim itself, then every pod that uses it."""
        namespace, name = str(_meta(claim).get("namespace") or "default"), str(_meta(claim).get("name"))
        self._index_claim(claim, deleted=deleted)
        if not deleted:
            self.sync_claim(namespace, name)
        users = self._users.get((namespace, name), set())
        if deleted:
            self._revisit(users, namespace)  # a template's claim is made again
            return
        current = self.cluster.lookup("ResourceClaim", namespace, name)
        if current is not None and _status(current).get("allocation") is not None:
            # Only a user without a reservation can have something to do (a bound pod to reserve it for).
            reserved = {r.get("name") for r in _status(current).get("reservedFor") or () if isinstance(r, Mapping)}
            self._revisit(users - reserved, namespace)

    def on_template(self, template: Mapping[str, Any]) -> None:
        """A template appeared or changed: pods still waiting for a claim from it are tried again."""
        namespace, name = str(_meta(template).get("namespace") or "default"), str(_meta(template).get("name"))
        self._revisit(self._waiting.get((namespace, name), ()), namespace)

    def _revisit(self, pod_names: Any, namespace: str) -> None:
        """The pods a claim or template event concerns: those that may need work now (the reservations
        of pods that are done went with the claim's own sync)."""
        for pod_name in sorted(pod_names):
            pod = self.cluster.lookup("Pod", namespace, pod_name)
            if pod is not None and not is_pod_done(pod) and self._pod_needs_work(pod, self._claims_of(pod)):
                self.sync_pod(namespace, pod_name)

    def _claims_of(self, pod: Mapping[str, Any]) -> tuple[PodResourceClaim, ...]:
        """The pod's claims, read once per stored version of the pod (a revisit reads them again and again)."""
        key = (str(_meta(pod).get("namespace") or "default"), str(_meta(pod).get("name")))
        known = self._parsed.get(key)
        if known is not None and known[0] is pod:
            return known[1]
        entries = _claims_of(pod)
        self._parsed[key] = (pod, entries)
        return entries

    # -- indexes --------------------------------------------------------------------------------------
    def _index_pod(self, pod: Mapping[str, Any], entries: tuple[PodResourceClaim, ...], *, deleted: bool) -> None:
        namespace = str(_meta(pod).get("namespace") or "default")
        name = str(_meta(pod).get("name"))
        claims: frozenset[str] = frozenset()
        templates: frozenset[str] = frozenset()
        if not deleted:
            claims = frozenset(n for e in entries if (n := _resolved_name(pod, e)))
            templates = frozenset(e.resource_claim_template_name for e in entries if e.resource_claim_template_name)
        before = self._indexed.pop((namespace, name), (frozenset(), frozenset()))
        for index, old, new in ((self._users, before[0], claims), (self._waiting, before[1], templates)):
            for gone in old - new:
                users = index.get((namespace, gone))
                if users is not None:
                    users.discard(name)
                    if not users:
                        del index[(namespace, gone)]
            for added in new - old:
                index.setdefault((namespace, added), set()).add(name)
        if claims or templates:
            self._indexed[(namespace, name)] = (claims, templates)

    def _index_claim(self, claim: Mapping[str, Any], *, deleted: bool) -> None:
        _, pod_uid = owning_pod(claim)
        pod_claim = (_meta(claim).get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION)
        if not pod_uid or not pod_claim:
            return
        owned = self._owned.setdefault(pod_uid, {})
        if deleted:
            if owned.get(pod_claim) == _meta(claim).get("name"):
                del owned[pod_claim]
            if not owned:
                del self._owned[pod_uid]
        else:
            owned[pod_claim] = str(_meta(claim).get("name"))

    def _pod_needs_work(self, pod: Mapping[str, Any], entries: tuple[PodResourceClaim, ...]) -> bool:
        """podNeedsWork: a claim to make from a template, or an allocated claim to reserve for a bound pod."""
        if _meta(pod).get("deletionTimestamp"):
            return False
        namespace = str(_meta(pod).get("namespace") or "default")
        for entry in entries:
            try:
                name, must_own = claim_name(pod, entry)
            except (ClaimNotCreated, ObjectError):
                return True
            if name is None:
                return False
            claim = self.cluster.lookup("ResourceClaim", namespace, name)
            if claim is None:
                return entry.resource_claim_template_name is not None
            if must_own and not is_for_pod(pod, claim):
                return False
            if not (pod.get("spec") or {}).get("nodeName") or is_pod_done(pod):
                continue  # (a pod that is done is not reserved again, or the two would take turns for ever)
            if _status(claim).get("allocation") is not None and not self._reserved_for(claim, pod):
                return True
        return False

    def _reserved_for(self, claim: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
        """Whether the claim is reserved for the pod; the uids are gathered once per stored claim version."""
        if self._reserved[0] is not claim:
            self._reserved = (
                claim,
                frozenset(r.get("uid") for r in _status(claim).get("reservedFor") or () if isinstance(r, Mapping)),
            )
        return _meta(pod).get("uid") in self._reserved[1]

    # -- pods -----------------------------------------------------------------------------------------
    def sync_pod(self, namespace: str, name: str) -> None:
        """syncPod: make the claims from templates and record them; reserve allocated claims of a bound pod."""
        pod = self.cluster.lookup("Pod", namespace, name)
        if pod is None or _meta(pod).get("deletionTimestamp"):
            self.not_made.pop(f"{namespace}/{name}", None)
            return
        made: dict[str, str] = {}
        for entry in _claims_of(pod):
            try:
                made_name = self._handle_claim(pod, entry)
            except ClaimCreationError as err:
                self._report(pod, f"PodResourceClaim {entry.name}: {err}")
                return
            if made_name is not None:
                made[entry.name] = made_name
        self.not_made.pop(f"{namespace}/{name}", None)
        if made:
            pod = self._record_statuses(namespace, name, made)
        if not (pod.get("spec") or {}).get("nodeName") or is_pod_done(pod):
            return  # the scheduler deals with it; a pod that is done needs no reservation
        for entry in _claims_of(pod):
            claim_key = _resolved_name(pod, entry)
            claim = self.cluster.lookup("ResourceClaim", namespace, claim_key) if claim_key else None
            if claim is None or (entry.resource_claim_template_name is not None and not is_for_pod(pod, claim)):
                continue
            if _status(claim).get("allocation") is not None and not self._reserved_for(claim, pod):
                self._reserve(claim, pod)

    def _handle_claim(self, pod: Mapping[str, Any], entry: PodResourceClaim) -> str | None:
        """handleClaim: the name of the claim made for this pod claim now, or None when none was needed."""
        namespace = str(_meta(pod).get("namespace") or "default")
        try:
            name, must_own = claim_name(pod, entry)
        except ClaimNotCreated as err:
            if entry.resource_claim_template_name is None:
                raise ClaimCreationError(f"checking for claim before creating it: {err}") from None
        except ObjectError as err:
            raise ClaimCreationError(f"checking for claim before creating it: {err}") from None
        else:
            if name is None:
                return None
            existing = self.cluster.lookup("ResourceClaim", namespace, name)
            if existing is not None and (not must_own or is_for_pod(pod, existing)):
                return None
        template_name = entry.resource_claim_template_name
        if template_name is None:
            return None
        found = self._find_pod_claim(pod, entry.name)
        if found is not None:
            return found
        return self._create_claim(pod, entry.name, template_name)

    def _find_pod_claim(self, pod: Mapping[str, Any], pod_claim: str) -> str | None:
        """A claim this pod controls, made for this pod claim (its annotation says which)."""
        name = self._owned.get(str(_meta(pod).get("uid")), {}).get(pod_claim)
        if name is None or self.cluster.lookup("ResourceClaim", str(_meta(pod).get("namespace")), name) is None:
            return None
        return name

    def _create_claim(self, pod: Mapping[str, Any], pod_claim: str, template_name: str) -> str:
        namespace = str(_meta(pod).get("namespace") or "default")
        template = self.cluster.lookup("ResourceClaimTemplate", namespace, template_name)
        if template is None:
            raise ClaimCreationError(
                f'resource claim template "{template_name}": '
                f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found'
            )
        spec = template.get("spec") or {}
        requests = ((spec.get("spec") or {}).get("devices") or {}).get("requests") or []
        if not self.admin_access and any((r.get("exactly") or {}).get("adminAccess") for r in requests):
            raise ClaimCreationError("admin access is requested, but the feature is disabled")
        if not self.prioritized_list and any(r.get("firstAvailable") for r in requests):
            raise ClaimCreationError("template includes a prioritized list of subrequests, but the feature is disabled")
        claim_meta = spec.get("metadata") or {}
        pod_meta = _meta(pod)
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "generateName": generate_name_base(str(pod_meta.get("name")), pod_claim),
                "namespace": namespace,
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": pod_meta.get("name"),
                        "uid": pod_meta.get("uid"),
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
                "annotations": {**(claim_meta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: pod_claim},
                **({"labels": dict(claim_meta["labels"])} if claim_meta.get("labels") else {}),
            },
            "spec": spec.get("spec") or {},
        }
        try:
            created = self.cluster.create(claim)
        except ApiError as err:
            raise ClaimCreationError(f"create ResourceClaim : {err.message}") from None
        self._index_claim(created, deleted=False)  # what kube-controller-manager's mutation cache is for
        return str(created["metadata"]["name"])

    def _record_statuses(self, namespace: str, name: str, made: Mapping[str, str]) -> dict[str, Any]:
        """Apply ``status.resourceClaimStatuses`` entries (by name) to the pod; the pod as stored after."""
        pod = self.cluster.get("Pod", namespace, name)
        statuses = [dict(s) for s in _status(pod).get("resourceClaimStatuses") or () if isinstance(s, Mapping)]
        for claim_entry, claim in made.items():
            entry = {"name": claim_entry, "resourceClaimName": claim}
            index = next((i for i, s in enumerate(statuses) if s.get("name") == claim_entry), None)
            if index is None:
                statuses.append(entry)
            else:
                statuses[index] = entry
        pod.setdefault("status", {})["resourceClaimStatuses"] = statuses
        pod["metadata"].pop("resourceVersion", None)  # an apply with force: no precondition
        return self.cluster.update(pod)

    def _reserve(self, claim: Mapping[str, Any], pod: Mapping[str, Any]) -> None:
        """reserveForPod."""
        new = {
            **claim,
            "status": {
                **_status(claim),
                "reservedFor": [
                    *(_status(claim).get("reservedFor") or []),
                    {"resource": "pods", "name": _meta(pod).get("name"), "uid": _meta(pod).get("uid")},
                ],
            },
        }
        self.cluster.update_status(new)

    def _report(self, pod: Mapping[str, Any], message: str) -> None:
        meta = _meta(pod)
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
        self.cluster.record_event(
            {
                "metadata": {"namespace": namespace},
                "involvedObject": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "namespace": namespace,
                    "name": name,
                    "uid": meta.get("uid"),
                },
                "type": "Warning",
                "reason": "FailedResourceClaimCreation",
                "message": message,
                "source": {"component": EVENT_SOURCE},
                "reportingController": EVENT_SOURCE,
            }
        )
        self.not_made[f"{namespace}/{name}"] = message

    # -- claims ---------------------------------------------------------------------------------------
    def sync_claim(self, namespace: str, name: str) -> None:
        """syncClaim: drop reservations of pods that are done or gone; deallocate a claim nobody reserves;
        delete a generated claim whose pod is done or gone."""
        claim: Mapping[str, Any] | None = self.cluster.lookup("ResourceClaim", namespace, name)
        if claim is None:
            return
        reserved = [r for r in _status(claim).get("reservedFor") or () if isinstance(r, Mapping)]
        valid = [r for r in reserved if self._still_reserved(namespace, r)]
        protected = FINALIZER in (_meta(claim).get("finalizers") or ())
        if len(valid) < len(reserved) or (protected and _meta(claim).get("deletionTimestamp") and not valid):
            claim = self._release(claim, valid, protected)
        if valid:
            return
        pod_name, pod_uid = owning_pod(claim)
        if not pod_name:
            return  # not generated for a pod
        pod = self.cluster.lookup("Pod", namespace, pod_name)
        if pod is not None and _meta(pod).get("uid") != pod_uid and claim in self._recorded(pod):
            self._adopt(claim, pod)
            return
        if pod is None or _meta(pod).get("uid") != pod_uid or is_pod_done(pod):
            self.cluster.delete("ResourceClaim", namespace, name)

    # -- loaded scenarios -----------------------------------------------------------------------------
    def _recorded(self, pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """The claims the pod records in ``status.resourceClaimStatuses`` whose controller is a pod of its
        name with another uid."""
        namespace, uid = str(_meta(pod).get("namespace") or "default"), _meta(pod).get("uid")
        out: list[Mapping[str, Any]] = []
        for entry in _status(pod).get("resourceClaimStatuses") or ():
            name = entry.get("resourceClaimName") if isinstance(entry, Mapping) else None
            claim = self.cluster.lookup("ResourceClaim", namespace, name) if isinstance(name, str) else None
            if claim is not None:
                owner, owner_uid = owning_pod(claim)
                if owner == _meta(pod).get("name") and owner_uid != uid:
                    out.append(claim)
        return out

    def _adopt(self, claim: Mapping[str, Any], pod: Mapping[str, Any]) -> None:
        """Point the claim's controller reference at the pod that records it. A scenario (a snapshot of a
        live cluster, say) is loaded with new uids: its pods keep the names of the claims made for them,
        and their claims name the pods, by their former uids. Upstream's controller would take such a
        claim for one of a replaced pod and delete it; the pod still recording it tells otherwise."""
        refs = [dict(r) if isinstance(r, Mapping) else r for r in _meta(claim).get("ownerReferences") or ()]
        for ref in refs:
            if isinstance(ref, dict) and ref.get("controller") is True and ref.get("kind") == "Pod":
                ref["uid"] = _meta(pod).get("uid")
        self.cluster.update({**claim, "metadata": {**_meta(claim), "ownerReferences": refs}})

    def _still_reserved(self, namespace: str, ref: Mapping[str, Any]) -> bool:
        if ref.get("apiGroup") or ref.get("resource") != "pods":
            return True  # some other consumer: not the controller's to judge
        if ref.get("uid") in self._deleted:
            return False
        pod = self.cluster.lookup("Pod", namespace, str(ref.get("name")))
        return pod is not None and _meta(pod).get("uid") == ref.get("uid") and not is_pod_done(pod)

    def _release(self, claim: Mapping[str, Any], valid: list[Mapping[str, Any]], protected: bool) -> Mapping[str, Any]:
        """Write the remaining reservations; with none left, the scheduler's allocation goes too (and then
        its finalizer)."""
        status = {k: v for k, v in _status(claim).items() if k != "reservedFor"}
        if valid:
            status["reservedFor"] = [dict(r) for r in valid]
        elif protected:
            status.pop("allocation", None)
            status.pop("devices", None)
        updated = self.cluster.update_status({**claim, "status": status})
        finalizers = list(_meta(updated).get("finalizers") or ())
        if protected and _status(updated).get("allocation") is None and FINALIZER in finalizers:
            finalizers.remove(FINALIZER)
            updated["metadata"]["finalizers"] = finalizers
            updated = self.cluster.update(updated)
        return updated
