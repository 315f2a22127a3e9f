"""When a request to the API server is sent again: client-go's rules, so kubesched retries what
kube-scheduler retries and nothing more.

client-go's REST client (rest/with_retry.go) sends a request again, up to ten times, in two cases only:

- the answer is 429 Too Many Requests or a 5xx *with* a Retry-After field in whole seconds: it waits
  that long, whatever the method (the body is kept as bytes, so it can be sent again), since the server
  said when to come back (API Priority and Fairness, max-in-flight, a server shutting down);
- a GET lost its connection once open (reset, closed early): it waits a second and sends it again. A
  write is never sent twice after that: the server may have acted on it.

Anything else goes back to the caller, whose own backoff applies: an informer lists and watches again
after its backoff, a failed binding puts the pod back in the queue with the pod's backoff, and a status
patch retries a server error a few times (:func:`is_retriable`, kube-scheduler's ``util.Retriable``).
When the request has a time limit, the retries and their waits are inside it, as client-go's
``Timeout`` bounds them.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from kubesched.cluster.protocol import ApiError

#: client-go's default maxRetries for one request.
MAX_RETRIES = 10
#: How long client-go waits before sending a GET again after its connection was lost.
LOST_CONNECTION_DELAY = 1.0
TOO_MANY_REQUESTS = 429

T = TypeVar("T")


def retry_after_seconds(value: str | None) -> int | None:
    """The Retry-After field as whole seconds, the only form client-go reads; None otherwise."""
    if not value:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def is_retriable(err: BaseException) -> bool:
    """kube-scheduler's ``util.Retriable`` for status patches: an internal error, the service
    unavailable, or the connection refused."""
    if not isinstance(err, ApiError):
        return False
    if getattr(err, "refused", False):
        return True
    return err.reason in ("InternalError", "ServiceUnavailable")


@dataclass(slots=True)
class Retry:
    """The retries of one request: how many are left and until when (``timeout`` None: no limit)."""

    method: str
    timeout: float | None
    max_retries: int = MAX_RETRIES
    attempts: int = 0
    started: float = field(default_factory=time.monotonic)

    def remaining(self) -> float | None:
        """Seconds left for the request (None: no limit; never below a millisecond)."""
        if self.timeout is None:
            return None
        return max(self.started + self.timeout - time.monotonic(), 0.001)

    def after_answer(self, status: int, retry_after: str | None) -> float | None:
        """The wait before sending the request again after this answer; None not to send it again."""
        if status != TOO_MANY_REQUESTS and status < 500:
            return None
        seconds = retry_after_seconds(retry_after)
        return None if seconds is None else self._take(max(seconds, 0))

    def after_lost_connection(self) -> float | None:
        """The wait before sending the request again after its connection broke; None for a write."""
        return self._take(LOST_CONNECTION_DELAY) if self.method == "GET" else None

    def _take(self, delay: float) -> float | None:
        if self.attempts >= self.max_retries:
            return None
        if self.timeout is not None and time.monotonic() + delay >= self.started + self.timeout:
            return None  # the wait alone would outlast the request's time limit
        self.attempts += 1
        return delay


@dataclass(frozen=True, slots=True)
class Backoff:
    """client-go's ``wait.Backoff``: ``steps`` tries, the waits between them growing by ``factor``."""

    steps: int = 4
    duration: float = 0.010
    factor: float = 5.0
    jitter: float = 0.1


#: client-go's ``retry.DefaultBackoff``: four tries, 10 ms, 50 ms and 250 ms apart (plus up to 10 %).
DEFAULT_BACKOFF = Backoff()


def on_error(
    fn: Callable[[], T],
    retriable: Callable[[BaseException], bool],
    backoff: Backoff = DEFAULT_BACKOFF,
    *,
    rng: random.Random | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """client-go's ``retry.OnError``: call ``fn`` until it succeeds, an error is not ``retriable``, or
    the tries are spent (then the last error is raised)."""
    rng = rng or random.Random()
    delay = backoff.duration
    for step in range(backoff.steps):
        try:
            return fn()
        except Exception as err:
            if not retriable(err) or step == backoff.steps - 1:
                raise
        sleep(delay * (1 + rng.random() * backoff.jitter))
        delay *= backoff.factor
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises
