"""Claim constraints across requests: ``matchAttribute`` (all devices share a value) and
``distinctAttribute`` (no two share one).

Each constraint follows the devices being tentatively allocated: ``add`` says whether one more device
may join, ``remove`` undoes an ``add`` that succeeded. Constraints are monotonic, so the search can stop
extending a partial allocation as soon as one refuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.api.dra import Device, DeviceAttribute


def _applies(names: frozenset[str], request: str, subrequest: str) -> bool:
    """A constraint naming no request covers all; naming a request covers its subrequests too."""
    if not names:
        return True
    return request in names or (bool(subrequest) and f"{request}/{subrequest}" in names)


@dataclass(slots=True)
class MatchAttribute:
    """Every device of the covered requests has the attribute, with one and the same typed value."""

    requests: frozenset[str]
    attribute: str
    value: DeviceAttribute | None = None
    count: int = 0

    def add(self, request: str, subrequest: str, device: Device, driver: str) -> bool:
        if not _applies(self.requests, request, subrequest):
            return True
        value = device.attribute(self.attribute, driver)
        if value is None:
            return False
        if self.count == 0:
            self.value = value
        elif value != self.value:  # same kind and same value (versions compare as written: semver's minimal form)
            return False
        self.count += 1
        return True

    def remove(self, request: str, subrequest: str, device: Device, driver: str) -> None:
        if _applies(self.requests, request, subrequest):
            self.count -= 1


@dataclass(slots=True)
class DistinctAttribute:
    """Every device of the covered requests has the attribute, each with a value of its own (a feature of
    consumable capacity, off by default). Values are kept per request, as upstream keeps them."""

    requests: frozenset[str]
    attribute: str
    values: dict[str, DeviceAttribute] = field(default_factory=dict)
    count: int = 0

    def add(self, request: str, subrequest: str, device: Device, driver: str) -> bool:
        if not _applies(self.requests, request, subrequest):
            return True
        value = device.attribute(self.attribute, driver)
        if value is None:
            return False
        if self.count and value in self.values.values():
            return False
        self.values[request] = value
        self.count += 1
        return True

    def remove(self, request: str, subrequest: str, device: Device, driver: str) -> None:
        if _applies(self.requests, request, subrequest):
            self.values.pop(request, None)
            self.count -= 1


Constraint = MatchAttribute | DistinctAttribute
