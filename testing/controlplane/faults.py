"""Faults for :class:`testing.controlplane.proxy.FaultProxy`: which requests a rule catches, what it does
to them, and the answers kube-apiserver would write.

A :class:`Rule` matches requests by method, path (a regular expression over the path without its
query) and Kubernetes verb (``get list watch create update patch delete deletecollection``, told
apart as kube-apiserver's RequestInfo does), for its first ``times`` requests or until removed, and
does one :data:`Action` to each:

- :class:`Respond`: answer with a status code and a ``metav1.Status`` body as kube-apiserver writes it
  (``Retry-After`` with the field and ``details.retryAfterSeconds``), without asking the API server, or
  after it acted (``forward_first``: a write that happened though its client hears otherwise);
- :class:`Reset`: reset the connection (before or after the API server acted);
- :class:`Delay`: hold the request, then forward it; :class:`SlowAnswer`: forward it, hold the answer;
- :class:`Hold`: hold the request until the test calls :meth:`Hold.release` with what to do then;
- :class:`CutWatch`: let a watch pass ``after_events`` events, then send half of the next and reset;
- :class:`WatchError`: answer a watch with one ERROR event (410 Expired: the resourceVersion is too old).

Every request the proxy sees is kept as an :class:`Exchange` (when, what, how it was answered), so a
test can measure how long a client waited before trying again and count successful bindings.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

#: kube-apiserver's reason for each status code it writes (apimachinery's StatusReason).
REASONS = {
    400: "BadRequest",
    404: "NotFound",
    409: "Conflict",
    410: "Expired",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
PHRASES = {
    200: "OK",
    201: "Created",
    400: "Bad Request",
    404: "Not Found",
    409: "Conflict",
    410: "Gone",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


# -- what a request is -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RequestInfo:
    """The parts of a request a rule matches on, as kube-apiserver's RequestInfoFactory reads them."""

    method: str
    path: str
    query: dict[str, list[str]]
    verb: str
    namespace: str = ""
    resource: str = ""
    name: str = ""
    subresource: str = ""

    @classmethod
    def parse(cls, method: str, target: str) -> RequestInfo:
        split = urlsplit(target)
        query = parse_qs(split.query)
        parts = [p for p in split.path.split("/") if p]
        if parts[:1] == ["api"]:
            parts = parts[2:]
        elif parts[:1] == ["apis"]:
            parts = parts[3:]
        else:
            parts = []
        namespace = ""
        if len(parts) >= 3 and parts[0] == "namespaces":
            namespace, parts = parts[1], parts[2:]
        resource, name, subresource = [*parts, "", "", ""][:3]
        return cls(method, split.path, query, _verb(method, name, query), namespace, resource, name, subresource)

    @property
    def qualified_resource(self) -> str:
        """``pods``, or ``pods/binding`` for a subresource (as Status details name it)."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def _verb(method: str, name: str, query: dict[str, list[str]]) -> str:
    if method == "GET":
        if query.get("watch", [""])[0] in ("true", "1"):
            return "watch"
        return "get" if name else "list"
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


def status_body(
    code: int, info: RequestInfo | None = None, *, message: str | None = None, retry_after: int | None = None
) -> dict[str, Any]:
    """A failure ``metav1.Status`` as apimachinery's error constructors build it for ``code``."""
    reason = REASONS.get(code, "")
    resource, name = (info.qualified_resource, info.name) if info is not None else ("", "")
    details: dict[str, Any] = {}
    if code == 409:
        message = message or (
            f'Operation cannot be fulfilled on {resource} "{name}": the object has been modified; '
            "please apply your changes to the latest version and try again"
        )
        details = {"name": name, "kind": resource}
    elif code == 404:
        message = message or f'{resource} "{name}" not found'
        details = {"name": name, "kind": resource}
    elif code == 500:
        cause = message or "injected fault"
        message = f"Internal error occurred: {cause}"
        details = {"causes": [{"message": cause}]}
    elif code == 410:
        message = message or "too old resource version: 1 (2)"
    elif code == 429:
        message = message or "Too many requests, please try again later."
    elif code == 504:
        message = f"Timeout: {message or 'request did not complete within the allotted timeout'}"
    if retry_after is not None and code in (429, 504):
        details["retryAfterSeconds"] = retry_after
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message or PHRASES.get(code, "error"),
        "reason": reason,
    }
    if details:
        status["details"] = details
    status["code"] = code
    return status


