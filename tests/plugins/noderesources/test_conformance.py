"""Replay recorded kube-scheduler decisions and compare what the node resources plugins say.

Two recordings, each replayed at the version that made it: the conformance corpus (kube-scheduler
v1.30.6) and the v1.34 goldens (kube-scheduler v1.34.4, ``testing/goldens``). Each attempt of a
scenario is replayed against the cluster as it stood (bound pods plus the pods the
reference scheduled before, minus preemption victims; pods nominated by preemption count in Filter for
pods of no higher priority, as the framework adds them). Checked: nodes the reference rejected with
NodeResourcesFit get the same code and reasons; feasible nodes pass our Filter; and both plugins'
scores on every scored node equal the recorded ones (weight 1, no NormalizeScore).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from kubesched.api.objects import Node, Pod
from kubesched.api.pod_level_resources import default_pod_level_resources
from kubesched.api.resources import ResourceRules, resource_rules
from kubesched.config.features import FeatureGates, feature_gates
from kubesched.config.pluginargs import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs
from kubesched.embedded.admission import apply_defaults
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.plugins.noderesources import balanced_allocation, fit
from tests.corpus import CORPUS
from tests.factories import make_snapshot

GOLDENS = Path(__file__).resolve().parents[3] / "testing" / "goldens"


def _recordings() -> list[tuple[str, Path, Path]]:
    """(version, scenario folder, recorded attempts) of every recording; those with custom plugin sets
    or weights are skipped (see _plugin_args)."""
    found: list[tuple[str, Path, Path]] = []
    if CORPUS.exists():
        found += [("1.30", p, p / "golden.json") for p in sorted(CORPUS.iterdir()) if (p / "golden.json").exists()]
    for golden in sorted((GOLDENS / "v1.34").glob("*.json")):
        own = GOLDENS / "scenarios" / golden.stem
        folder = own if own.is_dir() else CORPUS / golden.stem
        if folder.is_dir():
            found.append(("1.34", folder, golden))
    return found


def _plugin_args(folder: Path) -> tuple[NodeResourcesFitArgs, NodeResourcesBalancedAllocationArgs]:
    fit_args, ba_args = NodeResourcesFitArgs(), NodeResourcesBalancedAllocationArgs()
    config_file = folder / "config.yaml"
    if config_file.exists():
        config = yaml.safe_load(config_file.read_text())
        profiles = config.get("profiles", [{}])
        if len(profiles) != 1 or "plugins" in profiles[0]:
            pytest.skip("plugin sets, weights and several profiles are not modelled here")
        profile = profiles[0]
        for entry in profile.get("pluginConfig", []):
            if entry["name"] == "NodeResourcesFit":
                fit_args = NodeResourcesFitArgs.from_dict(entry["args"])
            elif entry["name"] == "NodeResourcesBalancedAllocation":
                ba_args = NodeResourcesBalancedAllocationArgs.from_dict(entry["args"])
    return fit_args, ba_args


def _load(folder: Path, features: FeatureGates) -> tuple[list[Node], dict[str, Pod], dict[str, Pod]]:
    nodes: list[Node] = []
    bound: dict[str, Pod] = {}
    pending: dict[str, Pod] = {}
    docs = [d for d in yaml.safe_load_all((folder / "scenario.yaml").read_text()) if d]
    priorities = {d["metadata"]["name"]: d.get("value", 0) for d in docs if d.get("kind") == "PriorityClass"}
    for i, doc in enumerate(docs):
        if doc.get("kind") not in ("Node", "Pod"):
            continue
        obj: dict[str, Any] = copy.deepcopy(doc)
        apply_defaults(obj)
        if obj["kind"] == "Pod" and features.enabled("PodLevelResources"):
            default_pod_level_resources(obj["spec"])
        meta = obj.setdefault("metadata", {})
        meta.setdefault("namespace", "default") if obj["kind"] == "Pod" else None
        meta.setdefault("uid", f"uid-{i}")
        if obj["kind"] == "Node":
            nodes.append(Node.from_dict(obj))
            continue
        if obj.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        class_name = obj["spec"].get("priorityClassName")
        if class_name in priorities:
            obj["spec"]["priority"] = priorities[class_name]
        p = Pod.from_dict(obj, resource_rules(features))
        (bound if p.node_name else pending)[p.key] = p
    return nodes, bound, pending


def _bind(p: Pod, node_name: str, rules: ResourceRules) -> Pod:
    raw = copy.deepcopy(dict(p.raw))
    raw["spec"]["nodeName"] = node_name
    return Pod.from_dict(raw, rules)


@pytest.mark.parametrize(
    ("version", "folder", "recorded"), _recordings(), ids=[f"{v}-{f.name}" for v, f, _ in _recordings()]
)
def test_conformance_scenario(version: str, folder: Path, recorded: Path) -> None:
    golden = json.loads(recorded.read_text())
    fit_args, ba_args = _plugin_args(folder)
    features = feature_gates(version)
    rules = resource_rules(features)
    fit_plugin = fit.NodeResourcesFit(fit_args, features=features)
    ba_plugin = balanced_allocation.NodeResourcesBalancedAllocation(ba_args, features=features)
    nodes, bound, pending = _load(folder, features)
    if not nodes:
        pytest.skip("no node for the plugins to look at")
    nominated: dict[str, Pod] = {}
    checked_filters = checked_scores = 0
    for attempt in golden["attempts"]:
        incoming = pending[attempt["pod"]]
        nominated.pop(attempt["pod"], None)
        snapshot = make_snapshot(nodes, bound.values())
        with_nominated = make_snapshot(
            nodes, [*bound.values(), *(p for p in nominated.values() if p.priority >= incoming.priority)]
        )
        state = CycleState()
        fit_plugin.pre_filter(state, incoming)
        batch = fit_plugin.filter_nodes(state, incoming, with_nominated, np.arange(len(with_nominated)))
        for k, info in enumerate(with_nominated.node_infos):
            status = fit_plugin.filter(state, incoming, info)
            batch_status = None if batch.status_index[k] == -1 else batch.statuses[batch.status_index[k]]
            assert batch_status == status
            rejected = attempt["filter"].get(info.name)
            where = f"{attempt['pod']}#{attempt['attempt']} on {info.name}"
            if info.name in attempt["feasible"]:
                assert status is None, where
                checked_filters += 1
            elif rejected is not None and rejected["plugin"] == "NodeResourcesFit":
                assert status is not None, where
                got = (status.code.label, list(status.reasons))
                assert got == (rejected["code"], rejected["reasons"]), where
                checked_filters += 1

        rows = [snapshot.index[name] for name in attempt["scores"]]
        scored = snapshot.nodes(np.array(rows, dtype=np.int64))
        if len(scored):
            fit_plugin.pre_score(state, incoming, scored)
            skipped = ba_plugin.pre_score(state, incoming, scored)
            fit_batch = fit_plugin.score_nodes(state, incoming, scored).tolist()
            ba_batch = ba_plugin.score_nodes(state, incoming, scored).tolist()
            for k, info in enumerate(scored):
                want = attempt["scores"][info.name]
                where = f"{attempt['pod']}#{attempt['attempt']} on {info.name}"
                if "NodeResourcesFit" in want:
                    assert fit_plugin.score(state, incoming, info) == (want["NodeResourcesFit"], None), where
                    assert fit_batch[k] == want["NodeResourcesFit"], where
                    checked_scores += 1
                if "NodeResourcesBalancedAllocation" in want:
                    ba_score = ba_plugin.score(state, incoming, info)
                    assert ba_score == (want["NodeResourcesBalancedAllocation"], None), where
                    assert ba_batch[k] == want["NodeResourcesBalancedAllocation"], where
                    checked_scores += 1
                else:  # not run for this pod: its PreScore skipped it
                    assert skipped is not None and skipped.code is Code.SKIP, where

        for victim in attempt.get("victims") or []:
            bound.pop(victim, None)
        if attempt["result"] == "Scheduled":
            bound[attempt["pod"]] = _bind(incoming, attempt["node"], rules)
        elif attempt.get("nominatedNode"):
            nominated[attempt["pod"]] = _bind(incoming, attempt["nominatedNode"], rules)
    assert checked_filters > 0
