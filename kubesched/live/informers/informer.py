"""List-then-watch for one kind, kept going through errors: client-go's Reflector and informer in one.

A thread lists the kind (that resourceVersion becomes the watch's starting point), replaces the store and
then watches from there with ``allowWatchBookmarks`` (bookmarks only move the resourceVersion). As
client-go's reflector does: a watch that ends, by the server's timeout or by a connection lost once it had
run (a second, or an event), is reopened at once from the last resourceVersion seen, and the backoff starts
over; a list or a watch that cannot be opened, or one that breaks at once, is tried again after a backoff
(0.8 s doubling to 30 s); when the server answers 410 Gone (the resourceVersion was compacted away) the
kind is listed again and the difference between that list and the store is handed on. Every change
reaches ``handler`` exactly once, with the old object for updates, in the order the store saw it.

The informer has synced once the first list's objects have all reached ``handler``, not merely the store:
kube-scheduler waits for its handlers to sync before the first cycle, so that no pod is scheduled against
half of the nodes.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from kubesched.live.informers.store import Delta, Store

log = logging.getLogger(__name__)

#: client-go's reflector: watches time out after 5 to 10 minutes; backoff from 800 ms up to 30 s.
MIN_WATCH_TIMEOUT = 300
INITIAL_BACKOFF = 0.8
MAX_BACKOFF = 30.0
#: A watch that broke sooner than this without delivering an event failed (client-go's "very short watch").
SHORT_WATCH = 1.0


class Gone(Exception):
    """The watch's resourceVersion is too old (HTTP 410 or an ERROR event with code 410)."""


class ListWatch(Protocol):
    """How an informer reaches the API server for its kind."""

    def list(self, resource_version: str) -> tuple[list[dict[str, Any]], str]: ...

    def watch(self, resource_version: str, timeout_seconds: int) -> WatchStream: ...


class WatchStream(Protocol):
    def __iter__(self) -> Any: ...

    def close(self) -> None: ...


class Informer:
    """One kind's reflector thread, store and handler."""

    def __init__(
        self,
        kind: str,
        list_watch: ListWatch,
        handler: Callable[[str, Delta], None],
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.kind = kind
        self.list_watch = list_watch
        self.handler = handler
        self.store = Store()
        self.resource_version = ""
        self.relists = 0
        self._rng = rng or random.Random()
        self._stop = threading.Event()
        self._handled = threading.Event()
        self._stream: WatchStream | None = None
        self._thread = threading.Thread(target=self._run, name=f"informer-{kind}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.cut_watch()
        self._thread.join(timeout=5)

    def cut_watch(self) -> None:
        """Close the open watch connection (it is reopened from the last resourceVersion)."""
        stream = self._stream
        if stream is not None:
            stream.close()

    def has_synced(self) -> bool:
        """The first list has been handed to the handler, every object of it."""
        return self._handled.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._handled.wait(timeout)

    # -- the reflector loop ---------------------------------------------------------------------------
    def _run(self) -> None:
        backoff = INITIAL_BACKOFF
        need_list = True
        while not self._stop.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                self._watch()
                backoff = INITIAL_BACKOFF  # a watch that ended cleanly: reopen at once
                continue
            except Gone:
                log.info("%s: resourceVersion %s is gone, listing again", self.kind, self.resource_version)
                need_list = True
                continue
            except Exception as err:  # any failure: back off and try again
                if self._stop.is_set():
                    return
                log.warning("%s: list/watch failed, retrying in %.1fs: %s", self.kind, backoff, err)
            self._stop.wait(backoff * (1 + self._rng.random() * 0.5))
            backoff = min(backoff * 2, MAX_BACKOFF)

    def _list(self) -> None:
        # As client-go's reflector: the first list may be served from the API server's watch cache
        # (resourceVersion "0": no etcd read, no paging); a relist after 410 Gone asks for the latest
        # state (""), since the version it last saw is no longer available.
        items, rv = self.list_watch.list("0" if not self.relists else "")
        deltas = self.store.replace(items)
        self.resource_version = rv
        self.relists += 1
        self._dispatch(deltas)
        self._handled.set()

    def _watch(self) -> None:
        """Watch from the last resourceVersion until the stream ends. A stream that breaks once it has run
        ends as a closed one does; one that cannot be opened, or breaks at once, raises."""
        timeout = int(MIN_WATCH_TIMEOUT * (1 + self._rng.random()))
        stream = self.list_watch.watch(self.resource_version, timeout)
        self._stream = stream
        started, delivered = time.monotonic(), 0
        events = iter(stream)
        try:
            while not self._stop.is_set():
                try:
                    event = next(events)
                except StopIteration:
                    return
                except Exception as err:  # the connection broke
                    if self._stop.is_set() or (delivered == 0 and time.monotonic() - started < SHORT_WATCH):
                        raise
                    log.info(
                        "%s: watch from %s broke after %d events, watching again: %s",
                        self.kind,
                        self.resource_version,
                        delivered,
                        err,
                    )
                    return
                self._handle(event)
                delivered += 1
        finally:
            self._stream = None
            stream.close()

    def _handle(self, event: dict[str, Any]) -> None:
        event_type = event.get("type")
        obj = event.get("object") or {}
        if event_type == "ERROR":
            if obj.get("code") == 410:
                raise Gone(obj.get("message", "410 Gone"))
            raise RuntimeError(f"watch error: {obj.get('message') or obj}")
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        if event_type == "BOOKMARK":
            self.resource_version = rv or self.resource_version
            return
        if event_type not in ("ADDED", "MODIFIED", "DELETED"):
            return
        deltas = self.store.apply(event_type, obj)
        if rv:
            self.resource_version = rv
        self._dispatch(deltas)

    def _dispatch(self, deltas: list[Delta]) -> None:
        for delta in deltas:
            try:
                self.handler(self.kind, delta)
            except Exception:  # a handler bug must not stop the informer
                log.exception("%s: handler failed on %s", self.kind, delta.type)
