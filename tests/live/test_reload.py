"""``kubesched run`` reloading its configuration file on a real kube-apiserver: the new profile decides
the next pods while the queue keeps its pending ones and the leader keeps its Lease; an invalid file
keeps the running configuration and counts a failure; SIGHUP reloads at once."""

from __future__ import annotations

import json
import signal
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from testing.controlplane.fixture import free_port
from tests.live.conftest import Live, node, pod

pytestmark = pytest.mark.controlplane

LEASE_FLAGS = (
    "--leader-elect=true",
    "--leader-elect-lease-duration=6s",
    "--leader-elect-renew-deadline=4s",
    "--leader-elect-retry-period=1s",
)
#: n1 is preferred by the pods below (NodeAffinity, weight 2) but has a PreferNoSchedule taint
#: (TaintToleration, weight 3): n2 wins until NodeAffinity weighs 5. "reserved" takes only pods that
#: tolerate its NoSchedule taint, while TaintToleration filters.
NODES = [
    node("n1", labels={"zone": "a"}, taints=[{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]),
    node("n2", labels={"zone": "b"}),
    node("reserved", labels={"zone": "c"}, taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
]
PREFERS_ZONE_A: dict[str, Any] = {
    "affinity": {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                }
            ]
        }
    }
}
HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
V1 = {**HEAD, "profiles": [{"schedulerName": "default-scheduler"}]}
#: NodeAffinity weighs 5, and TaintToleration no longer filters.
V2 = {
    **HEAD,
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "score": {"enabled": [{"name": "NodeAffinity", "weight": 5}]},
                "filter": {"disabled": [{"name": "TaintToleration"}]},
            },
        }
    ],
}


class Served:
    """The scheduler's /metrics and /configz (plain HTTP on a port of its own)."""

    def __init__(self, port: int) -> None:
        self.port = port

    def get(self, path: str) -> str:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as resp:
                return str(resp.read().decode())
        except OSError:
            return ""

    def metric(self, line_start: str) -> float | None:
        for line in self.get("/metrics").splitlines():
            if line.startswith(line_start + " "):
                return float(line.rsplit(" ", 1)[1])
        return None

    def reloads(self, status: str) -> float:
        return self.metric(f'scheduler_config_controller_automatic_reloads_total{{status="{status}"}}') or 0.0

    def affinity_weight(self) -> int | None:
        body = self.get("/configz")
        if not body:
            return None
        [profile] = json.loads(body)["componentconfig"]["Profiles"]
        plugins = profile["Plugins"]
        # The Score point's weight overrides the MultiPoint one (the defaults).
        weights = {p["Name"]: p["Weight"] for point in ("MultiPoint", "Score") for p in plugins[point]["Enabled"] or []}
        return int(weights.get("NodeAffinity", 0))


def start(live: Live, *flags: str) -> tuple[subprocess.Popen, Served, Path]:
    port = free_port()
    proc = live.start_scheduler(
        "--plain-http", "--secure-port", str(port), "--bind-address", "127.0.0.1", *flags, config=V1
    )
    served = Served(port)
    live.wait(lambda: served.get("/readyz") == "ok", 60, "kubesched ready")
    return proc, served, live.tmp / "kubesched-config.yaml"


def write(path: Path, config: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump(config))


def test_a_new_profile_decides_the_next_pods_and_the_queue_and_the_lease_stay(live: Live) -> None:
    live.apply(*NODES)
    proc, served, path = start(live, *LEASE_FLAGS)
    live.apply(pod("reserved-only", nodeSelector={"zone": "c"}), pod("before", **PREFERS_ZONE_A))
    assert live.wait_bound("before") == {"before": "n2"}
    live.wait(
        lambda: (live.pods()["reserved-only"]["status"].get("conditions") or [{}])[0].get("reason") == "Unschedulable",
        30,
        "reserved-only to be found unschedulable",
    )
    lease = live.get("lease", "kube-scheduler", namespace="kube-system")["spec"]
    assert served.affinity_weight() == 2

    write(path, V2)
    live.wait(lambda: served.reloads("success") == 1, 30, "the reload")
    # No cluster event helped it: the pod waited in the queue and the new plugin set placed it.
    assert live.wait_bound("reserved-only") == {"reserved-only": "reserved"}
    live.apply(pod("after", **PREFERS_ZONE_A))
    assert live.wait_bound("after") == {"after": "n1"}
    assert served.affinity_weight() == 5
    assert served.metric('scheduler_config_controller_last_config_info{hash="sha256:') is None  # one series ...
    assert 'scheduler_config_controller_last_config_info{hash="sha256:' in served.get("/metrics")  # ... labelled
    now = live.get("lease", "kube-scheduler", namespace="kube-system")["spec"]
    assert (now["holderIdentity"], now.get("leaseTransitions")) == (
        lease["holderIdentity"],
        lease.get("leaseTransitions"),
    )
    assert served.metric('leader_election_master_status{name="kube-scheduler"}') == 1
    assert proc.poll() is None and served.reloads("failure") == 0


def test_an_invalid_file_keeps_the_running_configuration_and_counts_a_failure(live: Live) -> None:
    live.apply(*NODES)
    proc, served, path = start(live, "--leader-elect=false")
    invalid = {
        **HEAD,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "percentageOfNodesToScore": 101,
                "plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": 5}]}},
            }
        ],
    }
    write(path, invalid)
    live.wait(lambda: served.reloads("failure") == 1, 30, "the refused reload")
    log = Path(proc.log_path).read_text()  # type: ignore[attr-defined]
    [line] = [x for x in log.splitlines() if "Reloading the configuration failed" in x]
    assert "profiles[0].percentageOfNodesToScore: Invalid value: 101" in line
    assert served.affinity_weight() == 2 and served.reloads("success") == 0
    live.apply(pod("still-v1", **PREFERS_ZONE_A))
    assert live.wait_bound("still-v1") == {"still-v1": "n2"}
    assert proc.poll() is None


def test_sighup_reloads_at_once(live: Live) -> None:
    live.apply(*NODES)
    proc, served, path = start(live, "--leader-elect=false", "--config-reload-period=0")
    write(path, V2)
    proc.send_signal(signal.SIGHUP)
    live.wait(lambda: served.reloads("success") == 1, 30, "the reload SIGHUP asked for")
    assert served.affinity_weight() == 5
    live.apply(pod("after", **PREFERS_ZONE_A))
    assert live.wait_bound("after") == {"after": "n1"}
    assert proc.poll() is None
