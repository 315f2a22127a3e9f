"""A sweep on a real dask.distributed cluster: a scheduler and two worker processes on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kubesched.app.cli import main
from kubesched.sim.sweep import Variant, scenario_objects, tasks_for
from kubesched.sim.sweep_engine import run_tasks
from tests.sim.scenarios import node, pod

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None, protocol="tcp"
    ) as cluster:
        yield cluster.scheduler_address


def test_the_cluster_runs_every_task_and_gives_what_the_local_run_gives(address: str) -> None:
    scenario = scenario_objects(
        [[node("n1", cpu="4"), node("n2", cpu="2"), *(pod(f"p{i}", cpu="1") for i in range(7))]][0]
    )
    tasks = tasks_for({"s": scenario}, [Variant("defaults")], [0, 1, 2])
    remote = run_tasks(tasks, address=address)
    local = run_tasks(tasks, workers=1)
    assert [(r.seed, r.scheduled, r.pending) for r in remote] == [(r.seed, r.scheduled, r.pending) for r in local]
    assert [r.scheduled for r in remote] == [6, 6, 6]


def test_the_command_takes_the_cluster_address(address: str, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump_all([node("n1", cpu="2"), pod("a", cpu="1"), pod("b", cpu="1")]))
    assert main(["sweep", str(scenario), "--seeds", "2", "--address", address, "-o", "json"]) == 0
    import json

    document = json.loads(capsys.readouterr().out)
    assert [r["scheduled"] for r in document["runs"]] == [2, 2]
    assert document["rows"][0]["scheduled"] == {"mean": 2.0, "ci95": 0.0, "low": 2.0, "high": 2.0, "n": 2}
