"""The resourceclaim controller of the embedded control plane: claims made from templates for pods, and
reservations, allocations and generated claims cleaned up when pods are done."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from kubesched.config.features import feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.embedded.controlplane import ControlPlane
from kubesched.embedded.resourceclaims import (
    FINALIZER,
    POD_CLAIM_NAME_ANNOTATION,
    ResourceClaimController,
    generate_name_base,
)
from tests.dra import (
    DRIVER,
    allocated,
    by_name,
    by_template,
    claim_dict,
    claim_pod,
    first_available_dict,
    request_dict,
    template_dict,
)

#: What the API server appends to a generateName.
SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def start(
    version: str | None = None, gates: dict[str, bool] | None = None, objs: tuple[dict[str, Any], ...] = ()
) -> tuple[EmbeddedCluster, ResourceClaimController]:
    counter = itertools.count(1)
    cluster = EmbeddedCluster(
        synchronous=True, uid_factory=lambda: f"uid-{next(counter)}", features=feature_gates(version, gates)
    )
    for obj in objs:
        cluster.create(obj)
    controller = ResourceClaimController(cluster)
    controller.start()
    return cluster, controller


def claims(cluster: EmbeddedCluster) -> dict[str, dict[str, Any]]:
    return {c["metadata"]["name"]: c for c in cluster.list("ResourceClaim")[0]}


def statuses(cluster: EmbeddedCluster, pod: str) -> list[dict[str, Any]]:
    return list(cluster.get("Pod", "default", pod).get("status", {}).get("resourceClaimStatuses") or [])


def template_with_meta() -> dict[str, Any]:
    template = template_dict("one-gpu", request_dict("r"))
    template["spec"]["metadata"] = {"labels": {"team": "ml"}, "annotations": {"note": "x"}}
    return template


def test_a_pod_gets_its_own_claim_made_from_the_template() -> None:
    cluster, _ = start(objs=(template_with_meta(),))
    pod = cluster.create(claim_pod("train", by_template("gpu", "one-gpu")))
    ((name, claim),) = claims(cluster).items()
    assert re.fullmatch(f"train-gpu-{SUFFIX}", name)
    meta = claim["metadata"]
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "train",
            "uid": pod["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert meta["annotations"] == {"note": "x", POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert meta["labels"] == {"team": "ml"}
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu"
    assert statuses(cluster, "train") == [{"name": "gpu", "resourceClaimName": name}]
    cluster.update(cluster.get("Pod", "default", "train"))  # another event about the pod: nothing new
    assert len(claims(cluster)) == 1


def test_long_names_are_shortened_to_leave_room_for_the_suffix() -> None:
    assert generate_name_base("web", "gpu") == "web-gpu-"
    # Both parts cut in proportion (and, as upstream, without the trailing hyphen then).
    assert generate_name_base("p" * 50, "c" * 30) == "p" * 34 + "-" + "c" * 20


def test_a_missing_template_is_reported_and_the_claim_made_once_it_appears() -> None:
    cluster, controller = start()
    cluster.create(claim_pod("train", by_template("gpu", "later")))
    message = (
        'PodResourceClaim gpu: resource claim template "later": resourceclaimtemplate.resource.k8s.io "later" not found'
    )
    events = [e for e in cluster.list("Event")[0] if e["reason"] == "FailedResourceClaimCreation"]
    assert [(e["involvedObject"]["name"], e["type"], e["message"]) for e in events] == [("train", "Warning", message)]
    assert controller.not_made == {"default/train": message}
    cluster.create(template_dict("later", request_dict("r")))
    assert [s["name"] for s in statuses(cluster, "train")] == ["gpu"] and len(claims(cluster)) == 1
    assert controller.not_made == {}


@pytest.mark.parametrize(
    ("feature", "request_", "message"),
    [
        ("admin_access", request_dict("r", admin=True), "admin access is requested, but the feature is disabled"),
        (
            "prioritized_list",
            first_available_dict("r", request_dict("a")),
            "template includes a prioritized list of subrequests, but the feature is disabled",
        ),
    ],
)
def test_a_template_stored_while_a_feature_was_on_makes_no_claim_with_it_off(
    feature: str, request_: dict[str, Any], message: str
) -> None:
    admin_ns = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "default", "labels": {"resource.kubernetes.io/admin-access": "true"}},
    }
    cluster, controller = start(objs=(admin_ns, template_dict("t", request_)))
    setattr(controller, feature, False)
    cluster.create(claim_pod("p", by_template("gpu", "t")))
    assert claims(cluster) == {}
    assert controller.not_made == {"default/p": f"PodResourceClaim gpu: {message}"}


def allocate(cluster: EmbeddedCluster, name: str, *pods: str) -> None:
    """What the scheduler writes: the finalizer, the allocation, the reservations."""
    claim = cluster.get("ResourceClaim", "default", name)
    claim["metadata"]["finalizers"] = [FINALIZER]
    claim = cluster.update(claim)
    claim["status"] = {
        **allocated(("r", DRIVER, "p", "g0")),
        "reservedFor": [
            {"resource": "pods", "name": p, "uid": cluster.get("Pod", "default", p)["metadata"]["uid"]} for p in pods
        ],
    }
    cluster.update_status(claim)


def test_a_deleted_pod_leaves_its_generated_claim_deallocated_and_deleted() -> None:
    cluster, _ = start(objs=(template_dict("one-gpu", request_dict("r")),))
    cluster.create(claim_pod("train", by_template("gpu", "one-gpu")))
    (name,) = claims(cluster)
    allocate(cluster, name, "train")
    changes: list[tuple[str, Any]] = []
    cluster.watch(
        ("ResourceClaim",),
        lambda e: changes.append((e.type, (e.obj.get("status") or {}).get("allocation") is not None)),
    )
    cluster.delete("Pod", "default", "train")
    assert claims(cluster) == {}
    # Reservation and allocation go first, then the finalizer, then the claim.
    assert changes == [("MODIFIED", False), ("MODIFIED", False), ("DELETED", False)]


def test_a_finished_pod_frees_a_shared_claim_only_when_it_was_the_last_user() -> None:
    cluster, _ = start(objs=(claim_dict("shared", request_dict("r")),))
    for p in ("a", "b"):
        cluster.create(claim_pod(p, by_name("gpu", "shared"), node_name="n1"))
    allocate(cluster, "shared", "a", "b")
    done = cluster.get("Pod", "default", "a")
    done["status"] = {"phase": "Succeeded"}
    cluster.update(done)
    claim = cluster.get("ResourceClaim", "default", "shared")
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["b"] and claim["status"]["allocation"]
    cluster.delete("Pod", "default", "b")
    claim = cluster.get("ResourceClaim", "default", "shared")  # not generated for a pod: it stays
    assert claim["status"] == {} and FINALIZER not in (claim["metadata"].get("finalizers") or [])


def test_an_allocation_the_scheduler_did_not_make_stays() -> None:
    status = {**allocated(("r", DRIVER, "p", "g0")), "reservedFor": [{"resource": "pods", "name": "x", "uid": "x"}]}
    cluster, _ = start(objs=(claim_dict("snap", request_dict("r"), status=status),))
    claim = cluster.get("ResourceClaim", "default", "snap")
    assert "reservedFor" not in claim["status"] and claim["status"]["allocation"]  # no such pod; no finalizer


def test_a_bound_pod_gets_its_allocated_claim_reserved() -> None:
    cluster, _ = start(objs=(claim_dict("c", request_dict("r"), status=allocated(("r", DRIVER, "p", "g0"))),))
    pod = cluster.create(claim_pod("p", by_name("gpu", "c"), node_name="n1"))
    reserved = cluster.get("ResourceClaim", "default", "c")["status"]["reservedFor"]
    assert reserved == [{"resource": "pods", "name": "p", "uid": pod["metadata"]["uid"]}]


def test_the_control_plane_runs_it_only_where_dra_is_on() -> None:
    assert ControlPlane(EmbeddedCluster(features=feature_gates("1.30"))).resource_claims is None
    assert ControlPlane(EmbeddedCluster(features=feature_gates("1.34"))).resource_claims is not None


def test_a_loaded_pod_keeps_the_claims_it_records_though_its_uid_is_new() -> None:
    """A snapshot's pod and its claim are loaded together, each with a new uid: the claim is re-pointed to
    the pod that records it (and reserved for it, as it runs), not deleted as a replaced pod's."""
    cluster = EmbeddedCluster()
    controller = ResourceClaimController(cluster)
    controller.start()
    claim = claim_dict("old-gpu-abcde", request_dict("r"), status=allocated(("r", DRIVER, "p", "g0")))
    claim["metadata"].update(
        finalizers=[FINALIZER],
        annotations={POD_CLAIM_NAME_ANNOTATION: "gpu"},
        ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": "old", "uid": "gone", "controller": True}],
    )
    cluster.create(claim)
    pod = cluster.create(claim_pod("old", by_template("gpu", "t"), statuses={"gpu": "old-gpu-abcde"}, node_name="n1"))
    cluster.deliver_pending()
    stored = cluster.get("ResourceClaim", "default", "old-gpu-abcde")
    assert stored["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
    assert [r["name"] for r in stored["status"]["reservedFor"]] == ["old"]
    assert list(claims(cluster)) == ["old-gpu-abcde"]


def test_a_pod_that_drops_its_claims_is_no_longer_among_their_users() -> None:
    _, controller = start()
    with_claim = claim_pod("p", by_name("gpu", "shared"))
    controller.on_pod(with_claim, deleted=False)
    assert controller._users == {("default", "shared"): {"p"}}
    # The same pod read again without claims (the shortcut for claim-less pods) leaves no user behind.
    controller.on_pod({**with_claim, "spec": {"containers": with_claim["spec"]["containers"]}}, deleted=False)
    assert controller._users == {}
    controller.on_pod({**with_claim, "spec": {"containers": []}}, deleted=True)
    assert controller._users == {}
