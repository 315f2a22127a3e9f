"""Frozen, slotted dataclasses filled straight through their slots, for the hot paths that make or copy many.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (its own ``__setattr__``
refuses); writing the slots' descriptors directly, one generated statement per slot as ``dataclasses``
builds ``__init__``, costs half as much. Only for classes whose ``__init__`` does nothing else: every
field set from its argument, no ``__post_init__``, no default factory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import MemberDescriptorType
from typing import Any, TypeVar

_T = TypeVar("_T")


def slot_setters(cls: type) -> dict[str, Callable[[Any, Any], None]]:
    """Each field's slot setter, in field order; TypeError when ``cls`` is not a slotted dataclass."""
    setters: dict[str, Callable[[Any, Any], None]] = {}
    for field in dataclasses.fields(cls):
        slot = cls.__dict__.get(field.name)
        if not isinstance(slot, MemberDescriptorType) or not field.name.isidentifier():
            raise TypeError(f"{cls.__name__} is not a slotted dataclass")
        setters[field.name] = slot.__set__
    return setters


def slot_maker(cls: type[_T]) -> Callable[..., _T]:
    """A function making an instance of ``cls`` from every field's value, positionally in field order,
    without ``__init__`` (what ``cls(*values)`` makes, no defaults applied)."""
    klass: type = cls  # any class: slot_setters refuses one that is not a slotted dataclass
    if hasattr(klass, "__post_init__") or not all(f.init for f in dataclasses.fields(klass)):
        raise TypeError(f"{cls.__name__}'s __init__ does more than set every field from its argument")
    setters = slot_setters(cls)
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    args = [f"_{i}" for i in range(len(setters))]
    body = ""
    for i, setter in enumerate(setters.values()):
        scope[f"_set_{i}"] = setter
        body += f"    _set_{i}(obj, _{i})\n"
    # Built from the class's own field count: the arguments and setters are numbered, never named.
    exec(f"def make({', '.join(args)}):\n    obj = _new(_cls)\n{body}    return obj\n", scope)
    maker: Callable[..., _T] = scope["make"]
    return maker
