"""Which plugins sit at which extension point: a profile's plugin sets, expanded as kube-scheduler does.

This is the construction half of the framework (kube-scheduler's ``NewFramework`` with
``expandMultiPointPlugins``): a profile enables plugins per extension point and under ``multiPoint``,
and the result is one ordered plugin list per point. It depends only on the profile and the built
plugins, so the ordering rules live apart from running the points (:mod:`kubesched.framework.runtime`):
a plugin enabled both for a point and under multiPoint runs first, then the rest of multiPoint (less
the point's disabled ones), then the point's other entries; ``"*"`` in a point's disabled list leaves
only its own entries; a plugin named twice under multiPoint is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubesched.framework.interfaces import (
    BindPlugin,
    FilterPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.interfaces import (
    PermitPlugin as PermitPluginProto,
)

if TYPE_CHECKING:
    from kubesched.config.profiles import Plugins

#: Extension point name (as in the config) -> protocol a plugin must implement to sit there.
EXTENSION_POINTS: tuple[tuple[str, type], ...] = (
    ("pre_enqueue", PreEnqueuePlugin),
    ("queue_sort", QueueSortPlugin),
    ("pre_filter", PreFilterPlugin),
    ("filter", FilterPlugin),
    ("post_filter", PostFilterPlugin),
    ("pre_score", PreScorePlugin),
    ("score", ScorePlugin),
    ("reserve", ReservePlugin),
    ("permit", PermitPluginProto),
    ("pre_bind", PreBindPlugin),
    ("bind", BindPlugin),
    ("post_bind", PostBindPlugin),
)


class FrameworkError(ValueError):
    """A profile that cannot be turned into a working framework (unknown plugin, no binder…)."""


def plugins_needed(cfg: Plugins) -> list[str]:
    """Every plugin enabled anywhere in the profile, in first-mention order."""
    names: list[str] = []
    for point, _ in (*EXTENSION_POINTS, ("multi_point", object)):
        for ref in getattr(cfg, point).enabled:
            if ref.name not in names:
                names.append(ref.name)
    return names


def expand_extension_point(point: str, proto: type, cfg: Plugins, plugins: Mapping[str, Plugin]) -> list[Plugin]:
    """Plugins of one extension point: its own enabled list merged with multiPoint, as v1 does."""
    plugin_set = getattr(cfg, point)
    enabled = [ref.name for ref in plugin_set.enabled]
    for name in enabled:
        if not isinstance(plugins[name], proto):
            raise FrameworkError(f'plugin "{name}" does not extend {point} plugin')
    if "*" in plugin_set.disabled:
        return [plugins[n] for n in enabled]
    disabled = set(plugin_set.disabled)
    overrides: list[str] = []
    from_multi: list[str] = []
    for ref in cfg.multi_point.enabled:
        plugin = plugins[ref.name]
        if not isinstance(plugin, proto) or ref.name in disabled:
            continue
        if ref.name in enabled:
            overrides.append(ref.name)
            continue
        if ref.name in from_multi:
            raise FrameworkError(f'plugin "{ref.name}" already registered as "{point}"')
        from_multi.append(ref.name)
    ordered = [n for n in enabled if n in overrides] + from_multi + [n for n in enabled if n not in overrides]
    return [plugins[n] for n in ordered]


@dataclass(slots=True)
class PluginLists:
    """One profile's plugins per extension point, each list typed by the point's protocol."""

    pre_enqueue: list[PreEnqueuePlugin] = field(default_factory=list)
    queue_sort: list[QueueSortPlugin] = field(default_factory=list)
    pre_filter: list[PreFilterPlugin] = field(default_factory=list)
    filter: list[FilterPlugin] = field(default_factory=list)
    post_filter: list[PostFilterPlugin] = field(default_factory=list)
    pre_score: list[PreScorePlugin] = field(default_factory=list)
    score: list[ScorePlugin] = field(default_factory=list)
    reserve: list[ReservePlugin] = field(default_factory=list)
    permit: list[PermitPluginProto] = field(default_factory=list)
    pre_bind: list[PreBindPlugin] = field(default_factory=list)
    bind: list[BindPlugin] = field(default_factory=list)
    post_bind: list[PostBindPlugin] = field(default_factory=list)

    @classmethod
    def build(cls, cfg: Plugins, plugins: Mapping[str, Plugin]) -> PluginLists:
        lists = cls()
        for point, proto in EXTENSION_POINTS:
            getattr(lists, point).extend(expand_extension_point(point, proto, cfg, plugins))
        return lists

    def by_point(self) -> dict[str, list[Plugin]]:
        """Point name -> its plugins (the same list objects), for code that walks every point."""
        return {point: getattr(self, point) for point, _ in EXTENSION_POINTS}
