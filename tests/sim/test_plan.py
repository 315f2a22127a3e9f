"""plan(): the fewest copies of a node template that leave no pod pending, found by a checked search."""

from __future__ import annotations

import pytest

from kubesched.sim.node_templates import node_copies
from kubesched.sim.plan import _monotone, plan
from kubesched.sim.simulate import SimulationError
from tests.sim.scenarios import deployment, node, pod


def test_finds_the_fewest_nodes_and_checks_the_count_below() -> None:
    scenario = [node("n1", cpu="2"), deployment("web", 9, cpu="1")]  # 9 cpu asked, 2 there
    result = plan(scenario, node("big", cpu="2"))
    assert result.nodes_to_add == 4  # 2 + 4 * 2 = 10 >= 9, and 3 nodes give 8 < 9
    assert result.pending == [] and result.scheduled == 9
    assert result.tried[4] == 0 and result.tried[3] > 0 and result.tried[5] == 0
    assert result.monotone
    assert result.to_dict() == {"nodesToAdd": 4, "scheduled": 9, "pending": []}


def test_zero_when_nothing_is_pending() -> None:
    result = plan([node("n1"), pod("a")], node("extra"))
    assert result.nodes_to_add == 0 and result.tried == {0: 0, 100: 0}


def test_pods_no_added_node_can_take_are_left_out_of_the_goal() -> None:
    scenario = [node("n1", cpu="1"), pod("huge", cpu="64"), pod("a", cpu="1"), pod("b", cpu="1")]
    result = plan(scenario, node("extra", cpu="8"), max_nodes=3)
    assert result.nodes_to_add == 1
    assert result.pending == ["default/huge"] and result.scheduled == 2


def test_added_nodes_are_named_after_the_template() -> None:
    copies = node_copies(node("extra"), 2)
    assert [n["metadata"]["name"] for n in copies] == ["extra-1", "extra-2"]
    assert copies[1]["metadata"]["labels"]["kubernetes.io/hostname"] == "extra-2"


def test_clashing_names_are_refused() -> None:
    with pytest.raises(SimulationError, match="clash"):
        plan([node("extra-1"), pod("a", cpu="8")], node("extra"), max_nodes=2)


@pytest.mark.parametrize(
    ("outcomes", "want"),
    [
        ({0: False, 1: False, 2: True, 4: True}, True),
        ({0: False, 1: True, 2: False, 4: True}, False),
        ({0: True}, True),
    ],
)
def test_monotone(outcomes, want) -> None:
    assert _monotone(outcomes) is want


class _FakeSimulation:
    """Stands in for Simulation: one pod, scheduled iff the number of added nodes is in FITS."""

    FITS: set[int] = set()

    def __init__(self, scenario, config, **_: object) -> None:
        self.added = sum(
            1 for m in scenario.manifests if m.kind == "Node" and m.obj["metadata"]["name"].startswith("extra-")
        )

    def load(self) -> None:
        pass

    def run(self):
        from kubesched.sim.simulate import SimulationResult

        return SimulationResult(attempts=[], final={"default/p": "n1" if self.added in self.FITS else None})


@pytest.mark.parametrize(
    ("fits", "want", "monotone"),
    [
        pytest.param({2, 4, 5, 6, 7, 8}, 2, False, id="one-more-node-breaks-it-linear-search"),
        pytest.param({3, 4, 6, 7, 8}, 3, True, id="a-hole-above-the-checked-neighbours-is-not-seen"),
        pytest.param({5, 6, 7, 8}, 5, True, id="monotone"),
    ],
)
def test_search_checks_neighbours_and_falls_back_to_linear(monkeypatch, fits, want, monotone) -> None:
    import kubesched.sim.plan as plan_module

    monkeypatch.setattr(_FakeSimulation, "FITS", fits)
    monkeypatch.setattr(plan_module, "Simulation", _FakeSimulation)
    result = plan([node("n1")], node("extra"), max_nodes=8)
    assert (result.nodes_to_add, result.monotone) == (want, monotone)
