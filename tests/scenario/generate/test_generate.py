"""Generators write scenarios that load and simulate; the OpenB sample converts."""

from __future__ import annotations

import itertools
import types
from pathlib import Path

import numpy as np
import pytest

from kubesched.app.cli import main
from kubesched.scenario.generate import (
    NodeShape,
    PodShape,
    openb_objects,
    poisson_objects,
    workload_objects,
    write_scenario,
)
from kubesched.scenario.generate.lifetimes import parse_distribution
from kubesched.scenario.generate.openb import GPU, MODEL_LABEL, TraceError, openb_pods
from kubesched.scenario.generate.poisson import poisson_pods, rate_for
from kubesched.scenario.manifests import load_manifests
from kubesched.scenario.timing import parse_duration_seconds
from kubesched.sim.simulate import simulate

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "openb-sample"
NODES_CSV = SAMPLE / "openb_node_list_sample.csv"
PODS_CSV = SAMPLE / "openb_pod_list_sample.csv"


def _annotation(pod: dict, key: str) -> float:
    return parse_duration_seconds(pod["metadata"]["annotations"][key], key)


# -- scheduler_perf --------------------------------------------------------------------------------
def test_perf_workload_simulates_and_binds_every_pod() -> None:
    objects = list(workload_objects("SchedulingPodAntiAffinity", 20, 5, 10))
    assert [o["kind"] for o in objects].count("Node") == 20
    r = simulate(objects, burst=True)
    assert len(r.final) == 10 and all(r.final.values())
    assert len(set(r.final.values())) == 10  # required anti-affinity: one per node


def test_unknown_workload_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown workload"):
        list(workload_objects("Nope", 1, 0, 1))


# -- lifetimes -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "mean"), [("const:90s", 90), ("exp:10m", 600), ("uniform:1m:3m", 120), ("lognormal:1m:0", 60)]
)
def test_distributions_have_their_mean(text: str, mean: float) -> None:
    dist = parse_distribution(text)
    assert dist.mean == pytest.approx(mean)
    samples = dist.sample(np.random.default_rng(1), 20000)
    assert samples.min() >= 0
    assert samples.mean() == pytest.approx(mean, rel=0.05)


@pytest.mark.parametrize("text", ["exp", "exp:x", "uniform:3m:1m", "gauss:1m", "lognormal:1m:wide", "const:1m:2m"])
def test_bad_distributions_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=text.split(":")[0]):
        parse_distribution(text)


# -- Poisson ---------------------------------------------------------------------------------------
def test_poisson_pods_are_lazy_time_ordered_and_at_the_asked_rate() -> None:
    pods = poisson_pods(5000, rate=2.0, lifetime="exp:1m", seed=3)
    assert isinstance(pods, types.GeneratorType)
    arrivals = [_annotation(p, "kubesched.io/arrival") for p in itertools.islice(pods, 5000)]
    assert arrivals == sorted(arrivals)
    assert 5000 / arrivals[-1] == pytest.approx(2.0, rel=0.05)


def test_rate_for_a_target_utilisation_follows_littles_law() -> None:
    nodes = [NodeShape(10, cpu="4")]
    rate = rate_for(0.5, nodes, [PodShape(cpu="500m")], parse_distribution("const:100s"))
    # 40 cores, half requested, 0.5 core per pod, 100 s each: 40 pods running, 0.4 arrivals per second.
    assert rate == pytest.approx(0.4)


def test_poisson_scenario_reaches_about_the_target_utilisation() -> None:
    objects = poisson_objects(
        [NodeShape(20, cpu="4")],
        3000,
        utilisation=0.5,
        lifetime="exp:5m",
        shapes=[PodShape(cpu="500m"), PodShape(cpu="1", weight=0.5)],
        seed=1,
    )
    r = simulate(list(objects))
    assert r.timed and r.completed == 3000
    assert r.series is not None
    assert 0.35 < r.series.utilisation()["cpu"]["mean"] < 0.6


@pytest.mark.parametrize("text", ["x", "10:gpu=1", "10:cpu"])
def test_bad_node_shapes_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"node shape|expected"):
        NodeShape.parse(text)


