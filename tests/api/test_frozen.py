"""evolve: what dataclasses.replace makes, through the slots."""

import dataclasses

import pytest

from kubesched.api.frozen import evolve
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
