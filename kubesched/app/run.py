"""``kubesched run``: schedule a live cluster, as kube-scheduler does.

Start-up follows kube-scheduler's ``Run``: load the configuration (flags win over the file), connect with
the official client's credentials (found as :mod:`kubesched.live.client_config` says), serve
/healthz /livez /readyz /metrics, start the informers and wait until each has handed what it listed to the
event handlers, then, with leader election on, take part in the election and schedule only while leading.

SIGUSR2 compares the scheduler's cache with the informers' stores and dumps the cache and the queue to the
log, as kube-scheduler's cache debugger does (:mod:`kubesched.cache.debugger`).

The ``--config`` file is watched: a changed file (or SIGHUP) is validated and applied without a restart,
the queue, the cache and the Lease kept (:mod:`kubesched.app.reload`); /configz shows what runs.

Shutdown on SIGTERM or SIGINT: /readyz fails at once, no pod is popped any more, bindings in flight are
let finish (a binding that fails is logged, undone and requeued by the binding cycle as always), the
Lease is released so that a standby takes over without waiting for it to expire, and the process exits 0.
A leader that loses its Lease stops at once and exits 1, as kube-scheduler does ("Leaderelection lost").

Logs go to stderr as kube-scheduler writes them (``--v``, ``--logging-format``; see :mod:`kubesched.klog`).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import random
import signal
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TextIO

from kubesched import __version__
from kubesched.app.options import add_version_flags, gates_of
from kubesched.clock import RealClock
from kubesched.config import load_config
from kubesched.config.loader import load_config_text
from kubesched.config.types import KubeSchedulerConfiguration, LeaderElectionConfig
from kubesched.klog import Logger
from kubesched.klog.options import FORMATS, configure
from kubesched.util.extras import require_extra

if TYPE_CHECKING:
    from kubesched.app.reload import ConfigReloader
    from kubesched.app.server import MetricsServer
    from kubesched.cache.debugger import CacheDebugger
    from kubesched.live.cluster import KubeCluster
    from kubesched.live.connection import RestClient
    from kubesched.live.leaderelection import LeaderElector
    from kubesched.metrics import SchedulerMetrics
    from kubesched.scheduler import Scheduler

log = logging.getLogger("kubesched.app.run")
logger = Logger("kubesched.app.run")

EXIT_OK = 0
EXIT_LOST_LEASE = 1
#: How often start-up checks whether the informers synced (client-go's WaitForCacheSync: every 100 ms).
SYNC_POLL_SECONDS = 0.1


def add_arguments(run: argparse.ArgumentParser) -> None:
    run.description = (
        "Bind the pending pods of a live cluster, as kube-scheduler does: informers, the "
        "scheduling queue, one framework per profile, leader election and health/metrics serving."
    )
    add_version_flags(run)
    _add_connection_flags(run)
    _add_leader_election_flags(run)
    from kubesched.app.server import add_serving_flags

    add_serving_flags(run)
    _add_scheduling_and_logging_flags(run)


def _add_connection_flags(run: argparse.ArgumentParser) -> None:
    """The configuration file and how the API server is reached."""
    run.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (v1) file")
    run.add_argument(
        "--config-reload-period",
        type=_duration,
        default=None,
        metavar="DURATION",
        help="how often the --config file is read for changes, applied without a restart "
        "(default 2s; 0: only on SIGHUP)",
    )
    run.add_argument(
        "--kubeconfig",
        metavar="FILE",
        default="",
        help="kubeconfig with the API server and credentials (overrides clientConnection.kubeconfig); "
        "without it: $KUBECONFIG, ~/.kube/config, then the in-cluster service account",
    )
    run.add_argument(
        "--master",
        metavar="URL",
        default="",
        help="API server address (overrides the kubeconfig's; alone: no credentials)",
    )
    run.add_argument(
        "--request-timeout",
        type=_duration,
        default=None,
        metavar="DURATION",
        help="how long one request to the API server may take, its retries included "
        "(default 1m, kube-apiserver's own limit; 0: no limit); watches are not bounded by it",
    )


def _add_leader_election_flags(run: argparse.ArgumentParser) -> None:
    """kube-scheduler's ``--leader-elect*`` flags, applied over the file's ``leaderElection``."""
    le = run.add_argument_group("leader election (flags override the configuration file)")
    le.add_argument(
        "--leader-elect",
        type=_bool,
        nargs="?",
        const=True,
        default=None,
        metavar="BOOL",
        help="take part in leader election before scheduling (default true)",
    )
    le.add_argument("--leader-elect-lease-duration", type=_duration, default=None, metavar="DURATION")
    le.add_argument("--leader-elect-renew-deadline", type=_duration, default=None, metavar="DURATION")
    le.add_argument("--leader-elect-retry-period", type=_duration, default=None, metavar="DURATION")
    le.add_argument("--leader-elect-resource-lock", default=None, metavar="leases")
    le.add_argument("--leader-elect-resource-name", default=None, metavar="NAME")
    le.add_argument("--leader-elect-resource-namespace", default=None, metavar="NAMESPACE")


def _add_scheduling_and_logging_flags(run: argparse.ArgumentParser) -> None:
    """Tie-breaking among equal nodes, and the log's verbosity and format."""
    run.add_argument(
        "--tie-break",
        choices=("random", "name"),
        default="random",
        help="among nodes with the best score: random (as kube-scheduler) or smallest name",
    )
    run.add_argument("--seed", type=int, default=None, metavar="N", help="seed for random tie-breaking")
    run.add_argument(
        "-v",
        "--v",
        type=int,
        default=0,
        dest="v",
        metavar="LEVEL",
        help="log verbosity, as kube-scheduler's: 2 each binding and failure, 3 each event and "
        "attempt, 4-5 queue moves; other libraries' lines from 6 on",
    )
    run.add_argument(
        "--logging-format", choices=FORMATS, default="text", help="text (klog's lines) or json (one object per line)"
    )


