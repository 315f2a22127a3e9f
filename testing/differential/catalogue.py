"""Known differences between kube-scheduler v1.30 (kubesched's default emulation) and v1.34 (the oracle).

Each rule explains a mismatch by one section of the project's v1.30 → v1.34 catalogue (the ``§`` tags):
message rules rewrite upstream's v1.34 FailedScheduling text into what v1.30 says, or compare the two
histograms as far as the section predicts; placement rules recompute kubesched's best nodes under the
v1.34 scoring rule. A mismatch no rule explains is a disagreement to look into.

The rules read facts from the recorded state (:class:`PodFacts`): which nodes the pod's requests
exceed outright, whether it requests no cpu and memory at all, and which nodes a local volume pins it to.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
BALANCED = "NodeResourcesBalancedAllocation"

#: Section tags, as the catalogue numbers them.
TAINT_TEXT = "§5.6 taint message"
VOLUME_AFFINITY_TEXT = "§5.9 volume node affinity message"
VOLUME_PREFILTER = "§5.9 VolumeBinding PreFilterResult (v1.30 only)"
RWOP_TEXT = "§5.10 ReadWriteOncePod message"
ABSENT_NODES = "§5.15 absent nodes counted"
DRA_POSTFILTER = "§5.16 DynamicResources PostFilter"
FIT_UNRESOLVABLE = "§5.1 Fit unresolvable"
BALANCED_SKIP = "§5.2 BalancedAllocation skips zero-request pods"

_RWOP_V134 = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)
_RENAMES = {  # v1.34 reason -> v1.30 reason
    "node(s) didn't match PersistentVolume's node affinity": (
        "node(s) had volume node affinity conflict",
        VOLUME_AFFINITY_TEXT,
    ),
    _RWOP_V134: (
        "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode",
        RWOP_TEXT,
    ),
}
_TAINT_V130 = re.compile(r"^node\(s\) had untolerated taint \{.*\}$")
_TAINT_V134 = "node(s) had untolerated taint(s)"
_ABSENT = re.compile(r"^node\(s\) didn't satisfy plugin\(s\) \[.*\]$")


# -- FailedScheduling messages ----------------------------------------------------------------------
@dataclass
class FitMessage:
    """``0/N nodes are available: <histogram or PreFilter message>.[ <PostFilter message>]`` taken apart.
    ``post`` is the PostFilter part: a parsed preemption diagnosis, or its text when it is not one."""

    nodes: int
    reasons: Counter[str] = field(default_factory=Counter)
    prefilter: str | None = None
    post: FitMessage | str | None = None


_POST_START = re.compile(r"\. (?=no new claims to deallocate|preemption: |not found$)")


def parse_fit_message(text: str | None) -> FitMessage | None:
    """None when ``text`` is not a FitError message (it is then compared as it is)."""
    match = re.match(r"0/(\d+) nodes are available: (.*)$", text or "", re.S)
    if match is None:
        return None
    rest = match.group(2)
    split = _POST_START.search(rest)
    body, post = (rest[: split.start()], rest[split.end() :]) if split else (rest.removesuffix("."), None)
    message = FitMessage(int(match.group(1)))
    if re.match(r"\d+ ", body):
        for item in re.split(r", (?=\d+ )", body):
            count, reason = item.split(" ", 1)
            message.reasons[reason] += int(count)
    else:
        message.prefilter = body
    if post is not None:
        message.post = _parse_post(post)
    return message


def _parse_post(text: str) -> FitMessage | str:
    if text.startswith("preemption: "):
        inner = parse_fit_message(text.removeprefix("preemption: "))
        return inner if inner is not None else text
    return text


def _rename(reasons: Counter[str], rename: Any, tags: set[str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for reason, count in reasons.items():
        new, tag = rename(reason)
        if new != reason:
            tags.add(tag)
        out[new] += count
    return out


def _upstream_as_v130(reason: str) -> tuple[str, str]:
    return _RENAMES.get(reason, (reason, ""))


def _kubesched_as_common(reason: str) -> tuple[str, str]:
    """v1.30 names the taint; v1.34 does not, so compare both without it."""
    return (_TAINT_V134, TAINT_TEXT) if _TAINT_V130.match(reason) else (reason, "")


def _normalise(u: FitMessage, k: FitMessage, tags: set[str], facts: PodFacts) -> None:
    """The text-only rules, in place: both messages end up in one vocabulary."""
    u.reasons = _rename(u.reasons, _upstream_as_v130, tags)
    k.reasons = _rename(k.reasons, _kubesched_as_common, tags)
    absent = [r for r in u.reasons if _ABSENT.match(r)]
    for reason in absent:
        del u.reasons[reason]
        tags.add(ABSENT_NODES)
    if isinstance(u.post, str) and u.post.startswith("no new claims to deallocate, "):
        u.post = _parse_post(u.post.removeprefix("no new claims to deallocate, "))
        tags.add(DRA_POSTFILTER)
    elif u.post == "not found":  # v1.30 runs preemption, which no node can help
        never = "preemption: not eligible due to preemptionPolicy=Never."
        u.post = never if facts.preemption_never else FitMessage(u.nodes, Counter({NOT_HELPFUL: u.nodes}))
        tags.add(DRA_POSTFILTER)
    if isinstance(u.post, FitMessage) and isinstance(k.post, FitMessage):
        _normalise(u.post, k.post, tags, facts)


def explain_message(upstream: str | None, kubesched: str | None, facts: PodFacts) -> list[str] | None:
    """The catalogue sections that account for every difference between the two texts (empty when
    they are equal), or None when something is left unexplained."""
    if upstream == kubesched:
        return []
    u, k = parse_fit_message(upstream), parse_fit_message(kubesched)
    if u is None or k is None or u.nodes != k.nodes:
        return None
    tags: set[str] = set()
    _normalise(u, k, tags, facts)
    narrowed = facts.local_volume_nodes is not None and _narrowed_by_volume_prefilter(u, k)
    if narrowed and (u.reasons, u.prefilter) != (k.reasons, k.prefilter):
        u.reasons, u.prefilter = k.reasons, k.prefilter
        tags.add(VOLUME_PREFILTER)
    if isinstance(u.post, FitMessage) and isinstance(k.post, FitMessage) and u.post != k.post:
        explained = _preemption_explained(u.post, k.post, facts, narrowed=narrowed)
        if explained is not None:
            u.post = k.post
            tags |= explained
    return sorted(tags) if u == k else None


def _within(small: Counter[str], big: Counter[str]) -> bool:
    return all(big[r] >= c for r, c in small.items())


_EMPTY_INTERSECTION = re.compile(r"^node\(s\) didn't satisfy plugin\(s\) \[(.*)\] simultaneously$")


def _narrowed_by_volume_prefilter(u: FitMessage, k: FitMessage) -> bool:
    """§5.9: v1.30's VolumeBinding narrowed the nodes to those the pod's local volumes name, so only they
    were filtered (or, the narrowing meeting NodeAffinity's and leaving none, PreFilter failed); v1.34
    filters every node. What v1.30 reports must then be part of what v1.34 reports."""
    if k.prefilter is not None:
        empty = _EMPTY_INTERSECTION.match(k.prefilter)
        return u.prefilter is None and empty is not None and "VolumeBinding" in empty.group(1).split()
    return u.prefilter is None and _within(k.reasons, u.reasons)


def _movable(reason: str) -> bool:
    """What v1.30's dry run says on a node whose requests exceed its allocatable outright."""
    return reason == NO_VICTIMS or reason.startswith("Insufficient ") or reason == "Too many pods"


def _preemption_explained(u: FitMessage, k: FitMessage, facts: PodFacts, *, narrowed: bool) -> set[str] | None:
    """Whether the preemption diagnoses differ only as the catalogue predicts, and by which sections.

    §5.1: v1.34 leaves nodes whose allocatable is below the pod's request out of the dry run (``Preemption
    is not helpful``) where v1.30 tries them and says why they still do not fit: v1.34 has more "not
    helpful" and fewer of those reasons. §5.9: where v1.30's VolumeBinding narrowed the nodes, the others
    were "not helpful" to v1.30 and get a dry run in v1.34: v1.34 has more of any reason."""
    if u.nodes != k.nodes:
        return None
    tags: set[str] = set()
    surplus = 0
    for reason in (set(u.reasons) | set(k.reasons)) - {NOT_HELPFUL}:
        diff = k.reasons[reason] - u.reasons[reason]
        if diff > 0:
            if not (facts.unresolvable_nodes and _movable(reason)):
                return None
            tags.add(FIT_UNRESOLVABLE)
            surplus += diff
        elif diff < 0:
            if not narrowed:
                return None
            tags.add(VOLUME_PREFILTER)
    extra = u.reasons[NOT_HELPFUL] - k.reasons[NOT_HELPFUL]
    if narrowed:
        if extra > 0 and not facts.unresolvable_nodes:
            return None
        tags.add(FIT_UNRESOLVABLE if extra > 0 else VOLUME_PREFILTER)
        return tags
    if not 0 < extra <= len(facts.unresolvable_nodes) or surplus < extra:
        return None
    return tags | {FIT_UNRESOLVABLE}


# -- placements -------------------------------------------------------------------------------------
def explain_placement(upstream_node: str, scores: dict[str, dict[str, int]], facts: PodFacts) -> list[str] | None:
    """§5.2: v1.34 leaves NodeResourcesBalancedAllocation out for a pod requesting no cpu and memory.
    The catalogue sections under whose rule kubesched's own scores make ``upstream_node`` a best node."""
    if not facts.zero_requests or not scores:
        return None
    totals = {node: sum(v for plugin, v in per.items() if plugin != BALANCED) for node, per in scores.items()}
    best = max(totals.values())
    return [BALANCED_SKIP] if totals.get(upstream_node) == best else None


# -- facts from the recorded state ------------------------------------------------------------------
@dataclass(frozen=True)
class PodFacts:
    #: The pod requests no cpu and no memory (init containers and overhead included).
    zero_requests: bool = False
    #: Nodes whose allocatable is below one of the pod's requests.
    unresolvable_nodes: frozenset[str] = frozenset()
    #: v1.30's VolumeBinding PreFilterResult: the nodes the pod's bound local volumes name, if any.
    local_volume_nodes: frozenset[str] | None = None
    #: ``preemptionPolicy: Never``: v1.30's preemption says so before looking at any node.
    preemption_never: bool = False


def pod_facts(state: Sequence[dict[str, Any]], pod: dict[str, Any]) -> PodFacts:
    requests = pod_requests(pod)
    nodes = [o for o in state if o["kind"] == "Node"]
    unresolvable = frozenset(
        n["metadata"]["name"]
        for n in nodes
        if any(
            amount > parse_quantity((n["status"].get("allocatable") or {}).get(name, "0"))
            for name, amount in requests.items()
            if amount > 0
        )
    )
    return PodFacts(
        zero_requests=not requests.get("cpu") and not requests.get("memory"),
        unresolvable_nodes=unresolvable,
        local_volume_nodes=_local_volume_nodes(state, pod),
        preemption_never=pod["spec"].get("preemptionPolicy") == "Never",
    )


def pod_requests(pod: dict[str, Any]) -> dict[str, Decimal]:
    """Σ containers, then the max with each init container, then overhead (no sidecars here)."""
    spec = pod["spec"]
    total: dict[str, Decimal] = {}
    for container in spec.get("containers") or []:
        for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[name] = total.get(name, Decimal(0)) + parse_quantity(value)
    for container in spec.get("initContainers") or []:
        for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
            total[name] = max(total.get(name, Decimal(0)), parse_quantity(value))
    for name, value in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, Decimal(0)) + parse_quantity(value)
    return total


