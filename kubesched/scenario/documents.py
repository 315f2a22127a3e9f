"""Reading the documents of one YAML or JSON file as plain JSON-shaped data.

A manifest is data from whoever wrote it, so a file must not be able to exhaust the machine: its
structure is checked (nesting depth, alias expansion; see :mod:`kubesched.util.yaml_limits`) before
anything is built from it.

A key given twice in one mapping is returned beside its document as a :class:`DuplicateField` (the
data keeps the last value, as a decoder that is not strict does): kube-apiserver's strict decoding
refuses it in a body it is sent (kubectl itself keeps the last value when it reads a file, before
sending anything); :mod:`kubesched.scenario.field_validation` decides. Noticing
costs the common case little: the YAML loader compares each mapping's distinct keys with its keys,
and the JSON fast path bounds the number of keys in a file by counting quotes (:func:`_key_bound`);
only a document found repeating a key is walked again to say where, with both lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.unknown_fields import Location, field_path
from kubesched.util.yaml_limits import MAX_DEPTH, YamlStructureError, check_yaml_structure

_MERGE_TAG = "tag:yaml.org,2002:merge"
#: What follows the closing quote of a JSON key: its colon, or the whitespace before it.
_AFTER_KEY = ('":', '" ', '"\t', '"\n', '"\r')


class DocumentError(ValueError):
    """A file that cannot be read as documents; ``doc_index`` is 1-based (0: the file as a whole)."""

    def __init__(self, doc_index: int, reason: str) -> None:
        self.doc_index = doc_index
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True, slots=True)
class DuplicateField:
    """A mapping key given twice in one document: where (keys from the document's root), and the
    1-based lines of its first and its repeated occurrence (0 when they are not known)."""

    location: Location
    first_line: int = 0
    line: int = 0

    @property
    def path(self) -> str:
        return field_path(self.location)

    @property
    def reason(self) -> str:
        """``duplicate field "cpu" (lines 11 and 12)``."""
        if not self.line:
            lines = ""
        elif self.line == self.first_line:
            lines = f" (line {self.line})"
        else:
            lines = f" (lines {self.first_line} and {self.line})"
        return f'duplicate field "{self.location[-1]}"{lines}'


#: One document of a file: its 1-based index, its data and the keys it repeats.
Document = tuple[int, Any, tuple[DuplicateField, ...]]
#: Repeated keys of one mapping node: (key, line of the first, line of the repeat), lines 1-based.
Repeats = list[tuple[str, int, int]]


class _ManifestLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML without the timestamp type (the API keeps times as RFC3339 strings, so must we), that
    notes the mappings repeating a key (``repeats``, by node id, for the document last built)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.root: yaml.Node | None = None
        self.repeats: dict[int, Repeats] = {}
        self._looked_at: set[int] = set()

    def construct_document(self, node: yaml.Node) -> Any:
        self.root, self.repeats, self._looked_at = node, {}, set()
        return super().construct_document(node)

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        # Every mapping comes here before it is built, and before merge keys are flattened into it (a
        # key overriding a merged one is no repeat). A merge source comes once more, flattened, when
        # it is built itself: remembered, so that its merged keys are not taken for repeats then.
        value = node.value
        if len(value) > 1:
            if id(node) not in self._looked_at:
                self._looked_at.add(id(node))
                try:
                    repeats = len({key.value for key, _ in value}) != len(value)
                except TypeError:  # a key that is itself a mapping or a list
                    repeats = True
                if repeats:
                    self.repeats[id(node)] = repeated_keys(node)
        elif value and value[0][0].tag == _MERGE_TAG:
            self._looked_at.add(id(node))
        super().flatten_mapping(node)


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


def read_documents(path: Path) -> Iterator[Document]:
    """(1-based index, parsed document, repeated keys) for each document of a YAML or JSON file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise DocumentError(0, f"cannot read file: {err}") from err
    if path.suffix.lower() == ".json":
        yield (1, *_read_json(text))
        return
    docs = _json_documents(text)
    if docs is not None:
        yield from docs
        return
    yield from _yaml_documents(text)


def _yaml_documents(text: str) -> Iterator[Document]:
    try:
        check_yaml_structure(text)
    except YamlStructureError as err:
        raise DocumentError(err.doc_index, err.reason) from None
    index = 0
    loader = _ManifestLoader(text)
    try:
        while loader.check_data():
            doc = loader.get_data()
            index += 1
            repeated = tuple(duplicate_keys(loader.root, loader.repeats)) if loader.repeats else ()
            yield index, plain(doc), repeated
    except yaml.YAMLError as err:
        raise DocumentError(index + 1, yaml_reason(err)) from err
    except RecursionError:  # the structure check bounds depth; this is the net under it
        raise DocumentError(index + 1, f"too deeply nested (more than {MAX_DEPTH} levels)") from None
    except ValueError as err:  # a number past Python's digit limit for int(), say
        raise DocumentError(index + 1, f"invalid YAML: {_first_sentence(err)}") from err
    finally:
        loader.dispose()


def repeated_keys(node: yaml.MappingNode, line_offset: int = 0) -> Repeats:
    """The keys a mapping node repeats, with the lines of their first and repeated occurrences."""
    first_lines: dict[str, int] = {}
    repeats: Repeats = []
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
            continue
        line = key.start_mark.line + 1 + line_offset
        if key.value in first_lines:
            repeats.append((key.value, first_lines[key.value], line))
        else:
            first_lines[key.value] = line
    return repeats


def duplicate_keys(
    root: yaml.Node | None, repeats: dict[int, Repeats] | None = None, line_offset: int = 0
) -> list[DuplicateField]:
    """The repeated keys of the node tree ``root``, located, in document order: those of ``repeats``
    (by mapping node id), or, when None, of every mapping (a tree composed only to find them)."""
    found: list[DuplicateField] = []
    todo: list[tuple[yaml.Node, Location]] = [] if root is None else [(root, ())]
    seen: set[int] = set()
    while todo:
        node, at = todo.pop()
        if id(node) in seen:  # reached again through an alias
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            mine = repeated_keys(node, line_offset) if repeats is None else repeats.get(id(node), ())
            found.extend(DuplicateField((*at, key), first, line) for key, first, line in mine)
            todo.extend(
                reversed(
                    [(value, (*at, key.value) if isinstance(key, yaml.ScalarNode) else at) for key, value in node.value]
                )
            )
        elif isinstance(node, yaml.SequenceNode):
            todo.extend(reversed([(item, (*at, i)) for i, item in enumerate(node.value)]))
    return sorted(found, key=lambda repeat: repeat.line)


def _json_documents(text: str) -> list[Document] | None:
    """The documents of a YAML stream written as one JSON object per document (what ``kubesched
    generate`` writes), parsed many times faster than the YAML loader could; None for anything else,
    which then goes through the YAML loader as usual (and its checks)."""
    if not text.startswith("{"):
        return None
    parts = text.split("\n---\n")
    docs = []
    keys = 0
    try:
        for part in parts:
            chunk = part.strip()
            if chunk:
                doc = json.loads(chunk)
                count = _keys_within(doc, MAX_DEPTH) if type(doc) is dict else -1
                if count < 0:
                    return None
                keys += count
                docs.append(doc)
    except (ValueError, RecursionError):
        return None
    if keys == _key_bound(text):  # no key repeated anywhere (see _key_bound)
        return [(index, doc, ()) for index, doc in enumerate(docs, 1)]
    return _checked_json_documents(parts)


def _keys_within(value: Any, limit: int) -> int:
    """The number of keys in all the mappings of parsed JSON; -1 when it nests deeper than ``limit``.

    JSON makes only dicts and lists, so exact type tests (much cheaper than isinstance against the
    abstract Mapping) are enough."""
    todo: list[tuple[Any, int]] = [(value, 1)] if type(value) is dict or type(value) is list else []
    keys = 0
    while todo:
        item, depth = todo.pop()
        if depth > limit:
            return -1
        if type(item) is dict:
            keys += len(item)
            item = item.values()
        depth += 1
        todo.extend([(child, depth) for child in item if type(child) is dict or type(child) is list])
    return keys


def _key_bound(text: str) -> int:
    """At least as many as the keys written in JSON ``text``.

    Every key ends with a quote followed by its colon or by whitespace, and each such quote is
    counted once (a quote inside a string is escaped, so it can only make the count larger). When
    the count equals the keys the parsed documents hold, no key was repeated: a repeat would have
    left the documents with fewer keys than were written."""
    return sum(text.count(after) for after in _AFTER_KEY)


def _checked_json_documents(parts: list[str]) -> list[Document]:
    """The documents of a JSON stream (split at its separators) parsed again, each with the keys it
    repeats, located; lines count from the start of the stream."""
    out: list[Document] = []
    line = 1  # where the part starts
    for part in parts:
        chunk = part.strip()
        if chunk:
            lead = part[: len(part) - len(part.lstrip())]
            out.append((len(out) + 1, *_decode_json(chunk, line - 1 + lead.count("\n"))))
        line += part.count("\n") + 2  # the part, then its separator's line
    return out


def _decode_json(text: str, line_offset: int = 0) -> tuple[Any, tuple[DuplicateField, ...]]:
    """``text`` parsed, and the keys it repeats, located with their lines (JSON is YAML's flow style,
    so the YAML composer finds them; a repeat it cannot place is reported without lines)."""
    repeated: list[tuple[dict[str, Any], str]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    repeated.append((obj, key))
                seen.add(key)
        return obj

    doc = json.loads(text, object_pairs_hook=pairs)
    if not repeated:
        return doc, ()
    try:
        return doc, tuple(duplicate_keys(yaml.compose(text, Loader=_ManifestLoader), None, line_offset))
    except yaml.YAMLError:
        where = _locations(doc)
        return doc, tuple(DuplicateField((*where.get(id(obj), ()), key)) for obj, key in repeated)


def _locations(doc: Any) -> dict[int, Location]:
    """Where each mapping of parsed JSON sits, by id."""
    where: dict[int, Location] = {}
    todo: list[tuple[Any, Location]] = [(doc, ())]
    while todo:
        item, at = todo.pop()
        if type(item) is dict:
            where[id(item)] = at
            todo.extend(((child, (*at, key)) for key, child in item.items()))
        elif type(item) is list:
            todo.extend(((child, (*at, i)) for i, child in enumerate(item)))
    return where


def _read_json(text: str) -> tuple[Any, tuple[DuplicateField, ...]]:
    try:
        doc, repeated = _decode_json(text)
    except json.JSONDecodeError as err:
        raise DocumentError(1, f"invalid JSON: {err.msg} (line {err.lineno}, column {err.colno})") from err
    except RecursionError:
        raise DocumentError(1, f"too deeply nested (more than {MAX_DEPTH} levels)") from None
    except ValueError as err:
        raise DocumentError(1, f"invalid JSON: {_first_sentence(err)}") from err
    if _keys_within(doc, MAX_DEPTH) < 0:
        raise DocumentError(1, f"too deeply nested (more than {MAX_DEPTH} levels)")
    return doc, repeated


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
