"""Loading manifests: formats, folder order, and errors that say file, document and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.api.errors import ObjectError
from kubesched.scenario.field_validation import FieldValidation
from kubesched.scenario.manifests import Manifest, ManifestError, load_manifests, objects_to_manifests
from tests.corpus import CORPUS

REPO = Path(__file__).resolve().parents[2]

NODE = "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n"
POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers: []\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def names(manifests: list[Manifest]) -> list[str]:
    return [m.obj["metadata"]["name"] for m in manifests]


def test_multi_document_yaml(tmp_path: Path) -> None:
    path = write(tmp_path, "s.yaml", "---\n" + NODE.format(name="a") + "---\n\n---\n" + POD.format(name="p") + "...\n")
    loaded = load_manifests([path])
    assert names(loaded) == ["a", "p"]
    assert [(m.source, m.doc_index) for m in loaded] == [(str(path), 1), (str(path), 3)]
    assert loaded[1].display_name == "default/p"


def test_list_kind(tmp_path: Path) -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}},
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b"}},
        ],
    }
    path = write(tmp_path, "list.yaml", NODE.format(name="first") + "---\n" + json.dumps(doc))
    loaded = load_manifests([path])
    assert names(loaded) == ["first", "a", "b"]
    assert [m.doc_index for m in loaded] == [1, 2, 2]


def test_json(tmp_path: Path) -> None:
    path = write(tmp_path, "n.json", json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "j"}}))
    assert names(load_manifests([path])) == ["j"]


def test_timestamps_stay_strings(tmp_path: Path) -> None:
    text = NODE.format(name="a") + "  creationTimestamp: 2024-01-01T00:00:05Z\n"
    (m,) = load_manifests([write(tmp_path, "a.yaml", text)])
    assert m.obj["metadata"]["creationTimestamp"] == "2024-01-01T00:00:05Z"


def test_folder_order_and_skipped_files(tmp_path: Path) -> None:
    write(tmp_path, "b.yaml", NODE.format(name="b"))
    write(tmp_path, "a.yml", NODE.format(name="a"))
    write(tmp_path, "sub/c.json", json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "c"}}))
    write(tmp_path, "z.yaml", NODE.format(name="z"))
    write(
        tmp_path,
        "config.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
    )
    write(tmp_path, "golden.json", json.dumps({"attempts": []}))
    write(tmp_path, "README.md", "# not yaml")
    write(tmp_path, "notes.yaml", "just: some\nsettings: here\n")
    write(tmp_path, ".hidden/x.yaml", "bad: [")
    assert names(load_manifests([tmp_path])) == ["a", "b", "c", "z"]


def test_paths_in_given_order(tmp_path: Path) -> None:
    b = write(tmp_path, "b.yaml", NODE.format(name="b"))
    a = write(tmp_path, "a.yaml", NODE.format(name="a"))
    assert names(load_manifests([b, str(a)])) == ["b", "a"]


def test_conformance_scenario_folder_loads() -> None:
    folder = CORPUS / "fit-cpu"
    if not folder.is_dir():
        pytest.skip("conformance corpus not present")
    loaded = load_manifests([folder])
    assert loaded and all(m.source.endswith("scenario.yaml") for m in loaded)


def error_for(tmp_path: Path, text: str, name: str = "scenario.yaml") -> str:
    path = write(tmp_path, name, text)
    with pytest.raises(ManifestError) as info:
        load_manifests([path])
    message = str(info.value)
    assert "\n" not in message
    return message.removeprefix(str(path))


ERRORS: list[tuple[str, str, str]] = [
    (
        "bad quantity",
        NODE.format(name="n") + "---\n" + POD.format(name="x") + "---\n"
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\nspec:\n  containers:\n"
        "  - name: c\n    resources:\n      requests:\n        cpu: abc\n",
        ': document 3 (Pod default/web-1): spec.containers[0].resources.requests.cpu: invalid quantity "abc"',
    ),
    (
        "unknown kind",
        "apiVersion: v1\nkind: Gadget\nmetadata:\n  name: g\n",
        ": document 1 (Gadget g): kind: unknown kind 'Gadget'",
    ),
    (
        "missing name",
        NODE.format(name="n") + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  namespace: x\n",
        ": document 2 (Pod): metadata.name: Required value",
    ),
    (
        "missing metadata",
        "apiVersion: v1\nkind: Node\n",
        ": document 1 (Node): metadata: Required value",
    ),
    (
        "missing apiVersion",
        "kind: Node\nmetadata:\n  name: n\n",
        ": document 1 (Node n): apiVersion: Required value",
    ),
    (
        "wrong apiVersion",
        "apiVersion: apps/v1\nkind: Pod\nmetadata:\n  name: p\n",
        ": document 1 (Pod default/p): apiVersion: unsupported value 'apps/v1'",
    ),
    (
        "not a manifest in a named file",
        NODE.format(name="n") + "---\nfoo: bar\n",
        ": document 2: kind: Required value",
    ),
    (
        "non-string label",
        NODE.format(name="n") + "  labels:\n    zone: 1\n",
        ": document 1 (Node n): metadata.labels.zone: expected a string",
    ),
    (
        "bad list item",
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {}\n",
        ": document 1 (Node): items[0].metadata.name: Required value",
    ),
    (
        "malformed yaml",
        NODE.format(name="n") + "---\napiVersion: v1\nkind: Pod\nmetadata: [oops\n",
        ": document 2: invalid YAML: ",
    ),
]


@pytest.mark.parametrize(("name", "text", "want"), ERRORS, ids=[r[0] for r in ERRORS])
def test_errors_name_file_document_and_field(tmp_path: Path, name: str, text: str, want: str) -> None:
    assert error_for(tmp_path, text).startswith(want)


def test_yaml_error_names_the_line(tmp_path: Path) -> None:
    message = error_for(tmp_path, NODE.format(name="n") + "---\nkind: Pod\nmetadata: [oops\n")
    assert "(line 8," in message


def test_json_error(tmp_path: Path) -> None:
    message = error_for(tmp_path, '{"apiVersion": "v1",\n "kind": }', name="bad.json")
    assert message.startswith(": document 1: invalid JSON: ") and "line 2" in message


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no such file"):
        load_manifests([tmp_path / "nope.yaml"])
    with pytest.raises(ManifestError, match="cannot read: File name too long"):
        load_manifests(["x" * 300])


def test_manifest_error_for_later_checks() -> None:
    manifest = Manifest("s.yaml", 4, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "t"}})
    err = ManifestError.from_object_error(manifest, ObjectError("spec.affinity", "bad operator"))
    assert str(err) == "s.yaml: document 4 (Pod t/p): spec.affinity: bad operator"
    direct = ManifestError("s.yaml", 2, None, None, "", "oops")
    assert str(direct) == "s.yaml: document 2: oops"
    assert isinstance(direct, ValueError)


def test_custom_validation_hook(tmp_path: Path) -> None:
    path = write(tmp_path, "s.yaml", NODE.format(name="n"))

    def refuse(obj: dict) -> None:
        raise ObjectError("spec.taints[0].effect", "unsupported value")

    with pytest.raises(ManifestError, match=r"document 1 \(Node n\): spec.taints\[0\].effect: unsupported value"):
        load_manifests([path], validate=refuse)


# ---------------------------------------------------------------------------------------------------------
# Folders, empty input and hostile files


def test_upper_case_suffixes_are_read(tmp_path: Path) -> None:
    write(tmp_path, "a.YAML", NODE.format(name="a"))
    write(tmp_path, "b.Yml", NODE.format(name="b"))
    write(tmp_path, "c.JSON", json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "c"}}))
    write(tmp_path, "CONFIG.YAML", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    assert names(load_manifests([tmp_path])) == ["a", "b", "c"]


def test_symlinked_sub_folders_are_followed_once(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere, "n.yaml", NODE.format(name="linked"))
    scenario = tmp_path / "scenario"
    write(scenario, "a.yaml", NODE.format(name="a"))
    (scenario / "more").symlink_to(elsewhere, target_is_directory=True)
    (scenario / "loop").symlink_to(scenario, target_is_directory=True)  # must not recurse forever
    assert names(load_manifests([scenario])) == ["a", "linked"]


def test_an_empty_path_is_an_error_not_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "n.yaml", NODE.format(name="n"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ManifestError, match=r'^"": an empty path names no file or folder$'):
        load_manifests([""])


@pytest.mark.parametrize(
    ("files", "given", "want"),
    [
        pytest.param(
            {"empty.yaml": ""}, "empty.yaml", "empty.yaml: no Kubernetes objects in this file", id="empty-file"
        ),
        pytest.param(
            {"e.yaml": "---\n---\n"}, "e.yaml", "e.yaml: no Kubernetes objects in this file", id="only-separators"
        ),
        pytest.param(
            {"notes.yaml": "a: b\n", "README.md": "x"},
            ".",
            "no Kubernetes objects in this folder (in files ending .yaml, .yml or .json)",
            id="folder",
        ),
    ],
)
def test_a_path_that_yields_no_objects_is_an_error(
    tmp_path: Path, files: dict[str, str], given: str, want: str
) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)
    with pytest.raises(ManifestError) as info:
        load_manifests([tmp_path / given])
    assert str(info.value).endswith(want)


@pytest.mark.parametrize(
    ("name", "text", "want"),
    [
        pytest.param("deep.yaml", "a: " + "[" * 100_000 + "]" * 100_000, ": document 1: too deeply nested", id="yaml"),
        pytest.param("deep.json", "[" * 100_000 + "]" * 100_000, ": document 1: too deeply nested", id="json"),
        pytest.param(
            "deep2.json", '{"a": ' * 150 + "1" + "}" * 150, ": document 1: too deeply nested", id="json-shallow"
        ),
        pytest.param(
            "laughs.yaml",
            NODE.format(name="n")
            + "---\n"
            + "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{c}: &{c} [" + ", ".join([f"*{p}"] * 10) + "]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
            ),
            ": document 2: too many aliases",
            id="billion-laughs",
        ),
        pytest.param(
            "n.yaml",
            NODE.format(name="n") + "  uid: " + "9" * 5000 + "\n",
            ": document 1: invalid YAML: Exceeds the limit (4300 digits) for integer string conversion",
            id="yaml-5000-digit-number",
        ),
        pytest.param(
            "n.json",
            '{"a": ' + "9" * 5000 + "}",
            ": document 1: invalid JSON: Exceeds the limit",
            id="json-5000-digit-number",
        ),
    ],
)
def test_hostile_files_are_refused(tmp_path: Path, name: str, text: str, want: str) -> None:
    assert error_for(tmp_path, text, name=name).startswith(want)


def test_objects_given_in_code_are_checked_and_lists_expanded() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}
    listed = {"apiVersion": "v1", "kind": "NodeList", "items": [{**node, "metadata": {"name": "b"}}]}
    loaded = objects_to_manifests([node, listed])
    assert [(m.source, m.doc_index, m.obj["metadata"]["name"]) for m in loaded] == [
        ("<objects>", 1, "a"),
        ("<objects>", 2, "b"),
    ]
    bad = {**node, "spec": {"unschedulable": "yes"}}
    with pytest.raises(
        ManifestError,
        match=r"^<objects>: document 2 \(Node a\): spec.unschedulable: expected a "
        "boolean",
    ):
        objects_to_manifests([node, bad])


# ---------------------------------------------------------------------------------------------------------
# Unknown and repeated fields: refused as kubectl's strict validation refuses them


USER_POD = (
    NODE.format(name="n") + "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\nspec:\n  containers:\n  - name: c\n    image: x\n"
    '    resources:\n      request:\n        cpu: "64"\n'
)

FIELD_ERRORS: list[tuple[str, str, str, str]] = [
    (
        "misspelt requests",
        "s.yaml",
        USER_POD,
        ': document 2 (Pod default/big): spec.containers[0].resources.request: unknown field "request" '
        '(did you mean "requests"?)',
    ),
    (
        "misspelt nodeSelector",
        "s.yaml",
        POD.format(name="p") + "  nodeSelectr:\n    disk: ssd\n",
        ': document 1 (Pod default/p): spec.nodeSelectr: unknown field "nodeSelectr" (did you mean "nodeSelector"?)',
    ),
    (
        "several unknown fields",
        "s.yaml",
        USER_POD + "  nodeSelectr: {}\n  tolerashuns: []\n",
        ': document 2 (Pod default/big): spec.containers[0].resources.request: unknown field "request" '
        '(did you mean "requests"?); more unknown fields: spec.nodeSelectr, spec.tolerashuns',
    ),
    (
        "deployment template",
        "d.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: w}}\n"
        "  template:\n    metadata: {labels: {app: w}}\n    spec:\n      containers: [{name: c, image: x}]\n"
        "      tolerations: [{key: k, operater: Exists}]\n",
        ': document 1 (Deployment default/web): spec.template.spec.tolerations[0].operater: unknown field "operater" '
        '(did you mean "operator"?)',
    ),
    (
        "pod group",
        "g.yaml",
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMembers: 3}\n",
        ': document 1 (PodGroup default/g): spec.minMembers: unknown field "minMembers" (did you mean "minMember"?)',
    ),
    (
        "list item",
        "l.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n  spc: {}\n",
        ': document 1 (Node a): spc: unknown field "spc" (did you mean "spec"?)',
    ),
    (
        "list wrapper",
        "l.yaml",
        "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: ''}\nitem: []\nitems: []\n",
        ': document 1 (List): item: unknown field "item" (did you mean "items"?)',
    ),
    (
        "repeated yaml key",
        "s.yaml",
        POD.format(name="p") + "  nodeName: a\n  nodeName: b\n",
        ': document 1 (Pod default/p): spec.nodeName: duplicate field "nodeName" (lines 7 and 8)',
    ),
    (
        "repeated key in a list item",
        "l.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  kind: Node\n  metadata: {name: a}\n",
        ': document 1 (List): items[0].kind: duplicate field "kind" (lines 5 and 6)',
    ),
    (
        "repeated json key",
        "n.json",
        '{"apiVersion": "v1", "kind": "Node",\n "metadata": {"name": "a"},\n "metadata": {"name": "b"}}',
        ': document 1 (Node b): metadata: duplicate field "metadata" (lines 2 and 3)',
    ),
]


@pytest.mark.parametrize(("name", "file", "text", "want"), FIELD_ERRORS, ids=[r[0] for r in FIELD_ERRORS])
def test_unknown_and_repeated_fields_are_errors_naming_file_document_and_field(
    tmp_path: Path, name: str, file: str, text: str, want: str
) -> None:
    assert error_for(tmp_path, text, name=file) == want


def test_warn_and_ignore_drop_unknown_fields_and_keep_the_last_of_repeated_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "s.yaml", USER_POD + "  nodeName: a\n  nodeName: n\n")
    for mode in ("warn", "ignore"):
        fields = FieldValidation(mode)
        (_, pod) = load_manifests([path], fields=fields)
        container = pod.obj["spec"]["containers"][0]
        assert container["resources"] == {} and pod.obj["spec"]["nodeName"] == "n"
        assert fields.warnings() == (
            [
                f'{path}: document 2 (Pod default/big): spec.nodeName: duplicate field "nodeName" (lines 17 and 18)',
                f'{path}: document 2 (Pod default/big): spec.containers[0].resources.request: unknown field "request" '
                '(did you mean "requests"?)',
            ]
            if mode == "warn"
            else []
        )


def test_objects_given_in_code_are_checked_for_unknown_fields_and_left_unchanged() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}, "spec": {"unschedulabel": True}}
    with pytest.raises(
        ManifestError,
        match=r"^<objects>: document 1 \(Node a\): spec.unschedulabel: unknown field "
        r'"unschedulabel" \(did you mean "unschedulable"\?\)$',
    ):
        objects_to_manifests([node])
    (loaded,) = objects_to_manifests([node], fields=FieldValidation("ignore"))
    assert loaded.obj["spec"] == {} and node["spec"] == {"unschedulabel": True}


def test_every_example_and_conformance_scenario_loads_under_strict_validation() -> None:
    scenarios = [REPO / "examples" / name for name in ("cluster", "capacity", "coscheduling")]
    scenarios += [REPO / "examples" / "plugins" / "scenario.yaml"]
    scenarios += sorted(CORPUS.glob("*/scenario.yaml"))
    for scenario in scenarios:
        assert load_manifests([scenario], fields=FieldValidation("strict")), scenario
