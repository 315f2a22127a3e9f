from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from kubesched.cache.snapshot import Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import BatchScorePlugin, EnqueueExtensions
from kubesched.plugins import imagelocality
from kubesched.plugins.imagelocality import calculate_priority, normalized_image_name
from tests.factories import NO_HANDLE, as_handle, make_node, make_pod, make_snapshot
from tests.plugins.test_helper import (
    IMAGE_CHOICES,
    check_score_conformance,
    random_nodes,
    scenario_available,
)

NAME = "ImageLocality"
MB = 1024 * 1024


class FakeHandle:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot


def pod_with_images(name: str, images: list[str], init: Sequence[str] = ()) -> Any:
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    return make_pod(name, spec=spec)


@pytest.mark.parametrize(
    ("image", "want"),
    [
        ("nginx", "nginx:latest"),
        ("nginx:1.25", "nginx:1.25"),
        ("docker.io/library/nginx", "docker.io/library/nginx:latest"),
        ("localhost:5000/app", "localhost:5000/app:latest"),
        ("localhost:5000/app:v1", "localhost:5000/app:v1"),
        ("nginx@sha256:abc", "nginx@sha256:abc"),
        ("library/nginx", "library/nginx:latest"),
    ],
)
def test_normalized_image_name(image: str, want: str) -> None:
    assert normalized_image_name(image) == want


@pytest.mark.parametrize(
    ("sum_scores", "containers", "want"),
    [
        (0, 1, 0),
        (23 * MB, 1, 0),
        (1000 * MB, 1, 100),
        (5000 * MB, 1, 100),
        (int(1572864000 * 0.25), 1, 36),  # trainer:v2 (1.5GB) on 1 of 4 nodes
        (int(1048576000 * 0.5), 1, 48),  # python:3.11 (1GB) on 2 of 4 nodes
        (int(1572864000 * 0.25) + int(1048576000 * 0.5), 2, 43),
        (int(1572864000 * 0.25), 2, 17),
        (0, 0, 0),
    ],
)
def test_calculate_priority(sum_scores: int, containers: int, want: int) -> None:
    assert calculate_priority(sum_scores, containers) == want


def _images(*specs: tuple[list[str], int]) -> list[dict[str, Any]]:
    return [{"names": names, "sizeBytes": size} for names, size in specs]


