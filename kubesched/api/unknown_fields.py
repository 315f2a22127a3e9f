"""Unknown fields: what kube-apiserver's strict field validation refuses and its other modes drop.

kube-apiserver decodes an object into its Go types; with strict field validation (kubectl's default) a
field the type does not have is an error, ``unknown field "spec.containers[0].resources.request"``,
and otherwise it is dropped. Here an object is walked against :mod:`kubesched.api.field_schema`.

The walk runs once per object loaded, so it is made cheap for the common case, an object with no
unknown field: a first pass only answers yes or no (set inclusion of each mapping's keys in its
type's fields, descending only into fields that hold objects, building no paths), and only an
object that fails it is walked again to locate its unknown fields. Depth is bounded before any
object gets here (see :mod:`kubesched.util.yaml_limits`), so the walk recurses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.field_schema import LIST_OF, MAP_OF, OBJECT, ObjectType, field_schema
from kubesched.util.suggest import did_you_mean

Location = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class UnknownField:
    """A field its object type does not have: where (keys from the object's root) and what was known."""

    location: Location
    known: frozenset[str]

    @property
    def name(self) -> str:
        return str(self.location[-1])

    @property
    def path(self) -> str:
        return field_path(self.location)

    @property
    def reason(self) -> str:
        """``unknown field "request" (did you mean "requests"?)``."""
        return f'unknown field "{self.name}"' + did_you_mean(self.name, sorted(self.known))


def field_path(location: Iterable[str | int]) -> str:
    """``spec.containers[0].resources`` from ``("spec", "containers", 0, "resources")``."""
    path = ""
    for key in location:
        if isinstance(key, int):
            path += f"[{key}]"
        else:
            path += f".{key}" if path else str(key)
    return path


def object_type(obj: Mapping[str, Any]) -> ObjectType | None:
    """The type of a manifest from its apiVersion and kind (None for one the schema does not hold)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if type(api_version) is not str or type(kind) is not str:
        return None
    return field_schema().kinds.get((api_version, kind))


def unknown_fields(obj: Mapping[str, Any], root: ObjectType | None = None) -> list[UnknownField]:
    """The unknown fields of ``obj`` (of type ``root``, by default its kind's), in document order."""
    root = root or object_type(obj)
    if root is None or _clean(obj, root):
        return []
    found: list[UnknownField] = []
    _locate(obj, root, (), found)
    return found


def _clean(value: Mapping[str, Any], of: ObjectType) -> bool:
    """Whether ``value`` and everything below it hold only known fields (nothing else is built)."""
    keys = tuple(value)
    plan = of.plans.get(keys)
    if plan is None:
        plan = of.plan(keys)  # a key set not seen before
        if plan is None:
            return False
    for key, steps, target in plan:
        child = value[key]
        if steps == OBJECT:
            if isinstance(child, dict) and not _clean(child, target):
                return False
        elif steps == LIST_OF:
            if isinstance(child, list):
                for item in child:
                    if isinstance(item, dict) and not _clean(item, target):
                        return False
        elif not _clean_within(child, steps, target):
            return False
    return True


def _clean_within(value: Any, steps: str, target: ObjectType) -> bool:
    """``_clean`` for the objects held in lists and maps (``steps``, see ObjectType.nested); a value of
    the wrong type holds no field to check (validation reports the type)."""
    if steps == OBJECT:
        return not isinstance(value, dict) or _clean(value, target)
    if steps.startswith(LIST_OF):
        items: Iterable[Any] = value if isinstance(value, list) else ()
    else:
        items = value.values() if isinstance(value, dict) else ()
    rest = steps[len(LIST_OF) :]
    return all(_clean_within(item, rest, target) for item in items)


def _locate(value: Mapping[str, Any], of: ObjectType, at: Location, found: list[UnknownField]) -> None:
    fields, nested = of.fields, of.nested
    for key, child in value.items():
        if key not in fields:
            found.append(UnknownField((*at, key), fields))
            continue
        sub = nested.get(key)
        if sub is not None:
            _locate_within(child, sub[0], sub[1], (*at, key), found)


def _locate_within(value: Any, steps: str, target: ObjectType, at: Location, found: list[UnknownField]) -> None:
    rest = steps[len(LIST_OF) :]
    if steps == OBJECT:
        if isinstance(value, dict):
            _locate(value, target, at, found)
    elif steps.startswith(LIST_OF) and isinstance(value, list):
        for i, item in enumerate(value):
            _locate_within(item, rest, target, (*at, i), found)
    elif steps.startswith(MAP_OF) and isinstance(value, dict):
        for key, item in value.items():
            _locate_within(item, rest, target, (*at, key), found)


def without_fields(obj: dict[str, Any], locations: Iterable[Location]) -> dict[str, Any]:
    """A copy of ``obj`` without the fields at ``locations``, as the API server drops them; only the
    mappings and lists on the way to a dropped field are copied, the rest is shared."""
    copied: dict[int, Any] = {}
    result: dict[str, Any] = _copy_once(obj, copied)
    for location in locations:
        parent: Any = result
        for key in location[:-1]:
            child = parent[key]
            if id(child) not in copied:
                child = parent[key] = _copy_once(child, copied)
            parent = child
        parent.pop(location[-1], None)
    return result


def _copy_once(value: Any, copied: dict[int, Any]) -> Any:
    """A shallow copy of a mapping or list, remembered (by the copy's id) as already private."""
    copy = dict(value) if isinstance(value, dict) else list(value)
    copied[id(copy)] = copy
    return copy
