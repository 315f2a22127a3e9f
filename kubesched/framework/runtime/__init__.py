"""The framework runtime (kube-scheduler's ``framework/runtime``): a profile's plugins, run in order.

- :mod:`.framework` - :class:`Framework`: built from a profile, it runs every extension point and is
  the Handle plugins receive;
- :mod:`.filtering` - the Filter point over one node or batches of snapshot rows, nominated pods
  included;
- :mod:`.scoring` - the Score point: score, normalise, weight;
- :mod:`.prebind` - the PreBind chain, whose plugins may wait for the cluster;
- :mod:`.calls` - how plugin code is called: guarded, checked, timed.
"""

from kubesched.framework.runtime.calls import PluginReturnError
from kubesched.framework.runtime.filtering import FilterOutcome
from kubesched.framework.runtime.framework import ALL_EVENTS, MAX_PERMIT_TIMEOUT, Framework
from kubesched.framework.runtime.scoring import ScoreOutcome

__all__ = ["ALL_EVENTS", "MAX_PERMIT_TIMEOUT", "FilterOutcome", "Framework", "PluginReturnError", "ScoreOutcome"]
