"""Recording: the columnar attempt equals the dict record, summaries, "none", and streamed traces."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from kubesched.recording import (
    NULL_ATTEMPT,
    AttemptOutcome,
    AttemptTally,
    FullRecorder,
    NullRecorder,
    OutcomeListener,
    OutcomeStream,
    Recorders,
    SummaryRecorder,
    TraceWriter,
)
from kubesched.sim.simulate import SimulationError, simulate
from tests.corpus import CORPUS
from tests.factories import node_dict, pod_dict


def _priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def _pod(name: str, cls: str | None = None, **kw: Any) -> dict[str, Any]:
    pod = pod_dict(name, **kw)
    if cls is not None:
        del pod["spec"]["priority"]
        pod["spec"]["priorityClassName"] = cls
    return pod


#: Filter rejections of several plugins, a PreFilterResult (matchFields), scoring with ties,
#: preemption with a victim, a pod no node can take, and a PreFilter rejection.
SCENARIO = [
    _priority_class("low", 0),
    _priority_class("high", 100),
    node_dict("n1", cpu="4", labels={"zone": "a"}),
    node_dict("n2", cpu="4", labels={"zone": "b"}),
    node_dict("n5", cpu="4", memory="16Gi", labels={"zone": "a"}),
    node_dict("n3", cpu="4", labels={"zone": "b"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
    node_dict("n4", cpu="8", labels={"zone": "c"}, unschedulable=True),
    _pod("low", "low", cpu="3500m", spec={"nodeSelector": {"zone": "b"}}),
    _pod("web", cpu="1"),
    _pod(
        "pinned",
        cpu="1",
        spec={
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}
                        ]
                    }
                }
            }
        },
    ),
    _pod("huge", cpu="64"),
    _pod("vip", "high", cpu="3", spec={"nodeSelector": {"zone": "b"}}),
    _pod("web2", cpu="1", memory="1Gi"),
]


def _lines(path: Path) -> list[dict[str, Any]]:
    opener: Any = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_streamed_trace_and_lazy_records_equal_the_dict_records(tmp_path: Path, suffix: str) -> None:
    trace = tmp_path / f"trace{suffix}"
    result = simulate(SCENARIO, record="full", trace=trace, tie_break="name")
    dicts = [r.to_dict() for r in result.records]
    assert list(result.attempts) == dicts
    # Trace files add the raw scores and weights (what explain reads) to the corpus shape.
    assert _lines(trace) == [r.to_dict(raw_scores=True) for r in result.records]
    # The scenario exercises what the encoder formats specially.
    assert any(d["filter"] for d in dicts) and any(len(d["scores"]) > 1 for d in dicts)
    assert any(d.get("victims") for d in dicts) and any(d["result"] == "Unschedulable" for d in dicts)
    assert any(e["plugin"] == "PreFilterResult" for d in dicts for e in d["filter"].values())


def test_encoded_lines_are_byte_identical_to_json_dumps(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    result = simulate(SCENARIO, record="full", trace=trace, tie_break="name")
    want = [json.dumps(r.to_dict(raw_scores=True), separators=(",", ":")) for r in result.records]
    assert trace.read_text().splitlines() == want


def test_full_records_keep_raw_scores_and_the_failure_clears_choices() -> None:
    result = simulate(SCENARIO, record="full", tie_break="name")
    web = next(r for r in result.records if r.pod == "default/web")
    assert web.result == "Scheduled" and set(web.details["score"]) >= {"NodeResourcesFit"}
    assert set(web.total) == set(web.feasible) == set(web.scores)
    huge = next(r for r in result.records if r.pod == "default/huge")
    assert (huge.feasible, huge.scores, huge.total, huge.ties) == ([], {}, {}, [])
    assert huge.filter["n1"]["reasons"] == ["Insufficient cpu"]
    assert huge.filter["n3"]["plugin"] == "TaintToleration"
    assert huge.filter["n4"]["plugin"] == "NodeUnschedulable"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="conformance corpus not found")
@pytest.mark.parametrize(
    "scenario",
    [
        "preempt-basic",
        "na-matchfields-nodename",
        "pts-zone-maxskew1",
        "mixed-web-platform",
        "taint-noschedule-operators",
    ],
)
def test_streamed_trace_equals_records_on_corpus_scenarios(tmp_path: Path, scenario: str) -> None:
    trace = tmp_path / "t.jsonl"
    result = simulate([CORPUS / scenario / "scenario.yaml"], record="full", trace=trace, tie_break="name")
    assert _lines(trace) == [r.to_dict(raw_scores=True) for r in result.records]


def test_summary_is_the_default_and_names_the_best_nodes() -> None:
    full = simulate(SCENARIO, record="full", tie_break="name")
    result = simulate(SCENARIO, tie_break="name")
    assert result.record == "summary" and list(result.records) == []
    assert len(result.summaries) == len(full.records) == result.attempt_count
    for summary, record in zip(result.summaries, full.records, strict=True):
        assert (summary.pod, summary.attempt, summary.profile, summary.result, summary.node, summary.message) == (
            record.pod,
            record.attempt,
            record.profile,
            record.result,
            record.node,
            record.message,
        )
        assert summary.feasible == len(record.feasible)
        assert summary.evaluated_nodes == record.evaluated_nodes
        best = sorted(record.total.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        assert list(summary.top_nodes) == best
        assert list(summary.victims) == (record.victims or [])
    web = next(s for s in result.summaries if s.pod == "default/web")
    assert web.top_nodes and web.top_nodes[0][0] == web.node
    as_dict = result.attempts[0]
    assert {"pod", "attempt", "profile", "result", "feasibleCount", "topNodes"} <= set(as_dict)


def test_none_records_nothing_but_the_run_is_the_same() -> None:
    summary = simulate(SCENARIO, tie_break="name")
    result = simulate(SCENARIO, record="none", tie_break="name")
    assert (list(result.attempts), list(result.records), list(result.summaries)) == ([], [], [])
    assert result.final == summary.final
    assert result.attempt_count == summary.attempt_count > 0
    assert result.never_attempted == summary.never_attempted


def test_unknown_record_mode_is_refused() -> None:
    with pytest.raises(SimulationError, match="record must be one of"):
        simulate(SCENARIO, record="everything")


def test_null_recorder_hands_out_the_do_nothing_attempt() -> None:
    assert NullRecorder().begin("ns/p", 1, "default-scheduler") is NULL_ATTEMPT
    assert Recorders([NullRecorder()]).enabled is False
    tee = Recorders([NullRecorder(), SummaryRecorder()])
    assert tee.enabled and not tee.raw_scores
    tee.add(FullRecorder())
    assert tee.raw_scores


def test_outcomes_come_as_attempts_end() -> None:
    heard: list[AttemptOutcome] = []
    stream = OutcomeStream()
    result = simulate(SCENARIO, record="none", tie_break="name", recorders=[OutcomeListener(heard.append), stream])
    taken = stream.take()
    assert taken == heard and stream.take() == []
    assert all(type(t) is AttemptOutcome for t in taken) and taken[0].pod == heard[0].pod
    assert len(heard) == result.attempt_count
    assert heard[[h.pod for h in heard].index("default/huge")][:3] == ("default/huge", 1, "Unschedulable")
    assert stream.attempted == {h.pod for h in heard}


def test_gz_trace_is_readable_while_the_run_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl.gz"
    writer = TraceWriter(path, flush_interval=0.0)
    seen: list[list[dict[str, Any]]] = []

    def read_so_far(outcome: AttemptOutcome) -> None:
        writer.sync()
        raw = path.read_bytes()
        text = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw).decode()
        seen.append([json.loads(line) for line in text.splitlines()])

    simulate(SCENARIO, record="none", tie_break="name", recorders=[writer, OutcomeListener(read_so_far)])
    assert [len(lines) for lines in seen] == list(range(1, len(seen) + 1))
    assert seen[0][0]["pod"] == "default/low"
    writer.close()
    assert len(_lines(path)) == len(seen)  # the finished file is a complete gzip stream


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full to fail writes as a full disk does")
@pytest.mark.parametrize("in_process", [False, True], ids=["writer-process", "in-process"])
def test_trace_writer_reports_a_failed_write(in_process: bool) -> None:
    writer = TraceWriter("/dev/full", in_process=in_process)  # every write fails: no space left on device
    with pytest.raises(OSError, match="No space left on device"):
        try:
            simulate([*SCENARIO[:4], _pod("a", cpu="1")], record="none", recorders=[writer])
        finally:
            writer.close()


@pytest.mark.parametrize("in_process", [False, True], ids=["writer-process", "in-process"])
def test_trace_writer_writes_the_same_lines_either_way(tmp_path: Path, in_process: bool) -> None:
    """Attempts cross to the writer process with their statuses (not the exceptions those carry),
    node names sent once per node set; the lines are those the encoder makes in this process."""
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, in_process=in_process) as writer:
        result = simulate([*SCENARIO, _pod("enormous", cpu="64")], record="full", recorders=[writer])
        writer.sync()
        assert len(_lines(path)) == writer.count == result.attempt_count
    assert _lines(path) == [r.to_dict(raw_scores=True) for r in result.records]


def test_the_tally_counts_what_the_stream_keeps_without_keeping_outcomes() -> None:
    tally, stream = AttemptTally(), OutcomeStream()
    result = simulate(SCENARIO, record="none", tie_break="name", recorders=[tally, stream])
    taken = stream.take()
    assert tally.count == len(taken) == result.attempt_count
    assert tally.attempted == stream.attempted == {t.pod for t in taken}
    assert not hasattr(tally, "_fresh")
