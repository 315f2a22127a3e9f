"""PodLabelIndex and AffinityTermIndex against a plain walk over every pod."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from kubesched.api.labels import LabelRequirement, LabelSelector
from kubesched.api.objects import Pod
from kubesched.cache.pod_index import (
    PREFERRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
    AffinityTermIndex,
    PodLabelIndex,
)
from tests.factories import make_pod

KEYS = ("app", "tier", "team")
VALUES = ("a", "b", "c")
NAMESPACES = ("default", "prod", "dev")


def _random_pod(rng: random.Random, i: int) -> Pod:
    labels = {k: rng.choice(VALUES) for k in KEYS if rng.random() < 0.6}
    meta_extra = {}
    if rng.random() < 0.1:
        meta_extra["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    raw = make_pod(f"p{i}", namespace=rng.choice(NAMESPACES), labels=labels, node_name="n").raw
    raw = {**raw, "metadata": {**raw["metadata"], **meta_extra}}
    return Pod.from_dict(raw)


def _random_selector(rng: random.Random) -> LabelSelector | None:
    if rng.random() < 0.05:
        return None
    reqs = []
    for _ in range(rng.randint(0, 3)):
        op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
        values = frozenset(rng.sample(VALUES, rng.randint(1, 2))) if op in ("In", "NotIn") else frozenset()
        reqs.append(LabelRequirement(rng.choice(KEYS), op, values))
    return LabelSelector(tuple(reqs))


def _expected(
    pods: dict[str, tuple[Pod, int]],
    namespaces: tuple[str, ...] | None,
    selector: LabelSelector | None,
    skip_terminating: bool,
) -> Counter[int]:
    out: Counter[int] = Counter()
    for pod, row in pods.values():
        if selector is None or (namespaces is not None and pod.namespace not in namespaces):
            continue
        if skip_terminating and pod.meta.deletion_timestamp is not None:
            continue
        if selector.matches(pod.labels):
            out[row] += 1
    return out


@pytest.mark.parametrize("seed", range(25))
def test_label_index_matches_a_plain_walk(seed: int) -> None:
    rng = random.Random(seed)
    index = PodLabelIndex()
    live: dict[str, tuple[Pod, int]] = {}
    for step in range(200):
        if live and rng.random() < 0.3:
            uid = rng.choice(sorted(live))
            pod, row = live.pop(uid)
            index.remove(pod, row)
        else:
            pod = _random_pod(rng, step)
            row = rng.randrange(20)
            index.add(pod, row)
            live[pod.uid] = (pod, row)
        if step % 10 == 0:
            for _ in range(10):
                selector = _random_selector(rng)
                namespaces = None if rng.random() < 0.3 else tuple(rng.sample(NAMESPACES, rng.randint(1, 2)))
                skip = rng.random() < 0.5
                want = _expected(live, namespaces, selector, skip)
                got = Counter(index.rows_matching(namespaces, selector, skip_terminating=skip).tolist())
                assert got == want, (selector, namespaces, skip)
                counts = index.count_per_node(20, namespaces, selector, skip_terminating=skip)
                assert counts.tolist() == [want.get(r, 0) for r in range(20)]
                pairs = list(index.pods_matching(namespaces, selector))
                assert Counter(r for _, r in pairs) == _expected(live, namespaces, selector, False)
    assert len(index) == len(live)


def test_removing_a_pod_indexed_on_another_node_is_a_no_op() -> None:
    index = PodLabelIndex()
    pod = make_pod("p", labels={"app": "a"}, node_name="n")
    index.add(pod, 1)
    index.add(pod, 2)  # moved: re-indexed on row 2
    index.remove(pod, 1)  # the stale removal from the old node
    assert index.rows_matching(None, LabelSelector.from_dict({"matchLabels": {"app": "a"}})).tolist() == [2]


def test_replacing_a_pod_hands_out_the_new_object_and_follows_its_labels() -> None:
    index = PodLabelIndex()
    app_a = LabelSelector.from_dict({"matchLabels": {"app": "a"}})
    app_b = LabelSelector.from_dict({"matchLabels": {"app": "b"}})
    first = make_pod("p", labels={"app": "a"}, node_name="n", uid="u1")
    index.add(first, 3)
    again = make_pod("p", labels={"app": "a"}, node_name="n", uid="u1")  # the same labels: swapped in place
    index.replace(first, again, 3)
    assert [(p, row) for p, row in index.pods_matching(None, app_a)] == [(again, 3)]
    assert next(p for p, _ in index.pods_matching(None, app_a)) is again
    relabelled = make_pod("p", labels={"app": "b"}, node_name="n", uid="u1")
    index.replace(again, relabelled, 3)
    assert index.rows_matching(None, app_a).tolist() == []
    assert index.rows_matching(None, app_b).tolist() == [3]
    assert len(index) == 1


def test_term_index_merges_identical_terms_and_counts_per_row() -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}
            ]
        }
    }
    pref = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "podAffinityTerm": {"labelSelector": {}, "topologyKey": "zone"}},
                {"weight": 7, "podAffinityTerm": {"labelSelector": {}, "topologyKey": "zone"}},
            ]
        }
    }
    index = AffinityTermIndex()
    pods = [make_pod(f"p{i}", spec={"affinity": anti}, node_name="n") for i in range(3)]
    for row, pod in zip((0, 0, 4), pods, strict=True):
        index.add(pod, row)
    (entry,) = index.terms(REQUIRED_ANTI_AFFINITY)
    assert entry.per_row == {0: 2, 4: 1} and entry.weight == 0
    rows, counts = entry.arrays()
    assert dict(zip(rows.tolist(), counts.tolist(), strict=True)) == {0: 2, 4: 1}
    index.remove(pods[0], 0)
    assert entry.per_row == {0: 1, 4: 1}
    assert np.array_equal(entry.arrays()[1], np.array([1, 1]))
    other = make_pod("q", spec={"affinity": pref}, node_name="n")
    index.add(other, 3)
    assert sorted(e.weight for e in index.terms(PREFERRED_AFFINITY)) == [5, 7]
    index.remove(other, 3)
    assert list(index.terms(PREFERRED_AFFINITY)) == []
