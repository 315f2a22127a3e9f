"""Limits on the structure of YAML and JSON read from users: nesting depth and alias expansion.

libyaml's composer recurses in C once per nesting level, so a hundred thousand nested brackets
overflow the C stack (a segfault, not an exception); a "billion laughs" document of nested aliases
loads as a tiny shared structure that explodes once anything copies it. :func:`check_yaml_structure`
walks libyaml's event stream, which is produced without recursion, before anything is built, and
refuses both. Manifests and scheduler configurations go through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

#: Deepest nesting of mappings and lists accepted; real manifests stay below 20 levels.
MAX_DEPTH = 100
#: Nodes that aliases may add to one document when expanded (anchors in real manifests add a few).
MAX_ALIAS_NODES = 100_000

_Parser: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: What libyaml's scanner says when a document passes its own (larger) nesting limit.
_NESTING_PROBLEM = "maximum nesting depth"


class YamlStructureError(ValueError):
    """A document nested too deeply or aliased too much; ``doc_index`` is 1-based."""

    def __init__(self, doc_index: int, reason: str) -> None:
        self.doc_index = doc_index
        self.reason = reason
        super().__init__(reason)


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
    scalar, alias, document = yaml.ScalarEvent, yaml.AliasEvent, yaml.DocumentStartEvent
    starts, ends = (yaml.MappingStartEvent, yaml.SequenceStartEvent), (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    try:
        event: Any
        for event in yaml.parse(text, Loader=_Parser):
            kind = type(event)  # the hot loop: scalars first, exact types rather than isinstance
            if kind is scalar:
                nodes += 1
                if event.anchor is not None:
                    anchors[event.anchor] = (1, 0)
            elif kind in starts:
                nodes += 1
                stack.append(_Open(event.anchor, nodes))
                if len(stack) > MAX_DEPTH:
                    raise YamlStructureError(doc, f"too deeply nested (more than {MAX_DEPTH} levels)")
            elif kind in ends:
                done = stack.pop()
                if done.anchor is not None:
                    anchors[done.anchor] = (nodes - done.start + 1, done.height + 1)
                if stack and stack[-1].height <= done.height:
                    stack[-1].height = done.height + 1
            elif kind is alias:
                named = _expanded_alias(event.anchor, anchors, stack, aliased, doc)
                if named is not None:
                    size, height = named
                    nodes += size
                    aliased += size
                    if stack and stack[-1].height < height:
                        stack[-1].height = height
            elif kind is document:
                doc += 1
                anchors.clear()
                nodes = aliased = 0
    except yaml.YAMLError as err:
        # libyaml from 0.2.6 (bundled with PyYAML 6.0.4) stops at its own nesting limit, in the scanner,
        # which reads ahead of the events: that error can come before the events reach MAX_DEPTH.
        if _NESTING_PROBLEM in str(getattr(err, "problem", "")):
            raise YamlStructureError(max(doc, 1), f"too deeply nested (more than {MAX_DEPTH} levels)") from None
        return  # malformed: loading reports it, with its line


def _expanded_alias(
    anchor: str | None, anchors: dict[str, tuple[int, int]], stack: list[_Open], aliased: int, doc: int
) -> tuple[int, int] | None:
    """What the alias ``*anchor`` expands to (nodes, height); None when no anchor names it (loading reports
    that, with its line). Refused when recursive, when the document's aliases would expand past
    MAX_ALIAS_NODES, or when it would nest deeper than MAX_DEPTH."""
    named = anchors.get(anchor or "")
    if named is None:
        if any(o.anchor == anchor for o in stack):
            raise YamlStructureError(doc, f"recursive alias *{anchor} (it refers to a node containing it)")
        return None
    size, height = named
    if aliased + size > MAX_ALIAS_NODES:
        raise YamlStructureError(doc, f"too many aliases (they would expand to more than {MAX_ALIAS_NODES} nodes)")
    if len(stack) + height > MAX_DEPTH:
        raise YamlStructureError(doc, f"too deeply nested (more than {MAX_DEPTH} levels, through aliases)")
    return named


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
