"""``kubesched generate perf|poisson|openb … -o DIR``: write a scenario folder to simulate."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any, TextIO

from kubesched.app.cli import EXIT_OK
from kubesched.scenario.generate.devices import DRIVER, GpuNodes, check_driver
from kubesched.scenario.generate.openb import TraceError, openb_objects
from kubesched.scenario.generate.perf import WORKLOADS, workload_objects
from kubesched.scenario.generate.perf_dra import DRA_WORKLOADS
from kubesched.scenario.generate.poisson import NodeShape, PodShape, poisson_objects
from kubesched.scenario.generate.scenario import write_scenario


class GenerateError(ValueError):
    """Generator arguments or input files that cannot make a scenario; the message says which."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The three generators, each a sub-command of ``generate``."""
    parser.description = (
        "Write a scenario (nodes.yaml, pods.yaml, and devices.yaml for GPUs published through "
        "DRA) that `kubesched simulate DIR` runs."
    )
    kinds = parser.add_subparsers(dest="generator", metavar="GENERATOR", required=True)

    perf = kinds.add_parser("perf", help="scheduler_perf workloads (SchedulingBasic, …)")
    perf.add_argument("--workload", default="SchedulingBasic", choices=sorted([*WORKLOADS, *DRA_WORKLOADS]))
    perf.add_argument("--nodes", type=int, default=500, help="nodes (default 500)")
    perf.add_argument("--existing", type=int, default=500, help="pods already bound (default 500)")
    perf.add_argument("--pods", type=int, default=1000, help="pending pods (default 1000)")

    poisson = kinds.add_parser("poisson", help="Poisson arrivals with drawn lifetimes over node shapes")
    poisson.add_argument(
        "--node-shape",
        action="append",
        metavar="COUNT[:cpu=…,memory=…,pods=…]",
        help="nodes of one shape; repeat for several (default 100:cpu=4,memory=32Gi,pods=110; none with --gpu-nodes)",
    )
    poisson.add_argument(
        "--gpu-nodes",
        action="append",
        metavar="COUNT[:model=…,gpus=…,gpu-memory=…,cpu=…,memory=…]",
        help="a pool of GPU nodes whose GPUs a DRA driver publishes (a ResourceSlice per node; "
        "DeviceClasses gpu and gpu-MODEL); repeat for several models "
        "(defaults: model=a100,gpus=8,gpu-memory=80Gi,cpu=64,memory=512Gi,pods=110)",
    )
    poisson.add_argument(
        "--gpu-driver", default=DRIVER, metavar="NAME", help=f"the DRA driver publishing the GPUs (default {DRIVER})"
    )
    poisson.add_argument(
        "--pod-shape",
        action="append",
        metavar="cpu=…,memory=…[,weight=…][,gpus=N[,gpu-model=M]]",
        help="pod requests; repeat for a weighted mix (default cpu=100m,memory=500Mi); gpus=N "
        "claims N GPUs (of model M) through a ResourceClaimTemplate",
    )
    poisson.add_argument("--pods", type=int, default=1000, help="pods to arrive (default 1000)")
    rate = poisson.add_mutually_exclusive_group()
    rate.add_argument("--rate", type=float, help="arrivals per second")
    rate.add_argument(
        "--utilisation", type=float, help="cpu share requested at steady state, sets the rate (default 0.7)"
    )
    poisson.add_argument(
        "--lifetime",
        default="exp:10m",
        help="const:D, exp:MEAN, uniform:A:B or lognormal:MEDIAN:SIGMA (default exp:10m)",
    )
    poisson.add_argument("--seed", type=int, default=0)

    openb = kinds.add_parser("openb", help="Alibaba cluster-trace-gpu-v2023 (OpenB) CSVs")
    openb.add_argument("--node-list", required=True, metavar="CSV", help="openb_node_list_*.csv")
    openb.add_argument("--pod-list", required=True, metavar="CSV", help="openb_pod_list_*.csv")
    openb.add_argument("--limit", type=int, help="keep only the first N pods by creation time")

    for sub in (perf, poisson, openb):
        sub.add_argument("-o", "--output-dir", required=True, metavar="DIR", help="folder to write")


def objects_for(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """The lazy object stream the arguments ask for."""
    if args.generator == "perf":
        for flag in ("nodes", "existing", "pods"):
            if getattr(args, flag) < 0:
                raise GenerateError(f"--{flag} must not be negative")
        if args.nodes == 0 and args.existing:
            raise GenerateError("--existing needs at least one node")
        return workload_objects(args.workload, args.nodes, args.existing, args.pods)
    if args.generator == "poisson":
        gpu_nodes = [GpuNodes.parse(t) for t in args.gpu_nodes or []]
        nodes = [NodeShape.parse(t) for t in args.node_shape or ([] if gpu_nodes else ["100"])]
        shapes = [PodShape.parse(t) for t in args.pod_shape or ["cpu=100m,memory=500Mi"]]
        if args.pods < 0:
            raise GenerateError("--pods must not be negative")
        utilisation = (
            args.utilisation
            if args.rate is None and args.utilisation is not None
            else (None if args.rate is not None else 0.7)
        )
        return poisson_objects(
            nodes,
            args.pods,
            rate=args.rate,
            utilisation=utilisation,
            lifetime=args.lifetime,
            shapes=shapes,
            seed=args.seed,
            gpu_nodes=gpu_nodes,
            driver=check_driver(args.gpu_driver),
        )
    return openb_objects(args.node_list, args.pod_list, limit=args.limit)


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write the scenario and say what was written."""
    try:
        counts = write_scenario(args.output_dir, objects_for(args))
    except (TraceError, GenerateError):
        raise
    except ValueError as err:
        raise GenerateError(str(err)) from None
    parts = ", ".join(f"{n} objects in {name}" for name, n in counts.items())
    print(f"Wrote {parts} under {args.output_dir}", file=out)
    return EXIT_OK
