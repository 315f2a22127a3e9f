"""format_time writes what the API server writes, however the moments it is handed come."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from kubesched.api.timestamps import format_time


def test_format_time_writes_utc_seconds_whatever_the_zone_or_precision() -> None:
    def reference(t: datetime) -> str:
        return (t.astimezone(UTC) if t.tzinfo else t).strftime("%Y-%m-%dT%H:%M:%SZ")

    start = datetime(2024, 1, 1, 23, 59, 58, tzinfo=UTC)
    moments = [start + timedelta(microseconds=250_000 * i) for i in range(12)]
    moments += [
        datetime(2024, 6, 1, 12, 0, 0, 999_999, tzinfo=timezone(timedelta(hours=2))),
        datetime(2024, 6, 1, 12, 0, 0),
        datetime(999, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    ]
    for t in moments + moments[::-1]:
        assert format_time(t) == reference(t)
    assert format_time(moments[7]) == "2024-01-01T23:59:59Z"
    assert format_time(moments[8]) == "2024-01-02T00:00:00Z"
