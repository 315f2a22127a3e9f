"""Alibaba's cluster-trace-gpu-v2023 (OpenB) as a scenario: nodes and pods with arrival and duration.

Node CSV (``openb_node_list_*.csv``): ``sn,cpu_milli,memory_mib,gpu,model``.
Pod CSV (``openb_pod_list_*.csv``): ``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
creation_time,deletion_time,scheduled_time`` (times in seconds).

Mapping: GPUs become the extended resource ``nvidia.com/gpu`` (whole GPUs: kube-scheduler cannot share
one, so a GPU-sharing pod asks for one and its share is kept in ``kubesched.io/gpu-milli``); the GPU model
becomes the node label ``kubesched.io/gpu-model`` and a pod's ``gpu_spec`` (models separated by ``|``) a
required node affinity on it. A pod arrives at ``creation_time`` minus the earliest creation time and runs
for ``deletion_time - scheduled_time`` (``deletion_time - creation_time`` when it never was scheduled).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kubesched.scenario.generate.poisson import HOSTNAME_LABEL, IMAGE, format_seconds
from kubesched.scenario.timing import ARRIVAL_ANNOTATION, DURATION_ANNOTATION

GPU = "nvidia.com/gpu"
MODEL_LABEL = "kubesched.io/gpu-model"
GPU_MILLI_ANNOTATION = "kubesched.io/gpu-milli"
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)


class TraceError(ValueError):
    """A trace file that cannot be converted; the message names the file, line and column."""


def _rows(path: str | Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in required if c not in (reader.fieldnames or ())]
        if missing:
            raise TraceError(f"{path}: missing column(s) {', '.join(missing)}")
        for row in reader:
            yield reader.line_num, row


def _int(row: dict[str, str], column: str, where: str, *, default: int | None = None) -> int:
    text = (row.get(column) or "").strip()
    if not text and default is not None:
        return default
    try:
        return int(float(text))
    except ValueError:
        raise TraceError(f"{where}: {column}: expected a number, got {text!r}") from None


def _model(text: str | None) -> str:
    text = (text or "").strip()
    return "" if text.lower() in ("", "nan") else text


def openb_nodes(path: str | Path) -> Iterator[dict[str, Any]]:
    for line, row in _rows(path, NODE_COLUMNS):
        where = f"{path}: line {line}"
        name = (row.get("sn") or "").strip()
        if not name:
            raise TraceError(f"{where}: sn: empty node name")
        resources = {
            "cpu": f"{_int(row, 'cpu_milli', where)}m",
            "memory": f"{_int(row, 'memory_mib', where)}Mi",
            "pods": "110",
        }
        gpus = _int(row, "gpu", where, default=0)
        if gpus:
            resources[GPU] = str(gpus)
        labels = {HOSTNAME_LABEL: name}
        if model := _model(row.get("model")):
            labels[MODEL_LABEL] = model
        yield {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {
                "capacity": dict(resources),
                "allocatable": dict(resources),
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }


def openb_pods(path: str | Path, *, limit: int | None = None) -> list[dict[str, Any]]:
    """Pods sorted by creation time (ties in file order); ``limit`` keeps the first ones."""
    rows: list[tuple[int, int, dict[str, Any]]] = []
    for line, row in _rows(path, POD_COLUMNS):
        where = f"{path}: line {line}"
        created = _int(row, "creation_time", where)
        deleted = _int(row, "deletion_time", where)
        scheduled = _int(row, "scheduled_time", where, default=-1)
        start = scheduled if scheduled >= 0 else created
        if deleted < start:
            raise TraceError(f"{where}: deletion_time {deleted} is before the pod started ({start})")
        rows.append((created, line, _pod(row, where, deleted - start)))
    rows.sort(key=lambda r: (r[0], r[1]))
    if limit is not None:
        rows = rows[:limit]
    first = rows[0][0] if rows else 0
    for created, _, pod in rows:
        pod["metadata"]["annotations"][ARRIVAL_ANNOTATION] = format_seconds(created - first)
    return [pod for _, _, pod in rows]


def _pod(row: dict[str, str], where: str, duration: int) -> dict[str, Any]:
    name = (row.get("name") or "").strip()
    if not name:
        raise TraceError(f"{where}: name: empty pod name")
    requests = {"cpu": f"{_int(row, 'cpu_milli', where)}m", "memory": f"{_int(row, 'memory_mib', where)}Mi"}
    gpus = _int(row, "num_gpu", where, default=0)
    annotations = {DURATION_ANNOTATION: format_seconds(duration)}
    if gpus:
        requests[GPU] = str(gpus)
        milli = _int(row, "gpu_milli", where, default=1000)
        if milli and milli < 1000:
            annotations[GPU_MILLI_ANNOTATION] = str(milli)
    spec: dict[str, Any] = {
        "containers": [{"name": "task", "image": IMAGE, "resources": {"requests": requests, "limits": dict(requests)}}]
    }
    models = [m for m in (_model(p) for p in (row.get("gpu_spec") or "").split("|")) if m]
    if models:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": MODEL_LABEL, "operator": "In", "values": models}]}
                    ]
                }
            }
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations},
        "spec": spec,
    }


def openb_objects(nodes_csv: str | Path, pods_csv: str | Path, *, limit: int | None = None) -> Iterator[dict[str, Any]]:
    """The scenario: every node of the node list, then the pods in arrival order."""
    yield from openb_nodes(nodes_csv)
    yield from openb_pods(pods_csv, limit=limit)
