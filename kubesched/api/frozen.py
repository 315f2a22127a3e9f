"""Fast copies of the frozen, slotted dataclasses the API views are made of.

A frozen dataclass's ``__init__`` and :func:`dataclasses.replace` set each field through
``object.__setattr__``; the views here are re-made often enough (a pod for every binding it sees, one
per arrival from its spec's template) that setting the slots straight is worth a generated copier.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import MemberDescriptorType
from typing import Any, TypeVar, cast

_Frozen = TypeVar("_Frozen")
#: Per class :func:`evolve` has copied: its fields' names, each slot's setter, and a function that
#: copies every slot of one instance to a blank one.
_COPIERS: dict[type, tuple[frozenset[str], dict[str, Callable[[Any, Any], None]], Callable[[Any, Any], None]]] = {}


def slot_copier(
    cls: type, skip: frozenset[str] = frozenset()
) -> tuple[frozenset[str], dict[str, Callable[[Any, Any], None]], Callable[[Any, Any], None]]:
    """The copier of a slotted dataclass: one generated statement per slot (as ``dataclasses`` builds
    ``__init__``), which runs twice as fast as a loop over the slots' setters. Slots named in ``skip``
    are left unset (the caller sets them)."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    setters: dict[str, Callable[[Any, Any], None]] = {}
    for name in names:
        slot = cls.__dict__.get(name)
        if not isinstance(slot, MemberDescriptorType) or not name.isidentifier():
            raise TypeError(f"{cls.__name__} is not a slotted dataclass")
        setters[name] = slot.__set__
    scope = {f"_set_{i}": setters[name] for i, name in enumerate(names)}
    copied = [(i, name) for i, name in enumerate(names) if name not in skip]
    body = "".join(f"    _set_{i}(new, old.{name})\n" for i, name in copied) or "    pass\n"
    exec(f"def copy_slots(old, new):\n{body}", scope)  # built from the class's own field names
    return frozenset(names), setters, scope["copy_slots"]


def evolve(obj: _Frozen, **changes: Any) -> _Frozen:
    """``dataclasses.replace`` for the API views' frozen, slotted dataclasses (every field set by
    ``__init__``, no ``__post_init__``): the slots are copied straight instead of going through
    ``__init__``, several times faster (a pod is re-made for every binding it sees)."""
    cls = type(obj)
    copier = _COPIERS.get(cls)
    if copier is None:
        copier = _COPIERS[cls] = slot_copier(cls)
    new = object.__new__(cls)
    copier[2](obj, new)
    setters = copier[1]
    try:
        for name, value in changes.items():
            setters[name](new, value)
    except KeyError:  # a name that is no field (looked up only when one is given)
        raise TypeError(f"{cls.__name__} has no field {sorted(changes.keys() - copier[0])[0]!r}") from None
    return new


def slot_builder(cls: type[_Frozen]) -> Callable[..., _Frozen]:
    """A constructor of a frozen, slotted dataclass: the same parameters and defaults as its
    ``__init__`` (by position or name), the slots set straight (half the cost). Fields with a default
    factory are refused (their ``__init__`` calls it)."""
    declared = dataclasses.fields(cast(type, cls))
    if any(f.default_factory is not dataclasses.MISSING or not f.init for f in declared):
        raise TypeError(f"{cls.__name__} has fields with a default factory or outside __init__")
    setters = slot_copier(cls)[1]  # in field order
    if any(name.startswith(("_set_", "_default_")) or name in ("_new", "_cls", "_built") for name in setters):
        raise TypeError(f"{cls.__name__} has a field named like the builder's own names")
    scope: dict[str, Any] = {f"_set_{i}": setter for i, setter in enumerate(setters.values())}
    scope["_new"], scope["_cls"] = object.__new__, cls
    params = []
    for i, f in enumerate(declared):
        if f.default is not dataclasses.MISSING:
            scope[f"_default_{i}"] = f.default
            params.append(f"{f.name}=_default_{i}")
        else:
            params.append(f.name)
    body = "".join(f"    _set_{i}(_built, {name})\n" for i, name in enumerate(setters))
    exec(f"def build({', '.join(params)}):\n    _built = _new(_cls)\n{body}    return _built\n", scope)
    return scope["build"]  # type: ignore[no-any-return]
