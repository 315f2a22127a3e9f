"""How user plugin sets combine with the default multiPoint set (mergePlugins)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import (
    PluginRef,
    Plugins,
    PluginSet,
    load_config,
    merge_plugin_set,
    merge_plugins,
)
from kubesched.config.defaults import default_multi_point

A, B, C = PluginRef("A", 1), PluginRef("B", 2), PluginRef("C", 3)
DEFAULT = PluginSet(enabled=(A, B, C))


@pytest.mark.parametrize(
    ("custom", "expected"),
    [
        pytest.param(PluginSet(), DEFAULT, id="empty-custom-keeps-defaults"),
        pytest.param(
            PluginSet(disabled=("*",)),
            PluginSet(enabled=(), disabled=("*",)),
            id="disable-star-drops-all-defaults",
        ),
        pytest.param(
            PluginSet(enabled=(PluginRef("X", 5),), disabled=("*",)),
            PluginSet(enabled=(PluginRef("X", 5),), disabled=("*",)),
            id="disable-star-keeps-custom",
        ),
        pytest.param(
            PluginSet(enabled=(PluginRef("B", 7),), disabled=("*",)),
            PluginSet(enabled=(PluginRef("B", 7),), disabled=("*",)),
            id="disable-star-then-reenable-default-appends",
        ),
        pytest.param(
            PluginSet(disabled=("B",)),
            PluginSet(enabled=(A, C), disabled=("B",)),
            id="disable-one",
        ),
        pytest.param(
            PluginSet(enabled=(PluginRef("B", 9),)),
            PluginSet(enabled=(A, PluginRef("B", 9), C)),
            id="reenable-with-weight-replaces-in-place",
        ),
        pytest.param(
            PluginSet(enabled=(PluginRef("B"),)),
            PluginSet(enabled=(A, PluginRef("B", 0), C)),
            id="reenable-without-weight-replaces-whole-entry",
        ),
        pytest.param(
            PluginSet(enabled=(PluginRef("X"), PluginRef("Y", 4))),
            PluginSet(enabled=(A, B, C, PluginRef("X"), PluginRef("Y", 4))),
            id="custom-appended-in-order",
        ),
        pytest.param(
            PluginSet(enabled=(PluginRef("X"), PluginRef("C", 8)), disabled=("A",)),
            PluginSet(enabled=(B, PluginRef("C", 8), PluginRef("X")), disabled=("A",)),
            id="mixed",
        ),
        pytest.param(
            PluginSet(enabled=(PluginRef("B", 1), PluginRef("B", 2))),
            PluginSet(enabled=(A, PluginRef("B", 2), C, PluginRef("B", 1))),
            id="duplicate-custom-last-replaces-first-appended",
        ),
        pytest.param(
            PluginSet(enabled=(PluginRef("B", 4),), disabled=("B",)),
            PluginSet(enabled=(A, C, PluginRef("B", 4)), disabled=("B",)),
            id="disable-and-enable-moves-to-end",
        ),
    ],
)
def test_merge_plugin_set(custom: PluginSet, expected: PluginSet) -> None:
    assert merge_plugin_set(DEFAULT, custom) == expected


def test_default_disabled_entries_are_kept_after_user_ones() -> None:
    default = PluginSet(enabled=(A,), disabled=("Z",))
    assert merge_plugin_set(default, PluginSet(disabled=("A",))) == PluginSet(disabled=("A", "Z"))


def test_merge_plugins_none_returns_defaults() -> None:
    default = Plugins(multi_point=DEFAULT)
    assert merge_plugins(default, None) is default


def test_merge_plugins_per_point() -> None:
    merged = merge_plugins(
        Plugins(multi_point=DEFAULT),
        Plugins(score=PluginSet(enabled=(PluginRef("S", 2),)), multi_point=PluginSet(disabled=("A",))),
    )
    assert merged.multi_point == PluginSet(enabled=(B, C), disabled=("A",))
    assert merged.score == PluginSet(enabled=(PluginRef("S", 2),))
    assert merged.filter == PluginSet()


def _profile_plugins(plugins: dict[str, Any]) -> Plugins:
    cfg = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "p", "plugins": plugins}],
        }
    )
    return cfg.profiles[0].plugins


def test_loaded_profile_reweights_default_in_place() -> None:
    plugins = _profile_plugins({"multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 3}]}})
    names = [p.name for p in plugins.multi_point.enabled]
    assert names == [p.name for p in default_multi_point()]
    assert plugins.multi_point.enabled[names.index("NodeResourcesFit")] == PluginRef("NodeResourcesFit", 3)


def test_loaded_profile_custom_multi_point_plugin_appended() -> None:
    plugins = _profile_plugins({"multiPoint": {"enabled": [{"name": "MyPlugin", "weight": 4}]}})
    assert plugins.multi_point.enabled[-1] == PluginRef("MyPlugin", 4)
    assert len(plugins.multi_point.enabled) == len(default_multi_point()) + 1


def test_loaded_profile_point_sets_stay_separate_from_multi_point() -> None:
    plugins = _profile_plugins(
        {
            "score": {
                "enabled": [{"name": "NodeResourcesFit", "weight": 5}],
                "disabled": [{"name": "*"}],
            }
        }
    )
    assert plugins.score == PluginSet(enabled=(PluginRef("NodeResourcesFit", 5),), disabled=("*",))
    assert plugins.multi_point.enabled == default_multi_point()
