"""Decision traces: one record per scheduling attempt, explaining what every plugin said.

The record has the shape of the conformance corpus (``attempts`` entries), so a kubesched run and
a recorded kube-scheduler run can be compared field by field. Building a record costs a dict per
rejected or scored node, so the scheduling cycle never builds one: it reports columnar data to its
recorder (:mod:`kubesched.recording`), which makes a record only when someone reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
ERROR = "Error"


@dataclass(slots=True)
class AttemptRecord:
    pod: str
    attempt: int
    profile: str
    result: str = ""
    node: str | None = None
    message: str | None = None
    feasible: list[str] = field(default_factory=list)
    #: Rejected node -> {"plugin", "code", "reasons"} of the first Filter plugin that rejected it.
    filter: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Node -> {plugin: normalised score x weight}.
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    ties: list[str] = field(default_factory=list)
    evaluated_nodes: int = 0
    nominated_node: str | None = None
    victims: list[str] | None = None
    start_nominated_node: str | None = None
    #: Extra results for the simulator's annotations: "score" -> {plugin: {node: raw score}} (before
    #: NormalizeScore and weights); "weights" -> {plugin: weight};
    #: "postfilter" / "reserve" / "permit" / "bind" -> {plugin: message}.
    details: dict[str, Any] = field(default_factory=dict)
    #: Order of the scheduling cycle that made this attempt: a record is emitted when its binding
    #: cycle ends (which can wait in Permit or PreBind), so sort by this for the order of attempts.
    cycle: int = 0

    def to_dict(self, *, raw_scores: bool = False) -> dict[str, Any]:
        """The conformance-corpus JSON shape (optional keys only when they carry something).

        ``raw_scores`` adds ``rawScores`` and ``weights`` (what ``explain`` shows); trace files carry
        them, the in-memory ``attempts`` do not pay for them.
        """
        out: dict[str, Any] = {
            "pod": self.pod,
            "attempt": self.attempt,
            "profile": self.profile,
            "result": self.result,
        }
        if self.node is not None:
            out["node"] = self.node
        if self.message is not None:
            out["message"] = self.message
        out.update(
            feasible=list(self.feasible),
            filter=dict(self.filter),
            scores=dict(self.scores),
            total=dict(self.total),
            ties=list(self.ties),
            evaluatedNodes=self.evaluated_nodes,
        )
        if self.nominated_node:
            out["nominatedNode"] = self.nominated_node
        if self.victims:
            out["victims"] = list(self.victims)
        if self.start_nominated_node:
            out["startNominatedNode"] = self.start_nominated_node
        if self.details.get("extender"):
            out["extenders"] = self.details["extender"]  # {verb: {extender: verdict}}
        # Additive keys (readers of the corpus shape ignore them): the raw Score results before
        # NormalizeScore, {plugin: [raw for each node of "feasible", in that order]} (columns: a
        # node-keyed map would repeat every plugin name for every node), and the weights, so a reader
        # can show all three stages.
        raw = self.details.get("score") if raw_scores else None
        if raw:
            feasible = out["feasible"]
            out["rawScores"] = {
                plugin: [_int_or_none(scores.get(node)) for node in feasible] for plugin, scores in sorted(raw.items())
            }
        if raw_scores and self.details.get("weights"):
            out["weights"] = dict(self.details["weights"])
        return out


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
