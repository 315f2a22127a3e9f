"""Reading ordinary Kubernetes manifests (YAML or JSON files, or folders of them) for the simulator.

A bad manifest must be reported so a person can fix it at once: every error names the file, the
document within it and the field (``scenario.yaml: document 3 (Pod default/web-1): spec...: reason``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.errors import ObjectError
from kubesched.api.quantity import parse_quantity
from kubesched.cluster.kinds import KNOWN_KINDS

MANIFEST_SUFFIXES = frozenset({".yaml", ".yml", ".json"})
# Files of a scenario folder that are not manifests (see the conformance corpus layout).
SCENARIO_SIDE_FILES = frozenset({"config.yaml", "config.yml", "golden.json"})


class ManifestError(ValueError):
    """A manifest that cannot be loaded, located as file: document (kind name): field: reason."""

    def __init__(
        self, source: str, doc_index: int, kind: str | None, name: str | None, path: str, reason: str
    ) -> None:
        self.source = source
        self.doc_index = doc_index
        self.kind = kind
        self.name = name
        self.path = path
        self.reason = reason
        where = f"{source}: document {doc_index}"
        what = " ".join(part for part in (kind, name) if part)
        if what:
            where += f" ({what})"
        super().__init__(f"{where}: {path}: {reason}" if path else f"{where}: {reason}")

    @classmethod
    def at(cls, manifest: Manifest, path: str, reason: str) -> ManifestError:
        """An error about a field of an already loaded manifest (for checks done later)."""
        return cls(manifest.source, manifest.doc_index, manifest.kind, manifest.display_name, path, reason)

    @classmethod
    def from_object_error(cls, manifest: Manifest, error: ObjectError) -> ManifestError:
        """Locate an error raised while parsing the manifest's object."""
        return cls.at(manifest, error.path, error.reason)


@dataclass(frozen=True)
class Manifest:
    """One object read from a file; ``doc_index`` is 1-based within ``source`` (shared by List items)."""

    source: str
    doc_index: int
    obj: dict

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def display_name(self) -> str:
        """``namespace/name`` for namespaced kinds (``default`` when unset), else ``name``."""
        return _display_name(self.obj)


def _display_name(obj: dict) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return ""
    name = meta.get("name") or meta.get("generateName") or ""
    if not isinstance(name, str):
        name = str(name)
    info = KNOWN_KINDS.get(str(obj.get("kind")))
    if info is not None and info.namespaced and name:
        return f"{meta.get('namespace') or 'default'}/{name}"
    return name


# ---------------------------------------------------------------------------------------------------------
# YAML reading


class _ManifestLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML without the timestamp type: the API keeps times as RFC3339 strings, so must we."""


_ManifestLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _plain(value: Any) -> Any:
    """Turn what YAML may still produce outside the JSON model (explicit dates) into strings."""
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, date):
        return value.isoformat()
    return value


def _read_documents(path: Path, source: str) -> Iterator[tuple[int, Any]]:
    """(1-based index, parsed document) for each document of a YAML or JSON file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ManifestError(source, 0, None, None, "", f"cannot read file: {err}") from err
    if path.suffix == ".json":
        try:
            yield 1, json.loads(text)
        except json.JSONDecodeError as err:
            raise ManifestError(
                source, 1, None, None, "", f"invalid JSON: {err.msg} (line {err.lineno}, column {err.colno})"
            ) from err
        return
    docs = _json_documents(text)
    if docs is not None:
        yield from enumerate(docs, 1)
        return
    index = 0
    try:
        for doc in yaml.load_all(text, Loader=_ManifestLoader):
            index += 1
            yield index, _plain(doc)
    except yaml.YAMLError as err:
        raise ManifestError(source, index + 1, None, None, "", _yaml_reason(err)) from err


def _json_documents(text: str) -> list[Any] | None:
    """The documents of a YAML stream written as one JSON object per document (what ``kubesched
    generate`` writes), parsed many times faster than the YAML loader could; None for anything else,
    which then goes through the YAML loader as usual."""
    if not text.startswith("{"):
        return None
    docs = []
    try:
        for chunk in text.split("\n---\n"):
            chunk = chunk.strip()
            if chunk:
                doc = json.loads(chunk)
                if not isinstance(doc, dict):
                    return None
                docs.append(doc)
    except ValueError:
        return None
    return docs


def _yaml_reason(err: yaml.YAMLError) -> str:
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "malformed"
        if mark is not None:
            return f"invalid YAML: {problem} (line {mark.line + 1}, column {mark.column + 1})"
        return f"invalid YAML: {problem}"
    return f"invalid YAML: {err}"


# ---------------------------------------------------------------------------------------------------------
# Checking and expanding documents


