"""``kubesched explain`` on the example cluster: 80 columns, workload names, suggestions, exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kubesched.app.cli import main
from kubesched.sim.simulate import simulate

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "cluster"


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("explain") / "trace.jsonl"
    simulate([str(EXAMPLE)], tie_break="name", trace=str(path))
    return path


def _records(trace: Path) -> list[dict]:
    return [json.loads(line) for line in trace.read_text().splitlines()]


def _nodes(trace: Path) -> set[str]:
    return {n for r in _records(trace) for n in (*(r.get("feasible") or []), *(r.get("filter") or {}))}


@pytest.mark.parametrize(
    ("pod", "extra"),
    [
        pytest.param("web/checkout-1", [], id="scheduled"),
        pytest.param("ml/llm-train", [], id="unschedulable"),
        pytest.param("payments/payments-api-0", ["--attempt", "1"], id="preempting"),
    ],
)
@pytest.mark.parametrize("width", [80, 100, 160])
def test_readable_at_every_width(
    trace: Path, capsys: pytest.CaptureFixture[str], pod: str, extra: list[str], width: int
) -> None:
    assert main(["explain", str(trace), pod, "--width", str(width), *extra]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= width
    for node in _nodes(trace):
        assert re.search(rf"(?<![\w-]){re.escape(node)}(?![\w-])", out), node


def test_columns_sets_the_width_of_piped_output(
    trace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["explain", str(trace), "web/checkout-1"]) == 0
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) <= 80


@pytest.mark.parametrize(
    ("name", "read_as", "count"),
    [
        ("Deployment/web/storefront", "Deployment/web/storefront", 4),
        ("StatefulSet/payments/ledger", "StatefulSet/payments/ledger", 3),
        ("job/batch/nightly-report", "Job/batch/nightly-report", 4),
        ("ds/monitoring/log-agent", "DaemonSet/monitoring/log-agent", 12),
    ],
)
def test_workloads_list_the_pods_their_controllers_named(
    trace: Path, capsys: pytest.CaptureFixture[str], name: str, read_as: str, count: int
) -> None:
    assert main(["explain", str(trace), name]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{read_as} matches {count} pods in {trace}:"
    namespace, owner = name.split("/")[1:]
    listed = [line.split()[0] for line in lines[1 : 1 + count]]
    assert set(listed) == {r["pod"] for r in _records(trace) if r["pod"].startswith(f"{namespace}/{owner}-")}
    assert all(line.split()[1] == "Scheduled" for line in lines[1 : 1 + count])


def test_a_prefix_naming_one_pod_explains_it(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(trace), "web/cart"]) == 0
    assert capsys.readouterr().out.startswith("Pod web/cart-cache, attempt 1 of 1")


def test_a_misspelt_name_is_an_input_error_with_suggestions(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(trace), "web/storefrnt"]) == 2
    assert capsys.readouterr().err == (
        f"kubesched: error: no attempt for pod web/storefrnt in {trace}; did you mean web/storefront?\n"
    )


def test_a_too_narrow_width_is_an_input_error(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(trace), "web/cart-cache", "--width", "5"]) == 2
    assert "too narrow" in capsys.readouterr().err


# -- every pending pod -------------------------------------------------------------------------------------
def test_a_trace_without_a_pod_groups_its_pending_pods(tmp_path, capsys) -> None:
    import yaml as _yaml

    from kubesched.app.cli import main as cli
    from tests.sim.scenarios import node as make_node
    from tests.sim.scenarios import pod as make_pod

    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        _yaml.safe_dump_all(
            [make_node("n1", cpu="1"), make_pod("a", cpu="2"), make_pod("b", cpu="3"), make_pod("ok", cpu="500m")]
        )
    )
    trace = tmp_path / "t.jsonl"
    assert cli(["simulate", str(scenario), "--trace", str(trace), "-q"]) == 0
    assert cli(["explain", str(trace), "--brief"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"2 pending pods in {trace}, 1 cause:\n")
    assert "2 pods: NodeResourcesFit: Insufficient cpu (1 node)" in out and "what would" not in out


def test_a_scenario_is_explained_with_checked_changes_as_json(tmp_path, capsys) -> None:
    import json as _json

    import yaml as _yaml

    from kubesched.app.cli import main as cli
    from tests.sim.scenarios import node as make_node
    from tests.sim.scenarios import pod as make_pod

    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        _yaml.safe_dump_all(
            [make_node("n1", cpu="2"), make_pod("used", cpu="1500m", node_name="n1"), make_pod("a", cpu="1")]
        )
    )
    assert cli(["explain", "--scenario", str(scenario), "--tie-break", "name", "-o", "json"]) == 0
    document = _json.loads(capsys.readouterr().out)
    assert document["schemaVersion"] == 1 and document["pending"] == 1 and document["source"] == str(scenario)
    assert document["simulated"]["toSchedule"] == 1 and document["simulated"]["whatIfSimulations"] >= 2
    [group] = document["groups"]
    assert group["count"] == 1 and group["pods"] == ["default/a"]
    kinds = {r["kind"]: r for r in group["remedies"]}
    assert kinds["closestNode"]["short"] == {"cpu": "500m"} and kinds["closestNode"]["helps"]
    assert kinds["preemption"]["victims"] == ["default/used"]
    [pod_entry] = document["pods"]
    assert pod_entry["group"] == 0 and pod_entry["lastAttempt"]["filter"]["n1"]["plugin"] == "NodeResourcesFit"


def test_a_named_pod_with_a_scenario_and_the_wrong_combinations(tmp_path, capsys) -> None:
    import yaml as _yaml

    from kubesched.app.cli import main as cli
    from tests.sim.scenarios import node as make_node
    from tests.sim.scenarios import pod as make_pod

    scenario = tmp_path / "s.yaml"
    scenario.write_text(_yaml.safe_dump_all([make_node("n1", cpu="1"), make_pod("a", cpu="2"), make_pod("ok")]))
    assert cli(["explain", "ok", "--scenario", str(scenario), "--brief", "--no-what-if"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("default/ok is not pending: scheduled on n1\n0 pending pods")
    assert cli(["explain", "a", "--scenario", str(scenario), "--no-what-if"]) == 0
    out = capsys.readouterr().out
    assert "1 pod: NodeResourcesFit: Insufficient cpu (1 node)" in out and "Pod default/a, attempt" in out
    assert cli(["explain", "t.jsonl", "a", "--scenario", str(scenario)]) == 2
    assert "give at most a POD, no TRACE" in capsys.readouterr().err
    assert cli(["explain"]) == 2
    assert "give a TRACE (and a POD), or a scenario" in capsys.readouterr().err
