"""kubesched: kube-scheduler rebuilt in Python, a real scheduler and an explainable simulator.

The public face is small; everything else lives in the sub-packages named after kube-scheduler's
own (``framework``, ``plugins``, ``queue``, ``cache``…) and may move between releases::

    from kubesched import simulate
    result = simulate("examples/cluster", config="examples/config.yaml", seed=1)
    result.final        # {"ns/pod": "node" or None}
    result.attempts     # one summary per scheduling attempt (record="full": the full decision record)

The public names are imported on first use, not with the package: ``import kubesched.framework`` or
``kubesched run`` must not pay for the simulator, the embedded control plane and the input pipeline.
"""

from __future__ import annotations

import importlib
from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

try:
    __version__ = _metadata.version("kubesched")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

if TYPE_CHECKING:
    from kubesched.config import ConfigError, load_config
    from kubesched.embedded.apiserver import EmbeddedCluster
    from kubesched.scenario.manifests import ManifestError
    from kubesched.scheduler import Scheduler
    from kubesched.sim.capacity import CapacityResult, capacity
    from kubesched.sim.plan import PlanResult, plan
    from kubesched.sim.simulate import SimulationError, SimulationResult, simulate

#: public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "CapacityResult": "kubesched.sim.capacity",
    "ConfigError": "kubesched.config",
    "EmbeddedCluster": "kubesched.embedded.apiserver",
    "ManifestError": "kubesched.scenario.manifests",
    "PlanResult": "kubesched.sim.plan",
    "Scheduler": "kubesched.scheduler",
    "SimulationError": "kubesched.sim.simulate",
    "SimulationResult": "kubesched.sim.simulate",
    "capacity": "kubesched.sim.capacity",
    "load_config": "kubesched.config",
    "plan": "kubesched.sim.plan",
    "simulate": "kubesched.sim.simulate",
}

__all__ = [
    "CapacityResult",
    "ConfigError",
    "EmbeddedCluster",
    "ManifestError",
    "PlanResult",
    "Scheduler",
    "SimulationError",
    "SimulationResult",
    "__version__",
    "capacity",
    "load_config",
    "plan",
    "simulate",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
