"""Hostile YAML is refused from its event stream, before anything is built from it."""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from kubesched.util.yaml_limits import (
    MAX_ALIAS_NODES,
    MAX_DEPTH,
    YamlStructureError,
    check_yaml_structure,
    nesting_exceeds,
)


def billion_laughs(levels: int = 9) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def refusal(text: str) -> YamlStructureError:
    with pytest.raises(YamlStructureError) as info:
        check_yaml_structure(text)
    return info.value


def test_billion_laughs_is_refused_quickly_and_in_little_memory() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    err = refusal("apiVersion: v1\nkind: ConfigMap\n" + billion_laughs())
    assert err.reason.startswith("too many aliases")
    assert err.doc_index == 1
    assert time.perf_counter() - started < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB


def test_a_hundred_thousand_nested_lists_are_refused_not_a_segfault() -> None:
    err = refusal("---\na: 1\n---\nb: " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert err.reason == f"too deeply nested (more than {MAX_DEPTH} levels)"
    assert err.doc_index == 2


def test_deep_block_nesting_is_refused() -> None:
    assert refusal("- " * 1000 + "x\n").reason.startswith("too deeply nested")


def test_nesting_through_aliases_counts() -> None:
    half = MAX_DEPTH // 2 + 10
    text = "a: &deep " + "[" * half + "]" * half + "\nb: " + "[" * half + "*deep" + "]" * half + "\n"
    assert "through aliases" in refusal(text).reason


def test_recursive_alias_is_refused() -> None:
    assert refusal("a: &self [1, *self]\n").reason.startswith("recursive alias *self")


def test_ordinary_anchors_and_nesting_pass() -> None:
    labels = "labels: &labels {app: web, tier: front}\n"
    check_yaml_structure(labels + "".join(f"s{i}: *labels\n" for i in range(100)))
    check_yaml_structure("a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n")
    # Aliases adding up to the limit pass; each document has its own budget.
    anchor = "x: &big [" + ", ".join(["1"] * 999) + "]\n"
    uses = MAX_ALIAS_NODES // 1000
    document = anchor + "".join(f"y{i}: *big\n" for i in range(uses))
    check_yaml_structure(document + "---\n" + document)


def test_malformed_yaml_is_left_to_the_loader() -> None:
    check_yaml_structure("a: [oops\n")


def test_nesting_exceeds_walks_without_recursion() -> None:
    deep: list = []
    node = deep
    for _ in range(100_000):
        node.append([])
        node = node[0]
    assert nesting_exceeds(deep, MAX_DEPTH)
    assert not nesting_exceeds({"a": [{"b": 1}]}, 3)
    assert nesting_exceeds({"a": [{"b": {}}]}, 3)
    looped: dict = {}
    looped["self"] = looped
    assert nesting_exceeds(looped, MAX_DEPTH)


def test_libyaml_stopping_first_at_its_own_nesting_limit_is_still_too_deeply_nested(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """libyaml 0.2.6 (PyYAML 6.0.4) refuses deep nesting in its scanner, which reads ahead of the events:
    the refusal must be ours, naming the document, whichever libyaml is installed."""
    real_parse = yaml.parse

    def parse_then_stop(text: str, Loader: Any) -> Iterator[object]:
        events = real_parse(text, Loader=Loader)
        for _ in range(8):  # the first document and the start of the second
            yield next(events)
        raise yaml.scanner.ScannerError("while increasing flow level", None, "exceeded maximum nesting depth", None)

    monkeypatch.setattr(yaml, "parse", parse_then_stop)
    err = refusal("---\na: 1\n---\nb: [[[[x]]]]\n")
    assert err.reason == f"too deeply nested (more than {MAX_DEPTH} levels)"
    assert err.doc_index == 2


def test_other_scanner_errors_are_left_to_the_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    def stop(text: str, Loader: object) -> Iterator[object]:
        raise yaml.scanner.ScannerError("while scanning", None, "found character '\\t'", None)
        yield  # a generator, as yaml.parse is

    monkeypatch.setattr(yaml, "parse", stop)
    check_yaml_structure("a: 1\n")
