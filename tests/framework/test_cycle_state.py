"""CycleState: per-attempt storage, and what a clone shares with its original."""

from __future__ import annotations

import pytest

from kubesched.framework.cycle_state import CycleState


class Counter:
    """State data that knows how to copy itself (like kube-scheduler's StateData.Clone)."""

    def __init__(self, n: int = 0) -> None:
        self.n = n

    def clone(self) -> Counter:
        return Counter(self.n)


def test_read_write_delete() -> None:
    state = CycleState()
    state.write("k", 1)
    assert state.read("k") == 1 and "k" in state and state.get("k") == 1
    state.write("k", 2)
    assert state.read("k") == 2
    state.delete("k")
    state.delete("k")  # deleting twice is fine
    assert "k" not in state and state.get("k", "dflt") == "dflt" and state.get("k") is None
    with pytest.raises(KeyError):
        state.read("k")


def test_clone_clones_values_that_can_clone_and_shares_the_rest() -> None:
    state = CycleState()
    counter = Counter(1)
    shared = {"plain": "dict"}
    state.write("counter", counter)
    state.write("shared", shared)
    state.skip_filter_plugins.add("A")
    state.skip_score_plugins.add("B")

    copy = state.clone()
    cloned = copy.read("counter")
    assert isinstance(cloned, Counter) and cloned is not counter and cloned.n == 1
    assert copy.read("shared") is shared
    cloned.n = 5
    assert counter.n == 1

    copy.write("new", 1)
    copy.delete("shared")
    copy.skip_filter_plugins.add("C")
    copy.skip_score_plugins.clear()
    assert "new" not in state and state.read("shared") is shared
    assert state.skip_filter_plugins == {"A"} and state.skip_score_plugins == {"B"}
    assert copy.skip_filter_plugins == {"A", "C"}


def test_clone_ignores_a_non_callable_clone_attribute() -> None:
    class NotCloneable:
        clone = "not a method"

    value = NotCloneable()
    state = CycleState()
    state.write("v", value)
    assert state.clone().read("v") is value
