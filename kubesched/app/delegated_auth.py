"""Delegated authentication and authorization for the secure port, as kube-scheduler does it.

kube-scheduler does not decide who may read /metrics itself: it asks the API server. A bearer token is
checked with a TokenReview (``authentication.k8s.io/v1``); a request without one is
``system:anonymous``. The user is then checked with a SubjectAccessReview (``authorization.k8s.io/v1``)
for the non-resource path and the verb ``get``. Paths in ``always_allow_paths`` (``/healthz``,
``/readyz``, ``/livez`` by default: probes carry no token) and the group ``system:masters`` skip the
review. Answers are cached for ten seconds, as the apiserver's delegating authenticator and authorizer
cache them, so a scraper costs two reviews per ten seconds, not two per scrape.

``review(path, body)`` POSTs one review object to the API server and returns the answer (for example
``lambda path, body: rest.request("POST", path, body)``); :class:`DelegatedAuth` works out the rest.
Client certificates are not accepted (kube-scheduler also trusts the cluster's client CA): use a token.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
ALWAYS_ALLOW_GROUPS = ("system:masters",)
CACHE_TTL = 10.0

Review = Callable[[str, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class User:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


ANONYMOUS = User("system:anonymous", groups=("system:unauthenticated",))


@dataclass(frozen=True, slots=True)
class Denial:
    """Why a request is refused: the HTTP code and the body, a metav1.Status as the apiserver writes it."""

    code: int
    body: bytes


def _status(code: int, reason: str, message: str) -> Denial:
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": {},
        "code": code,
    }
    return Denial(code, json.dumps(status).encode())


class DelegatedAuth:
    """Decides, through the API server, whether a request to the secure port may proceed."""

    def __init__(
        self,
        review: Review,
        *,
        always_allow_paths: Iterable[str] = DEFAULT_ALWAYS_ALLOW_PATHS,
        cache_ttl: float = CACHE_TTL,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._review = review
        self.always_allow_paths = tuple(p.rstrip("/") or "/" for p in always_allow_paths)
        self._ttl = cache_ttl
        self._now = now
        self._lock = threading.Lock()
        self._tokens: dict[str, tuple[float, User | None]] = {}
        self._decisions: dict[tuple[User, str, str], tuple[float, bool]] = {}

    def check(self, method: str, path: str, authorization: str | None) -> Denial | None:
        """None when the request may proceed; otherwise the 401 or 403 to answer."""
        if self._always_allowed(path):
            return None
        user = ANONYMOUS
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            found = self._authenticate(token.strip())
            if found is None:
                return _status(401, "Unauthorized", "Unauthorized")
            user = found
        if any(g in ALWAYS_ALLOW_GROUPS for g in user.groups):
            return None
        verb = "get" if method in ("GET", "HEAD") else method.lower()
        if self._authorize(user, verb, path):
            return None
        return _status(403, "Forbidden", f'forbidden: User "{user.name}" cannot {verb} path "{path}"')

    def _always_allowed(self, path: str) -> bool:
        for allowed in self.always_allow_paths:
            if allowed.endswith("*") and path.startswith(allowed[:-1]):
                return True
            if path == allowed or path.startswith(allowed + "/"):
                return True
        return False

    def _authenticate(self, token: str) -> User | None:
        now = self._now()
        with self._lock:
            cached = self._tokens.get(token)
        if cached is not None and cached[0] > now:
            return cached[1]
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        try:
            status = (self._review(TOKEN_REVIEWS, body) or {}).get("status") or {}
        except Exception as err:
            # The API server could not say: refuse, and do not remember the refusal.
            log.warning("TokenReview failed: %s", err)
            return None
        user: User | None = None
        if status.get("authenticated"):
            info = status.get("user") or {}
            extra = tuple(sorted((k, tuple(v)) for k, v in (info.get("extra") or {}).items()))
            user = User(
                str(info.get("username") or ""), str(info.get("uid") or ""), tuple(info.get("groups") or ()), extra
            )
        with self._lock:
            self._tokens[token] = (now + self._ttl, user)
        return user

    def _authorize(self, user: User, verb: str, path: str) -> bool:
        now = self._now()
        key = (user, verb, path)
        with self._lock:
            cached = self._decisions.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        spec: dict[str, Any] = {
            "user": user.name,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        try:
            allowed = bool(((self._review(SUBJECT_ACCESS_REVIEWS, body) or {}).get("status") or {}).get("allowed"))
        except Exception as err:
            log.warning("SubjectAccessReview failed: %s", err)
            return False
        with self._lock:
            self._decisions[key] = (now + self._ttl, allowed)
        return allowed
