"""Workload generators: scenarios to simulate, as lazy streams of objects or written to a folder.

* :mod:`kubesched.scenario.generate.perf` - scheduler_perf's templates and workloads;
* :mod:`kubesched.scenario.generate.poisson` - Poisson arrivals with drawn lifetimes over given node shapes;
* :mod:`kubesched.scenario.generate.openb` - Alibaba's cluster-trace-gpu-v2023 (OpenB) CSVs as nodes and pods.

``kubesched generate perf|poisson|openb … -o DIR`` writes the same with :func:`write_scenario`.
"""

from kubesched.scenario.generate.openb import openb_objects
from kubesched.scenario.generate.perf import workload_objects
from kubesched.scenario.generate.poisson import NodeShape, PodShape, poisson_objects
from kubesched.scenario.generate.scenario import write_scenario

__all__ = ["NodeShape", "PodShape", "openb_objects", "poisson_objects", "workload_objects", "write_scenario"]