# -- what a rule does --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Forward:
    """Pass the request on and its answer back (what the proxy does without a rule)."""


@dataclass(frozen=True, slots=True)
class Respond:
    """Answer ``status`` with kube-apiserver's Status body (``body`` replaces it) and ``Retry-After``."""

    status: int
    retry_after: int | None = None
    message: str | None = None
    body: dict | None = None
    #: Let the API server act on the request first (its answer is dropped).
    forward_first: bool = False


@dataclass(frozen=True, slots=True)
class Reset:
    """Reset the client's connection instead of answering."""

    forward_first: bool = False


@dataclass(frozen=True, slots=True)
class Delay:
    """Hold the request ``seconds``, then forward it (whether or not its client still waits)."""

    seconds: float


@dataclass(frozen=True, slots=True)
class SlowAnswer:
    """Forward at once; hold the answer ``seconds`` before sending it (a client that gave up has gone)."""

    seconds: float


@dataclass(frozen=True, slots=True)
class CutWatch:
    """Pass ``after_events`` events of a watch, then half of the next one, then reset the connection."""

    after_events: int = 0


@dataclass(frozen=True, slots=True)
class WatchError:
    """Answer a watch with 200 and one ERROR event carrying a Status of ``code``, then end the stream."""

    code: int = 410


@dataclass(eq=False)
class Hold:
    """Hold each caught request until :meth:`release`, then do what it was given (forward by default)."""

    timeout: float = 120.0
    _then: Any = None
    _released: threading.Event = field(default_factory=threading.Event)
    #: Set when a request is being held (the test waits for it before it acts).
    caught: threading.Event = field(default_factory=threading.Event)

    def release(self, then: Action | None = None) -> None:
        self._then = then or Forward()
        self._released.set()

    def wait(self) -> Action:
        self.caught.set()
        self._released.wait(self.timeout)
        then: Action = self._then or Forward()
        return then


Action = Forward | Respond | Reset | Delay | SlowAnswer | CutWatch | WatchError | Hold


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request through the proxy: when it came and was answered, what it was, what it got."""

    started: float
    ended: float
    info: RequestInfo
    #: The answer's status as the client saw it (0: no answer, the connection was reset or cut).
    status: int
    #: The status the API server gave (0: not asked, or no answer).
    upstream_status: int
    action: str
    #: The request body, decoded when it was JSON.
    body: Any = None


@dataclass(eq=False)
class Rule:
    """Which requests (every given criterion must hold) and what to do to them (see the module docstring)."""

    action: Action
    method: str | None = None
    path: str | None = None
    verb: str | None = None
    #: How many requests the rule catches (None: every one, until removed).
    times: int | None = 1
    #: When each caught request came (time.monotonic()).
    hits: list[float] = field(default_factory=list)
    _pattern: re.Pattern[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._pattern = re.compile(self.path) if self.path else None

    def matches(self, info: RequestInfo) -> bool:
        if self.method is not None and info.method != self.method:
            return False
        if self.verb is not None and info.verb != self.verb:
            return False
        return self._pattern is None or self._pattern.fullmatch(info.path) is not None

    @property
    def spent(self) -> bool:
        return self.times is not None and len(self.hits) >= self.times


class Rules:
    """The proxy's rules, first match wins; thread-safe."""

    def __init__(self) -> None:
        self._rules: list[Rule] = []
        self._lock = threading.Lock()

    def add(self, rule: Rule) -> Rule:
        with self._lock:
            self._rules.append(rule)
        return rule

    def remove(self, rule: Rule) -> None:
        with self._lock:
            if rule in self._rules:
                self._rules.remove(rule)

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def __iter__(self) -> Iterator[Rule]:
        with self._lock:
            return iter(list(self._rules))

    def take(self, info: RequestInfo) -> tuple[Rule | None, Action]:
        """The rule that catches the request (counted as a hit) and its action; Forward when none does."""
        with self._lock:
            for rule in self._rules:
                if not rule.spent and rule.matches(info):
                    rule.hits.append(time.monotonic())
                    return rule, rule.action
        return None, Forward()


def decode_body(data: bytes) -> Any:
    try:
        return json.loads(data) if data else None
    except ValueError:
        return None
