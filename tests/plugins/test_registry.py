"""Plugin registry (kubesched.plugins.registry): in-tree factories, out-of-tree loading, left-out plugins."""

from __future__ import annotations

import importlib.metadata
import inspect
import typing
from typing import Any

import pytest

from kubesched.config import load_config
from kubesched.config.features import feature_gates
from kubesched.framework.handle import Handle
from kubesched.plugins import registry as registry_mod
from kubesched.plugins.registry import (
    ENTRY_POINT_GROUP,
    NOT_YET_BUILT,
    PluginLoadError,
    in_tree_registry,
    load_import_path,
    resolve_profile,
)
from tests.factories import NO_HANDLE, as_handle, node_dict, pod_dict
from tests.fakeplugins import (
    FactoryBuilt,
    Harness,
    LabelFilter,
    NoName,
    config_dict,
    profile_with,
    ref,
)


def test_entry_point_group_is_the_documented_one() -> None:
    assert ENTRY_POINT_GROUP == "kubesched.plugins"
    assert registry_mod.__doc__ is not None and f"``{ENTRY_POINT_GROUP}`` entry" in registry_mod.__doc__


def test_in_tree_registry_builds_every_registered_name_and_none_of_the_unbuilt() -> None:
    reg = in_tree_registry()
    assert {"PrioritySort", "DefaultBinder", "NodeResourcesFit", "DefaultPreemption"} <= set(reg)
    assert not (NOT_YET_BUILT & set(reg))


@pytest.mark.parametrize("name", sorted({**registry_mod._IN_TREE_MODULES, **registry_mod._BUNDLED_OUT_OF_TREE}))
def test_every_in_tree_factory_takes_the_typed_handle(name: str) -> None:
    """``factory(args, handle)`` with ``handle: Handle`` (the protocol), never Any."""
    factory = in_tree_registry()[name]
    params = list(inspect.signature(factory).parameters.values())
    assert [p.name for p in params[:2]] == ["args", "handle"], name
    # Handle may be imported for type checking only: resolve it by name.
    hints = typing.get_type_hints(factory, localns={"Handle": Handle})
    assert hints["handle"] is Handle, (name, hints["handle"])


def test_import_path_plugin_is_built_with_its_args_and_named_after_the_path() -> None:
    factory = load_import_path(ref(LabelFilter))
    plugin: Any = factory({"key": "k"}, as_handle("handle"))
    assert isinstance(plugin, LabelFilter)
    assert plugin.name == ref(LabelFilter)
    assert plugin.args == {"key": "k"}
    assert plugin.handle == "handle"


def test_a_class_without_name_attribute_gets_one() -> None:
    plugin: Any = load_import_path(ref(NoName))(None, NO_HANDLE)
    assert plugin.name == ref(NoName)


def test_new_classmethod_is_preferred() -> None:
    plugin: Any = load_import_path(ref(FactoryBuilt))({}, NO_HANDLE)
    assert plugin.built_by_new is True


@pytest.mark.parametrize(
    ("path", "match"),
    [
        ("no_colon_here", 'expected a registered name or "module:Class"'),
        ("tests.fakeplugins:", 'expected a registered name or "module:Class"'),
        ("tests.not_a_module:X", "importing tests.not_a_module failed: ModuleNotFoundError"),
        ("tests.fakeplugins:Missing", "has no attribute Missing"),
        ("tests.fakeplugins:MODULE", "neither a class nor a factory"),
    ],
)
def test_bad_import_paths(path: str, match: str) -> None:
    with pytest.raises(PluginLoadError, match=match):
        load_import_path(path)


def test_out_of_tree_plugin_from_config_runs_at_its_extension_points() -> None:
    cfg = config_dict(
        profile_with({"filter": {"enabled": [{"name": ref(LabelFilter)}]}}, {ref(LabelFilter): {"key": "zone"}})
    )
    h = Harness(cfg, objects=[node_dict("n1"), node_dict("n2", labels={"zone": "yes"})])
    plugin = h.plugin(LabelFilter)
    assert plugin.args == {"key": "zone"}
    h.create(pod_dict("p"))
    h.step()
    assert h.node_of("p") == "n2"
    assert {c[2] for c in plugin.calls} == {"n1", "n2"}


def test_resolve_profile_drops_unbuilt_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_mod, "NOT_YET_BUILT", frozenset({"Unbuilt"}))
    cfg = load_config(config_dict(profile_with({"filter": {"enabled": [{"name": "Unbuilt"}]}})))
    reg = in_tree_registry()
    profile, warnings = resolve_profile(cfg.profiles[0], reg)
    assert "Unbuilt" not in profile.plugins.enabled_names()
    assert warnings == [
        'profile "default-scheduler": plugin Unbuilt is not implemented in kubesched '
        "yet; it is left out of the effective plugin set"
    ]


@pytest.mark.parametrize(("version", "in_tree_limits"), [("1.30", True), ("1.34", False)])
def test_default_profile_runs_every_volume_plugin_without_warnings(version: str, in_tree_limits: bool) -> None:
    cfg = load_config(config_dict(profile_with({})), features=feature_gates(version))
    profile, warnings = resolve_profile(cfg.profiles[0], in_tree_registry())
    assert warnings == []
    enabled = profile.plugins.enabled_names()
    assert {"VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits"} <= enabled
    assert all((name in enabled) is in_tree_limits for name in ("EBSLimits", "GCEPDLimits", "AzureDiskLimits"))
    assert ("DynamicResources" in enabled) is (version == "1.34")


