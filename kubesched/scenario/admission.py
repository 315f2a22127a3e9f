"""The admission pre-check: what the API server would refuse when the scenario's objects are created.

Pending pods are created during the run; a pod whose name is taken, that names a PriorityClass that does
not exist or gives a spec.priority its class contradicts would otherwise stop the simulation half-way and
lose what it found so far. The rules are the embedded API server's own
(:mod:`kubesched.embedded.admission`), applied to the scenario's objects before any is created; only the
messages differ, naming the file, document and field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched.embedded.admission import (
    default_priority_class,
    pod_priority,
    priority_contradiction,
    system_priority_classes,
)
from kubesched.scenario.manifests import Manifest, ManifestError


def check_admission(manifests: Sequence[Manifest]) -> None:
    """Refuse, before the run, an object defined twice and a pod priority admission would refuse."""
    check_unique_names(manifests)
    classes = ScenarioPriorityClasses(manifests)
    for m in manifests:
        if m.kind == "Pod":
            classes.check_pod(m)


def check_unique_names(manifests: Iterable[Manifest]) -> None:
    """Refuse a second object of the same kind, namespace and name (the server would refuse to create it)."""
    seen: dict[tuple[str, str], Manifest] = {}
    for m in manifests:
        meta = m.obj.get("metadata") or {}
        if not meta.get("name"):
            continue  # generateName: the server picks a free name
        key = (m.kind, m.display_name)
        first = seen.setdefault(key, m)
        if first is not m:
            raise ManifestError.at(
                m,
                "metadata.name",
                f"Duplicate value: {m.kind} {m.display_name} is already "
                f"defined in {first.source}: document {first.doc_index}",
            )


class ScenarioPriorityClasses:
    """The PriorityClasses a scenario's pods are admitted against: the built-in ones and the scenario's."""

    def __init__(self, manifests: Iterable[Manifest]) -> None:
        self.by_name: dict[str, Mapping[str, Any]] = {pc["metadata"]["name"]: pc for pc in system_priority_classes()}
        for m in manifests:
            if m.kind == "PriorityClass":
                self.by_name[str((m.obj.get("metadata") or {}).get("name"))] = m.obj
        self.default = default_priority_class(self.by_name.values())

    def check_pod(self, m: Manifest) -> None:
        """Refuse the pod ``m`` as priority admission would, naming the field."""
        spec = m.obj.get("spec") or {}
        admitted = pod_priority(spec, self.by_name.get, self.default)
        if admitted is None:
            raise ManifestError.at(
                m,
                "spec.priorityClassName",
                f'Not found: no PriorityClass with name "{spec["priorityClassName"]}" in the scenario',
            )
        contradiction = priority_contradiction(spec, admitted)
        if contradiction is not None:
            field, message = contradiction
            raise ManifestError.at(m, f"spec.{field}", f"Forbidden: {message}")
