"""Reading ordinary Kubernetes manifests (YAML or JSON files, or folders of them) for the simulator.

A bad manifest must be reported so a person can fix it at once: every error names the file, the
document within it and the field (``scenario.yaml: document 3 (Pod default/web-1): spec...: reason``).
Unknown and repeated fields are refused as kubectl's strict validation refuses them, or dropped, as
the given :class:`~kubesched.scenario.field_validation.FieldValidation` says.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.field_schema import field_schema
from kubesched.api.validation import validate_object
from kubesched.cluster.kinds import KNOWN_KINDS
from kubesched.scenario.documents import DocumentError, DuplicateField, read_documents
from kubesched.scenario.field_validation import FieldValidation
from kubesched.util.yaml_limits import MAX_DEPTH, nesting_exceeds

#: File name endings read from a folder, in any letter case (``.YAML`` and ``.Yml`` too).
MANIFEST_SUFFIXES = frozenset({".yaml", ".yml", ".json"})
# Files of a scenario folder that are not manifests (see the conformance corpus layout).
SCENARIO_SIDE_FILES = frozenset({"config.yaml", "config.yml", "golden.json"})


class ManifestError(ValueError):
    """A manifest that cannot be loaded, located as file: document (kind name): field: reason."""

    def __init__(self, source: str, doc_index: int, kind: str | None, name: str | None, path: str, reason: str) -> None:
        self.source = source
        self.doc_index = doc_index
        self.kind = kind
        self.name = name
        self.path = path
        self.reason = reason
        where = f"{source}: document {doc_index}" if doc_index else source
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
    obj: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def display_name(self) -> str:
        """``namespace/name`` for namespaced kinds (``default`` when unset), else ``name``."""
        return _display_name(self.obj)


def _display_name(obj: dict[str, Any]) -> str:
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
# Checking and expanding documents


def _check_object(obj: Any, source: str, index: int, prefix: str) -> dict[str, Any]:
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


def _expand(doc: Any, source: str, index: int, explicit: bool, fields: FieldValidation) -> list[dict[str, Any]]:
    """The objects of one document: none, itself, or the items of a List (whose own fields are
    checked here; each item is checked as a manifest of its own)."""
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
        fields.checked(
            doc, lambda path, reason: ManifestError(source, index, kind, None, path, reason), field_schema().list_type
        )
        return [_check_object(item, source, index, f"items[{i}].") for i, item in enumerate(items)]
    return [_check_object(doc, source, index, "")]


def _files_in(folder: Path) -> list[Path]:
    """Manifest files under ``folder``, recursively, ordered by their path relative to it.

    Symlinked sub-folders are followed (each real folder once, so a link back up is no loop);
    hidden files and folders are skipped; suffixes match in any letter case.
    """
    found: list[Path] = []
    visited: set[str] = set()
    for root, dirs, files in os.walk(folder, followlinks=True):
        real = os.path.realpath(root)
        if real in visited:
            dirs[:] = []
            continue
        visited.add(real)
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            path = Path(root, name)
            if (
                not name.startswith(".")
                and path.suffix.lower() in MANIFEST_SUFFIXES
                and name.lower() not in SCENARIO_SIDE_FILES
                and path.is_file()
            ):
                found.append(path)
    return sorted(found, key=lambda p: p.relative_to(folder).parts)


def load_manifests(
    paths: Iterable[str | Path],
    *,
    validate: Callable[[dict[str, Any]], None] | None = None,
    fields: FieldValidation | None = None,
) -> list[Manifest]:
    """Every object in ``paths`` (files or folders), in order.

    ``validate`` (default :func:`~kubesched.api.validation.validate_object`, what the API server
    would refuse) may raise ObjectError for a bad field; it is reported with the file and document.
    Pass ``lambda obj: None`` to skip it. ``fields`` treats unknown and repeated fields (default:
    refused). A path that yields no object is an error: it is almost always the wrong path.
    """
    check = validate_object if validate is None else validate
    fields = fields or FieldValidation()
    manifests: list[Manifest] = []
    for given in paths:
        if not isinstance(given, str | os.PathLike):
            raise ManifestError(repr(given), 0, None, None, "", "expected a file or folder path")
        if not str(given).strip():
            raise ManifestError('""', 0, None, None, "", "an empty path names no file or folder")
        path = Path(given)
        try:
            is_dir, is_file, exists = path.is_dir(), path.is_file(), path.exists()
        except OSError as err:  # a name too long for the file system, say
            raise ManifestError(str(given), 0, None, None, "", f"cannot read: {err.strerror}") from err
        if is_dir:
            files = [(f, str(f), False) for f in _files_in(path)]
        elif is_file:
            files = [(path, str(given), True)]
        elif exists:
            raise ManifestError(str(given), 0, None, None, "", "not a regular file or a folder")
        else:
            raise ManifestError(str(given), 0, None, None, "", "no such file or folder")
        before = len(manifests)
        for file, source, explicit in files:
            try:
                for index, doc, repeated in read_documents(file):
                    if repeated:
                        _check_repeats(doc, source, index, repeated, fields)
                    for obj in _expand(doc, source, index, explicit, fields):
                        manifests.append(checked_manifest(Manifest(source, index, obj), check, fields))
            except DocumentError as err:
                raise ManifestError(source, err.doc_index, None, None, "", err.reason) from err
        if len(manifests) == before:
            what = "folder (in files ending .yaml, .yml or .json)" if is_dir else "file"
            raise ManifestError(str(given), 0, None, None, "", f"no Kubernetes objects in this {what}")
    return manifests


def _check_repeats(
    doc: Any, source: str, index: int, repeated: Sequence[DuplicateField], fields: FieldValidation
) -> None:
    """Refuse or report the keys a document repeats, named with the document's kind and name."""
    kind = doc.get("kind") if isinstance(doc, dict) else None
    kind = kind if isinstance(kind, str) and kind else None
    name = (_display_name(doc) if isinstance(doc, dict) else "") or None
    fields.repeated(repeated, lambda path, reason: ManifestError(source, index, kind, name, path, reason), kind or "")


