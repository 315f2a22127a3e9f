"""Timeline files: what happens to the cluster, and when, during a simulation.

A timeline is a YAML list of steps, each ``{at: DURATION, action: ACTION, object: …}``:

* ``create`` - ``object`` is a full manifest (a Node, a Pod, anything the cluster stores);
* ``delete`` - ``object`` is ``Kind/name`` or ``Kind/namespace/name`` (or a manifest naming it);
* ``cordon`` / ``uncordon`` - ``object`` is ``Node/name`` (or just the node's name): set or clear
  ``spec.unschedulable``;
* ``drain`` - cordon the node, then delete every pod bound to it.

``at`` is a Go duration after the simulation starts (``"90s"``, ``"1h30m"``), or a number of seconds.
Steps are read and checked here, as part of the input (a file as manifests are read, the objects to
create with their unknown and repeated fields treated as ``validate`` says); :mod:`kubesched.sim.timeline`
runs them on the cluster when the virtual clock reaches them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.cluster.kinds import KindInfo, kind_info
from kubesched.scenario.documents import DocumentError, DuplicateField, read_documents
from kubesched.scenario.field_validation import FieldValidation
from kubesched.scenario.timing import parse_duration_seconds
from kubesched.util.suggest import did_you_mean

ACTIONS = ("create", "delete", "cordon", "uncordon", "drain")
STEP_FIELDS = ("at", "action", "object")


class TimelineError(ValueError):
    """A timeline step that cannot be read, or that failed when it ran; the message names the file, step
    and field."""


@dataclass(frozen=True, slots=True)
class Step:
    """One timeline step: at ``at`` seconds, do ``action`` to ``obj`` (a manifest to create) or to the
    object ``kind``/``namespace``/``name`` names; ``where`` locates the step for messages."""

    at: float
    action: str
    where: str
    obj: dict[str, Any] | None = None
    kind: str = ""
    namespace: str = ""
    name: str = ""


def load_timeline(source: str | Path | Sequence[Any], validate: str | bool | FieldValidation = "strict") -> list[Step]:
    """Steps from a YAML file, or from a list of step dicts; sorted by time (stable)."""
    try:
        fields = FieldValidation.of(validate)
    except ValueError as err:
        raise TimelineError(str(err)) from None
    if isinstance(source, (str, Path)):
        where = str(source)
        data, repeated = _read(Path(source))
        _check_repeats(repeated, where, fields)
    else:
        where, data = "timeline", source
    if data is None:
        return []
    if not isinstance(data, list):
        raise TimelineError(f"{where}: expected a list of steps, got {type(data).__name__}")
    steps = [_step(raw, f"{where}: step {i + 1}", fields) for i, raw in enumerate(data)]
    return sorted(steps, key=lambda s: s.at)


def _read(path: Path) -> tuple[Any, tuple[DuplicateField, ...]]:
    """The one document of a timeline file (None when empty), and the keys it repeats."""
    try:
        documents = list(read_documents(path))
    except DocumentError as err:
        raise TimelineError(f"{path}: {err.reason}") from None
    if len(documents) > 1:
        raise TimelineError(f"{path}: expected one document (a list of steps), found {len(documents)}")
    return (documents[0][1], documents[0][2]) if documents else (None, ())


def _check_repeats(repeated: Sequence[DuplicateField], where: str, fields: FieldValidation) -> None:
    """Refuse or report the keys the file repeats, each named with its step (and ``object:``)."""
    for repeat in repeated:
        step, rest = where, repeat.location
        if isinstance(rest[0], int):
            step, rest = f"{where}: step {rest[0] + 1}", rest[1:]
        if len(rest) > 1 and rest[0] == "object":
            step, rest = f"{step}: object", rest[1:]
        fields.repeated([DuplicateField(rest, repeat.first_line, repeat.line)], _refusal(step))


def _refusal(where: str) -> Callable[[str, str], TimelineError]:
    return lambda path, reason: TimelineError(f"{where}: {path}: {reason}")


def _step(raw: Any, where: str, fields: FieldValidation) -> Step:
    if not isinstance(raw, Mapping):
        raise TimelineError(f"{where}: expected a mapping with at, action and object")
    unknown = sorted(map(str, set(raw) - set(STEP_FIELDS)))
    if unknown:
        raise TimelineError(f"{where}: unknown field(s) {', '.join(unknown)}{did_you_mean(unknown[0], STEP_FIELDS)}")
    if "at" not in raw:
        raise TimelineError(f'{where}: at: required (a duration such as "90s")')
    at_value = raw["at"]
    if isinstance(at_value, bool):
        raise TimelineError(f"{where}: at: expected a duration, got {at_value!r}")
    if isinstance(at_value, (int, float)):
        if at_value < 0:
            raise TimelineError(f"{where}: at: must not be negative, got {at_value}")
        at = float(at_value)
    else:
        try:
            at = parse_duration_seconds(at_value, f"{where}: at")
        except ValueError as err:
            raise TimelineError(str(err)) from None
    action = raw.get("action")
    if action not in ACTIONS:
        raise TimelineError(f"{where}: action: expected one of {', '.join(ACTIONS)}, got {action!r}")
    target = raw.get("object")
    if target is None:
        raise TimelineError(f"{where}: object: required")
    if action == "create":
        if not isinstance(target, Mapping) or not target.get("kind"):
            raise TimelineError(f"{where}: object: create needs a manifest with a kind")
        _known_kind(str(target["kind"]), where)
        obj = fields.checked(dict(target), _refusal(f"{where}: object"))
        return Step(at, action, where, obj=obj)
    kind, namespace, name = _target(target, where)
    if action != "delete" and kind != "Node":
        raise TimelineError(f"{where}: object: {action} applies to nodes, got {kind}")
    return Step(at, action, where, kind=kind, namespace=namespace, name=name)


def _target(target: Any, where: str) -> tuple[str, str, str]:
    if isinstance(target, Mapping):
        meta = target.get("metadata") or {}
        kind, namespace, name = str(target.get("kind") or ""), str(meta.get("namespace") or ""), meta.get("name")
    elif isinstance(target, str):
        parts = target.split("/")
        if len(parts) == 1:
            kind, namespace, name = "Node", "", parts[0]
        elif len(parts) == 2:
            kind, namespace, name = parts[0], "", parts[1]
        elif len(parts) == 3:
            kind, namespace, name = parts
        else:
            raise TimelineError(f"{where}: object: expected Kind/name or Kind/namespace/name, got {target!r}")
    else:
        raise TimelineError(f"{where}: object: expected Kind/name or a manifest, got {type(target).__name__}")
    if not kind or not name:
        raise TimelineError(f"{where}: object: a kind and a name are required")
    info = _known_kind(kind, where)
    if info.namespaced and not namespace:
        namespace = "default"
    return info.kind, namespace if info.namespaced else "", str(name)


def _known_kind(kind: str, where: str) -> KindInfo:
    try:
        return kind_info(kind)
    except Exception:
        raise TimelineError(f"{where}: object: unknown kind {kind!r}") from None
