"""kubectl's --validate: strict refuses unknown and repeated fields, warn reports each once and drops it,
ignore drops it silently."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubesched.scenario.documents import DuplicateField
from kubesched.scenario.field_validation import FieldValidation, validate_mode
from tests.factories import pod_dict


class Refused(ValueError):
    pass


def refuse(where: str) -> Any:
    return lambda path, reason: Refused(f"{where}: {path}: {reason}")


def misspelt_pod(name: str) -> dict[str, Any]:
    pod = pod_dict(name)
    pod["spec"]["nodeSelectr"] = {"disk": "ssd"}
    return pod


@pytest.mark.parametrize(
    ("given", "mode"),
    [
        ("strict", "strict"),
        ("warn", "warn"),
        ("ignore", "ignore"),
        ("true", "strict"),
        ("false", "ignore"),
        ("Strict", "strict"),
        ("WARN", "warn"),
        (True, "strict"),
        (False, "ignore"),
    ],
)
def test_modes_and_kubectl_spellings(given: object, mode: str) -> None:
    assert validate_mode(given) == mode


@pytest.mark.parametrize("given", ["yes", "", None, 1])
def test_other_values_are_refused(given: object) -> None:
    with pytest.raises(ValueError, match=r"^validate: expected one of 'strict', 'warn', 'ignore' \(or true, false\)"):
        validate_mode(given)


def test_strict_refuses_naming_the_first_field_and_listing_more() -> None:
    pod = misspelt_pod("p")
    for extra in ("a", "b", "c", "d"):
        pod["spec"][extra] = 1
    with pytest.raises(Refused) as info:
        FieldValidation().checked(pod, refuse("p.yaml"))
    assert str(info.value) == (
        'p.yaml: spec.nodeSelectr: unknown field "nodeSelectr" (did you mean "nodeSelector"?); '
        "more unknown fields: spec.a, spec.b, spec.c, …"
    )


def test_warn_reports_each_field_once_with_how_many_objects_had_it(caplog: pytest.LogCaptureFixture) -> None:
    fields = FieldValidation("warn")
    with caplog.at_level(logging.WARNING, logger="kubesched.scenario.field_validation"):
        pruned = [fields.checked(misspelt_pod(f"p{i}"), refuse(f"document {i}")) for i in range(3)]
        fields.repeated([DuplicateField(("spec", "nodeName"), 4, 5)], refuse("document 3"))
    assert all("nodeSelectr" not in p["spec"] for p in pruned)
    assert fields.warnings() == [
        'document 0: spec.nodeSelectr: unknown field "nodeSelectr" (did you mean "nodeSelector"?) '
        "(also in 2 more objects)",
        'document 3: spec.nodeName: duplicate field "nodeName" (lines 4 and 5)',
    ]
    # Logged as met, once each.
    assert [r.getMessage() for r in caplog.records] == [
        'document 0: spec.nodeSelectr: unknown field "nodeSelectr" (did you mean "nodeSelector"?)',
        'document 3: spec.nodeName: duplicate field "nodeName" (lines 4 and 5)',
    ]


def test_ignore_drops_silently(caplog: pytest.LogCaptureFixture) -> None:
    fields = FieldValidation("ignore")
    pod = misspelt_pod("p")
    with caplog.at_level(logging.DEBUG):
        pruned = fields.checked(pod, refuse("p.yaml"))
        fields.repeated([DuplicateField(("kind",))], refuse("p.yaml"))
    assert "nodeSelectr" not in pruned["spec"] and "nodeSelectr" in pod["spec"]
    assert fields.warnings() == [] and caplog.records == []


def test_an_object_without_unknown_fields_is_returned_itself() -> None:
    pod = pod_dict("p")
    assert FieldValidation("warn").checked(pod, refuse("p.yaml")) is pod


def test_of_shares_a_field_validation_or_makes_one() -> None:
    shared = FieldValidation("warn")
    assert FieldValidation.of(shared) is shared
    assert FieldValidation.of("false").mode == "ignore"