def test_resolve_profile_adds_import_paths_to_the_registry() -> None:
    cfg = load_config(config_dict(profile_with({"filter": {"enabled": [{"name": ref(LabelFilter)}]}})))
    reg = in_tree_registry()
    profile, _ = resolve_profile(cfg.profiles[0], reg)
    assert ref(LabelFilter) in reg
    assert ref(LabelFilter) in profile.plugins.enabled_names()


def test_entry_point_plugins_are_registered_without_shadowing_in_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    class _EP:
        def __init__(self, name: str, obj: Any) -> None:
            self.name = name
            self._obj = obj

        def load(self) -> Any:
            return self._obj

    def fake_entry_points(*, group: str) -> list[_EP]:
        assert group == ENTRY_POINT_GROUP
        return [_EP("MyFilter", LabelFilter), _EP("NodeName", LabelFilter)]

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    reg = in_tree_registry()
    plugin: Any = reg["MyFilter"]({}, NO_HANDLE)
    assert isinstance(plugin, LabelFilter)
    assert plugin.name == "MyFilter"
    assert not isinstance(reg["NodeName"]({}, NO_HANDLE), LabelFilter)


# -- misspelt plugin names: the field that names them, and the closest known name ----------------------


@pytest.mark.parametrize(
    ("plugins", "want"),
    [
        pytest.param(
            {"score": {"enabled": [{"name": "NodeName"}, {"name": "NodeResourceFit"}]}},
            'profiles[0].plugins.score.enabled[1].name: plugin "NodeResourceFit" does not exist '
            '(did you mean "NodeResourcesFit"?)',
            id="score",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "nodeaffinity"}]}},
            'profiles[0].plugins.multiPoint.enabled[0].name: plugin "nodeaffinity" does not exist '
            '(did you mean "NodeAffinity"?)',
            id="case",
        ),
        pytest.param(
            {"filter": {"enabled": [{"name": "Zzzzzz"}]}},
            'profiles[0].plugins.filter.enabled[0].name: plugin "Zzzzzz" does not exist',
            id="nothing-close",
        ),
        pytest.param(
            {"filter": {"enabled": [{"name": "NodePort"}]}, "score": {"enabled": [{"name": "ImageLocalty"}]}},
            '[profiles[0].plugins.filter.enabled[0].name: plugin "NodePort" does not exist (did you mean '
            '"NodePorts"?), profiles[0].plugins.score.enabled[0].name: plugin "ImageLocalty" does not exist '
            '(did you mean "ImageLocality"?)]',
            id="every-one-in-file-order",
        ),
    ],
)
def test_an_unknown_enabled_plugin_is_refused_at_its_field_with_a_hint(plugins: dict[str, Any], want: str) -> None:
    cfg = load_config(config_dict(profile_with(plugins)))
    with pytest.raises(PluginLoadError) as info:
        resolve_profile(cfg.profiles[0], in_tree_registry())
    assert str(info.value) == want


def test_the_field_path_points_into_the_second_profile() -> None:
    misspelt = {"filter": {"enabled": [{"name": "TaintToleraton"}]}}
    cfg = load_config(config_dict({"schedulerName": "a"}, {"schedulerName": "b", "plugins": misspelt}))
    with pytest.raises(
        PluginLoadError,
        match=r"^profiles\[1\]\.plugins\.filter\.enabled\[0\]\.name: .*"
        r'did you mean "TaintToleration"',
    ):
        resolve_profile(cfg.profiles[1], in_tree_registry())


@pytest.mark.parametrize(
    ("profile", "want"),
    [
        pytest.param(
            profile_with({"multiPoint": {"disabled": [{"name": "*"}, {"name": "nodeaffinity"}]}}),
            'profiles[0].plugins.multiPoint.disabled[1].name: plugin "nodeaffinity" does not exist; '
            'disabling it changes nothing (did you mean "NodeAffinity"?)',
            id="disabled",
        ),
        pytest.param(
            profile_with({}, {"NodeResourceFit": {"scoringStrategy": {"type": "MostAllocated"}}}),
            'profiles[0].pluginConfig[0].name: plugin "NodeResourceFit" does not exist; '
            'its args are not used (did you mean "NodeResourcesFit"?)',
            id="plugin-config",
        ),
    ],
)
def test_names_kube_scheduler_lets_pass_unused_get_a_warning_with_the_hint(profile: dict[str, Any], want: str) -> None:
    # kube-scheduler accepts these configurations, so kubesched runs them too, and says what it ignored.
    cfg = load_config(config_dict(profile))
    _, warnings = resolve_profile(cfg.profiles[0], in_tree_registry())
    assert warnings == [want]


def test_args_and_disabling_of_known_or_enabled_plugins_get_no_warning() -> None:
    cfg = load_config(
        config_dict(
            profile_with(
                {
                    "filter": {"enabled": [{"name": ref(LabelFilter)}]},
                    "score": {"disabled": [{"name": "ImageLocality"}]},
                },
                {ref(LabelFilter): {"key": "zone"}, "DynamicResources": {}, "NodeResourcesFit": {}},
            )
        )
    )
    _, warnings = resolve_profile(cfg.profiles[0], in_tree_registry())
    assert warnings == []


def test_profiles_built_in_code_are_named_by_scheduler_name() -> None:
    from kubesched.config.types import PluginRef, Plugins, PluginSet, Profile

    profile = Profile("mine", plugins=Plugins(filter=PluginSet(enabled=(PluginRef("NodeNme"),))))
    with pytest.raises(
        PluginLoadError,
        match=r'^profiles\[mine\]: plugin "NodeNme" does not exist '
        r'\(did you mean "NodeName"\?\)$',
    ):
        resolve_profile(profile, in_tree_registry())
