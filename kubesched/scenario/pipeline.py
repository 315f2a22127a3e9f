"""The input pipeline: what a simulation is given, read, checked and put in the order an API server needs.

:func:`load_scenario` is the one way a scenario gets in, for ``simulate``, ``capacity``, ``plan`` and the
benchmarks alike: manifests read (files, folders, object dicts, a live cluster), put in creation order, pods and nodes
parsed, arrival and duration annotations checked, and the admission pre-check run
(:mod:`kubesched.scenario.admission`). It takes paths, object dicts and options from code as well as from
the command line; everything is checked here first, so that a wrong argument is a
:class:`SimulationError` saying what was expected rather than a TypeError from deep inside, and dicts pass
exactly the checks a file's documents pass. Nothing is copied: the cluster copies what it stores
(an object whose unknown fields are dropped, with ``validate="warn"`` or ``"ignore"``, is a copy).

Order: objects that admission reads when other objects are created (Namespaces, whose labels
namespace selectors match; PriorityClasses, which give pods their priority; StorageClasses, the
default of which claims without a class get) are created before everything else, wherever they
appear, so a scenario means the same in any document order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.api.errors import ObjectError
from kubesched.api.objects import Node, Pod
from kubesched.api.workload_selectors import WORKLOAD_KINDS, check_workload_selector
from kubesched.config import KubeSchedulerConfiguration
from kubesched.scenario.admission import ScenarioPriorityClasses, check_admission
from kubesched.scenario.field_validation import FieldValidation, validate_mode
from kubesched.scenario.live import LiveSource
from kubesched.scenario.manifests import (
    Manifest,
    ManifestError,
    checked_manifest,
    load_manifests,
    objects_to_manifests,
)
from kubesched.scenario.timing import check_timing
from kubesched.util.yaml_limits import MAX_DEPTH

#: Kinds created first, in this order, because admitting other objects reads them.
CREATED_FIRST = ("Namespace", "PriorityClass", "StorageClass")
TIE_BREAKS = ("random", "name")


class SimulationError(ValueError):
    """Bad simulation input (manifest, config or object); the message locates it."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scenario read, put in creation order and checked: what a simulation loads into its cluster."""

    manifests: tuple[Manifest, ...] = ()
    #: What is odd but allowed (a field dropped, a pod bound to a node the scenario lacks), one line each.
    warnings: tuple[str, ...] = ()
    #: The unknown and duplicate fields dropped (``validate="warn"``), also first in ``warnings``.
    field_warnings: tuple[str, ...] = ()

    def extended(self, extra: Sequence[Manifest]) -> Scenario:
        """This scenario with ``extra`` objects too (a plan's added nodes), checked as its own were."""
        return _checked([*self.manifests, *extra], extra, self.field_warnings)

    def changed(self, objects: Mapping[int, dict[str, Any]], extra: Sequence[Manifest] = ()) -> Scenario:
        """This scenario with the objects at those positions of ``manifests`` replaced (a what-if: a node
        resized, a pod's constraint dropped) and ``extra`` added, each checked as its own were."""
        manifests = list(self.manifests)
        replaced = []
        for index, obj in objects.items():
            manifests[index] = Manifest(manifests[index].source, manifests[index].doc_index, obj)
            replaced.append(manifests[index])
        return _checked([*manifests, *extra], [*replaced, *extra], self.field_warnings)

    def check_pod(self, pod: Manifest) -> None:
        """Refuse a pod to be created during the run (a capacity template) that the API server would
        refuse, or that does not parse, naming where it came from."""
        validate_objects([pod])
        ScenarioPriorityClasses(self.manifests).check_pod(pod)


def load_scenario(objects_or_paths: object, validate: str | bool | FieldValidation = "strict") -> Scenario:
    """Read a scenario (see :func:`scenario_manifests`) and check it for a run.

    ``validate`` treats unknown and duplicate fields as kubectl's ``--validate`` does (see
    :mod:`kubesched.scenario.field_validation`); given a FieldValidation, the scenario's warnings
    are every one it gave, the ones of what it read before (a template, a timeline) too."""
    fields = field_validation(validate)
    manifests = scenario_manifests(objects_or_paths, fields)
    return _checked(manifests, manifests, tuple(fields.warnings()))


