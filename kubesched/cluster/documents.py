"""Reading the documents of one YAML or JSON file, refusing hostile structure before building it.

A manifest is data from whoever wrote it, so a file must not be able to exhaust the machine: a
hundred thousand nested brackets overflow the C stack of libyaml's composer (a segfault, not an
exception), and a "billion laughs" document of nested aliases builds a structure that is tiny in
memory but explodes once anything copies it. Before a YAML file is loaded, its event stream (which
libyaml produces without recursion) is walked once to measure nesting depth and how many nodes
aliases would add; beyond :data:`MAX_DEPTH` or :data:`MAX_ALIAS_NODES` the file is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml

#: Deepest nesting of mappings and lists accepted; real manifests stay below 20 levels.
MAX_DEPTH = 100
#: Nodes that aliases may add to one document when expanded (anchors in real manifests add a few).
MAX_ALIAS_NODES = 100_000


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
    check_yaml_structure(text)
    index = 0
    try:
        for doc in yaml.load_all(text, Loader=_ManifestLoader):
            index += 1
            yield index, plain(doc)
    except yaml.YAMLError as err:
        raise DocumentError(index + 1, yaml_reason(err)) from err


def _read_json(text: str) -> Any:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise DocumentError(1, f"invalid JSON: {err.msg} (line {err.lineno}, column {err.colno})") from err
    except RecursionError:
        raise DocumentError(1, f"too deeply nested (more than {MAX_DEPTH} levels)") from None
    if nesting_exceeds(doc, MAX_DEPTH):
        raise DocumentError(1, f"too deeply nested (more than {MAX_DEPTH} levels)")
    return doc


def yaml_reason(err: yaml.YAMLError) -> str:
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "malformed"
        if mark is not None:
            return f"invalid YAML: {problem} (line {mark.line + 1}, column {mark.column + 1})"
        return f"invalid YAML: {problem}"
    return f"invalid YAML: {err}"


class _Open:
    """A mapping or sequence whose end event has not come yet."""

    __slots__ = ("anchor", "height", "start")

    def __init__(self, anchor: str | None, start: int) -> None:
        self.anchor = anchor
        self.start = start
        self.height = 0  # deepest chain of collections below it


def check_yaml_structure(text: str) -> None:
    """Refuse documents nested deeper than MAX_DEPTH or whose aliases expand past MAX_ALIAS_NODES.

    Works on libyaml's event stream: each anchor remembers the size (nodes, aliases expanded) and
    height of what it names, so an alias costs what copying it would cost. An alias to a node that
    is still open (a recursive structure) is refused too: nothing in the API is recursive.
    """
    doc = 0
    stack: list[_Open] = []
    anchors: dict[str, tuple[int, int]] = {}  # anchor -> (expanded nodes, height)
    nodes = aliased = 0
    try:
        for event in yaml.parse(text, Loader=_ManifestLoader):
            if isinstance(event, yaml.DocumentStartEvent):
                doc += 1
                anchors.clear()
                nodes = aliased = 0
            elif isinstance(event, yaml.CollectionStartEvent):
                nodes += 1
                stack.append(_Open(event.anchor, nodes))
                if len(stack) > MAX_DEPTH:
                    raise DocumentError(doc, f"too deeply nested (more than {MAX_DEPTH} levels)")
            elif isinstance(event, yaml.CollectionEndEvent):
                done = stack.pop()
                if done.anchor is not None:
                    anchors[done.anchor] = (nodes - done.start + 1, done.height + 1)
                if stack:
                    stack[-1].height = max(stack[-1].height, done.height + 1)
            elif isinstance(event, yaml.ScalarEvent):
                nodes += 1
                if event.anchor is not None:
                    anchors[event.anchor] = (1, 0)
            elif isinstance(event, yaml.AliasEvent):
                named = anchors.get(event.anchor)
                if named is None:
                    if any(o.anchor == event.anchor for o in stack):
                        raise DocumentError(doc, f"recursive alias *{event.anchor} (it refers to a node containing it)")
                    continue  # an undefined alias: loading reports it with its line
                size, height = named
                nodes += size
                aliased += size
                if aliased > MAX_ALIAS_NODES:
                    raise DocumentError(doc, f"too many aliases (they would expand to more than "
                                             f"{MAX_ALIAS_NODES} nodes)")
                if len(stack) + height > MAX_DEPTH:
                    raise DocumentError(doc, f"too deeply nested (more than {MAX_DEPTH} levels, through aliases)")
                if stack:
                    stack[-1].height = max(stack[-1].height, height)
    except yaml.YAMLError as err:
        raise DocumentError(max(doc, 1), yaml_reason(err)) from err


def nesting_exceeds(value: Any, limit: int) -> bool:
    """Whether mappings and lists nest deeper than ``limit`` in ``value``, walked without recursion."""
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > limit:
            return True  # a structure that contains itself ends here too
        todo.extend((child, depth) for child in children)
    return False
