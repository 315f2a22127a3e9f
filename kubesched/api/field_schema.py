"""Which fields each object type has, for every kind kubesched loads: the data strict field validation needs.

The data (``field_schema.json``, beside this module) is generated from the API server's OpenAPI
documents by ``python -m testing.api_fields``, which explains its format; PodGroup, a custom resource,
is written out there from scheduler-plugins' CRD. It is read once, on first use, into one
:class:`ObjectType` per type, whose nested types are linked objects: walking an object costs
dictionary look-ups only, and nothing is compiled per object.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).with_name("field_schema.json")
#: The type of the list wrapper of a ``List`` (or ``PodList``, …) document.
LIST = "List"
#: How a field's value holds objects of its type: directly, as list items, or as map values.
OBJECT, LIST_OF, MAP_OF = "", "[]", "{}"
#: Key sets remembered per type (see ObjectType.plans); past this many, further ones are not kept.
MAX_PLANS = 256

#: What to walk below one object: (field, steps, type) for each of its fields that holds objects.
Plan = tuple[tuple[str, str, "ObjectType"], ...]


@dataclass(eq=False, slots=True)
class ObjectType:
    """An object type: its field names and, for the fields holding objects, how and which type.

    ``nested`` maps a field to (``steps``, type): ``steps`` is a string of ``[]`` (a list level) and
    ``{}`` (a map level) pairs to go through before the objects (empty: the value is one).

    ``plans`` remembers, for each set of keys (in the order given) already found to be fields of
    this type, which of them to walk further: objects of one kind repeat a handful of key sets, so
    most objects are checked by one dictionary look-up each, and only their nested objects are
    visited.
    """

    name: str
    fields: frozenset[str] = frozenset()
    nested: dict[str, tuple[str, ObjectType]] = field(default_factory=dict)
    plans: dict[tuple[str, ...], Plan] = field(default_factory=dict)

    def plan(self, keys: tuple[str, ...]) -> Plan | None:
        """What to walk below an object with these keys; None when some key is not a field."""
        plan = self.plans.get(keys)
        if plan is None:
            if not self.fields.issuperset(keys):
                return None
            nested = self.nested
            plan = tuple((key, *nested[key]) for key in keys if key in nested)
            if len(self.plans) < MAX_PLANS:
                self.plans[keys] = plan
        return plan

    def __repr__(self) -> str:
        return f"ObjectType({self.name})"


@dataclass(frozen=True, slots=True)
class FieldSchema:
    """The object types by name and the type of each (apiVersion, kind)."""

    source: str
    types: dict[str, ObjectType]
    kinds: dict[tuple[str, str], ObjectType]

    def kind_type(self, api_version: str, kind: str) -> ObjectType | None:
        """The type of a kind in ``api_version``; None when the schema does not hold it."""
        return self.kinds.get((api_version, kind))

    @property
    def list_type(self) -> ObjectType:
        return self.types[LIST]


def parse_schema(data: dict[str, Any]) -> FieldSchema:
    """Build the linked types from the data file's content (see ``testing/api_fields.py``)."""
    types = {name: ObjectType(name, frozenset(fields)) for name, fields in data["types"].items()}
    for name, fields in data["types"].items():
        nested = types[name].nested
        for field_name, shape in fields.items():
            if shape:
                target = shape.lstrip("[]{}")
                nested[field_name] = (shape[: len(shape) - len(target)], types[target])
    kinds = {
        (version, kind): types[name] for version, by_kind in data["kinds"].items() for kind, name in by_kind.items()
    }
    return FieldSchema(str(data.get("source", "")), types, kinds)


@functools.cache
def field_schema() -> FieldSchema:
    """The schema shipped with kubesched, read on first use."""
    return parse_schema(json.loads(DATA_FILE.read_text(encoding="utf-8")))