def field_validation(validate: object) -> FieldValidation:
    """The FieldValidation ``validate`` names; a SimulationError for a value that names none."""
    if isinstance(validate, FieldValidation):
        return validate
    try:
        return FieldValidation(validate_mode(validate))
    except ValueError as err:
        raise SimulationError(str(err)) from None


def _checked(
    manifests: Sequence[Manifest], unchecked: Sequence[Manifest], field_warnings: tuple[str, ...] = ()
) -> Scenario:
    """``manifests`` in creation order once ``unchecked`` (some of them) parse and all pass admission."""
    validate_objects(unchecked)
    try:
        check_timing(unchecked)
    except ValueError as err:
        raise SimulationError(str(err)) from None
    ordered = creation_order(manifests)
    check_admission(ordered)
    return Scenario(tuple(ordered), (*field_warnings, *bound_pod_warnings(ordered)), field_warnings)


def validate_objects(manifests: Iterable[Manifest]) -> None:
    """Parse pods and nodes once up front so that a bad field is reported with file and document, and
    refuse a workload whose selector does not select its template's pods, as creating it would."""
    for m in manifests:
        try:
            kind = m.kind
            if kind == "Pod":
                Pod.from_dict(m.obj)
            elif kind == "Node":
                Node.from_dict(m.obj)
            elif kind in WORKLOAD_KINDS:
                check_workload_selector(m.obj)
        except ObjectError as err:
            raise ManifestError.from_object_error(m, err) from None


def load_template(
    template: str | Path | Mapping[str, Any], kind: str, validate: str | bool | FieldValidation = "strict"
) -> Manifest:
    """The one object of ``kind`` in a manifest file (or a private copy of the dict given), checked as a
    scenario's objects are (``validate`` as for :func:`load_scenario`); SimulationError or
    ManifestError otherwise."""
    fields = field_validation(validate)
    if isinstance(template, Mapping):
        manifests = [Manifest("template", 0, _json_copy(template, "template"))]
        where = "template"
    else:
        manifests = load_manifests([template], fields=fields)
        where = str(template)
    if len(manifests) != 1 or manifests[0].kind != kind:
        found = ", ".join(str(m.obj.get("kind")) for m in manifests) or "nothing"
        raise SimulationError(f"{where}: expected exactly one {kind}, found {found}")
    meta = manifests[0].obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName")
    if not isinstance(name, str) or not name.strip("-"):
        raise SimulationError(f"{where}: {kind} template: metadata.name: Required value")
    if isinstance(template, Mapping):
        manifests = [checked_manifest(manifests[0], fields=fields)]  # what reading a file checked
    validate_objects(manifests)
    return manifests[0]


def _type_name(value: object) -> str:
    return type(value).__name__


def scenario_manifests(objects_or_paths: object, fields: FieldValidation | None = None) -> list[Manifest]:
    """The manifests of a scenario given as paths (files or folders), object dicts and/or live clusters
    (:class:`~kubesched.scenario.live.LiveSource`), in order.

    A single path, dict or live source may be given alone. Dicts and a cluster's objects are checked as
    file documents are (``List`` objects expanded); live clusters come first, then paths in the order
    given, then dicts. ``fields`` treats unknown and duplicate fields (default: refused).
    """
    if isinstance(objects_or_paths, str | Path | Mapping | LiveSource):
        items: list[Any] = [objects_or_paths]
    elif isinstance(objects_or_paths, bytes | bytearray) or not isinstance(objects_or_paths, Iterable):
        raise SimulationError(
            f"objects_or_paths: expected a path, an object dict or a list of them, got {_type_name(objects_or_paths)}"
        )
    else:
        items = list(objects_or_paths)
    paths: list[str | Path] = []
    objects: list[dict[str, Any]] = []
    sources: list[LiveSource] = []
    for i, item in enumerate(items):
        if isinstance(item, str | Path):
            paths.append(item)
        elif isinstance(item, Mapping):
            objects.append(_json_data(item, f"objects_or_paths[{i}]"))
        elif isinstance(item, LiveSource):
            sources.append(item)
        else:
            raise SimulationError(
                f"objects_or_paths[{i}]: expected a manifest path or an object dict, got {_type_name(item)}"
            )
    manifests: list[Manifest] = []
    for source in sources:  # a live cluster's objects first: files and dicts add to what it has
        read = source.objects()
        manifests += objects_to_manifests(read, source.name, fields=fields)
    manifests += load_manifests(paths, fields=fields) if paths else []
    manifests += objects_to_manifests(objects, depth_checked=True, fields=fields)
    if not manifests:
        raise SimulationError("the scenario holds no Kubernetes objects")
    return manifests


