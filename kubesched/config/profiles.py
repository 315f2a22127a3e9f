"""A scheduling profile and its plugin sets (KubeSchedulerProfile, Plugins, PluginSet, Plugin).

The models the v1 defaults (:mod:`kubesched.config.defaults`) are written in; the configuration that
holds the profiles is :class:`kubesched.config.types.KubeSchedulerConfiguration`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_SCHEDULER_NAME = "default-scheduler"

# Extension points as spelt in YAML → attribute of ``Plugins``.  The single
# source of truth for that mapping (decoding, merging and validation use it).
EXTENSION_POINTS: tuple[tuple[str, str], ...] = (
    ("preEnqueue", "pre_enqueue"),
    ("queueSort", "queue_sort"),
    ("preFilter", "pre_filter"),
    ("filter", "filter"),
    ("postFilter", "post_filter"),
    ("preScore", "pre_score"),
    ("score", "score"),
    ("reserve", "reserve"),
    ("permit", "permit"),
    ("preBind", "pre_bind"),
    ("bind", "bind"),
    ("postBind", "post_bind"),
    ("multiPoint", "multi_point"),
)


@dataclass(frozen=True, slots=True)
class PluginRef:
    """A plugin named in a plugin set.

    ``weight`` only matters for score plugins; 0 means "not set" (the
    framework then uses weight 1).
    """

    name: str
    weight: int = 0


@dataclass(frozen=True, slots=True)
class PluginSet:
    """Plugins enabled at (and default plugins disabled from) one point.

    ``disabled`` may contain ``"*"``, meaning every default plugin is off for
    this point; the framework needs it to decide which multiPoint plugins
    still apply, so it is kept after merging.
    """

    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.enabled)


_EMPTY = PluginSet()


@dataclass(frozen=True, slots=True)
class Plugins:
    """Plugin sets per extension point, with multiPoint kept unexpanded.

    Expanding ``multi_point`` into the individual points needs to know which
    interfaces each plugin implements, so that is left to the framework.
    """

    pre_enqueue: PluginSet = _EMPTY
    queue_sort: PluginSet = _EMPTY
    pre_filter: PluginSet = _EMPTY
    filter: PluginSet = _EMPTY
    post_filter: PluginSet = _EMPTY
    pre_score: PluginSet = _EMPTY
    score: PluginSet = _EMPTY
    reserve: PluginSet = _EMPTY
    permit: PluginSet = _EMPTY
    pre_bind: PluginSet = _EMPTY
    bind: PluginSet = _EMPTY
    post_bind: PluginSet = _EMPTY
    multi_point: PluginSet = _EMPTY

    def point(self, yaml_name: str) -> PluginSet:
        """Plugin set by its YAML name (``"score"``, ``"multiPoint"``...)."""
        attr = dict(EXTENSION_POINTS)[yaml_name]
        result: PluginSet = getattr(self, attr)
        return result

    def enabled_names(self) -> set[str]:
        """Every plugin enabled anywhere, multiPoint included."""
        return {p.name for _, attr in EXTENSION_POINTS for p in getattr(self, attr).enabled}


@dataclass(frozen=True, slots=True)
class Profile:
    """One scheduling profile, selected by pods through ``spec.schedulerName``.

    ``percentage_of_nodes_to_score``: None means "use the configuration-wide
    value"; any number (0 included) overrides it for this profile.

    ``plugin_config`` maps plugin name → typed args (see ``pluginargs``) for
    in-tree plugins, or the raw args dict for out-of-tree ones.  Every enabled
    in-tree plugin that takes args has an entry, defaulted when not given.
    """

    scheduler_name: str
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins = field(default_factory=Plugins)
    plugin_config: dict[str, object] = field(default_factory=dict)
    #: Every plugin name the configuration file wrote, with its field path, in file order: a name
    #: that resolves to no plugin is reported at that field. Empty for profiles built in code.
    plugin_name_paths: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)
