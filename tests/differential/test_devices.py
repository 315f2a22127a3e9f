"""DRA in the seeded scenarios: opt-in, confined to its own objects, and consistent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched import simulate
from testing.differential.devices import DRIVER
from testing.differential.generator import Scenario, generate
from testing.differential.replay import NOT_FOR_THE_SIMULATOR
from testing.differential.upstream import SCHEDULER_CONFIG

SEEDS = range(120)


@pytest.fixture(scope="module")
def with_dra() -> list[Scenario]:
    return [generate(seed, dra=True) for seed in SEEDS]


def _without_claims(pod: dict[str, Any]) -> dict[str, Any]:
    pod = json.loads(json.dumps(pod))
    pod["spec"].pop("resourceClaims", None)
    pod["spec"]["containers"][0]["resources"].pop("claims", None)
    return pod


def test_devices_are_opt_in_and_leave_the_rest_of_a_seed_alone(with_dra: list[Scenario]) -> None:
    for sc in with_dra:
        plain = generate(sc.seed)
        assert plain.devices == [] and not any("resourceClaims" in p["spec"] for p in plain.pending)
        assert json.dumps(plain.objects()) == json.dumps([o for o in sc.objects() if o not in sc.devices])
        assert [_without_claims(p) for p in sc.pending] == plain.pending


def test_about_half_the_seeds_have_devices_and_pods_claiming_them(with_dra: list[Scenario]) -> None:
    dra = [sc for sc in with_dra if sc.devices]
    assert 0.3 * len(with_dra) < len(dra) < 0.7 * len(with_dra)
    claiming = [p for sc in dra for p in sc.pending if "resourceClaims" in p["spec"]]
    assert len(claiming) > len(dra)
    sources = {next(iter(p["spec"]["resourceClaims"][0].keys() - {"name"})) for p in claiming}
    assert sources == {"resourceClaimName", "resourceClaimTemplateName"}


def test_every_reference_resolves(with_dra: list[Scenario]) -> None:
    for sc in (s for s in with_dra if s.devices):
        by_kind: dict[str, dict[str, dict[str, Any]]] = {}
        for obj in sc.devices:
            by_kind.setdefault(obj["kind"], {})[obj["metadata"]["name"]] = obj
        assert all(
            name.startswith(f"s{sc.seed}-")
            for kind in ("DeviceClass", "ResourceSlice")
            for name in by_kind.get(kind, {})
        )
        nodes = {n["metadata"]["name"] for n in sc.nodes}
        assert {s["spec"]["nodeName"] for s in by_kind.get("ResourceSlice", {}).values()} <= nodes
        classes = set(by_kind["DeviceClass"])
        for claim in [
            *by_kind.get("ResourceClaim", {}).values(),
            *({"spec": t["spec"]["spec"]} for t in by_kind["ResourceClaimTemplate"].values()),
        ]:
            for request in claim["spec"]["devices"]["requests"]:
                for sub in request.get("firstAvailable") or [request["exactly"]]:
                    assert sub["deviceClassName"] in classes or sub["deviceClassName"] == f"s{sc.seed}-tpu"
        for pod in sc.pending:
            for entry in pod["spec"].get("resourceClaims") or []:
                kind = "ResourceClaim" if "resourceClaimName" in entry else "ResourceClaimTemplate"
                assert (entry.get("resourceClaimName") or entry["resourceClaimTemplateName"]) in by_kind[kind]
                assert pod["spec"]["containers"][0]["resources"]["claims"] == [{"name": entry["name"]}]


def test_allocated_claims_hold_distinct_published_devices(with_dra: list[Scenario]) -> None:
    for sc in with_dra:
        published = {
            (s["spec"]["pool"]["name"], d["name"])
            for s in sc.devices
            if s["kind"] == "ResourceSlice"
            for d in s["spec"]["devices"]
        }
        held = [
            (r["pool"], r["device"])
            for c in sc.devices
            if c["kind"] == "ResourceClaim" and "status" in c
            for r in c["status"]["allocation"]["devices"]["results"]
        ]
        assert len(set(held)) == len(held) and set(held) <= published
        assert all(
            r["driver"] == DRIVER
            for c in sc.devices
            if c.get("status")
            for r in c["status"]["allocation"]["devices"]["results"]
        )


def test_a_nodes_devices_of_one_model_are_interchangeable(with_dra: list[Scenario]) -> None:
    """No attribute names a device: a scheduler may take any of a node's equal devices."""
    for sc in with_dra:
        for s in (o for o in sc.devices if o["kind"] == "ResourceSlice"):
            assert all(set(d["attributes"]) == {"model", "numa"} for d in s["spec"]["devices"])


def test_dra_seeds_load_in_kubesched(with_dra: list[Scenario]) -> None:
    """kubesched's API server accepts every object (its validation is kube-apiserver's)."""
    for sc in [s for s in with_dra if s.devices][:6]:
        objects = [o for o in sc.objects() if o["kind"] not in NOT_FOR_THE_SIMULATOR]
        result = simulate([*objects, *sc.pending], config=SCHEDULER_CONFIG, seed=0, record="none")
        assert len(result.final) == len(sc.pending)
