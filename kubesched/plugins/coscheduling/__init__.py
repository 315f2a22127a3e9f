"""Coscheduling (gang scheduling) and the PodGroup kind, after kubernetes-sigs/scheduler-plugins.

Shipped with kubesched but built like an out-of-tree plugin: it only uses the framework's public
Handle, and the registry knows it as ``Coscheduling``.
"""

from kubesched.api.podgroup import POD_GROUP_LABEL, PodGroup
from kubesched.plugins.coscheduling.plugin import NAME, Coscheduling, new

__all__ = ["NAME", "POD_GROUP_LABEL", "Coscheduling", "PodGroup", "new"]
