"""pytest wiring for the real control plane: the ``controlplane`` marker and session fixtures.

Tests marked ``controlplane`` get a running etcd + kube-apiserver (:class:`ControlPlane`) shared by the
session. The first run on a machine builds them from source with Go (minutes; cached after), and says so
on the terminal as it goes. Where Go is missing they are skipped with that reason; ``--skip-controlplane``
(or ``KUBESCHED_SKIP_CONTROLPLANE=1``) skips them on purpose. A run that requires them
(``KUBESCHED_REQUIRE_CONTROLPLANE=1``, which ``.ci/run`` sets, or ``CI=true``) refuses both, so CI can
never pass by skipping them.

SIGTERM and SIGHUP end the session as Ctrl-C does while a plane is up, so teardown stops etcd and
kube-apiserver and removes their folder (tokens and keys) instead of leaving them behind.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import pytest

from testing.controlplane.audit import POLICY
from testing.controlplane.fixture import ControlPlane, build_binaries, go_available

REQUIRE_ENV = "KUBESCHED_REQUIRE_CONTROLPLANE"
SKIP_ENV = "KUBESCHED_SKIP_CONTROLPLANE"
SKIP_OPTION = "--skip-controlplane"
SKIP_REASON = (
    f"control-plane tests skipped on request ({SKIP_OPTION} or {SKIP_ENV}=1); "
    "they need etcd and kube-apiserver built with Go"
)


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def controlplane_required() -> bool:
    return _env_flag(REQUIRE_ENV) or os.environ.get("CI", "").lower() == "true"


def skip_requested(config: pytest.Config) -> bool:
    return bool(config.getoption("skip_controlplane")) or _env_flag(SKIP_ENV)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        SKIP_OPTION,
        action="store_true",
        dest="skip_controlplane",
        help="skip the tests marked controlplane (real etcd + kube-apiserver, built with Go on "
        f"the first run); same as {SKIP_ENV}=1. An error where the run requires them.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "controlplane: needs a real etcd + kube-apiserver (built with Go)")
    if importlib.util.find_spec("urllib3") is not None:
        # Proxied connections in the robustness tests skip verification on purpose.
        config.addinivalue_line("filterwarnings", "ignore::urllib3.exceptions.InsecureRequestWarning")
    if skip_requested(config) and controlplane_required():
        raise pytest.UsageError(
            f"{SKIP_OPTION} / {SKIP_ENV} cannot skip the control-plane tests: this run "
            f"requires them ({REQUIRE_ENV} or CI=true is set)"
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not skip_requested(config):
        return
    skip = pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if item.get_closest_marker("controlplane") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def controlplane_bin_dir(pytestconfig: pytest.Config) -> Path:
    """The folder of the reference binaries, built first when the cache is cold (progress on the terminal)."""
    if skip_requested(pytestconfig):
        pytest.skip(SKIP_REASON)
    if not go_available():
        if controlplane_required():
            pytest.fail(
                f"Go is not installed, and this run requires the real control plane ({REQUIRE_ENV} or CI is set)"
            )
        pytest.skip("Go is not installed: the real control plane (etcd, kube-apiserver) cannot be built")
    write = terminal_writer(pytestconfig)
    announced = False

    def progress(line: str) -> None:
        nonlocal announced
        write(line)
        if not announced:  # build.sh's first line says what is built and why it takes long
            announced = True
            write(f"controlplane: to skip the tests that need it instead, run pytest with {SKIP_OPTION}")

    with _interrupt_on_termination():
        return build_binaries(progress=progress)


@pytest.fixture(scope="session")
def control_plane(controlplane_bin_dir: Path) -> Iterator[ControlPlane]:
    with _interrupt_on_termination():
        plane = ControlPlane.start(bin_dir=controlplane_bin_dir)
        try:
            yield plane
        finally:
            plane.stop()


@pytest.fixture(scope="session")
def audited_control_plane(controlplane_bin_dir: Path) -> Iterator[ControlPlane]:
    """A second plane whose kube-apiserver keeps an audit log (:data:`testing.controlplane.audit.POLICY`),
    for the tests that judge who did what by the server's own record (failover, interop, RBAC). A plane of
    its own, so the other suites' traffic neither slows its log nor shows in it."""
    with _interrupt_on_termination():
        plane = ControlPlane.start(bin_dir=controlplane_bin_dir, audit_policy=POLICY)
        try:
            yield plane
        finally:
            plane.stop()


def terminal_writer(config: pytest.Config) -> Callable[[str], None]:
    """Write whole lines on the terminal from inside a fixture: output capturing is suspended around each
    line, since a captured line would only be shown after the long build, or never."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")

    def write(line: str) -> None:
        if reporter is None:
            print(line, file=sys.__stderr__, flush=True)
            return
        suspended = capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext()
        with suspended:
            reporter.write_line(line)
            reporter.flush()

    return write


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"{signal.Signals(signum).name} received")


@contextlib.contextmanager
def _interrupt_on_termination() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise KeyboardInterrupt as Ctrl-C does, so pytest ends the
    session through its teardown instead of the process dying on the spot. Handlers someone else installed
    are left alone; only the main thread can install them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    replaced = {
        sig: signal.signal(sig, _raise_interrupt)
        for sig in (signal.SIGTERM, signal.SIGHUP)
        if signal.getsignal(sig) is signal.SIG_DFL
    }
    try:
        yield
    finally:
        for sig, handler in replaced.items():
            signal.signal(sig, handler)
