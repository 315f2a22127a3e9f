"""Reloading ``kubesched run``'s configuration file while it runs.

The ``--config`` file is read again every ``--config-reload-period`` (2 s; 0 turns the watch off) and
at once on SIGHUP. A content that differs from the one running is loaded exactly as at start-up
(decoded, defaulted and validated, the leader-election flags applied on top) and handed to the
scheduler, which puts the new profiles in place between two scheduling cycles
(:meth:`kubesched.scheduler.Scheduler.reconfigure`): the queue, the cache and the Lease stay. An invalid
file, or one that changes a field only a restart changes, is refused with one error line naming the
field, as a bad file at start-up is, and the configuration running stays; the same content is not tried
again until it changes, or on SIGHUP.

Why the content is polled rather than watched with inotify: a ConfigMap mounted as a directory changes
through a symlink swap (the kubelet writes a new timestamped folder, then renames the ``..data`` link over
the old one), so the inode behind the path changes and a watch on the old one sees nothing. Reading a few
kilobytes each period and comparing their hash sees every way a file changes: an edit in place, an
editor's rename, a ConfigMap's swap. A watched change is applied once the file reads the same on two
polls in a row, so a file caught half-written is not refused; SIGHUP applies what it reads.

Each reload is counted by ``scheduler_config_controller_automatic_reloads_total{status}`` with its time in
``scheduler_config_controller_automatic_reload_last_timestamp_seconds{status}``, and
``scheduler_config_controller_last_config_info{hash}`` carries the sha256 of the file running
(:mod:`kubesched.metrics`).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from typing import Literal

from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.klog import Logger
from kubesched.metrics import SchedulerMetrics

log = logging.getLogger(__name__)
logger = Logger(__name__)

#: How often the file is read by default (seconds).
DEFAULT_PERIOD = 2.0

Outcome = Literal["success", "failure"]


def config_hash(content: bytes) -> str:
    """The hash a configuration file is known by, in kube-apiserver's style (``sha256:<hex>``)."""
    return f"sha256:{hashlib.sha256(content).hexdigest()}"


class ConfigReloader:
    """Watches one configuration file; ``load`` turns its text into a configuration (raising what a bad
    file raises at start-up) and ``apply`` runs it (raising, with nothing changed, when it cannot)."""

    def __init__(
        self,
        path: str,
        content: bytes,
        *,
        load: Callable[[str], KubeSchedulerConfiguration],
        apply: Callable[[KubeSchedulerConfiguration], None],
        metrics: SchedulerMetrics,
        period: float = DEFAULT_PERIOD,
    ) -> None:
        """``content`` is what the scheduler was started with."""
        self.path = path
        self.period = period
        self._load = load
        self._apply = apply
        self._metrics = metrics
        self._running = config_hash(content)
        self._seen = self._running  # what the last poll read
        self._refused: str | None = None  # the last content refused: not tried again by the watch
        self._unreadable = False
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        metrics.register_config_reload()
        metrics.set_config_hash(self._running)

    @property
    def running_hash(self) -> str:
        return self._running

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="config-reload", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def request(self) -> None:
        """Reload now (SIGHUP): only sets an event, so a signal handler may call it."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            asked = self._wake.wait(self.period if self.period > 0 else None)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.check(forced=asked)
            except Exception:  # the watch must outlive any bug below
                log.exception("checking %s for changes failed", self.path)

    def check(self, *, forced: bool = False) -> Outcome | None:
        """Read the file and apply it if it changed: the outcome, or None when nothing was tried.

        ``forced`` (SIGHUP) applies what it reads, even a content refused before; otherwise a change
        is applied once it reads the same twice in a row."""
        try:
            with open(self.path, "rb") as f:
                content = f.read()
        except OSError as err:
            if forced:
                return self._refuse(err, None)
            if not self._unreadable:
                logger.error(
                    err, "Cannot read the configuration file; the running configuration stays", "path", self.path
                )
            self._unreadable = True
            return None
        self._unreadable = False
        digest = config_hash(content)
        previous, self._seen = self._seen, digest
        if digest == self._running:
            if forced and (v := logger.v(2)):
                v.info("Configuration file unchanged", "path", self.path, "hash", digest)
            return None
        if not forced and (digest != previous or digest == self._refused):
            return None
        return self._reload(content, digest)

    def _reload(self, content: bytes, digest: str) -> Outcome:
        try:
            config = self._load(content.decode("utf-8"))
            self._apply(config)
        except Exception as err:
            return self._refuse(err, digest)
        self._running, self._refused = digest, None
        self._metrics.observe_config_reload("success", digest)
        logger.info(
            "Reloaded the configuration",
            "path",
            self.path,
            "hash",
            digest,
            "profiles",
            [p.scheduler_name for p in config.profiles],
        )
        return "success"

    def _refuse(self, err: BaseException, digest: str | None) -> Outcome:
        from kubesched.app.cli import is_input_error

        self._refused = digest
        self._metrics.observe_config_reload("failure")
        # The field and the reason (err=...), as a bad file at start-up is reported.
        logger.error(err, "Reloading the configuration failed; the running configuration stays", "path", self.path)
        if not is_input_error(err) and not isinstance(err, UnicodeDecodeError):
            log.error("unexpected error while reloading %s", self.path, exc_info=err)
        return "failure"
