"""What a running scheduler takes from a reloaded configuration, and what only a restart changes.

A reload (``kubesched run`` watching its ``--config`` file) applies the profiles (plugin sets, weights,
plugin args, percentageOfNodesToScore), the extenders, the global percentageOfNodesToScore and the pod
backoff. The fields below shape what the process was started with (its API server connection, its
Lease, its pool of binding threads, start-up options) and change only at a restart: a reloaded file
that changes one of them is refused as a whole, so that what runs is always one file, as written.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubesched.config.errors import ConfigError, child, forbidden
from kubesched.config.types import KubeSchedulerConfiguration

#: (field path, attribute) of every field a reload may not change.
RESTART_ONLY: tuple[tuple[str, str], ...] = (
    ("clientConnection", "client_connection"),
    ("leaderElection", "leader_election"),
    ("parallelism", "parallelism"),
    ("delayCacheUntilActive", "delay_cache_until_active"),
    ("enableProfiling", "enable_profiling"),
    ("enableContentionProfiling", "enable_contention_profiling"),
)


def restart_only_changes(running: KubeSchedulerConfiguration, new: KubeSchedulerConfiguration) -> ConfigError | None:
    """Every change ``new`` makes to a field only a restart applies, as one aggregate error naming each
    field (None when there is none)."""
    errors: list[ConfigError] = []
    for path, attr in RESTART_ONLY:
        old_value, new_value = getattr(running, attr), getattr(new, attr)
        if old_value != new_value:
            errors.extend(
                forbidden(sub, "changes only at a restart; the running value is kept")
                for sub in _changed_paths(path, old_value, new_value)
            )
    return ConfigError.aggregate(errors)


def _changed_paths(path: str, old: Any, new: Any) -> list[str]:
    """The paths of the sub-fields that differ (the field itself when it has none)."""
    if dataclasses.is_dataclass(old) and dataclasses.is_dataclass(new):
        return [
            child(path, _camel(f.name)) for f in dataclasses.fields(old) if getattr(old, f.name) != getattr(new, f.name)
        ]
    if isinstance(old, dict) and isinstance(new, dict):
        return [child(path, key) for key in sorted({*old, *new}) if old.get(key) != new.get(key)]
    return [path]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)