def test_score_table() -> None:
    # Go's TestImageLocalityPriority, two nodes: node1 has gcr.io/40:latest (40MB) and 300MB / 2000MB
    # images; node2 has 250MB and 10MB images.
    node1 = make_node(
        "node1",
        images=_images(
            (["gcr.io/40:latest", "gcr.io/40:v1"], 40 * MB),
            (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
            (["gcr.io/2000:latest"], 2000 * MB),
        ),
    )
    node2 = make_node(
        "node2", images=_images((["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB))
    )
    snap = make_snapshot([node1, node2])
    plugin = imagelocality.new(None, as_handle(FakeHandle(snap)))
    cases = [
        # 40MB*1/2 = 20MB -> below the threshold -> 0; 250MB*1/2 = 125MB -> 100*(125-23)/(1977) = 5.
        (["gcr.io/40", "gcr.io/250"], [0, 5]),
        # 40MB*1/2 + 300MB*1/2 = 170MB -> 100*147/1977 = 7; node2 has none -> 0.
        (["gcr.io/40", "gcr.io/300"], [7, 0]),
        # 2000MB*1/2 = 1000MB on node1 of 2 containers -> 100*977/1977 = 49; node2 10MB*1/2 -> 0.
        (["gcr.io/2000", "gcr.io/10"], [49, 0]),
    ]
    nodes = snap.all_nodes()
    for images, want in cases:
        pod = pod_with_images("p", images)
        got = [plugin.score(CycleState(), pod, info)[0] for info in nodes]
        assert got == want, images
        assert plugin.score_nodes(CycleState(), pod, nodes).tolist() == want
        assert plugin.normalize_scores(CycleState(), pod, np.array(want)) is None


def test_duplicate_images_count_per_container() -> None:
    node = make_node("a", images=_images((["big:latest"], 800 * MB)))
    snap = make_snapshot([node])
    plugin = imagelocality.new(None, as_handle(FakeHandle(snap)))
    pod = pod_with_images("p", ["big", "big"], init=["big"])
    # 3 * 800MB over 3 containers (max 3000MB): 100 * (2400 - 23) / (3000 - 23) = 79.
    assert plugin.score(CycleState(), pod, snap.node_infos[0]) == (79, None)
    assert plugin.score_nodes(CycleState(), pod, snap.all_nodes()).tolist() == [79]


def test_images_are_read_again_when_the_init_containers_differ() -> None:
    """The images are kept per parsed containers tuple, checked against the init containers."""
    node = make_node("a", images=_images((["big:latest"], 800 * MB)))
    snap = make_snapshot([node])
    plugin = imagelocality.new(None, as_handle(FakeHandle(snap)))
    plain = pod_with_images("p", ["big"])
    init = pod_with_images("q", ["big"], init=["small"]).init_containers
    with_init = dataclasses.replace(plain, init_containers=init)
    assert with_init.containers is plain.containers
    # 800MB over 1 container (max 1000MB): 100 * (800 - 23) / (1000 - 23) = 79.
    assert plugin.score_nodes(CycleState(), plain, snap.all_nodes()).tolist() == [79]
    # 800MB over 2 containers (max 2000MB): 100 * (800 - 23) / (2000 - 23) = 39.
    assert plugin.score_nodes(CycleState(), with_init, snap.all_nodes()).tolist() == [39]
    assert plugin.score_nodes(CycleState(), plain, snap.all_nodes()).tolist() == [79]


def test_protocols() -> None:
    plugin = imagelocality.new(None, NO_HANDLE)
    assert isinstance(plugin, BatchScorePlugin)
    assert plugin.score_extensions() is None
    assert not isinstance(plugin, EnqueueExtensions)


def test_batch_equals_per_node_on_random_clusters() -> None:
    rng = random.Random(21)
    names: list[str] = [n for image in IMAGE_CHOICES for n in image["names"]]
    pod_images = [*names, "nginx", "python", "unknown:1", "docker.io/library/nginx"]
    for trial in range(40):
        snap = make_snapshot(random_nodes(rng, rng.randint(1, 30)))
        plugin = imagelocality.new(None, as_handle(FakeHandle(snap)))
        pod = pod_with_images(
            f"p{trial}", rng.sample(pod_images, rng.randint(1, 3)), init=rng.sample(pod_images, rng.randint(0, 2))
        )
        rows = np.array(sorted(rng.sample(range(len(snap)), rng.randint(1, len(snap)))))
        nodes = snap.nodes(rows)
        want = [plugin.score(CycleState(), pod, info)[0] for info in nodes]
        assert plugin.score_nodes(CycleState(), pod, nodes).tolist() == want


def test_image_index_follows_node_changes() -> None:
    from datetime import UTC, datetime

    from kubesched.cache.cache import Cache

    cache = Cache(clock=lambda: datetime(2024, 1, 1, tzinfo=UTC))
    old = make_node("a")
    cache.add_node(old)
    cache.add_node(make_node("b"))
    snap = Snapshot()
    cache.update_snapshot(snap)
    plugin = imagelocality.new(None, as_handle(FakeHandle(snap)))
    pod = pod_with_images("p", ["big"])
    assert plugin.score_nodes(CycleState(), pod, snap.all_nodes()).tolist() == [0, 0]
    cache.update_node(old, make_node("a", images=_images((["big:latest"], 2000 * MB))))
    cache.update_snapshot(snap)
    want = [plugin.score(CycleState(), pod, info)[0] for info in snap.all_nodes()]
    assert want == [100, 0]  # 2000MB on 1 of 2 nodes = 1000MB, the cap
    assert plugin.score_nodes(CycleState(), pod, snap.all_nodes()).tolist() == want


@pytest.mark.parametrize("scenario", ["image-locality-basic", "image-name-normalization", "smoke"])
def test_conformance(scenario: str) -> None:
    if not scenario_available(scenario):
        pytest.skip("conformance corpus not available")
    n = check_score_conformance(scenario, lambda snap: imagelocality.new(None, as_handle(FakeHandle(snap))), NAME, 1)
    assert n > 0
