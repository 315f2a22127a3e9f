"""The summary as one JSON document: every field documented, every pod's outcome, every node."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kubesched import simulate
from kubesched.sim.simulate import SimulationResult
from kubesched.sim.summary_json import SCHEMA_VERSION, summary_document
from tests.sim.scenarios import deployment, node, pod

DOCS = Path(__file__).resolve().parents[2] / "docs" / "simulation.md"
HIGH = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}


@pytest.fixture(scope="module")
def result() -> SimulationResult:
    """n1 holds `low` until `urgent` preempts it; `huge` fits nowhere; `gone` is deleted by the timeline;
    `short` completes; a Deployment's two pods run; 25 nodes, so the text summary would list only ten."""
    short = pod("short")
    short["metadata"]["annotations"] = {"kubesched.io/duration": "1m"}
    spare = [node(f"spare-{i}", cpu="1", zone="b") for i in range(1, 24)]
    return simulate(
        [
            HIGH,
            node("n1", cpu="1"),
            node("n2", cpu="2"),
            *spare,
            pod("low", cpu="1", node_name="n1"),
            pod("urgent", cpu="1", priorityClassName="high", nodeSelector={"kubernetes.io/hostname": "n1"}),
            pod("huge", cpu="64"),
            pod("gone", cpu="64"),
            short,
            deployment("web", 2, cpu="100m"),
        ],
        timeline=[{"at": "30s", "action": "delete", "object": "Pod/default/gone"}],
        tie_break="name",
    )


def test_counts_and_every_pods_outcome(result: SimulationResult) -> None:
    doc = summary_document(result)
    assert (doc["schemaVersion"], doc["kind"]) == (SCHEMA_VERSION, "SimulationSummary")
    outcomes = {p["pod"]: p for p in doc["pods"]}
    assert outcomes["default/huge"]["outcome"] == "Pending"
    assert outcomes["default/huge"]["reason"].startswith("0/25 nodes are available:")
    assert outcomes["default/gone"] == {
        "pod": "default/gone",
        "outcome": "Deleted",
        "node": None,
        "workload": None,
        "reason": "timeline",
    }
    assert outcomes["default/short"]["outcome"] == "Completed" and outcomes["default/short"]["node"]
    web = [p for p in doc["pods"] if p["workload"] == "Deployment default/web"]
    assert len(web) == 2 and all(p["outcome"] == "Scheduled" for p in web)
    assert (doc["total"], doc["scheduled"], doc["pending"], doc["deleted"]) == (6, 4, 1, 1)
    assert doc["attempts"] == result.attempt_count and doc["virtualSeconds"] == result.virtual_seconds


def test_preemptions_deletions_workloads_and_time(result: SimulationResult) -> None:
    doc = summary_document(result)
    assert doc["preemptions"] == [
        {"victim": "default/low", "preemptor": "default/urgent", "node": "n1", "at": pytest.approx(0, abs=1)}
    ]
    assert [(d["pod"], d["reason"]) for d in doc["deletions"]] == [
        ("default/low", "preempted"),
        ("default/gone", "timeline"),
        ("default/short", "completed"),
    ]
    assert doc["workloads"] == [{"workload": "Deployment default/web", "pods": 2, "scheduled": 2, "pending": []}]
    assert doc["overTime"]["completed"] == 1 and set(doc["overTime"]["latencySeconds"]) == {"p50", "p95", "p99"}


def test_every_node_with_its_pool_and_use(result: SimulationResult) -> None:
    doc = summary_document(result)
    assert doc["poolLabel"] == "topology.kubernetes.io/zone"
    assert [(p["pool"], p["nodes"]) for p in doc["pools"]] == [("a", 2), ("b", 23)]
    assert len(doc["nodes"]) == 25  # all of them, whatever the text shows
    n1 = next(n for n in doc["nodes"] if n["name"] == "n1")
    assert n1["cpu"] == {"requested": 1000, "allocatable": 1000} and n1["use"] == 1.0 and n1["pool"] == "a"
    assert summary_document(result, group_by="kubernetes.io/hostname")["pools"][0]["nodes"] == 1


def test_the_document_is_json_and_documented_field_by_field(result: SimulationResult) -> None:
    doc = json.loads(json.dumps(summary_document(result)))
    first_cells = re.findall(r"^\| (`[^|]+)\|", DOCS.read_text(), re.MULTILINE)
    documented = {name for cell in first_cells for name in re.findall(r"`([^`]+)`", cell)}
    assert _paths(doc) <= documented, f"undocumented: {sorted(_paths(doc) - documented)}"


def _paths(doc: dict[str, Any], prefix: str = "") -> set[str]:
    """Dotted field paths (``pods[].outcome``); maps keyed by names (resources) and the
    ``{requested, allocatable}`` pairs stop there."""
    out = set()
    for key, value in doc.items():
        path = f"{prefix}{key}"
        out.add(path)
        leaf = key in ("extended", "utilisation", "latencySeconds") or (prefix and key in ("cpu", "memory", "pods"))
        if isinstance(value, dict) and not leaf:
            out |= _paths(value, f"{path}.")
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for item in value:
                out |= _paths(item, f"{path}[].")
    return out