_SUFFIXES = {
    "m": Decimal("0.001"),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
}


def parse_quantity(value: Any) -> Decimal:
    """The quantity forms the generator and the API server write (``250m``, ``3840Mi``, ``2``, ``1e3``)."""
    text = str(value)
    match = re.fullmatch(r"([0-9.eE+-]+?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?", text)
    if match is None:
        raise ValueError(f"unsupported quantity {text!r}")
    number = Decimal(match.group(1))
    return number * _SUFFIXES[match.group(2)] if match.group(2) else number


def _local_volume_nodes(state: Sequence[dict[str, Any]], pod: dict[str, Any]) -> frozenset[str] | None:
    """Intersection over the pod's fully bound claims of the hostnames their volumes name (``In``)."""
    ns = pod["metadata"]["namespace"]
    claims = {
        o["metadata"]["name"]: o
        for o in state
        if o["kind"] == "PersistentVolumeClaim" and o["metadata"].get("namespace") == ns
    }
    volumes = {o["metadata"]["name"]: o for o in state if o["kind"] == "PersistentVolume"}
    eligible: frozenset[str] | None = None
    for volume in pod["spec"].get("volumes") or []:
        claim = claims.get((volume.get("persistentVolumeClaim") or {}).get("claimName", ""))
        if claim is None or not claim["spec"].get("volumeName"):
            continue
        if "pv.kubernetes.io/bind-completed" not in (claim["metadata"].get("annotations") or {}):
            continue
        pv = volumes.get(claim["spec"]["volumeName"])
        names = _hostnames(pv) if pv is not None else frozenset()
        if names:
            eligible = names if eligible is None else eligible & names
    return eligible


def _hostnames(pv: dict[str, Any]) -> frozenset[str]:
    terms = ((pv["spec"].get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms") or []
    result: set[str] = set()
    for term in terms:
        nodes: set[str] | None = None
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") == "kubernetes.io/hostname" and expr.get("operator") == "In":
                values = set(expr.get("values") or [])
                nodes = values if nodes is None else nodes & values
        result |= nodes or set()
    return frozenset(result)