def checked_manifest(
    manifest: Manifest, check: Callable[[dict[str, Any]], None] = validate_object, fields: FieldValidation | None = None
) -> Manifest:
    """``manifest`` once its fields are known (see ``fields``; unknown ones dropped when it allows) and
    ``check`` has passed on its object; every error located in the file."""
    obj = (fields or FieldValidation()).checked(
        manifest.obj, lambda path, reason: ManifestError.at(manifest, path, reason)
    )
    if obj is not manifest.obj:
        manifest = Manifest(manifest.source, manifest.doc_index, obj)
    try:
        check(manifest.obj)
    except ObjectError as err:
        raise ManifestError.from_object_error(manifest, err) from err
    return manifest


def objects_to_manifests(
    objects: Iterable[Any],
    source: str = "<objects>",
    *,
    depth_checked: bool = False,
    fields: FieldValidation | None = None,
) -> list[Manifest]:
    """Object dicts given in code, checked as a file's documents are (``List`` objects expanded).

    Each dict counts as one document of ``source``, numbered from 1. ``depth_checked``: the caller
    has already refused anything nested deeper than a file may be. An object with unknown fields is
    replaced by a copy without them when ``fields`` allows it: the dicts given are never changed.
    """
    fields = fields or FieldValidation()
    manifests: list[Manifest] = []
    for index, obj in enumerate(objects, start=1):
        if not depth_checked and isinstance(obj, dict) and nesting_exceeds(obj, MAX_DEPTH):
            raise ManifestError(source, index, None, None, "", f"too deeply nested (more than {MAX_DEPTH} levels)")
        for item in _expand(obj, source, index, True, fields):
            manifests.append(checked_manifest(Manifest(source, index, item), fields=fields))
    return manifests
