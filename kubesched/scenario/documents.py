"""Reading the documents of one YAML or JSON file as plain JSON-shaped data.

A manifest is data from whoever wrote it, so a file must not be able to exhaust the machine: its
structure is checked (nesting depth, alias expansion; see :mod:`kubesched.util.yaml_limits`) before
anything is built from it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml

from kubesched.util.yaml_limits import MAX_DEPTH, YamlStructureError, check_yaml_structure, nesting_exceeds


class DocumentError(ValueError):
    """A file that cannot be read as documents; ``doc_index`` is 1-based (0: the file as a whole)."""

    def __init__(self, doc_index: int, reason: str) -> None:
        self.doc_index = doc_index
        self.reason = reason
        super().__init__(reason)


class _ManifestLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML without the timestamp type: the API keeps times as RFC3339 strings, so must we."""


_ManifestLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def plain(value: Any) -> Any:
    """Turn what YAML may still produce outside the JSON model into it (string keys, dates as text)."""
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, set | frozenset):
        return sorted(str(v) for v in value)
    return value


def read_documents(path: Path) -> Iterator[tuple[int, Any]]:
    """(1-based index, parsed document) for each document of a YAML or JSON file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise DocumentError(0, f"cannot read file: {err}") from err
    if path.suffix.lower() == ".json":
        yield 1, _read_json(text)
        return
    docs = _json_documents(text)
    if docs is not None:
        yield from enumerate(docs, 1)
        return
    try:
        check_yaml_structure(text)
    except YamlStructureError as err:
        raise DocumentError(err.doc_index, err.reason) from None
    index = 0
    try:
        for doc in yaml.load_all(text, Loader=_ManifestLoader):
            index += 1
            yield index, plain(doc)
    except yaml.YAMLError as err:
        raise DocumentError(index + 1, yaml_reason(err)) from err
    except RecursionError:  # the structure check bounds depth; this is the net under it
        raise DocumentError(index + 1, f"too deeply nested (more than {MAX_DEPTH} levels)") from None
    except ValueError as err:  # a number past Python's digit limit for int(), say
        raise DocumentError(index + 1, f"invalid YAML: {_first_sentence(err)}") from err


def _json_documents(text: str) -> list[Any] | None:
    """The documents of a YAML stream written as one JSON object per document (what ``kubesched
    generate`` writes), parsed many times faster than the YAML loader could; None for anything else,
    which then goes through the YAML loader as usual (and its checks)."""
    if not text.startswith("{"):
        return None
    docs = []
    try:
        for chunk in text.split("\n---\n"):
            chunk = chunk.strip()
            if chunk:
                doc = json.loads(chunk)
                if not isinstance(doc, dict) or nesting_exceeds(doc, MAX_DEPTH):
                    return None
                docs.append(doc)
    except (ValueError, RecursionError):
        return None
    return docs


def _read_json(text: str) -> Any:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise DocumentError(1, f"invalid JSON: {err.msg} (line {err.lineno}, column {err.colno})") from err
    except RecursionError:
        raise DocumentError(1, f"too deeply nested (more than {MAX_DEPTH} levels)") from None
    except ValueError as err:
        raise DocumentError(1, f"invalid JSON: {_first_sentence(err)}") from err
    if nesting_exceeds(doc, MAX_DEPTH):
        raise DocumentError(1, f"too deeply nested (more than {MAX_DEPTH} levels)")
    return doc


def _first_sentence(err: Exception) -> str:
    return str(err).split(";")[0]


def yaml_reason(err: yaml.YAMLError) -> str:
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "malformed"
        if mark is not None:
            return f"invalid YAML: {problem} (line {mark.line + 1}, column {mark.column + 1})"
        return f"invalid YAML: {problem}"
    return f"invalid YAML: {err}"
