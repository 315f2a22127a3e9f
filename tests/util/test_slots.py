"""slot_maker: an instance filled through its slots is the one __init__ makes."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass, field

import pytest

from kubesched.util.slots import slot_maker, slot_setters


@dataclass(frozen=True, slots=True)
class _Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


def test_the_maker_makes_what_init_makes() -> None:
    make = slot_maker(_Point)
    made = make(1, 2, ("a",))
    assert type(made) is _Point
    assert made == _Point(1, 2, ("a",)) and hash(made) == hash(_Point(1, 2, ("a",)))
    assert (made.x, made.y, made.tags) == (1, 2, ("a",))
    assert make(3, 4, ()) != made
    with pytest.raises(FrozenInstanceError):
        made.x = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        make(1, 2)  # every field, positionally


def test_setters_come_in_field_order() -> None:
    assert list(slot_setters(_Point)) == ["x", "y", "tags"]


@dataclass(frozen=True)
class _Unslotted:
    x: int


@dataclass(frozen=True, slots=True)
class _PostInit:
    x: int

    def __post_init__(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class _Derived:
    x: int
    double: int = field(init=False, default=0)


@pytest.mark.parametrize("cls", [_Unslotted, _PostInit, _Derived])
def test_classes_whose_init_does_more_are_refused(cls: type) -> None:
    with pytest.raises(TypeError):
        slot_maker(cls)
