"""The configuration file's watch (kubesched.app.reload): what is applied, when, and what is refused."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kubesched.app.reload import ConfigReloader, config_hash
from kubesched.config import ConfigError
from kubesched.config.loader import load_config_text
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.metrics import SchedulerMetrics
from tests.deploy.kubelet import project

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
V1 = HEAD + "profiles:\n- schedulerName: one\n"
V2 = HEAD + "profiles:\n- schedulerName: two\n"
BAD = HEAD + "profiles:\n- schedulerName: two\n  percentageOfNodesToScore: 101\n"


class Watched:
    """A reloader over a file, applying into a list (or raising what ``refuse`` says)."""

    def __init__(
        self, path: Path, content: str, refuse: Callable[[KubeSchedulerConfiguration], None] | None = None, **kw: Any
    ) -> None:
        self.path = path
        self.applied: list[list[str]] = []
        self.metrics = SchedulerMetrics()
        self.refuse = refuse

        def apply(config: KubeSchedulerConfiguration) -> None:
            if self.refuse is not None:
                self.refuse(config)
            self.applied.append([p.scheduler_name for p in config.profiles])

        self.reloader = ConfigReloader(
            str(path),
            content.encode(),
            metrics=self.metrics,
            apply=apply,
            load=lambda text: load_config_text(text, origin=str(path)),
            **kw,
        )

    def count(self, status: str) -> float:
        value = self.metrics.registry.get_sample_value(
            "scheduler_config_controller_automatic_reloads_total", {"status": status}
        )
        return value or 0.0

    def running(self) -> str:
        info = "scheduler_config_controller_last_config_info"
        [sample] = [s for m in self.metrics.registry.collect() if m.name == info for s in m.samples]
        return sample.labels["hash"]


@pytest.fixture
def watched(tmp_path: Path) -> Watched:
    path = tmp_path / "config.yaml"
    path.write_text(V1)
    return Watched(path, V1)


def test_a_change_is_applied_once_it_reads_the_same_twice(watched: Watched) -> None:
    assert watched.running() == config_hash(V1.encode())
    assert watched.reloader.check() is None  # unchanged
    watched.path.write_text(V2)
    assert watched.reloader.check() is None  # maybe caught half-written: read again first
    assert watched.reloader.check() == "success"
    assert watched.applied == [["two"]]
    assert (watched.count("success"), watched.count("failure")) == (1, 0)
    assert watched.running() == config_hash(V2.encode())
    assert watched.reloader.check() is None and watched.applied == [["two"]]


def test_an_invalid_file_is_refused_once_with_its_field_and_the_running_one_stays(
    watched: Watched, caplog: pytest.LogCaptureFixture
) -> None:
    watched.path.write_text(BAD)
    with caplog.at_level(logging.ERROR):
        assert [watched.reloader.check() for _ in range(4)] == [None, "failure", None, None]  # not tried again
    assert watched.applied == [] and watched.count("failure") == 1
    assert watched.running() == config_hash(V1.encode())
    [line] = [r for r in caplog.records if r.getMessage().startswith("Reloading the configuration failed")]
    assert "profiles[0].percentageOfNodesToScore" in str(line.klog_err)  # type: ignore[attr-defined]
    watched.path.write_text(V2)  # fixed
    assert [watched.reloader.check() for _ in range(2)] == [None, "success"]


def test_what_the_scheduler_refuses_counts_as_a_failure(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(V1)

    def refuse(config: KubeSchedulerConfiguration) -> None:
        raise ConfigError("parallelism", "Forbidden: changes only at a restart")

    w = Watched(path, V1, refuse=refuse)
    path.write_text(V2)
    assert [w.reloader.check(), w.reloader.check()] == [None, "failure"]
    assert w.applied == [] and w.running() == config_hash(V1.encode())


def test_sighup_applies_at_once_and_retries_what_was_refused(watched: Watched) -> None:
    assert watched.reloader.check(forced=True) is None  # nothing changed: nothing to do
    watched.path.write_text(BAD)
    assert watched.reloader.check(forced=True) == "failure"
    assert watched.reloader.check(forced=True) == "failure"  # asked again: tried again
    watched.path.write_text(V2)
    assert watched.reloader.check(forced=True) == "success"
    assert (watched.count("success"), watched.count("failure")) == (1, 2)


def test_an_unreadable_file_keeps_the_configuration_and_fails_only_when_asked(watched: Watched) -> None:
    watched.path.unlink()
    assert watched.reloader.check() is None and watched.count("failure") == 0
    assert watched.reloader.check(forced=True) == "failure"
    watched.path.write_text(V1)  # back as it was
    assert watched.reloader.check() is None and watched.applied == []


def test_a_configmap_update_through_the_kubelets_link_swap_is_seen(tmp_path: Path) -> None:
    folder = tmp_path / "etc"
    project(folder, {"config.yaml": V1})
    path = folder / "config.yaml"
    assert path.is_symlink() and path.read_text() == V1
    w = Watched(path, V1)
    project(folder, {"config.yaml": V2})
    assert [w.reloader.check(), w.reloader.check()] == [None, "success"]
    assert w.applied == [["two"]]


def test_the_watch_polls_and_wakes_on_request(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(V1)
    applied = threading.Event()
    w = Watched(path, V1, period=0)  # no polling: only requests (SIGHUP)
    w.refuse = lambda config: applied.set()
    w.reloader.start()
    try:
        path.write_text(V2)
        w.reloader.request()
        assert applied.wait(30)
    finally:
        w.reloader.stop()
    assert w.applied == [["two"]]
