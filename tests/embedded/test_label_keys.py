"""matchLabelKeys / mismatchLabelKeys at pod create, by emulated version, as kube-apiserver does them."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.cluster.protocol import Invalid
from kubesched.config.features import feature_gates
from kubesched.embedded.apiserver import EmbeddedCluster

ZONE = "topology.kubernetes.io/zone"
LABELS = {"app": "web", "version": "v2"}


def _term(**fields: Any) -> dict[str, Any]:
    return {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "web"}}, **fields}


def _pod(
    *,
    affinity: dict[str, Any] | None = None,
    spread: list[dict[str, Any]] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if affinity is not None:
        spec["affinity"] = affinity
    if spread is not None:
        spec["topologySpreadConstraints"] = spread
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": dict(LABELS if labels is None else labels)},
        "spec": spec,
    }


def _create(pod: dict[str, Any], version: str, gates: dict[str, bool] | None = None) -> dict[str, Any]:
    return EmbeddedCluster(features=feature_gates(version, gates)).create(pod)


def _required(created: dict[str, Any], kind: str = "podAffinity") -> dict[str, Any]:
    term: dict[str, Any] = created["spec"]["affinity"][kind]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    return term


IN_V2 = {"key": "version", "operator": "In", "values": ["v2"]}
NOT_IN_V2 = {"key": "version", "operator": "NotIn", "values": ["v2"]}


@pytest.mark.parametrize(
    ("name", "term", "want_expressions"),
    [
        ("matchLabelKeys become In", _term(matchLabelKeys=["version"]), [IN_V2]),
        ("mismatchLabelKeys become NotIn", _term(mismatchLabelKeys=["version"]), [NOT_IN_V2]),
        ("keys the pod lacks add nothing", _term(matchLabelKeys=["track"]), None),
        (
            "after the selector's own expressions, match before mismatch",
            _term(
                labelSelector={"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
                matchLabelKeys=["app"],
                mismatchLabelKeys=["version"],
            ),
            [{"key": "tier", "operator": "Exists"}, {"key": "app", "operator": "In", "values": ["web"]}, NOT_IN_V2],
        ),
        ("no labelSelector: nothing to merge into (it selects nothing)", {"topologyKey": ZONE}, None),
    ],
)
def test_v1_34_merges_affinity_keys_into_the_selector(
    name: str, term: dict[str, Any], want_expressions: list[dict[str, Any]] | None
) -> None:
    created = _required(
        _create(_pod(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}), "1.34")
    )
    assert created.get("labelSelector", {}).get("matchExpressions") == want_expressions
    # The keys stay on the term, and the scheduler reads the merged selector.
    assert created.get("matchLabelKeys") == term.get("matchLabelKeys")


def test_v1_34_merges_preferred_and_anti_affinity_terms_too() -> None:
    created = _create(
        _pod(
            affinity={
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 5, "podAffinityTerm": _term(mismatchLabelKeys=["version"])}
                    ]
                }
            }
        ),
        "1.34",
    )
    term = created["spec"]["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["podAffinityTerm"]["labelSelector"]["matchExpressions"] == [NOT_IN_V2]
    parsed = Pod.from_dict(created).pod_affinity.preferred_anti_affinity[0].term
    assert parsed.mismatch_label_keys == ("version",)
    assert parsed.selector is not None and not parsed.selector.matches(LABELS)
    assert parsed.selector.matches({"app": "web", "version": "v1"})


@pytest.mark.parametrize(("version", "gates"), [("1.30", None), ("1.34", {"MatchLabelKeysInPodAffinity": True})])
def test_gate_off_drops_the_affinity_keys(version: str, gates: dict[str, bool] | None) -> None:
    pod = _pod(
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    _term(matchLabelKeys=["version"], mismatchLabelKeys=["app"])
                ]
            }
        }
    )
    term = _required(_create(pod, version, gates))
    if version == "1.30":
        assert "matchLabelKeys" not in term and "mismatchLabelKeys" not in term
        assert "matchExpressions" not in term["labelSelector"]
    else:
        assert term["labelSelector"]["matchExpressions"] == [
            IN_V2,
            {"key": "app", "operator": "NotIn", "values": ["web"]},
        ]


@pytest.mark.parametrize(
    ("version", "gates", "merged"),
    [
        ("1.34", None, True),
        ("1.34", {"MatchLabelKeysInPodTopologySpreadSelectorMerge": False}, False),
        ("1.30", None, False),
    ],
)
def test_topology_spread_keys_merged_from_v1_34(version: str, gates: dict[str, bool] | None, merged: bool) -> None:
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
            "matchLabelKeys": ["version"],
        }
    ]
    created = _create(_pod(spread=spread), version, gates)["spec"]["topologySpreadConstraints"][0]
    assert created["matchLabelKeys"] == ["version"]  # the scheduler merges them too, in every version
    assert created["labelSelector"].get("matchExpressions") == ([IN_V2] if merged else None)


def test_topology_spread_keys_dropped_when_their_gate_is_off() -> None:
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
            "matchLabelKeys": ["version"],
        }
    ]
    created = _create(_pod(spread=spread), "1.34", {"MatchLabelKeysInPodTopologySpread": False})
    assert "matchLabelKeys" not in created["spec"]["topologySpreadConstraints"][0]


REQ = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
TSC = "spec.topologySpreadConstraints[0]"


def _spread(**fields: Any) -> list[dict[str, Any]]:
    return [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", **fields}]


@pytest.mark.parametrize(
    ("name", "pod", "version", "message"),
    [
        (
            "affinity key also in the selector",
            _pod(
                affinity={
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            _term(labelSelector={"matchLabels": {"version": "v1"}}, matchLabelKeys=["version"])
                        ]
                    }
                }
            ),
            "1.34",
            f'{REQ}[0]: Invalid value: "version": exists in both matchLabelKeys and labelSelector',
        ),
        # Both merged requirements name the key, so upstream also finds it "in both" with the selector.
        (
            "affinity key in both lists",
            _pod(
                affinity={
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            _term(matchLabelKeys=["version"], mismatchLabelKeys=["version"])
                        ]
                    }
                }
            ),
            "1.34",
            f'[{REQ}[0]: Invalid value: "version": exists in both matchLabelKeys and labelSelector, '
            f'{REQ}.matchLabelKeys[0]: Invalid value: "version": exists in both matchLabelKeys and mismatchLabelKeys]',
        ),
        (
            "affinity key in both lists, not on the pod",
            _pod(
                affinity={
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            _term(matchLabelKeys=["track"], mismatchLabelKeys=["track"])
                        ]
                    }
                }
            ),
            "1.34",
            f'{REQ}.matchLabelKeys[0]: Invalid value: "track": exists in both matchLabelKeys and mismatchLabelKeys',
        ),
        (
            "affinity keys without a selector",
            _pod(
                affinity={
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"topologyKey": ZONE, "mismatchLabelKeys": ["version"]}
                        ]
                    }
                }
            ),
            "1.34",
            f"{REQ}.mismatchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
        ),
        (
            "affinity key not a label name",
            _pod(
                affinity={
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [_term(matchLabelKeys=["bad key"])]
                    }
                }
            ),
            "1.34",
            f'{REQ}.matchLabelKeys[0]: Invalid value: "bad key": name part must consist of',
        ),
        (
            "spread key also in the selector",
            _pod(
                spread=_spread(
                    labelSelector={"matchExpressions": [{"key": "version", "operator": "Exists"}]},
                    matchLabelKeys=["version"],
                )
            ),
            "1.34",
            f'{TSC}[0]: Invalid value: "version": exists in both matchLabelKeys and labelSelector',
        ),
        (
            "spread key also in the selector (v1.30's rule)",
            _pod(spread=_spread(labelSelector={"matchLabels": {"version": "v1"}}, matchLabelKeys=["version"])),
            "1.30",
            f'{TSC}.matchLabelKeys[0]: Invalid value: "version": exists in both matchLabelKeys and labelSelector',
        ),
        (
            "spread keys without a selector",
            _pod(spread=_spread(matchLabelKeys=["version"])),
            "1.34",
            f"{TSC}.matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
        ),
        (
            "several errors are listed, affinity first",
            _pod(
                spread=_spread(matchLabelKeys=["version"]),
                affinity={
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [_term(matchLabelKeys=["bad key"])]
                    }
                },
            ),
            "1.34",
            f'[{REQ}.matchLabelKeys[0]: Invalid value: "bad key": name part must consist of alphanumeric',
        ),
    ],
)
def test_refused_as_the_api_server_refuses(name: str, pod: dict[str, Any], version: str, message: str) -> None:
    cluster = EmbeddedCluster(features=feature_gates(version))
    with pytest.raises(Invalid) as info:
        cluster.create(pod)
    assert info.value.message.startswith(f'Pod "p" is invalid: {message}')
    assert cluster.lookup("Pod", "default", "p") is None


def test_v1_30_accepts_what_it_drops() -> None:
    # The affinity keys are dropped before validation: the same pod v1.34 refuses is created.
    pod = _pod(
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    _term(matchLabelKeys=["version"], mismatchLabelKeys=["version"])
                ]
            }
        }
    )
    assert "matchLabelKeys" not in _required(_create(pod, "1.30"))


def test_a_key_only_in_expressions_once_is_accepted() -> None:
    # Upstream flags a key only when the selector held it before the merge.
    pod = _pod(
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    _term(
                        labelSelector={"matchExpressions": [{"key": "track", "operator": "Exists"}]},
                        matchLabelKeys=["track"],
                    )
                ]
            }
        }
    )
    assert _required(_create(pod, "1.34"))["labelSelector"]["matchExpressions"] == [
        {"key": "track", "operator": "Exists"}
    ]


def test_keys_that_are_not_strings_are_refused() -> None:
    pod = _pod(
        affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(matchLabelKeys="version")]}}
    )
    with pytest.raises(Invalid, match=r"matchLabelKeys: expected a list of strings"):
        _create(pod, "1.34")


def test_updates_merge_nothing() -> None:
    cluster = EmbeddedCluster(features=feature_gates("1.34"))
    created = cluster.create(
        _pod(
            affinity={
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(matchLabelKeys=["version"])]}
            }
        )
    )
    created["metadata"]["labels"]["version"] = "v3"
    updated = cluster.update(created)
    assert _required(updated)["labelSelector"]["matchExpressions"] == [IN_V2]


@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_a_pod_read_back_from_an_api_server_is_created_again(version: str) -> None:
    # What a v1.34 API server returns already holds the merged requirements: they are not added twice
    # (and not taken for a key written into the selector by hand).
    first = _create(
        _pod(
            affinity={
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        _term(matchLabelKeys=["version"], mismatchLabelKeys=["app"])
                    ]
                }
            },
            spread=_spread(labelSelector={"matchLabels": {"app": "web"}}, matchLabelKeys=["version"]),
        ),
        "1.34",
    )
    again = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": dict(LABELS)},
        "spec": first["spec"],
    }
    created = _create(again, version)
    spread = created["spec"]["topologySpreadConstraints"][0]["labelSelector"]["matchExpressions"]
    assert spread == [IN_V2]
    term = _required(created, "podAntiAffinity")
    assert term["labelSelector"]["matchExpressions"] == [IN_V2, {"key": "app", "operator": "NotIn", "values": ["web"]}]
