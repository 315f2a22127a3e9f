"""Workload generators: scenarios to simulate, as lazy streams of objects or written to a folder.

* :mod:`kubesched.generate.perf` - scheduler_perf's templates and workloads;
* :mod:`kubesched.generate.poisson` - Poisson arrivals with drawn lifetimes over given node shapes;
* :mod:`kubesched.generate.openb` - Alibaba's cluster-trace-gpu-v2023 (OpenB) CSVs as nodes and pods.

``kubesched generate perf|poisson|openb … -o DIR`` writes the same with :func:`write_scenario`.
"""

from kubesched.generate.openb import openb_objects
from kubesched.generate.perf import workload_objects
from kubesched.generate.poisson import NodeShape, PodShape, poisson_objects
from kubesched.generate.scenario import write_scenario

__all__ = ["NodeShape", "PodShape", "openb_objects", "poisson_objects", "workload_objects", "write_scenario"]
