"""Timestamps as the API server writes them: RFC 3339, whole seconds, UTC (metav1.Time).

One formatter for every writer of such a time (the embedded API server, the scheduler's Events, the
live client's condition patches): a simulation stamps many objects within one second of its clock,
so the text of the last whole second is kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_ONE_SECOND = timedelta(seconds=1)
_NO_SECOND = datetime.min.replace(tzinfo=UTC)
#: The whole second format_time wrote last, as (start, end, text): a simulation stamps a pod's
#: creation, binding and start within a second or so of its clock.
_last_second: tuple[datetime, datetime, str] = (_NO_SECOND, _NO_SECOND, "")


def format_time(t: datetime) -> str:
    """RFC3339 with second precision in UTC, as metav1.Time serialises (``2024-01-01T00:00:00Z``)."""
    global _last_second
    if t.tzinfo is not UTC or t.year < 1000:  # naive, another zone, or a year strftime writes unpadded
        if t.tzinfo is not None:
            t = t.astimezone(UTC)
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")
    start, end, text = _last_second
    if start <= t < end:
        return text
    start = t.replace(microsecond=0)
    text = start.isoformat(timespec="seconds")[:-6] + "Z"  # less its "+00:00"
    _last_second = (start, start + _ONE_SECOND if start.year < 9999 else start, text)
    return text
