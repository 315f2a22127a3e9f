"""Files a simulation leaves behind: the decision trace (JSON Lines) and the resulting manifests.

The trace has one conformance-shaped record per attempt, so it can be diffed against a golden
file or loaded with any JSON Lines reader; ``kubesched simulate --trace`` streams it while the run
goes (:class:`~kubesched.recording.TraceWriter`), :func:`write_trace` writes kept records. The
manifests are the cluster's nodes and pods after the run, each attempted pod carrying its
``kubesched.io/`` result annotations (from an :class:`AnnotationRecorder` that watched the run, or
from the full records of a ``record="full"`` result).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kubesched.recording.trace import AttemptRecord
from kubesched.sim.annotations import PREFIX, AnnotationRecorder, ProfilePlugins, annotate, pod_annotations

if TYPE_CHECKING:
    from kubesched.sim.simulate import SimulationResult

NODES_FILE = "nodes.yaml"
PODS_FILE = "pods.yaml"

_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def write_trace(records: Iterable[AttemptRecord], path: str | Path) -> int:
    """Write one JSON object per attempt to ``path``; returns how many were written."""
    count = 0
    with Path(path).open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record.to_dict(raw_scores=True), separators=(",", ":")))
            out.write("\n")
            count += 1
    return count


def profile_plugins(result: SimulationResult) -> dict[str, ProfilePlugins]:
    """Each profile's Filter plugins (in the order the framework runs them) and Score weights."""
    if result.scheduler is None:
        return {}
    return {
        name: ProfilePlugins(
            fwk.plugin_names("filter"),
            dict(fwk.score_weights),
            pre_filter=fwk.plugin_names("pre_filter"),
            post_filter=fwk.plugin_names("post_filter"),
            pre_score=fwk.plugin_names("pre_score"),
            reserve=fwk.plugin_names("reserve"),
            permit=fwk.plugin_names("permit"),
            pre_bind=fwk.plugin_names("pre_bind"),
            bind=fwk.plugin_names("bind"),
        )
        for name, fwk in result.scheduler.profiles.items()
    }


def annotated_pods(
    result: SimulationResult, recorder: AnnotationRecorder | None = None, prefix: str = PREFIX
) -> list[dict[str, Any]]:
    """The cluster's pods after the run, attempted ones annotated with their results (from
    ``recorder`` when given, else from the result's full records), keys under ``prefix``."""
    plugins = profile_plugins(result)
    pods = result.pods()
    if recorder is not None:
        for pod in pods:
            meta = pod.get("metadata") or {}
            annotate(
                pod,
                recorder.pod_annotations(f"{meta.get('namespace') or 'default'}/{meta.get('name')}", plugins, prefix),
            )
        return pods
    by_pod: dict[str, list[AttemptRecord]] = defaultdict(list)
    for record in result.records:
        by_pod[record.pod].append(record)
    for pod in pods:
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        if key in by_pod:
            annotate(pod, pod_annotations(by_pod[key], plugins, prefix))
    return pods


def write_manifests(
    result: SimulationResult, out_dir: str | Path, annotations: AnnotationRecorder | None = None, prefix: str = PREFIX
) -> list[Path]:
    """Write ``nodes.yaml`` and ``pods.yaml`` (multi-document YAML) under ``out_dir``; the pods'
    result annotations (keys under ``prefix``) come from ``annotations`` when given, else from the
    result's full records."""
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, objects in ((NODES_FILE, result.nodes()), (PODS_FILE, annotated_pods(result, annotations, prefix))):
        path = directory / name
        with path.open("w", encoding="utf-8") as out:
            yaml.dump_all(objects, out, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
        written.append(path)
    return written
