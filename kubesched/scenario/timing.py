"""Time written into a scenario: when a pending pod arrives and how long a pod runs once bound.

``kubesched.io/arrival`` (seconds after the start, a Go duration such as ``"90s"``) and
``kubesched.io/duration`` (how long a bound pod runs before it completes and is deleted) are part of the
input format: the pipeline checks them before a run, the simulator acts on them during it, and the
generators write them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.config.decode import as_duration
from kubesched.config.errors import ConfigError
from kubesched.scenario.manifests import Manifest

#: Annotation: when a pending pod is created, as a duration after the simulation starts.
ARRIVAL_ANNOTATION = "kubesched.io/arrival"
#: Annotation: how long a pod runs once bound (a Go duration) before it completes and is deleted.
DURATION_ANNOTATION = "kubesched.io/duration"


#: The form generators write ("12.345s"): with at most 9 digits before the point and 6 after it, the
#: float of its number is what the general parser gives (a whole number of microseconds, divided out).
_PLAIN_SECONDS = re.compile(r"(?:[0-9]{1,9}(?:\.[0-9]{0,6})?|\.[0-9]{1,6})s")
#: Durations of other forms already read, by their text: pods of one workload share theirs, and a
#: scenario's pod has its arrival and duration read more than once. Bounded: cleared when full.
_SECONDS: dict[str, float] = {}
_SECONDS_SIZE = 4096


def parse_duration_seconds(text: Any, where: str) -> float:
    """A Go duration ("90s", "1h30m", "250ms") in seconds; ValueError naming ``where`` otherwise."""
    if type(text) is not str:
        return _parse_seconds(text, where)
    if _PLAIN_SECONDS.fullmatch(text):
        return float(text[:-1])
    seconds = _SECONDS.get(text)
    if seconds is None:
        seconds = _parse_seconds(text, where)
        if len(_SECONDS) >= _SECONDS_SIZE:
            _SECONDS.clear()
        _SECONDS[text] = seconds
    return seconds


def _parse_seconds(text: Any, where: str) -> float:
    try:
        seconds = as_duration(text, where).total_seconds()
    except ConfigError as err:
        raise ValueError(str(err)) from None
    if seconds < 0:
        raise ValueError(f"{where}: duration must not be negative, got {text!r}")
    return seconds


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return annotations if type(annotations) is dict or isinstance(annotations, Mapping) else {}


def arrival_seconds(obj: Mapping[str, Any], where: str) -> float | None:
    """The ``kubesched.io/arrival`` of a pod in seconds after the start, or None without one."""
    annotations = _annotations(obj)
    if ARRIVAL_ANNOTATION not in annotations:
        return None
    return parse_duration_seconds(
        annotations[ARRIVAL_ANNOTATION], f"{where}: metadata.annotations[{ARRIVAL_ANNOTATION}]"
    )


def duration_seconds(obj: Mapping[str, Any], where: str) -> float | None:
    """The ``kubesched.io/duration`` of a pod in seconds, or None without one."""
    duration = _annotations(obj).get(DURATION_ANNOTATION)
    if duration is None:
        return None
    return parse_duration_seconds(duration, f"{where}: metadata.annotations[{DURATION_ANNOTATION}]")


def check_timing(manifests: Iterable[Manifest]) -> None:
    """Refuse a pending pod whose arrival or duration is no duration, naming the file and document.

    Raises ValueError; the pipeline turns it into its own error.
    """
    for m in manifests:
        if m.kind != "Pod" or (m.obj.get("spec") or {}).get("nodeName"):
            continue
        where = f"{m.source}: document {m.doc_index}"
        arrival_seconds(m.obj, where)
        duration_seconds(m.obj, where)
