"""The optional extras (``kubesched[sim]``, ``kubesched[live]``) and a clear error when one is missing.

The core installs without them; a command that needs one asks first, so a missing package is one line
naming the extra to install rather than an ImportError from deep inside a run.
"""

from __future__ import annotations

import importlib.util

#: The packages of each extra, as pyproject.toml lists them (by import name).
EXTRAS: dict[str, tuple[str, ...]] = {
    "sim": ("plotly", "rich", "tqdm"),
    "live": ("kubernetes", "cryptography", "urllib3"),
    "distributed": ("distributed",),
}


class MissingExtraError(ImportError):
    """A command needs packages of an extra that is not installed."""


def missing(extra: str, packages: tuple[str, ...] | None = None) -> list[str]:
    """The packages of ``extra`` (or just ``packages`` of it) that cannot be imported."""
    return [name for name in (packages or EXTRAS[extra]) if importlib.util.find_spec(name) is None]


def require_extra(extra: str, purpose: str, packages: tuple[str, ...] | None = None) -> None:
    """Raise :class:`MissingExtraError` when ``purpose`` cannot run for want of the ``extra``'s packages."""
    absent = missing(extra, packages)
    if absent:
        raise MissingExtraError(
            f"{purpose} needs {', '.join(absent)}, of the {extra!r} extra: pip install 'kubesched[{extra}]'"
        )
