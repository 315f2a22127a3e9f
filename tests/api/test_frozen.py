import dataclasses

import pytest

from kubesched.api.frozen import evolve, slot_builder
from kubesched.api.objects import Pod
from tests.factories import pod_dict


def test_evolve_makes_what_dataclasses_replace_makes_and_leaves_the_original() -> None:
    pod = Pod.from_dict(pod_dict("p", cpu="1", labels={"app": "web"}))
    moved = evolve(pod, node_name="n1", meta=evolve(pod.meta, resource_version="7"))
    expected = dataclasses.replace(pod, node_name="n1", meta=dataclasses.replace(pod.meta, resource_version="7"))
    names = [f.name for f in dataclasses.fields(Pod)]
    assert [getattr(moved, n) for n in names] == [getattr(expected, n) for n in names]
    assert moved.meta == expected.meta
    assert (pod.node_name, pod.meta.resource_version) == ("", "")
    with pytest.raises(TypeError, match="node"):
        evolve(pod, node="n1")


def test_evolve_refuses_a_dataclass_without_slots() -> None:
    @dataclasses.dataclass(frozen=True)
    class Plain:
        a: int
        b: int

    with pytest.raises(TypeError, match="slotted"):
        evolve(Plain(1, 2), a=3)


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

    with pytest.raises(TypeError, match="default factory"):
        slot_builder(WithFactory)
