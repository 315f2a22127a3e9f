"""The node resources plugins: NodeResourcesFit and NodeResourcesBalancedAllocation."""

from kubesched.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kubesched.plugins.noderesources.balanced_allocation import new as new_balanced_allocation
from kubesched.plugins.noderesources.fit import (
    InsufficientResource,
    NodeResourcesFit,
    fits,
    fits_request,
)
from kubesched.plugins.noderesources.fit import new as new_fit

__all__ = [
    "InsufficientResource",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "fits",
    "fits_request",
    "new_balanced_allocation",
    "new_fit",
]
