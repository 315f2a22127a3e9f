"""Label and node selector semantics, including absent labels and parse-error paths."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.errors import ObjectError
from kubesched.api.labels import (
    LabelRequirement,
    LabelSelector,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    selector_from_set,
    selector_matches,
)

LABELS = {"app": "web", "tier": "front", "zone": "a", "cores": "8", "gen": "v2"}


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    body: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        body["values"] = list(values)
    return body


# ---------------------------------------------------------------------------- LabelSelector


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({}, True),
        ({"matchLabels": {}, "matchExpressions": []}, True),
        ({"matchLabels": None, "matchExpressions": None}, True),
        ({"matchLabels": {"app": "web"}}, True),
        ({"matchLabels": {"app": "db"}}, False),
        ({"matchLabels": {"missing": "x"}}, False),
        ({"matchLabels": {"app": "web", "tier": "back"}}, False),
        ({"matchExpressions": [expr("app", "In", "web", "db")]}, True),
        ({"matchExpressions": [expr("app", "In", "db")]}, False),
        ({"matchExpressions": [expr("missing", "In", "x")]}, False),
        ({"matchExpressions": [expr("app", "NotIn", "db")]}, True),
        ({"matchExpressions": [expr("app", "NotIn", "web")]}, False),
        ({"matchExpressions": [expr("missing", "NotIn", "x")]}, True),
        ({"matchExpressions": [expr("app", "Exists")]}, True),
        ({"matchExpressions": [expr("missing", "Exists")]}, False),
        ({"matchExpressions": [expr("app", "DoesNotExist")]}, False),
        ({"matchExpressions": [expr("missing", "DoesNotExist")]}, True),
        (
            {"matchLabels": {"app": "web"}, "matchExpressions": [expr("tier", "In", "back")]},
            False,
        ),
        (
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [expr("tier", "In", "front"), expr("x", "DoesNotExist")],
            },
            True,
        ),
    ],
)
def test_label_selector_matches(selector: dict[str, Any], expected: bool) -> None:
    parsed = LabelSelector.from_dict(selector)
    assert parsed is not None
    assert parsed.matches(LABELS) is expected
    assert selector_matches(parsed, LABELS) is expected


def test_absent_selector_is_none_and_matches_nothing() -> None:
    assert LabelSelector.from_dict(None) is None
    assert selector_matches(None, LABELS) is False
    assert selector_matches(None, {}) is False


def test_empty_selector_matches_everything() -> None:
    empty = LabelSelector.from_dict({})
    assert empty is not None and empty.empty
    assert empty.matches({}) and empty.matches(LABELS)


def test_match_labels_become_in_requirements() -> None:
    parsed = LabelSelector.from_dict({"matchLabels": {"app": "web"}, "matchExpressions": [expr("zone", "Exists")]})
    assert parsed is not None
    assert parsed.requirements == (
        LabelRequirement("app", "In", frozenset({"web"})),
        LabelRequirement("zone", "Exists", frozenset()),
    )


@pytest.mark.parametrize(
    ("operator", "values", "value", "expected"),
    [
        ("In", {"a", "b"}, "a", True),
        ("In", {"a", "b"}, "c", False),
        ("In", {"a", "b"}, None, False),
        ("NotIn", {"a", "b"}, "a", False),
        ("NotIn", {"a", "b"}, "c", True),
        ("NotIn", {"a", "b"}, None, True),
        ("Exists", set(), "", True),
        ("Exists", set(), None, False),
        ("DoesNotExist", set(), "", False),
        ("DoesNotExist", set(), None, True),
    ],
)
def test_label_requirement_matches_value(operator: str, values: set[str], value: str | None, expected: bool) -> None:
    requirement = LabelRequirement("k", operator, frozenset(values))
    assert requirement.matches_value(value) is expected
    labels = {} if value is None else {"k": value}
    assert requirement.matches(labels) is expected


@pytest.mark.parametrize(
    ("selector", "path"),
    [
        ({"matchExpressions": [expr("app", "Equals", "x")]}, "matchExpressions[0].operator"),
        ({"matchExpressions": [expr("app", "Gt", "1")]}, "matchExpressions[0].operator"),
        ({"matchExpressions": [expr("a", "Exists"), expr("app", "In")]}, "matchExpressions[1].values"),
        ({"matchExpressions": [expr("app", "NotIn")]}, "matchExpressions[0].values"),
        ({"matchExpressions": [expr("app", "Exists", "x")]}, "matchExpressions[0].values"),
        ({"matchExpressions": [expr("app", "DoesNotExist", "x")]}, "matchExpressions[0].values"),
        ({"matchExpressions": [{"operator": "Exists"}]}, "matchExpressions[0].key"),
        ({"matchExpressions": [{"key": "app"}]}, "matchExpressions[0].operator"),
        ({"matchExpressions": [expr("bad key", "Exists")]}, "matchExpressions[0].key"),
        ({"matchExpressions": [expr("app", "In", "-bad-")]}, "matchExpressions[0].values"),
        (
            {"matchExpressions": [{"key": "app", "operator": "In", "values": [5]}]},
            "matchExpressions[0].values[0]",
        ),
        (
            {"matchExpressions": [{"key": "app", "operator": "In", "values": "web"}]},
            "matchExpressions[0].values",
        ),
        ({"matchExpressions": ["app"]}, "matchExpressions[0]"),
        ({"matchExpressions": {"key": "app"}}, "matchExpressions"),
        ({"matchLabels": {"app": 3}}, "matchLabels.app"),
        ({"matchLabels": {"app": "a b"}}, "matchLabels.app"),
        ({"matchLabels": ["app"]}, "matchLabels"),
    ],
)
def test_label_selector_errors(selector: dict[str, Any], path: str) -> None:
    with pytest.raises(ObjectError) as info:
        LabelSelector.from_dict(selector)
    assert info.value.path == path


def test_label_selector_rejects_non_mapping() -> None:
    with pytest.raises(ObjectError):
        LabelSelector.from_dict(["app"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("labels", "candidate", "expected"),
    [
        ({}, {}, True),
        ({}, LABELS, True),
        ({"app": "web"}, LABELS, True),
        ({"app": "web", "zone": "b"}, LABELS, False),
        ({"kubernetes.io/hostname": "n1"}, {"kubernetes.io/hostname": "n1"}, True),
        ({"kubernetes.io/hostname": "n1"}, {}, False),
    ],
)
def test_selector_from_set(labels: dict[str, str], candidate: dict[str, str], expected: bool) -> None:
    assert selector_from_set(labels).matches(candidate) is expected


def test_selector_from_set_rejects_non_strings() -> None:
    with pytest.raises(ObjectError) as info:
        selector_from_set({"app": 1})  # type: ignore[dict-item]
    assert info.value.path == "app"


label_values = st.one_of(st.none(), st.sampled_from(["a", "b", "c", ""]))


@given(
    operator=st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]),
    values=st.frozensets(st.sampled_from(["a", "b", "c"]), min_size=1),
    value=label_values,
)
def test_property_label_requirement_complements(operator: str, values: frozenset[str], value: str | None) -> None:
    """In/NotIn and Exists/DoesNotExist are exact complements, absent labels included."""
    opposite = {"In": "NotIn", "NotIn": "In", "Exists": "DoesNotExist", "DoesNotExist": "Exists"}[operator]
    needs_values = operator in ("In", "NotIn")
    mine = LabelRequirement("k", operator, values if needs_values else frozenset())
    theirs = LabelRequirement("k", opposite, values if needs_values else frozenset())
    assert mine.matches_value(value) is not theirs.matches_value(value)


# ---------------------------------------------------------------------------- node selectors


@pytest.mark.parametrize(
    ("operator", "values", "value", "expected"),
    [
        ("In", ("a", "b"), "a", True),
        ("In", ("a", "b"), None, False),
        ("NotIn", ("a",), "a", False),
        ("NotIn", ("a",), "b", True),
        ("NotIn", ("a",), None, True),
        ("Exists", (), "x", True),
        ("Exists", (), None, False),
        ("DoesNotExist", (), "x", False),
        ("DoesNotExist", (), None, True),
        ("Gt", ("5",), "6", True),
        ("Gt", ("5",), "5", False),
        ("Gt", ("5",), "-7", False),
        ("Gt", ("-5",), "-4", True),
        ("Gt", ("5",), "+6", True),
        ("Gt", ("5",), "06", True),
        ("Gt", ("5",), None, False),
        ("Gt", ("5",), "6.0", False),
        ("Gt", ("5",), "six", False),
        ("Gt", ("5",), "", False),
        ("Gt", ("5",), " 6", False),
        ("Gt", ("5",), "6_0", False),
        ("Gt", ("5",), str(2**63), False),  # out of int64 range does not parse
        ("Lt", ("5",), "4", True),
        ("Lt", ("5",), "5", False),
        ("Lt", ("5",), "-9223372036854775808", True),
        ("Lt", ("5",), None, False),
        ("Lt", ("5",), "4x", False),
    ],
)
def test_node_requirement_matches_value(
    operator: str, values: tuple[str, ...], value: str | None, expected: bool
) -> None:
    requirement = NodeSelectorRequirement("k", operator, frozenset(values))
    assert requirement.matches_value(value) is expected


T0E0 = "nodeSelectorTerms[0].matchExpressions[0]."


def ns(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelectorTerms": list(terms)}


def node_term(*expressions: dict[str, Any], fields: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if expressions:
        body["matchExpressions"] = list(expressions)
    if fields:
        body["matchFields"] = list(fields)
    return body


@pytest.mark.parametrize(
    ("term", "name", "expected"),
    [
        ({}, "n1", False),
        ({"matchExpressions": [], "matchFields": []}, "n1", False),
        ({"matchExpressions": None}, "n1", False),
        (node_term(expr("app", "In", "web")), "n1", True),
        (node_term(expr("app", "In", "web"), expr("cores", "Gt", "4")), "n1", True),
        (node_term(expr("app", "In", "web"), expr("cores", "Gt", "8")), "n1", False),
        (node_term(expr("gen", "Lt", "3")), "n1", False),  # "v2" is not an integer
        (node_term(fields=(expr("metadata.name", "In", "n1"),)), "n1", True),
        (node_term(fields=(expr("metadata.name", "In", "n1"),)), "n2", False),
        (node_term(fields=(expr("metadata.name", "NotIn", "n1"),)), "n2", True),
        (node_term(fields=(expr("metadata.name", "NotIn", "n1"),)), "n1", False),
        (node_term(expr("app", "In", "web"), fields=(expr("metadata.name", "In", "n1"),)), "n1", True),
        (node_term(expr("app", "In", "db"), fields=(expr("metadata.name", "In", "n1"),)), "n1", False),
        (node_term(expr("app", "In", "web"), fields=(expr("metadata.name", "In", "n2"),)), "n1", False),
        (
            node_term(fields=(expr("metadata.name", "NotIn", "n1"), expr("metadata.name", "NotIn", "n2"))),
            "n3",
            True,
        ),
        # like kube-scheduler, field requirements are ignored for a node without a name
        (node_term(fields=(expr("metadata.name", "In", "n1"),)), "", True),
    ],
)
def test_node_selector_term_matches(term: dict[str, Any], name: str, expected: bool) -> None:
    parsed = NodeSelectorTerm.from_dict(term)
    assert parsed.matches(LABELS, name) is expected


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        ([], False),
        ([{}], False),
        ([{}, node_term(expr("app", "Exists"))], True),
        ([node_term(expr("app", "In", "db")), node_term(expr("zone", "In", "a"))], True),
        ([node_term(expr("app", "In", "db")), node_term(expr("zone", "In", "b"))], False),
        ([node_term(expr("app", "In", "db")), node_term(fields=(expr("metadata.name", "In", "n1"),))], True),
    ],
)
def test_node_selector_ors_terms(terms: list[dict[str, Any]], expected: bool) -> None:
    assert NodeSelector.from_dict({"nodeSelectorTerms": terms}).matches(LABELS, "n1") is expected


def test_node_selector_without_terms_matches_nothing() -> None:
    assert NodeSelector.from_dict({}).terms == ()
    assert not NodeSelector.from_dict({"nodeSelectorTerms": None}).matches(LABELS, "n1")


@pytest.mark.parametrize(
    ("selector", "path"),
    [
        (ns({}, node_term(expr("app", "In"))), "nodeSelectorTerms[1].matchExpressions[0].values"),
        (ns(node_term(expr("app", "Near", "x"))), T0E0 + "operator"),
        (ns(node_term(expr("a", "Exists", "x"))), T0E0 + "values"),
        (ns(node_term(expr("a", "Gt"))), T0E0 + "values"),
        (ns(node_term(expr("a", "Gt", "1", "2"))), T0E0 + "values"),
        (ns(node_term(expr("a", "Lt", "1.5"))), T0E0 + "values[0]"),
        (ns(node_term(expr("a", "Lt", str(2**63)))), T0E0 + "values[0]"),
        # a negative bound is an integer but not a valid label value, which the apiserver refuses
        (ns(node_term(expr("a", "Gt", "-1"))), T0E0 + "values"),
        (ns(node_term(expr("a/b/c", "Exists"))), T0E0 + "key"),
        (
            {"nodeSelectorTerms": [node_term(fields=(expr("metadata.uid", "In", "x"),))]},
            "nodeSelectorTerms[0].matchFields[0].key",
        ),
        (
            {"nodeSelectorTerms": [node_term(fields=(expr("metadata.name", "Exists"),))]},
            "nodeSelectorTerms[0].matchFields[0].operator",
        ),
        (
            {"nodeSelectorTerms": [node_term(fields=(expr("metadata.name", "In", "a", "b"),))]},
            "nodeSelectorTerms[0].matchFields[0].values",
        ),
        (
            {"nodeSelectorTerms": [node_term(fields=(expr("metadata.name", "In"),))]},
            "nodeSelectorTerms[0].matchFields[0].values",
        ),
        ({"nodeSelectorTerms": ["x"]}, "nodeSelectorTerms[0]"),
        ({"nodeSelectorTerms": {"a": 1}}, "nodeSelectorTerms"),
        ({"nodeSelectorTerms": [{"matchExpressions": [None]}]}, "nodeSelectorTerms[0].matchExpressions[0]"),
    ],
)
def test_node_selector_errors(selector: dict[str, Any], path: str) -> None:
    with pytest.raises(ObjectError) as info:
        NodeSelector.from_dict(selector)
    assert info.value.path == path


def test_node_selector_rejects_non_mapping() -> None:
    with pytest.raises(ObjectError):
        NodeSelector.from_dict("zone=a")


def test_field_values_are_not_label_checked() -> None:
    """Node names may hold characters that label values may not (e.g. longer than 63)."""
    name = "node-" + "x" * 80
    term = NodeSelectorTerm.from_dict(node_term(fields=(expr("metadata.name", "In", name),)))
    assert term.matches({}, name)


@pytest.mark.parametrize(
    ("raw", "weight", "expected"),
    [
        ({"weight": 10, "preference": node_term(expr("zone", "In", "a"))}, 10, True),
        ({"weight": 100, "preference": node_term(expr("zone", "In", "b"))}, 100, False),
        ({"weight": 1, "preference": {}}, 1, False),
        ({"weight": 1}, 1, False),
        ({"weight": 1, "preference": None}, 1, False),
    ],
)
def test_preferred_scheduling_term(raw: dict[str, Any], weight: int, expected: bool) -> None:
    term = PreferredSchedulingTerm.from_dict(raw)
    assert term.weight == weight
    assert term.matches(LABELS, "n1") is expected
    assert term.preference.matches(LABELS, "n1") is expected


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        ({"weight": 0, "preference": node_term(expr("zone", "Exists"))}, "weight"),
        ({"weight": 101, "preference": node_term(expr("zone", "Exists"))}, "weight"),
        ({"weight": "5", "preference": node_term(expr("zone", "Exists"))}, "weight"),
        ({"weight": True, "preference": node_term(expr("zone", "Exists"))}, "weight"),
        ({"preference": node_term(expr("zone", "Exists"))}, "weight"),
        ({"weight": 5, "preference": node_term(expr("zone", "In"))}, "preference.matchExpressions[0].values"),
        ({"weight": 5, "preference": []}, "preference"),
    ],
)
def test_preferred_scheduling_term_errors(raw: dict[str, Any], path: str) -> None:
    with pytest.raises(ObjectError) as info:
        PreferredSchedulingTerm.from_dict(raw)
    assert info.value.path == path
