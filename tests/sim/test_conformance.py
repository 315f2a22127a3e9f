"""Replays the conformance corpus (decisions recorded from kube-scheduler v1.30.6) and compares.

Each scenario folder under the corpus holds manifests, an optional KubeSchedulerConfiguration and
the recorded attempts. A scenario is replayed when every plugin it exercises is built; otherwise it
is skipped with the missing plugins named. Comparison follows the corpus README: attempt by attempt
(pod, attempt, profile, result, node, message, feasible, filter, scores, total, ties, nominatedNode,
victims), then the final placement and the pods never attempted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config import load_config
from kubesched.plugins import names
from kubesched.plugins.registry import NOT_YET_BUILT
from kubesched.sim.simulate import simulate
from tests.corpus import CORPUS

VOLUME_PLUGINS = {names.VOLUME_BINDING, names.VOLUME_RESTRICTIONS, names.VOLUME_ZONE,
                  names.NODE_VOLUME_LIMITS, names.EBS_LIMITS, names.GCE_PD_LIMITS, names.AZURE_DISK_LIMITS}
#: Volume sources that only the volume plugins look at.
VOLUME_SOURCES = {"persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore",
                  "azureDisk", "rbd", "iscsi", "csi", "cinder"}
#: Objects whose selectors make PodTopologySpread's system default constraints apply.
SPREAD_OWNERS = {"Service", "ReplicaSet", "StatefulSet", "ReplicationController"}
COMPARED = ("pod", "attempt", "profile", "result", "node", "message", "feasible", "filter", "scores",
            "total", "ties", "nominatedNode", "victims")


def _scenarios() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if (p / "golden.json").is_file())


def _objects(folder: Path) -> list[dict[str, Any]]:
    with open(folder / "scenario.yaml") as fh:
        return [d for d in yaml.safe_load_all(fh) if d]


def plugins_exercised(folder: Path) -> set[str]:
    """The kube-scheduler plugins whose decisions this scenario depends on beyond the node-local ones."""
    used: set[str] = set()
    config_text = (folder / "config.yaml").read_text() if (folder / "config.yaml").is_file() else ""
    for obj in _objects(folder):
        kind = obj.get("kind")
        if kind in SPREAD_OWNERS:
            used.add(names.POD_TOPOLOGY_SPREAD)
        if kind in ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode"):
            used |= VOLUME_PLUGINS
        if kind != "Pod":
            continue
        spec = obj.get("spec") or {}
        affinity = spec.get("affinity") or {}
        if affinity.get("podAffinity") or affinity.get("podAntiAffinity"):
            used.add(names.INTER_POD_AFFINITY)
        if spec.get("topologySpreadConstraints"):
            used.add(names.POD_TOPOLOGY_SPREAD)
        if any(VOLUME_SOURCES & set(v) for v in spec.get("volumes") or []):
            used |= VOLUME_PLUGINS
    if "PodTopologySpread" in config_text and "defaultConstraints" in config_text:
        used.add(names.POD_TOPOLOGY_SPREAD)
    return used


def _config(folder: Path) -> Any:
    """The scenario's config, with percentageOfNodesToScore 100 unless the file sets it (corpus rule)."""
    path = folder / "config.yaml"
    raw: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    if path.is_file():
        raw = yaml.safe_load(path.read_text())
    raw.setdefault("percentageOfNodesToScore", 100)
    return load_config(raw)


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
    missing = sorted(plugins_exercised(folder) & NOT_YET_BUILT)
    if missing:
        pytest.skip(f"needs plugins not built yet: {', '.join(missing)}")
    golden = json.loads((folder / "golden.json").read_text())
    result = simulate([folder / "scenario.yaml"], config=_config(folder), seed=0, tie_break="name", record="full")

    looping = {a["pod"] for a in golden["attempts"] if a.get("looping")}
    want_attempts = [a for a in golden["attempts"] if not (a["pod"] in looping and a["attempt"] > 2)]
    got_attempts = [a for a in result.attempts if not (a["pod"] in looping and a["attempt"] > 2)]
    for i, (want, got) in enumerate(zip(want_attempts, got_attempts, strict=False)):
        problem = _first_mismatch(want, got)
        assert problem is None, f"attempt #{i + 1} ({want['pod']} attempt {want['attempt']}): {problem}"
    assert [(a["pod"], a["attempt"]) for a in got_attempts] == [(a["pod"], a["attempt"]) for a in want_attempts]
    assert result.final == golden["final"]
    assert sorted(result.never_attempted) == sorted(golden.get("neverAttempted", []))


def test_corpus_is_present_or_skipped_loudly() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"conformance corpus not found at {CORPUS}")
    assert _scenarios(), f"no scenarios under {CORPUS}"
