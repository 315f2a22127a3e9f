"""An in-process extender (``urlPrefix: python:tests.extender.inproc:handle``) for the tests."""

from __future__ import annotations

from typing import Any

#: Every call, as (verb, args): the tests read it.
CALLS: list[tuple[str, Any]] = []


def handle(verb: str, args: Any) -> Any:
    CALLS.append((verb, args))
    if verb == "filter":
        names = args["NodeNames"]
        return {
            "NodeNames": [n for n in names if not n.endswith("-b")],
            "FailedNodes": {n: "in-process says no" for n in names if n.endswith("-b")},
        }
    if verb == "prioritize":
        return [{"Host": n, "Score": 10 if n.endswith("c") else 0} for n in args["NodeNames"]]
    if verb == "boom":
        raise RuntimeError("in-process failure")
    return {}