def _bool(value: str) -> bool:
    lowered = value.lower()
    if lowered in ("true", "1", "t", "yes"):
        return True
    if lowered in ("false", "0", "f", "no"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean {value!r}")


def _duration(value: str) -> timedelta:
    from kubesched.config.decode import as_duration

    try:
        return as_duration(value, "flag")
    except Exception as err:
        raise argparse.ArgumentTypeError(f"invalid duration {value!r} (e.g. 15s, 1m30s)") from err


def effective_config(args: argparse.Namespace, text: str | None = None) -> KubeSchedulerConfiguration:
    """The configuration file (its ``text`` when already read; v1 defaults without one) with the
    leader-election flags applied on top."""
    if text is not None:
        config = load_config_text(text, origin=args.config, features=gates_of(args))
    else:
        config = load_config(args.config, features=gates_of(args))
    le: LeaderElectionConfig = config.leader_election
    overrides: dict[str, Any] = {}
    for flag, field in (
        ("leader_elect", "leader_elect"),
        ("leader_elect_lease_duration", "lease_duration"),
        ("leader_elect_renew_deadline", "renew_deadline"),
        ("leader_elect_retry_period", "retry_period"),
        ("leader_elect_resource_lock", "resource_lock"),
        ("leader_elect_resource_name", "resource_name"),
        ("leader_elect_resource_namespace", "resource_namespace"),
    ):
        value = getattr(args, flag, None)
        if value is not None:
            overrides[field] = value
    if overrides:
        config = dataclasses.replace(config, leader_election=dataclasses.replace(le, **overrides))
    return config


def run(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    """Run until SIGTERM/SIGINT (or ``stop`` is set); the process exit status."""
    from kubesched.app.configz import componentconfig
    from kubesched.app.server import ServingOptions, leader_election_check
    from kubesched.live.leaderelection import default_identity
    from kubesched.metrics import SchedulerMetrics
    from kubesched.scheduler import Scheduler
    from kubesched.util.gc_tuning import long_lived_heap

    content = _read_config(args.config)
    config = effective_config(args, None if content is None else content.decode("utf-8"))
    identity = default_identity()
    rest, cluster = _connect(args, config, identity)
    logger.info("Starting Kubernetes Scheduler", "version", __version__)
    clock = RealClock()
    metrics = SchedulerMetrics()
    stop = stop or threading.Event()
    lost = threading.Event()

    elector = _elector(rest, cluster, config, clock, identity, metrics, stop, lost)
    scheduler = Scheduler(
        cluster,
        config,
        clock=clock,
        tie_break=args.tie_break,
        metrics=metrics,
        rng=random.Random(args.seed) if args.seed is not None else None,
        gate=elector.is_leader if elector is not None else None,
    )
    reloader = _reloader(args, content, scheduler, metrics)
    _install_signal_handlers(stop, reloader)
    _cache_debugger(cluster, scheduler).listen_for_signal(stop)  # SIGUSR2: compare and dump, as upstream
    checks = [leader_election_check(elector)] if elector is not None else []
    # The secure port asks the API server who may read it (TokenReview, SubjectAccessReview), as upstream.
    server = ServingOptions.from_args(args).start(
        metrics.registry,
        ready=scheduler.has_synced,
        checks=checks,
        review=lambda path, body: rest.request("POST", path, body),
        configz=lambda: componentconfig(scheduler.config),
    )
    try:
        if reloader is not None:
            reloader.start()
        scheduler.start()
        if _wait_for_sync(scheduler.has_synced, stop):
            log.info("informer stores synced; %s", "joining leader election" if elector else "scheduling")
            if elector is not None:
                elector.start()
            # What the informers listed lives as long as the cluster does: leave it out of collections.
            with long_lived_heap():
                scheduler.run_forever(stop)
    finally:
        _shut_down(server, reloader, scheduler, elector, cluster)
    return EXIT_LOST_LEASE if lost.is_set() else EXIT_OK


def _shut_down(
    server: MetricsServer | None,
    reloader: ConfigReloader | None,
    scheduler: Scheduler,
    elector: LeaderElector | None,
    cluster: KubeCluster,
) -> None:
    """Stop in kube-scheduler's order: not ready first, then no new work, bindings let finish, the Lease
    released, and the server last."""
    if server is not None:
        server.begin_shutdown()
    if reloader is not None:
        reloader.stop()
    scheduler.stop()
    if elector is not None:
        elector.stop()  # a leader releases its Lease here
    cluster.close()
    if server is not None:
        server.stop()


def _elector(
    rest: RestClient,
    cluster: KubeCluster,
    config: KubeSchedulerConfiguration,
    clock: RealClock,
    identity: str,
    metrics: SchedulerMetrics,
    stop: threading.Event,
    lost: threading.Event,
) -> LeaderElector | None:
    """The leader elector (None with leader election off); a leader that loses its Lease sets ``lost``
    and ``stop``."""
    from kubesched.live.leaderelection import LeaderElector

    if not config.leader_election.leader_elect:
        return None

    def on_stopped_leading() -> None:
        if not stop.is_set():
            logger.error(None, "Leaderelection lost")
            lost.set()
            stop.set()

    return LeaderElector.from_config(
        _lease_cluster(rest, cluster, config),
        clock,
        config.leader_election,
        identity=identity,
        on_stopped_leading=on_stopped_leading,
        metrics=metrics,
    )


def _read_config(path: str | None) -> bytes | None:
    """The configuration file's bytes (None without one): read once, so that what is loaded is what is hashed."""
    if not path:
        return None
    with open(path, "rb") as f:
        return f.read()


def _reloader(
    args: argparse.Namespace, content: bytes | None, scheduler: Scheduler, metrics: SchedulerMetrics
) -> ConfigReloader | None:
    """The watch on the configuration file (None without one): flags apply on top of it as at start-up."""
    from kubesched.app.reload import DEFAULT_PERIOD, ConfigReloader

    if content is None:
        return None
    period = args.config_reload_period
    return ConfigReloader(
        args.config,
        content,
        load=lambda text: effective_config(args, text),
        apply=scheduler.reconfigure,
        metrics=metrics,
        period=DEFAULT_PERIOD if period is None else period.total_seconds(),
    )


def _lease_cluster(rest: RestClient, cluster: KubeCluster, config: KubeSchedulerConfiguration) -> KubeCluster:
    """A client of its own for the Lease, each request (its retries included) bounded by the renew
    deadline, as kube-scheduler's leader-election client is: a renewal must not outlive the term it
    renews."""
    from kubesched.live.cluster import KubeCluster
    from kubesched.live.connection import RestClient as Client

    deadline = config.leader_election.renew_deadline.total_seconds()
    # Its LeaderElection events go out through the scheduler's own event recorder.
    return KubeCluster(
        Client(dataclasses.replace(rest.options, timeout=deadline), rest.configuration), recorder=cluster.recorder
    )


def _connect(
    args: argparse.Namespace, config: KubeSchedulerConfiguration, identity: str
) -> tuple[RestClient, KubeCluster]:
    """The API server's client and the cluster on top of it (with an event recorder of its own)."""
    from kubesched.live.cluster import KubeCluster
    from kubesched.live.connection import DEFAULT_TIMEOUT, ConnectionOptions, RestClient
    from kubesched.live.events import EventRecorder

    timeout = getattr(args, "request_timeout", None)
    options = ConnectionOptions.from_client_connection(
        config.client_connection,
        kubeconfig=args.kubeconfig,
        master=args.master,
        timeout=DEFAULT_TIMEOUT if timeout is None else timeout.total_seconds(),
    )
    rest = RestClient(options)
    # A client of its own for events (kube-scheduler's eventClient): a storm of events does not eat the
    # scheduler's request budget.
    recorder = EventRecorder(
        RestClient(options, rest.configuration), controller=config.profiles[0].scheduler_name, instance=identity
    )
    return rest, KubeCluster(rest, recorder=recorder)


def _cache_debugger(cluster: KubeCluster, scheduler: Scheduler) -> CacheDebugger:
    """kube-scheduler's cache debugger over the informers' node and pod stores."""
    from kubesched.cache.debugger import CacheDebugger

    def lister(kind: str) -> Callable[[], list[dict[str, Any]]]:
        return lambda: store.list() if (store := cluster.stores.get(kind)) is not None else []

    return CacheDebugger(lister("Node"), lister("Pod"), scheduler.cache, scheduler.queue)


def _wait_for_sync(has_synced: Callable[[], bool], stop: threading.Event) -> bool:
    """Wait until every informer has synced (its first list handled); False when told to stop first."""
    while not has_synced():
        if stop.wait(SYNC_POLL_SECONDS):
            return False
    if v := logger.v(3):
        v.info("Handlers synced")
    return not stop.is_set()


def _install_signal_handlers(stop: threading.Event, reloader: ConfigReloader | None) -> None:
    """SIGTERM and SIGINT end the run gracefully, SIGHUP reloads the configuration file (only possible
    from the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return

    def handle(signum: int, _frame: Any) -> None:
        log.warning("received %s, shutting down", signal.Signals(signum).name)
        stop.set()

    def hang_up(_signum: int, _frame: Any) -> None:
        if reloader is None:
            log.warning("received SIGHUP: no --config file to reload")
        else:
            reloader.request()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
    signal.signal(signal.SIGHUP, hang_up)


def main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    require_extra("live", "kubesched run")
    configure(args.v, args.logging_format, err)
    return run(args)
