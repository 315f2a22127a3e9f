"""Out-of-tree plugins that misbehave in every way a plugin can, each at one extension point.

``Bad(args)``: ``args["point"]`` names the extension point that misbehaves and ``args["how"]`` how:
"raise" (an exception) or "garbage" (a return value of the wrong type). ``args["garbage"]`` picks the
value (default: a string). Every other point behaves.
"""

from __future__ import annotations

from typing import Any

from kubesched.framework.status import Status

_MISSING = object()


class Bad:
    name = "Bad"

    def __init__(self, args: Any, handle: Any) -> None:
        args = args or {}
        self.point = args.get("point", "")
        self.how = args.get("how", "raise")
        self.garbage = args.get("garbage", "no")

    def _act(self, point: str, good: Any) -> Any:
        if point != self.point:
            return good
        if self.how == "raise":
            raise ValueError(f"{point} exploded")
        if self.garbage == "nan":
            return float("nan")
        if self.garbage == "nan-pair":
            return float("nan"), None
        if self.garbage == "huge-pair":
            return 2**70, None
        if self.garbage == "int":
            return 7
        return self.garbage

    def pre_filter(self, state: Any, pod: Any) -> Any:
        return self._act("pre_filter", (None, None))

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: Any, pod: Any, node_info: Any) -> Any:
        return self._act("filter", None)

    def post_filter(self, state: Any, pod: Any, statuses: Any) -> Any:
        return self._act("post_filter", (None, None))

    def pre_score(self, state: Any, pod: Any, nodes: Any) -> Any:
        return self._act("pre_score", None)

    def score(self, state: Any, pod: Any, node_info: Any) -> Any:
        return self._act("score", (10, None))

    def score_extensions(self) -> None:
        return None

    def reserve(self, state: Any, pod: Any, node_name: str) -> Any:
        return self._act("reserve", None)

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        self._act("unreserve", None)

    def permit(self, state: Any, pod: Any, node_name: str) -> Any:
        return self._act("permit", (None, 0))

    def pre_bind(self, state: Any, pod: Any, node_name: str) -> Any:
        return self._act("pre_bind", None)

    def post_bind(self, state: Any, pod: Any, node_name: str) -> None:
        self._act("post_bind", None)


class FailsInInit:
    name = "FailsInInit"

    def __init__(self, args: Any, handle: Any) -> None:
        raise RuntimeError("cannot start without a licence server")


class BadEvents:
    name = "BadEvents"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        return None

    def events_to_register(self) -> Any:
        return ["Node"]


class BadSort:
    """QueueSort whose ``less`` raises for some pods and answers garbage for others."""

    name = "BadSort"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def less(self, a: Any, b: Any) -> Any:
        if a.pod.name.endswith("1") or b.pod.name.endswith("1"):
            raise KeyError("no order for this pod")
        return "yes"


class BadBatch:
    """Batch forms that answer garbage: ``args["what"]`` is "filter" (a list) or "score" (too few scores)."""

    name = "BadBatch"

    def __init__(self, args: Any, handle: Any) -> None:
        self.what = (args or {}).get("what", "filter")

    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None

    def filter_nodes(self, state: Any, pod: Any, snapshot: Any, indices: Any) -> Any:
        return [] if self.what == "filter" else _all_pass(len(indices))

    def score(self, state: Any, pod: Any, node_info: Any) -> tuple[int, None]:
        return 1, None

    def score_extensions(self) -> None:
        return None

    def score_nodes(self, state: Any, pod: Any, nodes: Any) -> Any:
        return [1] if self.what == "score" else [1] * len(nodes)

    def normalize_scores(self, state: Any, pod: Any, scores: Any) -> None:
        return None


def _all_pass(n: int) -> Any:
    from kubesched.framework.interfaces import BatchFilterResult

    return BatchFilterResult.all_pass(n)
