"""Node pools: the label that groups a cluster's nodes, and natural name order."""

from __future__ import annotations

import pytest

from kubesched.sim.pools import NO_POOL, natural_key, pool_label, pool_of


@pytest.mark.parametrize(
    ("label_sets", "want"),
    [
        pytest.param(
            [{"cloud.google.com/gke-nodepool": "default-pool", "node.kubernetes.io/instance-type": "e2"}],
            "cloud.google.com/gke-nodepool",
            id="gke-pool-before-instance-type",
        ),
        pytest.param([{"eks.amazonaws.com/nodegroup": "ng-1"}], "eks.amazonaws.com/nodegroup", id="eks"),
        pytest.param([{"karpenter.sh/nodepool": "default"}], "karpenter.sh/nodepool", id="karpenter"),
        pytest.param(
            [{"kubernetes.azure.com/agentpool": "sys"}, {"agentpool": "sys"}],
            "kubernetes.azure.com/agentpool",
            id="aks",
        ),
        pytest.param(
            [{"topology.kubernetes.io/zone": "a"}, {"node.kubernetes.io/instance-type": "m5"}],
            "node.kubernetes.io/instance-type",
            id="one-node-with-a-pool-label-groups-them-all",
        ),
        pytest.param([{"topology.kubernetes.io/zone": "a"}], "topology.kubernetes.io/zone", id="zone"),
        pytest.param(
            [{"failure-domain.beta.kubernetes.io/zone": "a"}],
            "failure-domain.beta.kubernetes.io/zone",
            id="legacy-zone",
        ),
        pytest.param([{"kubernetes.io/hostname": "n1"}], None, id="one-pool"),
        pytest.param([], None, id="no-nodes"),
    ],
)
def test_pool_label(label_sets: list[dict[str, str]], want: str | None) -> None:
    assert pool_label(label_sets) == want


def test_pool_of_a_node_without_the_label_and_with_no_label_at_all() -> None:
    assert pool_of({"karpenter.sh/nodepool": "gpu"}, "karpenter.sh/nodepool") == "gpu"
    assert pool_of({}, "karpenter.sh/nodepool") == NO_POOL
    assert pool_of({"karpenter.sh/nodepool": "gpu"}, None) == "all"


def test_natural_order_puts_node_2_before_node_10() -> None:
    names = ["node-10", "node-2", "node-1", "gpu-b1", "gpu-a10", "gpu-a9", "node-2a"]
    assert sorted(names, key=natural_key) == ["gpu-a9", "gpu-a10", "gpu-b1", "node-1", "node-2", "node-2a", "node-10"]
