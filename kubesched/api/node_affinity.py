"""Required node affinity: whether a pod's nodeSelector and required node affinity let it run on a node.

The one matcher for every reader (component-helpers' scheduling/corev1/nodeaffinity keeps it outside the
scheduler too): the NodeAffinity plugin filters nodes with it, PodTopologySpread counts only the nodes it
admits, and the DaemonSet controller decides with it which nodes should run a daemon pod.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.api.labels import NodeSelector
from kubesched.api.objects import Node, Pod


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """What a node must satisfy for the pod: its nodeSelector (exact labels) AND required affinity.

    ``required`` is None when the pod has no required node affinity; a selector with no terms
    matches no node.
    """

    node_selector: tuple[tuple[str, str], ...]
    required: NodeSelector | None

    @classmethod
    def of(cls, pod: Pod) -> RequiredNodeAffinity:
        affinity = pod.node_affinity
        return cls(tuple(pod.node_selector.items()), affinity.required if affinity is not None else None)

    def matches(self, node: Node) -> bool:
        labels = node.labels
        if any(labels.get(key) != value for key, value in self.node_selector):
            return False
        return self.required is None or self.required.matches(labels, node.name)

    def clone(self) -> RequiredNodeAffinity:
        """Itself: it is immutable, so a scheduling cycle's state may share it when copied."""
        return self
