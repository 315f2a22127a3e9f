"""Frozen, slotted dataclasses made or copied straight through their slots, for the hot paths that make
or copy many (a pod per arrival and per binding, a watch event per change, a summary per attempt).

A frozen dataclass's ``__init__`` (and :func:`dataclasses.replace`) sets each field through
``object.__setattr__``, its own ``__setattr__`` refusing; writing the slots' descriptors directly, one
generated statement per slot as ``dataclasses`` builds ``__init__``, costs half as much. Only for
classes whose ``__init__`` does nothing else: every field set from its argument, no ``__post_init__``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import MemberDescriptorType
from typing import Any, TypeVar, cast

_T = TypeVar("_T")

#: A class's field names, each slot's setter (field order), and a function copying the slots of one
#: instance onto a blank one.
SlotCopier = tuple[frozenset[str], dict[str, Callable[[Any, Any], None]], Callable[[Any, Any], None]]


def slot_setters(cls: type) -> dict[str, Callable[[Any, Any], None]]:
    """Each field's slot setter, in field order; TypeError when ``cls`` is not a slotted dataclass."""
    setters: dict[str, Callable[[Any, Any], None]] = {}
    for field in dataclasses.fields(cls):
        slot = cls.__dict__.get(field.name)
        if not isinstance(slot, MemberDescriptorType) or not field.name.isidentifier():
            raise TypeError(f"{cls.__name__} is not a slotted dataclass")
        setters[field.name] = slot.__set__
    return setters


def slot_copier(cls: type, skip: frozenset[str] = frozenset()) -> SlotCopier:
    """The copier of a slotted dataclass: one generated statement per slot, twice as fast as a loop over
    the slots' setters. Slots named in ``skip`` are left unset (the caller sets them)."""
    setters = slot_setters(cls)
    scope = {f"_set_{i}": setter for i, setter in enumerate(setters.values())}
    copied = [(i, name) for i, name in enumerate(setters) if name not in skip]
    body = "".join(f"    _set_{i}(new, old.{name})\n" for i, name in copied) or "    pass\n"
    exec(f"def copy_slots(old, new):\n{body}", scope)  # built from the class's own field names
    return frozenset(setters), setters, scope["copy_slots"]


def slot_builder(cls: type[_T]) -> Callable[..., _T]:
    """A constructor of a frozen, slotted dataclass: the same parameters and defaults as its ``__init__``
    (by position or name), the slots set straight (half the cost). A class whose ``__init__`` does more
    (a ``__post_init__``, a default factory, a field outside ``__init__``) is refused."""
    klass = cast(type, cls)
    declared = dataclasses.fields(klass)
    if hasattr(klass, "__post_init__") or any(
        f.default_factory is not dataclasses.MISSING or not f.init for f in declared
    ):
        raise TypeError(f"{cls.__name__}'s __init__ does more than set every field from its argument")
    setters = slot_setters(klass)  # in field order
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
