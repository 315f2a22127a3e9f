"""Taint/toleration matching (ToleratesTaint) and the apiserver's validation of both."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.errors import ObjectError
from kubesched.api.taints import Taint, Toleration, find_untolerated_taint

MASTER = Taint("node-role.kubernetes.io/master", "", "NoSchedule")
GPU = Taint("gpu", "nvidia", "NoSchedule")
GPU_EXEC = Taint("gpu", "nvidia", "NoExecute")
SPOT = Taint("spot", "true", "PreferNoSchedule")


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        # Exists with an empty key tolerates everything, whatever the effect
        ({"operator": "Exists"}, GPU, True),
        ({"operator": "Exists"}, GPU_EXEC, True),
        ({"operator": "Exists"}, SPOT, True),
        # ...unless an effect narrows it
        ({"operator": "Exists", "effect": "NoSchedule"}, GPU, True),
        ({"operator": "Exists", "effect": "NoSchedule"}, GPU_EXEC, False),
        # Exists with a key ignores the value
        ({"key": "gpu", "operator": "Exists"}, GPU, True),
        ({"key": "gpu", "operator": "Exists"}, MASTER, False),
        # Equal (also the default operator) compares the value
        ({"key": "gpu", "operator": "Equal", "value": "nvidia"}, GPU, True),
        ({"key": "gpu", "value": "nvidia"}, GPU, True),
        ({"key": "gpu", "value": "amd"}, GPU, False),
        ({"key": "gpu"}, GPU, False),
        ({"key": "node-role.kubernetes.io/master"}, MASTER, True),
        ({"key": "node-role.kubernetes.io/master", "value": "x"}, MASTER, False),
        # empty effect matches every effect
        ({"key": "gpu", "value": "nvidia", "effect": ""}, GPU_EXEC, True),
        ({"key": "gpu", "value": "nvidia"}, GPU_EXEC, True),
        # NoSchedule does not cover NoExecute and vice versa
        ({"key": "gpu", "value": "nvidia", "effect": "NoSchedule"}, GPU_EXEC, False),
        ({"key": "gpu", "value": "nvidia", "effect": "NoExecute"}, GPU, False),
        ({"key": "gpu", "value": "nvidia", "effect": "NoExecute", "tolerationSeconds": 30}, GPU_EXEC, True),
        ({"key": "spot", "value": "true", "effect": "PreferNoSchedule"}, SPOT, True),
        # key mismatch
        ({"key": "gpu2", "operator": "Exists"}, GPU, False),
    ],
)
def test_tolerates(toleration: dict[str, Any], taint: Taint, expected: bool) -> None:
    assert Toleration.from_dict(toleration).tolerates(taint) is expected


def test_toleration_defaults() -> None:
    toleration = Toleration.from_dict({"key": "a", "operator": None, "value": None})
    assert toleration == Toleration(key="a", operator="Equal", value="", effect="", toleration_seconds=None)
    assert Toleration(key="a", operator="").operator == "Equal"
    assert (
        Toleration.from_dict(
            {"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -5}
        ).toleration_seconds
        == -5
    )


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        ({"key": "a", "operator": "Exists", "value": "x"}, "value"),
        ({"operator": "Equal", "value": "x"}, "operator"),
        ({}, "operator"),
        ({"key": "a", "operator": "In"}, "operator"),
        ({"key": "a", "operator": "exists"}, "operator"),
        ({"key": "a", "effect": "NoScheduling"}, "effect"),
        ({"key": "a", "effect": "NoSchedule", "tolerationSeconds": 10}, "tolerationSeconds"),
        ({"key": "a", "tolerationSeconds": 10}, "tolerationSeconds"),
        ({"key": "a", "effect": "NoExecute", "tolerationSeconds": "10"}, "tolerationSeconds"),
        ({"key": "a", "effect": "NoExecute", "tolerationSeconds": True}, "tolerationSeconds"),
        ({"key": "a b", "operator": "Exists"}, "key"),
        ({"key": "a", "value": "not valid"}, "value"),
        ({"key": 5, "operator": "Exists"}, "key"),
        ({"key": "a", "value": 5}, "value"),
        ("a", ""),
    ],
)
def test_toleration_errors(raw: Any, path: str) -> None:
    with pytest.raises(ObjectError) as info:
        Toleration.from_dict(raw)
    assert info.value.path == path


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"key": "gpu", "value": "nvidia", "effect": "NoSchedule"}, GPU),
        (
            {"key": "gpu", "value": "nvidia", "effect": "NoExecute", "timeAdded": "2024-01-01T00:00:00Z"},
            GPU_EXEC,
        ),
        ({"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}, MASTER),
        ({"key": "spot", "value": "true", "effect": "PreferNoSchedule"}, SPOT),
    ],
)
def test_taint_from_dict(raw: dict[str, Any], expected: Taint) -> None:
    taint = Taint.from_dict(raw)
    assert taint == expected
    assert hash(taint) == hash(expected)


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        ({"key": "a", "effect": "NoExec"}, "effect"),
        ({"key": "a"}, "effect"),
        ({"key": "a", "effect": ""}, "effect"),
        ({"effect": "NoSchedule"}, "key"),
        ({"key": "a/b/c", "effect": "NoSchedule"}, "key"),
        ({"key": "a", "value": "x y", "effect": "NoSchedule"}, "value"),
        ({"key": "a", "value": 1, "effect": "NoSchedule"}, "value"),
        (["a"], ""),
    ],
)
def test_taint_errors(raw: Any, path: str) -> None:
    with pytest.raises(ObjectError) as info:
        Taint.from_dict(raw)
    assert info.value.path == path


def test_taint_str() -> None:
    assert str(GPU) == "gpu=nvidia:NoSchedule"
    assert str(MASTER) == "node-role.kubernetes.io/master:NoSchedule"


HARD = ("NoSchedule", "NoExecute")


@pytest.mark.parametrize(
    ("taints", "tolerations", "effects", "expected"),
    [
        ((), (), HARD, None),
        ((SPOT,), (), HARD, None),
        ((SPOT,), (), ("PreferNoSchedule",), SPOT),
        ((MASTER, GPU), (), HARD, MASTER),
        ((GPU, MASTER), (), HARD, GPU),
        ((MASTER, GPU), ({"key": "node-role.kubernetes.io/master", "operator": "Exists"},), HARD, GPU),
        ((MASTER, GPU), ({"operator": "Exists"},), HARD, None),
        ((GPU, GPU_EXEC), ({"key": "gpu", "value": "nvidia", "effect": "NoSchedule"},), HARD, GPU_EXEC),
        (
            (GPU, GPU_EXEC),
            ({"key": "gpu", "value": "nvidia", "effect": "NoSchedule"},),
            ("NoSchedule",),
            None,
        ),
        (
            (GPU, GPU_EXEC),
            ({"key": "gpu", "value": "nvidia", "effect": "NoSchedule"}, {"key": "gpu", "operator": "Exists"}),
            HARD,
            None,
        ),
        ((GPU,), ({"key": "gpu", "value": "amd"},), HARD, GPU),
        ((GPU,), (), (), None),
    ],
)
def test_find_untolerated_taint(
    taints: tuple[Taint, ...],
    tolerations: tuple[dict[str, Any], ...],
    effects: tuple[str, ...],
    expected: Taint | None,
) -> None:
    parsed = [Toleration.from_dict(t) for t in tolerations]
    assert find_untolerated_taint(taints, parsed, effects) == expected
    assert find_untolerated_taint(list(taints), tuple(parsed), frozenset(effects)) == expected