# -- OpenB -----------------------------------------------------------------------------------------
def test_the_openb_sample_converts_into_nodes_and_timed_pods() -> None:
    objects = list(openb_objects(NODES_CSV, PODS_CSV))
    nodes = [o for o in objects if o["kind"] == "Node"]
    pods = [o for o in objects if o["kind"] == "Pod"]
    assert len(nodes) == 10 and len(pods) == 40
    p100 = nodes[0]
    assert p100["metadata"]["labels"][MODEL_LABEL] == "P100"
    assert p100["status"]["allocatable"] == {"cpu": "64000m", "memory": "262144Mi", "pods": "110", GPU: "2"}
    assert MODEL_LABEL not in nodes[4]["metadata"]["labels"] and GPU not in nodes[4]["status"]["allocatable"]
    arrivals = [_annotation(p, "kubesched.io/arrival") for p in pods]
    assert arrivals[0] == 0 and arrivals == sorted(arrivals)
    first = pods[0]  # openb-pod-0000: 4000m, 15258Mi, 1 GPU at 220 milli, scheduled at creation, 623 s
    assert first["metadata"]["name"] == "openb-pod-0000"
    assert first["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "4000m", "memory": "15258Mi", GPU: "1"}
    assert first["metadata"]["annotations"]["kubesched.io/gpu-milli"] == "220"
    assert _annotation(first, "kubesched.io/duration") == 623
    never_scheduled = pods[1]  # openb-pod-0001 never got scheduled: it lives from creation to deletion
    assert _annotation(never_scheduled, "kubesched.io/duration") == 9901033 - 9900528
    constrained = next(p for p in pods if "affinity" in p["spec"])
    term = constrained["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["nodeSelectorTerms"][0]["matchExpressions"][0]["key"] == MODEL_LABEL


def test_the_openb_sample_simulates(tmp_path: Path) -> None:
    write_scenario(tmp_path, openb_objects(NODES_CSV, PODS_CSV))
    r = simulate(tmp_path)
    assert r.timed and len(r.final) == 40
    bound = {k: n for k, n in r.final.items() if n}
    assert r.completed == len(bound) > 30
    assert r.pods() == [p for p in r.pods() if not p["spec"].get("nodeName")]  # every bound pod completed
    models = {n["metadata"]["name"]: n["metadata"]["labels"].get(MODEL_LABEL) for n in r.nodes()}
    for pod in openb_pods(PODS_CSV):
        key = f"default/{pod['metadata']['name']}"
        affinity = pod["spec"].get("affinity")
        if key in bound and affinity:
            wanted = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
                "matchExpressions"
            ][0]["values"]
            assert models[bound[key]] in wanted


def test_openb_limit_keeps_the_earliest_pods() -> None:
    assert [p["metadata"]["name"] for p in openb_pods(PODS_CSV, limit=3)] == [
        "openb-pod-0000",
        "openb-pod-0001",
        "openb-pod-0002",
    ]


def test_a_broken_trace_names_file_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "pods.csv"
    bad.write_text(PODS_CSV.read_text().replace("openb-pod-0002,6000", "openb-pod-0002,lots", 1))
    with pytest.raises(TraceError, match=r"pods.csv: line 4: cpu_milli: expected a number"):
        openb_pods(bad)
    missing = tmp_path / "nodes.csv"
    missing.write_text("sn,cpu_milli\nn1,1000\n")
    with pytest.raises(TraceError, match="missing column"):
        list(openb_objects(missing, PODS_CSV))


# -- CLI -------------------------------------------------------------------------------------------
def test_generate_cli_writes_scenarios_that_simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "poisson"
    assert (
        main(
            [
                "generate",
                "poisson",
                "--node-shape",
                "5:cpu=2,memory=8Gi",
                "--pods",
                "50",
                "--lifetime",
                "const:1m",
                "--utilisation",
                "0.5",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    assert "5 objects in nodes.yaml, 50 objects in pods.yaml" in capsys.readouterr().out
    assert len(load_manifests([out])) == 55
    assert main(["simulate", str(out)]) == 0
    assert "Scheduled 50/50" in capsys.readouterr().out
    assert (
        main(["generate", "perf", "--nodes", "10", "--existing", "5", "--pods", "20", "-o", str(tmp_path / "perf")])
        == 0
    )
    assert (
        main(
            [
                "generate",
                "openb",
                "--node-list",
                str(NODES_CSV),
                "--pod-list",
                str(PODS_CSV),
                "--limit",
                "5",
                "-o",
                str(tmp_path / "openb"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["simulate", str(tmp_path / "openb")]) == 0
    assert "pending pods" in capsys.readouterr().out


def test_generate_cli_reports_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "poisson", "--lifetime", "gauss:1m", "-o", str(tmp_path / "x")]) == 2
    assert "unknown distribution" in capsys.readouterr().err
    assert (
        main(
            [
                "generate",
                "openb",
                "--node-list",
                str(tmp_path / "none.csv"),
                "--pod-list",
                str(PODS_CSV),
                "-o",
                str(tmp_path / "y"),
            ]
        )
        == 2
    )
    assert "none.csv" in capsys.readouterr().err


def test_a_generator_failing_late_leaves_the_earlier_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lifetime distribution is read as pods are drawn: a bad one must not empty the folder."""
    assert main(["generate", "poisson", "--pods", "5", "--rate", "1", "-o", str(tmp_path)]) == 0
    before = {p.name: p.read_text() for p in tmp_path.iterdir()}
    assert main(["generate", "poisson", "--pods", "5", "--rate", "1", "--lifetime", "100000", "-o", str(tmp_path)]) != 0
    assert "unknown distribution" in capsys.readouterr().err
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == before
