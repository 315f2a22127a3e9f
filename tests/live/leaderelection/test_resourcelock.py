"""The Lease record (live.leaderelection.resourcelock): MicroTimes and spec fields as client-go writes them."""

from __future__ import annotations

from datetime import timedelta

from kubesched.live.leaderelection import LeaderElectionRecord, format_micro_time, parse_micro_time


def test_micro_time_round_trips_in_utc() -> None:
    from datetime import UTC, datetime, timezone

    t = datetime(2024, 5, 6, 9, 8, 7, 654321, tzinfo=timezone(timedelta(hours=2)))
    assert format_micro_time(t) == "2024-05-06T07:08:07.654321Z"
    assert parse_micro_time("2024-05-06T07:08:07.654321Z") == t
    assert parse_micro_time("2024-05-06T07:08:07Z") == datetime(2024, 5, 6, 7, 8, 7, tzinfo=UTC)
    assert parse_micro_time("yesterday") is None
    record = LeaderElectionRecord("h", 15, t, t, 3, "p", "OldestEmulationVersion")
    assert LeaderElectionRecord.from_spec(record.to_spec()) == record