def _json_data(value: Mapping[str, Any], path: str) -> Any:
    """``value`` itself once a walk has found only JSON-like data in it; a copy when some part needs
    converting (keys that are not strings, mappings that are not dicts, tuples); the located error
    otherwise. Nothing changes what it is handed (the cluster copies what it stores), so the common
    case costs one walk, a level at a time, and no copy."""
    convert = type(value) is not dict
    level: list[Any] = [value]
    depth = 0
    while level:
        if depth >= MAX_DEPTH and any(len(item) for item in level):
            return _json_copy(value, path)  # too deep: raises, naming the field
        below: list[Any] = []
        for item in level:
            if isinstance(item, Mapping):
                if not convert:
                    key_types = set(map(type, item))
                    convert = bool(key_types) and key_types != {str}
                children: Any = item.values()
            else:
                children = item
            for child in children:
                kind = type(child)
                if kind is dict or kind is list:
                    below.append(child)
                elif kind in _SCALARS:
                    continue
                elif isinstance(child, Mapping | list | tuple):
                    convert = True
                    below.append(child)
                elif not isinstance(child, str | int | float):
                    return _json_copy(value, path)  # raises, naming the field
        level = below
        depth += 1
    return _json_copy(value, path) if convert else value


_SCALARS = frozenset((str, int, float, bool, type(None)))


def _json_copy(value: Any, path: str, depth: int = 0) -> Any:
    """A private copy of a dict given in code, refusing what no manifest could hold (sets, objects)."""
    if depth > MAX_DEPTH:
        raise SimulationError(f"{path}: too deeply nested (more than {MAX_DEPTH} levels)")
    if isinstance(value, Mapping):
        return {str(k): _json_copy(v, f"{path}.{k}", depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_copy(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise SimulationError(
        f"{path}: expected JSON-like data (mappings, lists, strings, numbers, booleans), got {_type_name(value)}"
    )


def creation_order(manifests: Sequence[Manifest]) -> list[Manifest]:
    """``manifests`` with the CREATED_FIRST kinds first, in that order; the rest keep document order."""
    first = [m for kind in CREATED_FIRST for m in manifests if m.kind == kind]
    return first + [m for m in manifests if m.kind not in CREATED_FIRST]


def bound_pod_warnings(manifests: Sequence[Manifest]) -> list[str]:
    """A warning for each pod bound (``spec.nodeName``) to a node the scenario does not define."""
    nodes = {str((m.obj.get("metadata") or {}).get("name")) for m in manifests if m.kind == "Node"}
    warnings = []
    for m in manifests:
        node = (m.obj.get("spec") or {}).get("nodeName") if m.kind == "Pod" else None
        if node and node not in nodes:
            warnings.append(
                f'pod {m.display_name}: bound to node "{node}", which the scenario does not define; '
                "its requests count on no node"
            )
    return warnings


def check_options(
    config: object,
    seed: object,
    burst: object,
    tie_break: object,
    progress: object,
) -> None:
    """Refuse option values of the wrong type or outside their choices, naming the argument."""
    if config is not None and not isinstance(config, str | Path | Mapping | KubeSchedulerConfiguration):
        raise SimulationError(
            f"config: expected a path, a mapping or a KubeSchedulerConfiguration, got {_type_name(config)}"
        )
    if isinstance(config, str) and not config.strip():
        raise SimulationError("config: an empty path names no file")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SimulationError(f"seed: expected an integer, got {_type_name(seed)}")
    if not isinstance(burst, bool):
        raise SimulationError(f"burst: expected a boolean, got {_type_name(burst)}")
    if tie_break not in TIE_BREAKS:
        raise SimulationError(f"tie_break: expected one of {', '.join(map(repr, TIE_BREAKS))}, got {tie_break!r}")
    if progress is not None and not callable(progress):
        raise SimulationError(f"progress: expected a callable(done, total) or None, got {_type_name(progress)}")
