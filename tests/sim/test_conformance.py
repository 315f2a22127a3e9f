"""Replays recorded kube-scheduler decisions and compares, each at the version that made them.

- The conformance corpus (``../shared/conformance``): decisions of kube-scheduler v1.30.6, replayed with
  ``--emulated-version 1.30``.
- The v1.34 goldens (``testing/goldens/v1.34``, recorded from kube-scheduler v1.34.4 by
  ``testing/goldens/record.sh``): the corpus's scenarios and those of ``testing/goldens/scenarios``,
  replayed with ``--emulated-version 1.34``.

Each scenario holds manifests, an optional KubeSchedulerConfiguration and the recorded attempts.
Comparison follows the corpus README: attempt by attempt (pod, attempt, profile, result, node, message,
feasible, filter, scores, total, ties, nominatedNode, victims), then the final placement and the pods
never attempted, and (goldens with ``claims``) every ResourceClaim's allocated devices and reservations.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config import load_config
from kubesched.config.features import feature_gates
from kubesched.sim.simulate import simulate
from tests.corpus import CORPUS

#: The version each recording was made by, and replayed as.
CORPUS_VERSION = "1.30"
GOLDENS_VERSION = "1.34"
GOLDENS = Path(__file__).resolve().parents[2] / "testing" / "goldens"

COMPARED = (
    "pod",
    "attempt",
    "profile",
    "result",
    "node",
    "message",
    "feasible",
    "filter",
    "scores",
    "total",
    "ties",
    "nominatedNode",
    "victims",
)


def _scenarios() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if (p / "golden.json").is_file())


def _config(folder: Path, version: str) -> Any:
    """The scenario's config, with percentageOfNodesToScore 100 unless the file sets it (corpus rule),
    defaulted for the emulated ``version``."""
    path = folder / "config.yaml"
    raw: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    if path.is_file():
        raw = yaml.safe_load(path.read_text())
    raw.setdefault("percentageOfNodesToScore", 100)
    return load_config(raw, features=feature_gates(version))


def _first_mismatch(want: dict[str, Any], got: dict[str, Any]) -> str | None:
    for key in COMPARED:
        w, g = want.get(key), got.get(key)
        if key in ("feasible", "ties", "victims"):
            w, g = sorted(w or []), sorted(g or [])
        if w != g:
            return f"{key}: want {json.dumps(w, sort_keys=True)}\n           got  {json.dumps(g, sort_keys=True)}"
    return None


@pytest.mark.parametrize("folder", _scenarios(), ids=lambda p: p.name)
def test_scenario_matches_reference(folder: Path) -> None:
    """kube-scheduler v1.30.6's decisions, replayed as v1.30."""
    _replay(folder, json.loads((folder / "golden.json").read_text()), CORPUS_VERSION)


def _goldens() -> list[Any]:
    return sorted((GOLDENS / "v1.34").glob("*.json"))


def _scenario_folder(golden: Path) -> Path:
    own = GOLDENS / "scenarios" / golden.stem
    return own if own.is_dir() else CORPUS / golden.stem


@pytest.mark.parametrize("golden", _goldens(), ids=lambda p: p.stem)
def test_scenario_matches_v1_34(golden: Path) -> None:
    """kube-scheduler v1.34.4's decisions, replayed as v1.34."""
    folder = _scenario_folder(golden)
    if not folder.is_dir():
        pytest.skip(f"scenario {golden.stem} not found at {folder} (the corpus is absent)")
    _replay(folder, json.loads(golden.read_text()), GOLDENS_VERSION)


def _replay(folder: Path, golden: dict[str, Any], version: str) -> None:
    result = simulate(
        [folder / "scenario.yaml"], config=_config(folder, version), seed=0, tie_break="name", record="full"
    )
    assert result.emulated == version
    looping = {a["pod"] for a in golden["attempts"] if a.get("looping")}
    want_attempts = [a for a in golden["attempts"] if not (a["pod"] in looping and a["attempt"] > 2)]
    got_attempts = [a for a in result.attempts if not (a["pod"] in looping and a["attempt"] > 2)]
    for i, (want, got) in enumerate(zip(want_attempts, got_attempts, strict=False)):
        problem = _first_mismatch(want, got)
        assert problem is None, f"attempt #{i + 1} ({want['pod']} attempt {want['attempt']}): {problem}"
    assert [(a["pod"], a["attempt"]) for a in got_attempts] == [(a["pod"], a["attempt"]) for a in want_attempts]
    assert result.final == golden["final"]
    assert sorted(result.never_attempted) == sorted(golden.get("neverAttempted", []))
    # What the cluster's controllers and the scheduler warned about (claims that can never bind,
    # pods no profile serves), in the reference's order.
    assert result.warnings == (golden.get("warnings") or [])
    if "claims" in golden:
        assert result.cluster is not None
        assert resource_claims(result.cluster.objects("ResourceClaim")) == golden["claims"]


def resource_claims(claims: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Claims in the goldens' shape: keyed ``namespace/name``, or ``namespace/pod/entry`` for a claim made
    from a template for that entry of the pod's ``spec.resourceClaims``; the allocation's devices in order
    and the names of the pods the claim is reserved for, each left out when empty."""
    out: dict[str, dict[str, Any]] = {}
    for claim in claims:
        meta = claim["metadata"]
        key = f"{meta.get('namespace', '')}/{meta['name']}"
        owner = next((o for o in meta.get("ownerReferences") or () if o.get("controller")), None)
        entry = (meta.get("annotations") or {}).get("resource.kubernetes.io/pod-claim-name")
        if owner is not None and owner.get("kind") == "Pod" and entry:
            key = f"{meta.get('namespace', '')}/{owner['name']}/{entry}"
        status = claim.get("status") or {}
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        record: dict[str, Any] = {}
        if status.get("allocation") is not None:
            record["devices"] = [{k: r[k] for k in ("request", "driver", "pool", "device")} for r in results]
        if status.get("reservedFor"):
            record["reservedFor"] = [ref["name"] for ref in status["reservedFor"]]
        out[key] = record
    return out


def test_corpus_is_present_or_skipped_loudly() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"conformance corpus not found at {CORPUS}")
    assert _scenarios(), f"no scenarios under {CORPUS}"
    assert _goldens(), f"no v1.34 goldens under {GOLDENS}"


def test_claims_are_keyed_by_pod_entry_when_generated() -> None:
    own = {
        "metadata": {"namespace": "default", "name": "shared"},
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0", "extra": 1}
                    ]
                }
            },
            "reservedFor": [{"resource": "pods", "name": "a", "uid": "1"}, {"resource": "pods", "name": "b"}],
        },
    }
    generated = {
        "metadata": {
            "namespace": "batch",
            "name": "w-gpu-x7k2p",
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
            "ownerReferences": [{"kind": "Pod", "name": "w", "controller": True}],
        }
    }
    assert resource_claims([own, generated]) == {
        "default/shared": {
            "devices": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}],
            "reservedFor": ["a", "b"],
        },
        "batch/w/gpu": {},
    }
