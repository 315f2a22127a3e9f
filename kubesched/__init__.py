"""kubesched: kube-scheduler rebuilt in Python, a real scheduler and an explainable simulator.

The public face is small; everything else lives in the sub-packages named after kube-scheduler's
own (``framework``, ``plugins``, ``queue``, ``cache``…) and may move between releases::

    from kubesched import simulate
    result = simulate("examples/cluster", config="examples/config.yaml", seed=1)
    result.final        # {"ns/pod": "node" or None}
    result.attempts     # one summary per scheduling attempt (record="full": the full decision record)
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("kubesched")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

from kubesched.config import ConfigError, load_config
from kubesched.embedded.apiserver import EmbeddedCluster
from kubesched.scenario.manifests import ManifestError
from kubesched.scheduler import Scheduler
from kubesched.sim.capacity import CapacityResult, capacity
from kubesched.sim.plan import PlanResult, plan
from kubesched.sim.simulate import SimulationError, SimulationResult, simulate

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
