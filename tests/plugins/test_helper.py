"""Tests of kubesched.plugins.helper, plus the conformance replay the node-local plugin tests share.

The replay lives here (rather than in a conftest) so the plugin test modules can import it by name.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from kubesched.api.objects import Node, Pod
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeScore
from kubesched.framework.status import Code, Status
from kubesched.plugins import names
from kubesched.plugins.helper import SKIP_STATUS, IdentityMemo, default_normalize_score, normalize_score_array
from tests.corpus import CORPUS
from tests.factories import make_pod, make_snapshot, node_dict
from tests.fakeplugins import Harness, config_dict

CONFORMANCE = CORPUS
#: kube-scheduler v1.34.4's recordings (``testing/goldens``): of the corpus's scenarios and of its own.
GOLDENS = Path(__file__).resolve().parents[2] / "testing" / "goldens"


# -- conformance replay (shared) -------------------------------------------------------------------
@dataclass
class Attempt:
    """One recorded scheduling attempt and the cluster as it stood before it."""

    record: dict[str, Any]
    pod: Pod
    snapshot: Snapshot
    nodes: list[Node] = field(default_factory=list)


_uid = itertools.count(1)


def _with_uid(doc: dict[str, Any]) -> dict[str, Any]:
    meta = doc.setdefault("metadata", {})
    meta.setdefault("namespace", "default")
    meta.setdefault("uid", f"conf-{next(_uid)}")
    return doc


def _recording(name: str, version: str) -> tuple[Path, Path]:
    """(scenario folder, golden file) of scenario ``name`` as kube-scheduler ``version`` decided it:
    the corpus for 1.30, ``testing/goldens`` for 1.34."""
    if version == "1.30":
        return CONFORMANCE / name, CONFORMANCE / name / "golden.json"
    own = GOLDENS / "scenarios" / name
    return (own if own.is_dir() else CONFORMANCE / name), GOLDENS / f"v{version}" / f"{name}.json"


def scenario_available(name: str, version: str = "1.30") -> bool:
    folder, golden = _recording(name, version)
    return golden.is_file() and (folder / "scenario.yaml").is_file()


def replay(name: str, version: str = "1.30") -> Iterator[Attempt]:
    """Walk a scenario's recorded attempts, binding pods where the reference bound them.

    Only for scenarios without preemption victims: node-local plugins need no more.
    """
    folder, golden_path = _recording(name, version)
    docs = [d for d in yaml.safe_load_all((folder / "scenario.yaml").read_text()) if d]
    golden = json.loads(golden_path.read_text())
    nodes = [Node.from_dict(d) for d in docs if d.get("kind") == "Node"]
    bound: list[Pod] = []
    pending: dict[str, dict[str, Any]] = {}
    for d in docs:
        if d.get("kind") != "Pod":
            continue
        d = _with_uid(d)
        if (d.get("spec") or {}).get("nodeName"):
            bound.append(Pod.from_dict(d))
        else:
            pending[f"{d['metadata']['namespace']}/{d['metadata']['name']}"] = d
    for record in golden["attempts"]:
        assert not record.get("victims"), "replay does not model preemption"
        raw = pending[record["pod"]]
        pod = Pod.from_dict(raw)
        yield Attempt(record, pod, make_snapshot(nodes, bound), nodes)
        if record["result"] == "Scheduled":
            placed = json.loads(json.dumps(raw))
            placed["spec"]["nodeName"] = record["node"]
            placed["metadata"]["uid"] = f"conf-{next(_uid)}"
            bound.append(Pod.from_dict(placed))


def handle_for(version: str, **fields: Any) -> Any:
    """A bare plugin handle carrying the gates of ``version`` (and any other ``fields``)."""
    from types import SimpleNamespace

    from kubesched.config.features import feature_gates

    return SimpleNamespace(features=feature_gates(version), **fields)


def rows_of(snapshot: Snapshot, names: list[str]) -> np.ndarray:
    """Snapshot rows of the given nodes, in snapshot order."""
    return np.array(sorted(snapshot.index[n] for n in names), dtype=np.int64)


# -- default_normalize_score ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reverse", "raw", "want"),
    [
        (False, [0, 0, 0], [0, 0, 0]),
        (True, [0, 0, 0], [100, 100, 100]),
        (False, [1, 2, 3], [33, 66, 100]),
        (True, [1, 2, 3], [67, 34, 0]),
        (False, [90, 80, 20], [100, 88, 22]),
        (True, [0, 1, 2], [100, 50, 0]),
        (False, [7], [100]),
        (True, [], []),
        (False, [3, 0, 1000], [0, 0, 100]),
        (True, [0, -3, 0], [100, 100, 100]),  # not all zero, yet nothing above 0
        (False, [-2, 0], [-2, 0]),
    ],
)
def test_default_normalize_score(reverse: bool, raw: list[int], want: list[int]) -> None:
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    assert default_normalize_score(100, reverse, scores) is None
    assert [s.score for s in scores] == want
    arr = np.array(raw, dtype=np.int64)
    out = default_normalize_score(100, reverse, arr)
    assert out.tolist() == want
    assert arr.tolist() == raw  # the batch form does not touch its input
    assert normalize_score_array(100, reverse, arr).dtype == np.int64


def test_negative_scores_truncate_like_go() -> None:
    # Not produced by in-tree plugins, but the rounding must still be Go's (toward zero).
    scores = [NodeScore("a", -5), NodeScore("b", 3)]
    default_normalize_score(10, False, scores)
    assert [s.score for s in scores] == [-16, 10]
    assert default_normalize_score(10, False, np.array([-5, 3])).tolist() == [-16, 10]


def test_batch_matches_list_form_random() -> None:
    rng = random.Random(7)
    for _ in range(300):
        raw = [rng.choice([0, rng.randint(0, 5), rng.randint(0, 10**6)]) for _ in range(rng.randint(0, 12))]
        for reverse in (False, True):
            max_priority = rng.choice([10, 100])
            scores = [NodeScore(str(i), s) for i, s in enumerate(raw)]
            default_normalize_score(max_priority, reverse, scores)
            batch = default_normalize_score(max_priority, reverse, np.array(raw, dtype=np.int64))
            assert batch.tolist() == [s.score for s in scores]


# -- conformance checks (shared) -----------------------------------------------------------------------
def check_filter_conformance(scenario: str, make_plugin: Any, plugin_name: str, version: str = "1.30") -> int:
    """Replay ``scenario`` as kube-scheduler ``version`` decided it and compare the plugin's PreFilter /
    Filter verdicts with the reference (``make_plugin`` builds the plugin for that version).

    Feasible nodes must pass; nodes the reference says this plugin rejected must get the same code
    and reasons; the batch form must agree with the per-node form everywhere. Returns how many
    node verdicts were compared against the reference.
    """
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.status import Code

    checked = 0
    for att in replay(scenario, version):
        plugin = make_plugin(att.snapshot)
        state = CycleState()
        pod, snap, record = att.pod, att.snapshot, att.record
        skipped = False
        allowed: frozenset[str] | None = None
        if hasattr(plugin, "pre_filter"):
            result, status = plugin.pre_filter(state, pod)
            if status is not None and status.code is Code.SKIP:
                skipped = True
            elif status is not None:
                for entry in record["filter"].values():
                    assert entry == {"plugin": plugin_name, "code": status.code.label, "reasons": list(status.reasons)}
                checked += len(record["filter"])
                continue
            if result is not None and result.node_names is not None:
                allowed = result.node_names
        rows = np.arange(len(snap))
        batch = None if skipped else plugin.filter_nodes(state, pod, snap, rows)
        for k, info in enumerate(snap.node_infos):
            name = info.name
            entry = record["filter"].get(name)
            if allowed is not None and name not in allowed:
                assert entry is not None and entry["plugin"] == "PreFilterResult", (record["pod"], name)
                checked += 1
                continue
            status = None if skipped else plugin.filter(state, pod, info)
            if batch is not None:
                idx = int(batch.status_index[k])
                batch_status = None if idx < 0 else batch.statuses[idx]
                assert batch_status == status, (record["pod"], name)
            if name in record["feasible"]:
                assert status is None, (record["pod"], name, status)
                checked += 1
            elif entry is not None and entry["plugin"] == plugin_name:
                assert status is not None, (record["pod"], name)
                assert (status.code.label, list(status.reasons)) == (entry["code"], entry["reasons"]), (
                    record["pod"],
                    name,
                )
                checked += 1
    return checked


def check_score_conformance(
    scenario: str, make_plugin: Any, plugin_name: str, weight: int, version: str = "1.30"
) -> int:
    """Replay ``scenario`` (as ``version`` decided it) and compare NormalizeScore x weight with the
    reference over feasible nodes.

    Both the per-node and the batch forms are checked. Returns how many scores were compared.
    """
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.interfaces import NodeScore
    from kubesched.framework.status import Code

    checked = 0
    for att in replay(scenario, version):
        record = att.record
        if not record["scores"]:
            continue
        plugin = make_plugin(att.snapshot)
        snap, pod = att.snapshot, att.pod
        nodes = snap.nodes(rows_of(snap, record["feasible"]))
        state = CycleState()
        want_present = any(plugin_name in s for s in record["scores"].values())
        if hasattr(plugin, "pre_score"):
            status = plugin.pre_score(state, pod, nodes)
            if status is not None and status.code is Code.SKIP:
                assert not want_present, record["pod"]
                continue
            assert status is None
        assert want_present, record["pod"]
        per_node = [NodeScore(info.name, plugin.score(state, pod, info)[0]) for info in nodes]
        ext = plugin.score_extensions()
        if ext is not None:
            assert ext.normalize_score(state, pod, per_node) is None
        raw = plugin.score_nodes(state, pod, nodes)
        normalized = plugin.normalize_scores(state, pod, raw)
        batch = raw if normalized is None else normalized
        assert batch.tolist() == [s.score for s in per_node], record["pod"]
        got = {s.name: s.score * weight for s in per_node}
        want = {n: s[plugin_name] for n, s in record["scores"].items()}
        assert got == want, record["pod"]
        checked += len(want)
    return checked


# -- random clusters for batch == per-node checks (shared) ---------------------------------------------
LABEL_KEYS = ("zone", "disktype", "tier", "num")
LABEL_VALUES = {
    "zone": ("a", "b", "c"),
    "disktype": ("ssd", "hdd"),
    "tier": ("web", "db", "cache"),
    "num": ("1", "5", "10", "03", "x"),
}
TAINT_CHOICES: tuple[dict[str, str], ...] = (
    {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "web", "effect": "NoSchedule"},
    {"key": "gpu", "effect": "NoSchedule"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "old", "effect": "PreferNoSchedule"},
    {"key": "evict", "value": "1", "effect": "NoExecute"},
)
IMAGE_CHOICES: tuple[dict[str, Any], ...] = (
    {"names": ["nginx:latest", "docker.io/library/nginx:latest"], "sizeBytes": 150 * 2**20},
    {"names": ["python:3.11"], "sizeBytes": 1000 * 2**20},
    {"names": ["trainer:v2"], "sizeBytes": 1500 * 2**20},
    {"names": ["busybox:latest"], "sizeBytes": 2 * 2**20},
    {"names": ["redis:7"], "sizeBytes": 60 * 2**20},
)


def random_node_dict(rng: random.Random, name: str) -> dict[str, Any]:
    from tests.factories import node_dict

    labels = {k: rng.choice(LABEL_VALUES[k]) for k in LABEL_KEYS if rng.random() < 0.7}
    taints = rng.sample(TAINT_CHOICES, rng.choice([0, 0, 0, 1, 1, 2, 3]))
    images = rng.sample(IMAGE_CHOICES, rng.randint(0, 3))
    return node_dict(name, labels=labels, taints=taints, unschedulable=rng.random() < 0.2, images=images)


def random_nodes(rng: random.Random, n: int) -> list[Node]:
    return [Node.from_dict(random_node_dict(rng, f"node-{i}")) for i in range(n)]


# -- the shared Skip answer -----------------------------------------------------------------------------
def test_a_cycle_of_the_default_plugins_leaves_the_shared_skip_as_it_was() -> None:
    """Plain pods make most PreFilter / PreScore plugins answer the one SKIP_STATUS: the framework
    notes them as skipped and never changes that status."""
    h = Harness(config_dict(), objects=[node_dict("n1"), node_dict("n2")])
    f = h.scheduler.profiles["default-scheduler"]
    h.scheduler.cache.update_snapshot(h.scheduler.snapshot)
    state = CycleState()
    pod = make_pod("p", requests={"cpu": "1"})
    assert f.run_pre_filter_plugins(state, pod)[1] is None
    assert f.run_pre_score_plugins(state, pod, h.scheduler.snapshot.all_nodes()) is None
    assert {names.NODE_AFFINITY, names.NODE_PORTS, names.VOLUME_BINDING} <= state.skip_filter_plugins
    assert {names.NODE_AFFINITY, names.INTER_POD_AFFINITY} <= state.skip_score_plugins
    assert Status(Code.SKIP) == SKIP_STATUS and SKIP_STATUS.plugin == ""


# -- IdentityMemo -----------------------------------------------------------------------------------
def test_identity_memo_finds_a_value_by_the_very_object_only() -> None:
    memo: IdentityMemo[dict[str, int], str] = IdentityMemo()
    key = {"cpu": 1}
    assert memo.get(key) is None
    assert memo.put(key, "one") == "one"
    assert memo.get(key) == "one"
    assert memo.get({"cpu": 1}) is None  # equal content, another object: computed again


def test_identity_memo_starts_over_when_full() -> None:
    memo: IdentityMemo[dict[str, int], int] = IdentityMemo(limit=2)
    keys = [{"n": i} for i in range(3)]
    memo.put(keys[0], 0)
    memo.put(keys[1], 1)
    memo.put(keys[2], 2)
    assert len(memo) == 1
    assert memo.get(keys[0]) is None and memo.get(keys[2]) == 2
