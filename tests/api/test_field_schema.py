"""The field schema shipped with kubesched: generated from the API server's OpenAPI documents, covering
every kind the cluster knows, small, and linked into types that a walk reads without building anything."""

from __future__ import annotations

import json

import pytest

from kubesched.api.field_schema import DATA_FILE, LIST, MAX_PLANS, ObjectType, field_schema, parse_schema
from kubesched.cluster.kinds import KNOWN_KINDS
from testing import api_fields

#: The shipped file stays small: only the types reachable from the kinds kubesched loads.
MAX_BYTES = 64 * 1024


def test_every_kind_and_api_version_the_cluster_knows_has_a_type() -> None:
    schema = field_schema()
    for info in KNOWN_KINDS.values():
        for version in info.api_versions:
            of = schema.kind_type(version, info.kind)
            assert of is not None, f"{version} {info.kind}"
            assert {"apiVersion", "kind", "metadata"} <= of.fields


def test_the_data_file_is_small() -> None:
    assert DATA_FILE.stat().st_size < MAX_BYTES


def test_the_data_file_is_what_the_generator_writes() -> None:
    folder = api_fields.spec_folder(api_fields.kubernetes_version())
    if not folder.is_dir():
        pytest.skip(f"{folder} not present (the k8s.io/kubernetes module is not downloaded)")
    assert api_fields.main(["--check"]) == 0


@pytest.mark.parametrize(
    ("type_name", "field", "shape"),
    [
        # a nested object, a list of objects, maps and int-or-string / quantities / times as leaves
        ("core.v1.Container", "resources", "core.v1.ResourceRequirements"),
        ("core.v1.PodSpec", "containers", "[]core.v1.Container"),
        ("core.v1.ResourceRequirements", "requests", 0),
        ("meta.v1.ObjectMeta", "labels", 0),
        ("meta.v1.ObjectMeta", "creationTimestamp", 0),
        ("apps.v1.RollingUpdateDeployment", "maxSurge", 0),
        ("policy.v1.PodDisruptionBudgetSpec", "minAvailable", 0),
        # FieldsV1 is a free-form object: not walked
        ("meta.v1.ManagedFieldsEntry", "fieldsV1", 0),
        ("x-k8s.scheduling.v1alpha1.PodGroupSpec", "minResources", 0),
    ],
)
def test_shapes_in_the_data_file(type_name: str, field: str, shape: object) -> None:
    data = json.loads(DATA_FILE.read_text())
    assert data["types"][type_name][field] == shape


def test_pod_group_is_written_out_from_its_crd() -> None:
    of = field_schema().kind_type("scheduling.x-k8s.io/v1alpha1", "PodGroup")
    assert of is not None
    spec = of.nested["spec"][1]
    assert spec.fields == {"minMember", "minResources", "scheduleTimeoutSeconds"}
    assert {"phase", "scheduled", "scheduleStartTime"} <= of.nested["status"][1].fields


def test_the_list_wrapper() -> None:
    wrapper = field_schema().types[LIST]
    assert wrapper.fields == {"apiVersion", "kind", "metadata", "items"}
    assert "resourceVersion" in wrapper.nested["metadata"][1].fields


def test_parse_links_nested_types_with_their_steps() -> None:
    schema = parse_schema(
        {
            "kinds": {"v1": {"Thing": "Thing"}},
            "types": {
                "Thing": {"kind": 0, "parts": "[]Part", "byName": "{}Part", "grid": "[][]Part", "main": "Part"},
                "Part": {"name": 0},
            },
        }
    )
    thing = schema.kind_type("v1", "Thing")
    assert thing is not None
    part = schema.types["Part"]
    assert thing.nested == {"parts": ("[]", part), "byName": ("{}", part), "grid": ("[][]", part), "main": ("", part)}
    assert schema.kind_type("v2", "Thing") is None


def test_plans_remember_key_sets_up_to_a_bound() -> None:
    part = ObjectType("Part", frozenset({"name"}))
    of = ObjectType("Thing", frozenset({"a", "b", "part"}), {"part": ("", part)})
    assert of.plan(("a", "part")) == (("part", "", part),)
    assert of.plan(("b",)) == ()
    assert of.plan(("a", "c")) is None  # not all fields: nothing remembered
    assert set(of.plans) == {("a", "part"), ("b",)}
    for i in range(MAX_PLANS * 2):
        of.fields |= {f"f{i}"}
        of.plan((f"f{i}",))
    assert len(of.plans) == MAX_PLANS
