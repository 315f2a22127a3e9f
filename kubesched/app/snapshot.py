"""``kubesched snapshot``: a live cluster's scheduling-relevant state, written as manifests simulate reads.

What is read and what is dropped is the live source's (:mod:`kubesched.scenario.live`, which also feeds
``simulate --live``): nodes, pods, namespaces, PriorityClasses, PodDisruptionBudgets, PersistentVolumes and
claims, StorageClasses, CSINodes and DRA's DeviceClasses, ResourceSlices, ResourceClaimTemplates and
ResourceClaims, without what the API server manages.

The reader is anything with the cluster protocol's ``list``: the embedded cluster, or, for the command,
the live cluster through the same client as ``kubesched run`` (connection settings found as kubectl finds
them, one paged list per kind).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

import yaml

from kubesched.app.cli import EXIT_OK
from kubesched.cluster.protocol import ApiError
from kubesched.scenario.live import (  # noqa: F401  (the snapshot's own names, defined with the live source)
    SNAPSHOT_FILES,
    SNAPSHOT_KINDS,
    Lister,
    clean,
    take_snapshot,
)
from kubesched.util.extras import require_extra

_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def write_snapshot(cluster: Lister, out_dir: str | Path) -> dict[str, int]:
    """Write the snapshot as numbered multi-document YAML files; returns how many objects of each kind."""
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    snapshot = take_snapshot(cluster)
    for filename, kinds in SNAPSHOT_FILES:
        objects = [obj for kind in kinds for obj in snapshot.get(kind, [])]
        with (directory / filename).open("w", encoding="utf-8") as out:
            yaml.dump_all(objects, out, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
    return {kind: len(objects) for kind, objects in snapshot.items()}


class SnapshotError(ValueError):
    """The live cluster could not be read (unreachable, or the credentials may not list a kind)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "List nodes, pods, namespaces, PriorityClasses, PodDisruptionBudgets, PersistentVolumes, "
        "claims, StorageClasses and CSINodes of a live cluster and write them, without "
        "server-managed fields, as manifests that simulate reads."
    )
    parser.add_argument(
        "--kubeconfig",
        metavar="FILE",
        default="",
        help="kubeconfig of the cluster to read (default: $KUBECONFIG, ~/.kube/config, then the "
        "in-cluster service account, as kubectl)",
    )
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: the current one)")
    parser.add_argument("-o", "--output-dir", required=True, metavar="DIR", help="folder to write the manifests to")


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    require_extra("live", "kubesched snapshot", ("kubernetes", "urllib3"))
    from kubesched.live.cluster import KubeCluster
    from kubesched.live.connection import ConnectionOptions, RestClient

    rest = RestClient(ConnectionOptions(kubeconfig=args.kubeconfig, context=args.context))
    try:
        counts = write_snapshot(KubeCluster(rest), args.output_dir)
    except ApiError as error:  # unreachable, or not allowed to list a kind
        raise SnapshotError(f"{rest.host}: {error.reason}: {error.message}") from None
    finally:
        rest.close()
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    print(f"Snapshot written to {args.output_dir}: {summary}", file=out)
    return EXIT_OK
