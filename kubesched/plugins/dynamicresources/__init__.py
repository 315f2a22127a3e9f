"""DynamicResources: devices for pods through ResourceClaims (see :mod:`.dynamicresources`).

The package holds the plugin (:mod:`.dynamicresources`), its view of the claims a pod uses
(:mod:`.claims`), the shared claim tracker and slice index (:mod:`.dra_manager`), the writes it makes
through the cluster client (:mod:`.binding`), its queueing hints (:mod:`.hints`), and the structured
allocator (:mod:`.allocator`, :mod:`.pools`, :mod:`.constraints`).
"""

from kubesched.plugins.dynamicresources.dynamicresources import NAME, STATE_KEY, DynamicResources, new

__all__ = ["NAME", "STATE_KEY", "DynamicResources", "new"]
