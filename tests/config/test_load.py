"""Loading from files and dicts, including strict decoding errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.config import (
    ConfigError,
    InterPodAffinityArgs,
    NodeResourcesFitArgs,
    PluginRef,
    PodTopologySpreadArgs,
    ResourceSpec,
    UtilizationShapePoint,
    load_config,
)
from tests.corpus import CORPUS

CONFORMANCE = CORPUS
CONFORMANCE_CONFIGS = sorted(CONFORMANCE.glob("*/config.yaml"))
HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def cfg(**fields: Any) -> dict[str, Any]:
    return {**HEAD, **fields}


def fit_args(path: Path, profile: int = 0) -> NodeResourcesFitArgs:
    args = load_config(path).profiles[profile].plugin_config["NodeResourcesFit"]
    assert isinstance(args, NodeResourcesFitArgs)
    return args


needs_corpus = pytest.mark.skipif(not CONFORMANCE_CONFIGS, reason="conformance corpus not available")


@needs_corpus
@pytest.mark.parametrize("path", CONFORMANCE_CONFIGS, ids=lambda p: p.parent.name)
def test_every_conformance_config_loads(path: Path) -> None:
    loaded = load_config(path)
    assert loaded.percentage_of_nodes_to_score == 100
    assert loaded.profiles


@needs_corpus
def test_profiles_two() -> None:
    loaded = load_config(CONFORMANCE / "profiles-two" / "config.yaml")
    assert [p.scheduler_name for p in loaded.profiles] == ["default-scheduler", "bin-packer"]
    packer = loaded.profiles[1]
    assert PluginRef("NodeResourcesFit", 3) in packer.plugins.multi_point.enabled
    assert packer.plugins.score.disabled == ("NodeResourcesBalancedAllocation",)
    assert fit_args(CONFORMANCE / "profiles-two" / "config.yaml", 1).scoring_strategy.type == "MostAllocated"
    assert fit_args(CONFORMANCE / "profiles-two" / "config.yaml", 0).scoring_strategy.type == "LeastAllocated"


@needs_corpus
@pytest.mark.parametrize(
    ("scenario", "stype", "resources"),
    [
        ("score-most-allocated", "MostAllocated", [("cpu", 1), ("memory", 1)]),
        ("score-resource-weights", "LeastAllocated", [("cpu", 1), ("memory", 5)]),
        (
            "score-rtcr-gpu-binpack",
            "RequestedToCapacityRatio",
            [("nvidia.com/gpu", 3), ("cpu", 1), ("memory", 1)],
        ),
        ("fit-ignored-resources", "LeastAllocated", [("cpu", 1), ("memory", 1)]),
    ],
)
def test_conformance_fit_strategies(scenario: str, stype: str, resources: list[tuple[str, int]]) -> None:
    strategy = fit_args(CONFORMANCE / scenario / "config.yaml").scoring_strategy
    assert strategy.type == stype
    assert [(r.name, r.weight) for r in strategy.resources] == resources


@needs_corpus
def test_conformance_specific_args() -> None:
    rtcr = fit_args(CONFORMANCE / "score-rtcr-gpu-binpack" / "config.yaml").scoring_strategy
    assert rtcr.requested_to_capacity_ratio is not None
    assert rtcr.requested_to_capacity_ratio.shape == (
        UtilizationShapePoint(0, 0),
        UtilizationShapePoint(100, 10),
    )

    ignored = fit_args(CONFORMANCE / "fit-ignored-resources" / "config.yaml")
    assert ignored.ignored_resources == ("example.com/license",)
    assert ignored.ignored_resource_groups == ("vendor.example.io",)

    ipa = load_config(CONFORMANCE / "ipa-hard-pod-affinity-weight" / "config.yaml").profiles[0]
    assert ipa.plugin_config["InterPodAffinity"] == InterPodAffinityArgs(hard_pod_affinity_weight=100)

    pts = load_config(CONFORMANCE / "pts-default-constraints-list" / "config.yaml").profiles[0]
    pts_args = pts.plugin_config["PodTopologySpread"]
    assert isinstance(pts_args, PodTopologySpreadArgs)
    assert pts_args.defaulting_type == "List"
    assert [c["topologyKey"] for c in pts_args.default_constraints] == [
        "topology.kubernetes.io/zone",
        "kubernetes.io/hostname",
    ]

    na = load_config(CONFORMANCE / "na-added-affinity" / "config.yaml").profiles[0]
    added = na.plugin_config["NodeAffinity"].added_affinity  # type: ignore[attr-defined]
    assert added["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"] == 50

    weights = load_config(CONFORMANCE / "profile-weights-disabled" / "config.yaml").profiles[0].plugins
    assert [(p.name, p.weight) for p in weights.score.enabled] == [
        ("NodeResourcesFit", 5),
        ("NodeAffinity", 1),
        ("TaintToleration", 1),
    ]
    assert weights.score.disabled == ("ImageLocality", "NodeResourcesBalancedAllocation")


def test_json_file_and_yaml_file(tmp_path: Path) -> None:
    body = cfg(parallelism=4, profiles=[{"schedulerName": "x"}])
    (tmp_path / "c.json").write_text(json.dumps(body))
    (tmp_path / "c.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "parallelism: 4\nprofiles:\n- schedulerName: x\n"
    )
    assert load_config(tmp_path / "c.json") == load_config(str(tmp_path / "c.yaml")) == load_config(body)
    assert load_config(body).parallelism == 4


def test_partial_plugin_args_keep_other_defaults() -> None:
    loaded = load_config(
        cfg(
            profiles=[
                {
                    "pluginConfig": [
                        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
                        {"name": "DefaultPreemption", "args": {"minCandidateNodesAbsolute": 5}},
                        {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu"}]}},
                        {"name": "MyPlugin", "args": {"anything": [1, 2]}},
                    ]
                }
            ]
        )
    )
    pc = loaded.profiles[0].plugin_config
    fit = pc["NodeResourcesFit"]
    assert isinstance(fit, NodeResourcesFitArgs)
    assert fit.scoring_strategy.resources == (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    assert pc["DefaultPreemption"].min_candidate_nodes_percentage == 10  # type: ignore[attr-defined]
    assert pc["DefaultPreemption"].min_candidate_nodes_absolute == 5  # type: ignore[attr-defined]
    assert pc["NodeResourcesBalancedAllocation"].resources == (ResourceSpec("cpu", 1),)  # type: ignore[attr-defined]
    assert pc["MyPlugin"] == {"anything": [1, 2]}
    # User entries first, in their order, then defaults for the other enabled plugins.
    assert list(pc)[:4] == [
        "NodeResourcesFit",
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation",
        "MyPlugin",
    ]
    assert "VolumeBinding" in pc


def test_explicit_args_kind_is_accepted() -> None:
    args = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "InterPodAffinityArgs"}
    loaded = load_config(cfg(profiles=[{"pluginConfig": [{"name": "InterPodAffinity", "args": args}]}]))
    assert loaded.profiles[0].plugin_config["InterPodAffinity"] == InterPodAffinityArgs()


def test_scheduler_name_defaults_only_for_a_single_profile() -> None:
    assert load_config(cfg(profiles=[{}])).profiles[0].scheduler_name == "default-scheduler"
    with pytest.raises(ConfigError) as exc:
        load_config(cfg(profiles=[{}, {"schedulerName": "b"}]))
    assert exc.value.path == "profiles[0].schedulerName"


def test_leader_election_and_client_connection_decoding() -> None:
    loaded = load_config(
        cfg(
            leaderElection={"leaderElect": False, "leaseDuration": "1m30s", "resourceName": "custom"},
            clientConnection={"qps": 0, "burst": 7, "kubeconfig": "/k"},
            enableProfiling=False,
        )
    )
    assert loaded.leader_election.leader_elect is False
    assert loaded.leader_election.lease_duration.total_seconds() == 90
    assert loaded.leader_election.resource_name == "custom"
    assert loaded.leader_election.resource_namespace == "kube-system"
    assert loaded.client_connection["qps"] == 50.0
    assert loaded.client_connection["burst"] == 7
    assert loaded.client_connection["kubeconfig"] == "/k"
    assert loaded.enable_contention_profiling is False


def test_profile_percentage_none_vs_zero() -> None:
    loaded = load_config(cfg(profiles=[{"schedulerName": "a"}, {"schedulerName": "b", "percentageOfNodesToScore": 0}]))
    assert [p.percentage_of_nodes_to_score for p in loaded.profiles] == [None, 0]


# ---- decoding errors ------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "path", "fragment"),
    [
        pytest.param({"kind": "KubeSchedulerConfiguration"}, "apiVersion", "Required value", id="no-apiVersion"),
        pytest.param(
            {**HEAD, "apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
            "apiVersion",
            "v1beta3",
            id="old-apiVersion",
        ),
        pytest.param({**HEAD, "kind": "Policy"}, "kind", '"Policy"', id="bad-kind"),
        pytest.param(cfg(paralelism=3), "paralelism", "unknown field", id="unknown-top-level"),
        pytest.param(cfg(profiles=[{"name": "x"}]), "profiles[0].name", "unknown field", id="unknown-profile"),
        pytest.param(
            cfg(profiles=[{"plugins": {"scores": {}}}]),
            "profiles[0].plugins.scores",
            "unknown field",
            id="unknown-extension-point",
        ),
        pytest.param(
            cfg(profiles=[{"plugins": {"score": {"enable": []}}}]),
            "profiles[0].plugins.score.enable",
            "unknown field",
            id="unknown-plugin-set-field",
        ),
        pytest.param(
            cfg(profiles=[{"plugins": {"score": {"enabled": [{"name": "A", "wieght": 2}]}}}]),
            "profiles[0].plugins.score.enabled[0].wieght",
            "unknown field",
            id="unknown-plugin-field",
        ),
        pytest.param(
            cfg(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoring": {}}}]}]),
            "profiles[0].pluginConfig[0].args.scoring",
            "unknown field",
            id="unknown-args-field",
        ),
        pytest.param(
            cfg(
                profiles=[
                    {
                        "pluginConfig": [
                            {
                                "name": "NodeResourcesFit",
                                "args": {"scoringStrategy": {"resources": [{"nam": "cpu"}]}},
                            }
                        ]
                    }
                ]
            ),
            "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].nam",
            "unknown field",
            id="unknown-nested-args-field",
        ),
        pytest.param(
            cfg(leaderElection={"leaderElection": True}),
            "leaderElection.leaderElection",
            "unknown field",
            id="unknown-leader-election",
        ),
        pytest.param(cfg(extenders=[{"urlprefix": "x"}]), "extenders[0].urlprefix", "unknown field", id="ext"),
        pytest.param(cfg(parallelism="16"), "parallelism", "expected integer", id="string-int"),
        pytest.param(cfg(parallelism=True), "parallelism", "expected integer", id="bool-int"),
        pytest.param(cfg(parallelism=2**40), "parallelism", "int32", id="int32-overflow"),
        pytest.param(cfg(profiles={"a": 1}), "profiles", "expected list", id="profiles-not-list"),
        pytest.param(cfg(profiles=["x"]), "profiles[0]", "expected object", id="profile-not-object"),
        pytest.param(
            cfg(profiles=[{"schedulerName": 3}]),
            "profiles[0].schedulerName",
            "expected string",
            id="name-type",
        ),
        pytest.param(
            cfg(profiles=[{"plugins": {"score": {"enabled": [{"name": "A", "weight": "2"}]}}}]),
            "profiles[0].plugins.score.enabled[0].weight",
            "expected integer",
            id="weight-type",
        ),
        pytest.param(
            cfg(profiles=[{"plugins": {"score": {"enabled": [{"weight": 2}]}}}]),
            "profiles[0].plugins.score.enabled[0].name",
            "Required value",
            id="plugin-name-required",
        ),
        pytest.param(
            cfg(profiles=[{"pluginConfig": [{"args": {}}]}]),
            "profiles[0].pluginConfig[0].name",
            "Required value",
            id="plugin-config-name-required",
        ),
        pytest.param(
            cfg(profiles=[{"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 1.5}}]}]),
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight",
            "expected integer",
            id="args-type",
        ),
        pytest.param(
            cfg(profiles=[{"pluginConfig": [{"name": "InterPodAffinity", "args": {"kind": "NodeAffinityArgs"}}]}]),
            "profiles[0].pluginConfig[0].args.kind",
            "InterPodAffinityArgs",
            id="args-kind-mismatch",
        ),
        pytest.param(
            cfg(leaderElection={"leaseDuration": "15 seconds"}),
            "leaderElection.leaseDuration",
            "not a valid duration",
            id="bad-duration",
        ),
        pytest.param(cfg(delayCacheUntilActive="yes"), "delayCacheUntilActive", "expected boolean", id="bool"),
    ],
)
def test_decoding_errors(data: dict[str, Any], path: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(data)
    assert exc.value.path == path
    assert fragment in exc.value.reason
    assert str(exc.value).startswith(f"{path}: ")


def test_duplicate_yaml_keys_rejected(tmp_path: Path) -> None:
    f = tmp_path / "dup.yaml"
    f.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 1\nparallelism: 2\n"
    )
    with pytest.raises(ConfigError, match="duplicate key"):
        load_config(f)


def test_unparseable_yaml(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("apiVersion: [unclosed\n")
    with pytest.raises(ConfigError, match="could not parse"):
        load_config(f)


def test_missing_file_propagates_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "absent.yaml")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("a: " + "[" * 100_000 + "]" * 100_000, "too deeply nested", id="deep"),
        pytest.param(
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{c}: &{c} [" + ", ".join([f"*{p}"] * 10) + "]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
            ),
            "too many aliases",
            id="billion-laughs",
        ),
    ],
)
def test_hostile_config_files_are_refused(tmp_path: Path, text: str, want: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=want):
        load_config(path)