def _check_object(obj: Any, source: str, index: int, prefix: str) -> dict:
    """Check what every manifest needs (kind, apiVersion, metadata.name) and return it."""
    if not isinstance(obj, dict):
        raise ManifestError(source, index, None, None, prefix.rstrip("."), "expected a mapping (an object)")
    kind = obj.get("kind")
    name = _display_name(obj) or None
    if not isinstance(kind, str) or not kind:
        raise ManifestError(source, index, None, name, prefix + "kind", "Required value")
    info = KNOWN_KINDS.get(kind)
    if info is None:
        raise ManifestError(
            source,
            index,
            kind,
            name,
            prefix + "kind",
            f"unknown kind {kind!r} (known kinds: {', '.join(sorted(KNOWN_KINDS))})",
        )
    api_version = obj.get("apiVersion")
    if not api_version:
        raise ManifestError(source, index, kind, name, prefix + "apiVersion", "Required value")
    if api_version not in info.api_versions:
        raise ManifestError(
            source,
            index,
            kind,
            name,
            prefix + "apiVersion",
            f"unsupported value {api_version!r} for kind {kind} (supported: {', '.join(info.api_versions)})",
        )
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        reason = "Required value" if meta is None else "expected a mapping"
        raise ManifestError(source, index, kind, name, prefix + "metadata", reason)
    meta_name = meta.get("name")
    if meta_name is None and isinstance(meta.get("generateName"), str) and meta["generateName"]:
        pass
    elif not isinstance(meta_name, str) or not meta_name:
        reason = "Required value" if not meta_name else f"expected a string, got {meta_name!r}"
        raise ManifestError(source, index, kind, None, prefix + "metadata.name", reason)
    namespace = meta.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise ManifestError(source, index, kind, name, prefix + "metadata.namespace", "expected a string")
    for field in ("labels", "annotations"):
        values = meta.get(field)
        if values is None:
            continue
        if not isinstance(values, dict):
            raise ManifestError(source, index, kind, name, f"{prefix}metadata.{field}", "expected a mapping")
        for key, value in values.items():
            if not isinstance(value, str):
                raise ManifestError(
                    source,
                    index,
                    kind,
                    name,
                    f"{prefix}metadata.{field}.{key}",
                    f"expected a string, got {value!r} (quote it in YAML)",
                )
    return obj


def _expand(doc: Any, source: str, index: int, explicit: bool) -> list[dict]:
    """The objects of one document: none, itself, or the items of a List."""
    if doc is None:
        return []
    has_kind = isinstance(doc, dict) and "kind" in doc
    has_version = isinstance(doc, dict) and "apiVersion" in doc
    if not has_kind and not has_version:
        if not explicit or doc in ({}, [], ""):
            return []  # a scenario folder holds other YAML too; named files must be manifests
        if not isinstance(doc, dict):
            raise ManifestError(source, index, None, None, "", "expected a mapping (an object)")
        raise ManifestError(source, index, None, None, "kind", "Required value (not a Kubernetes manifest)")
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if isinstance(kind, str) and kind.endswith("List") and kind not in KNOWN_KINDS:
        items = doc.get("items")
        if items is None:
            return []
        if not isinstance(items, list):
            raise ManifestError(source, index, kind, None, "items", "expected a list")
        return [_check_object(item, source, index, f"items[{i}].") for i, item in enumerate(items)]
    return [_check_object(doc, source, index, "")]


def _files_in(folder: Path) -> list[Path]:
    """Manifest files under ``folder``, recursively, ordered by their path relative to it."""
    found = [
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix in MANIFEST_SUFFIXES
        and p.name not in SCENARIO_SIDE_FILES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    ]
    return sorted(found, key=lambda p: p.relative_to(folder).parts)


def load_manifests(
    paths: Iterable[str | Path],
    *,
    validate: Callable[[dict], None] | None = None,
) -> list[Manifest]:
    """Every object in ``paths`` (files or folders), in order.

    ``validate`` (default ``check_quantities``) may raise ObjectError for a bad field; it is reported
    with the file and document. Pass ``lambda obj: None`` to skip it.
    """
    check = check_quantities if validate is None else validate
    manifests: list[Manifest] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = [(f, str(f), False) for f in _files_in(path)]
        elif path.is_file():
            files = [(path, str(given), True)]
        else:
            raise ManifestError(str(given), 0, None, None, "", "no such file or folder")
        for file, source, explicit in files:
            for index, doc in _read_documents(file, source):
                for obj in _expand(doc, source, index, explicit):
                    manifest = Manifest(source, index, obj)
                    try:
                        check(obj)
                    except ObjectError as err:
                        raise ManifestError.from_object_error(manifest, err) from err
                    manifests.append(manifest)
    return manifests


# ---------------------------------------------------------------------------------------------------------
# Field checks that catch the common typos before the simulation starts


def _check_resource_list(values: Any, path: str) -> None:
    if values is None:
        return
    if not isinstance(values, dict):
        raise ObjectError(path, "expected a mapping of resource name to quantity")
    for resource, quantity in values.items():
        try:
            parse_quantity(quantity)
        except ObjectError as err:
            raise ObjectError(f"{path}.{resource}", err.reason) from err


def _check_containers(containers: Any, path: str) -> None:
    if containers is None:
        return
    if not isinstance(containers, list):
        raise ObjectError(path, "expected a list")
    for i, container in enumerate(containers):
        if not isinstance(container, dict):
            raise ObjectError(f"{path}[{i}]", "expected a mapping")
        resources = container.get("resources")
        if resources is None:
            continue
        if not isinstance(resources, dict):
            raise ObjectError(f"{path}[{i}].resources", "expected a mapping")
        for field in ("requests", "limits"):
            _check_resource_list(resources.get(field), f"{path}[{i}].resources.{field}")


def check_quantities(obj: dict) -> None:
    """Resource quantities of pods, nodes and claims must parse (ObjectError with the field path)."""
    kind = obj.get("kind")
    if kind == "Pod":
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            raise ObjectError("spec", "Required value" if spec is None else "expected a mapping")
        _check_containers(spec.get("containers"), "spec.containers")
        _check_containers(spec.get("initContainers"), "spec.initContainers")
        _check_resource_list(spec.get("overhead"), "spec.overhead")
    elif kind == "Node":
        status = obj.get("status")
        if isinstance(status, dict):
            _check_resource_list(status.get("capacity"), "status.capacity")
            _check_resource_list(status.get("allocatable"), "status.allocatable")
    elif kind == "PersistentVolumeClaim":
        resources = (obj.get("spec") or {}).get("resources")
        if isinstance(resources, dict):
            _check_resource_list(resources.get("requests"), "spec.resources.requests")
    elif kind == "PersistentVolume":
        _check_resource_list((obj.get("spec") or {}).get("capacity"), "spec.capacity")
