"""The slot builders: an instance filled through its slots is the one __init__ makes."""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError, dataclass, field

import pytest

from kubesched.util.slots import slot_builder, slot_copier, slot_setters


@dataclass(frozen=True, slots=True)
class _Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


def test_the_builder_makes_what_init_makes() -> None:
    make = slot_builder(_Point)
    made = make(1, 2, ("a",))
    assert type(made) is _Point
    assert made == _Point(1, 2, ("a",)) and hash(made) == hash(_Point(1, 2, ("a",)))
    assert (made.x, made.y, made.tags) == (1, 2, ("a",))
    assert make(3, 4, ()) != made
    with pytest.raises(FrozenInstanceError):
        made.x = 5  # type: ignore[misc]


def test_setters_come_in_field_order() -> None:
    assert list(slot_setters(_Point)) == ["x", "y", "tags"]


def test_the_copier_copies_every_slot_but_the_skipped() -> None:
    names, setters, copy = slot_copier(_Point, skip=frozenset({"y"}))
    assert names == {"x", "y", "tags"} and list(setters) == ["x", "y", "tags"]
    new = object.__new__(_Point)
    copy(_Point(1, 2, ("a",)), new)
    setters["y"](new, 9)
    assert new == _Point(1, 9, ("a",))


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
        slot_builder(cls)


def test_slot_builder_makes_what_init_makes_by_position_or_name() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: list[int]
        obj: str  # a field may carry any name the builder does not use itself

    build = slot_builder(Point)
    shared = [1]
    by_position, by_name = build(1, shared, "o"), build(y=shared, obj="o", x=1)
    assert by_position == by_name == Point(1, shared, "o")
    assert type(by_position) is Point and by_position.y is shared and by_position.obj == "o"
    with pytest.raises(dataclasses.FrozenInstanceError):
        by_position.x = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        build(1)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Clashing:
        _built: int

    with pytest.raises(TypeError, match="builder's own names"):
        slot_builder(Clashing)


def test_slot_builder_keeps_plain_defaults_and_refuses_default_factories() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class WithDefault:
        a: int
        b: int = 7

    build = slot_builder(WithDefault)
    assert (build(1), build(1, 2), build(a=3, b=4)) == (WithDefault(1), WithDefault(1, 2), WithDefault(3, 4))
    assert build(1).b == 7

    @dataclasses.dataclass(frozen=True, slots=True)
    class WithFactory:
        a: list[int] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match="does more than set every field"):
        slot_builder(WithFactory)
