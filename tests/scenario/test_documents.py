"""Reading documents: repeated keys found in YAML, in JSON streams and in JSON files, named with both
lines; the data keeps the last value; merge keys and keys that only look alike are no repeats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.scenario import documents
from kubesched.scenario.documents import DuplicateField, _json_documents, read_documents

POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    resources:
      requests:
        cpu: "1"
        cpu: "2"
  nodeSelector: {a: b}
  nodeSelector: {a: c}
"""


def read(tmp_path: Path, name: str, text: str) -> list[tuple[int, Any, list[tuple[str, str]]]]:
    path = tmp_path / name
    path.write_text(text)
    return [(i, doc, [(d.path, d.reason) for d in repeated]) for i, doc, repeated in read_documents(path)]


def test_yaml_repeats_are_located_with_both_lines_in_document_order(tmp_path: Path) -> None:
    ((_, doc, repeats),) = read(tmp_path, "p.yaml", POD_YAML)
    assert repeats == [
        ("spec.containers[0].resources.requests.cpu", 'duplicate field "cpu" (lines 10 and 11)'),
        ("spec.nodeSelector", 'duplicate field "nodeSelector" (lines 12 and 13)'),
    ]
    assert doc["spec"]["nodeSelector"] == {"a": "c"}  # the last value, as a lenient decoder keeps it


def test_lines_count_from_the_start_of_the_file(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\n" + POD_YAML
    docs = read(tmp_path, "s.yaml", text)
    assert docs[0][2] == []
    assert docs[1][2][0] == ("spec.containers[0].resources.requests.cpu", 'duplicate field "cpu" (lines 14 and 15)')


def test_merge_keys_and_overrides_are_no_repeats(tmp_path: Path) -> None:
    text = "base: &b {x: 1, y: 2}\nmerged:\n  <<: *b\n  x: 3\nkind: Thing\n"
    ((_, doc, repeats),) = read(tmp_path, "m.yaml", text)
    assert repeats == []
    assert doc["merged"] == {"x": 3, "y": 2}


def test_a_merge_source_built_after_the_mapping_that_merges_it_shows_no_repeat(tmp_path: Path) -> None:
    # ``user`` is built before ``c`` (shallower), so ``c`` is flattened for ``user`` first: its merged
    # keys (x twice, from two sources) are no repeats when ``c`` is built itself.
    text = "defs:\n  inner:\n    c: &c {<<: [{x: 1}, {x: 2}]}\nuser:\n  <<: *c\n  y: 3\n"
    ((_, doc, repeats),) = read(tmp_path, "m.yaml", text)
    assert repeats == []
    assert doc["user"] == {"x": 1, "y": 3} and doc["defs"]["inner"]["c"] == {"x": 1}


def test_a_repeat_inside_an_anchor_is_reported_once(tmp_path: Path) -> None:
    text = "a: &x {k: 1, k: 2}\nb: *x\n"
    ((_, _, repeats),) = read(tmp_path, "a.yaml", text)
    assert repeats == [("a.k", 'duplicate field "k" (line 1)')]


def test_json_stream_repeats_are_found_and_located(tmp_path: Path) -> None:
    node = json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}, separators=(",", ":"))
    text = (
        node
        + "\n---\n"
        + '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","name":"q"},\n"spec":{}}\n---\n\n'
        + '{"apiVersion":"v1","kind":"Node","kind":"Node","metadata":{"name":"b"}}\n'
    )
    docs = read(tmp_path, "s.yaml", text)
    assert [(i, repeats) for i, _, repeats in docs] == [
        (1, []),
        (2, [("metadata.name", 'duplicate field "name" (line 3)')]),
        (3, [("kind", 'duplicate field "kind" (line 7)')]),
    ]
    assert docs[1][1]["metadata"] == {"name": "q"}


def test_the_json_fast_path_parses_compact_json_once(monkeypatch: pytest.MonkeyPatch) -> None:
    again: list[int] = []
    checked = documents._checked_json_documents

    def counted(parts: Any) -> Any:
        again.append(1)
        return checked(parts)

    monkeypatch.setattr(documents, "_checked_json_documents", counted)
    # Compact JSON (what ``kubesched generate`` writes): the bound on the keys is exact, colons in
    # values notwithstanding, so nothing is parsed again.
    text = "\n---\n".join(
        json.dumps({"kind": "Node", "metadata": {"name": f"n{i}", "labels": {"a": "x:y"}}}, separators=(",", ":"))
        for i in range(3)
    )
    docs = _json_documents(text)
    assert docs is not None and [repeats for _, _, repeats in docs] == [(), (), ()]
    assert again == []
    # An escaped quote before a colon, or pretty-printing (a quote before a newline), overcounts:
    # parsed again, and still no repeat.
    quoted = json.dumps({"kind": "Node", "metadata": {"name": "n", "labels": {"a": '"x":'}}})
    pretty = json.dumps({"kind": "Node", "metadata": {"name": "n"}}, indent=2)
    for text in (quoted, pretty + "\n---\n" + pretty):
        docs = _json_documents(text)
        assert docs is not None and {repeats for _, _, repeats in docs} == {()}
    assert again == [1, 1]


@pytest.mark.parametrize("spacing", ["", " ", "\n  "])
def test_json_repeats_are_found_whatever_the_spacing(spacing: str) -> None:
    text = '{"kind":"Node","metadata":{"name":"n"' + spacing + ',"name"' + spacing + ":" + spacing + '"m"}}'
    docs = _json_documents(text)
    assert docs is not None
    ((_, doc, (repeat,)),) = docs
    assert repeat.path == "metadata.name" and doc["metadata"]["name"] == "m"


def test_json_file_repeats(tmp_path: Path) -> None:
    text = '{"apiVersion": "v1",\n "kind": "Node",\n "kind": "Node",\n "metadata": {"name": "a"}}'
    assert read(tmp_path, "n.json", text) == [
        (
            1,
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}},
            [("kind", 'duplicate field "kind" (lines 2 and 3)')],
        )
    ]


def test_keys_that_only_look_alike_are_no_repeats(tmp_path: Path) -> None:
    ((_, doc, repeats),) = read(tmp_path, "k.yaml", "a: 1\nA: 2\n'a ': 3\n")
    assert repeats == []
    assert doc == {"a": 1, "A": 2, "a ": 3}


def test_duplicate_field_reason_without_lines() -> None:
    assert DuplicateField(("spec", "x")).reason == 'duplicate field "x"'
    assert DuplicateField(("items", 2, "kind"), 3, 9).path == "items[2].kind"


@pytest.mark.controlplane
def test_the_api_servers_strict_decoding_refuses_a_repeated_key_too(control_plane: object, tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(
        '{"apiVersion": "v1", "kind": "Pod", "kind": "Pod", "metadata": {"name": "p"},\n'
        ' "spec": {"containers": [{"name": "c", "image": "x", "image": "y"}]}}'
    )
    ((_, _, repeats),) = read(tmp_path, "p.json", path.read_text())
    assert [p for p, _ in repeats] == ["kind", "spec.containers[0].image"]
    # The body as written (kubectl's own file reading keeps the last value before it sends anything).
    proc = control_plane.kubectl(  # type: ignore[attr-defined]
        "create",
        "--raw",
        "/api/v1/namespaces/default/pods?dryRun=All&fieldValidation=Strict",
        "-f",
        str(path),
        check=False,
    )
    assert 'strict decoding error: duplicate field "kind", duplicate field "spec.containers[0].image"' in proc.stderr
