"""``kubesched run`` against a real kube-apiserver: it binds where the simulator decides, reports what it
cannot place the way kube-scheduler does, preempts, keeps to its profiles and survives bad pods.

Every test runs the scheduler as its own process with the credentials of ``system:kube-scheduler``
(only the ClusterRoles the API server's bootstrap policy gives that user), as in a real cluster.
"""

from __future__ import annotations

import json
import signal
from functools import partial

import pytest

import kubesched
from tests.live.conftest import Live, node, pod

pytestmark = pytest.mark.controlplane

NODES = [
    node("n-a", cpu="2", memory="4Gi"),
    node("n-b", cpu="4", memory="8Gi"),
    node("n-c", cpu="8", memory="16Gi", labels={"disk": "ssd"}),
    node("n-d", cpu="1", memory="2Gi"),
]
PODS = [
    pod(f"p{i:02d}", cpu=cpu, memory=mem)
    for i, (cpu, mem) in enumerate(
        [
            ("500m", "1Gi"),
            ("1", "512Mi"),
            ("250m", "256Mi"),
            ("2", "4Gi"),
            ("100m", "64Mi"),
            ("1500m", "1Gi"),
            ("750m", "3Gi"),
            ("300m", "128Mi"),
            ("1", "1Gi"),
            ("200m", "2Gi"),
        ]
    )
]
PODS.append(pod("p-ssd", cpu="500m", nodeSelector={"disk": "ssd"}))


def test_binds_where_simulate_puts_them(live: Live) -> None:
    expected = kubesched.simulate([*NODES, *PODS], tie_break="name")
    expected_nodes = {key.split("/")[1]: where for key, where in expected.final.items()}
    assert all(expected_nodes.values()) and len(set(expected_nodes.values())) > 1  # a comparison worth making
    live.apply(*NODES)
    live.start_scheduler()
    for p in PODS:  # the same arrival order as the simulation: one after another
        live.apply(p)
        live.wait_bound(p["metadata"]["name"])
    actual = {name: p["spec"]["nodeName"] for name, p in live.pods().items()}
    assert actual == expected_nodes
    for name in actual:
        assert [e["reason"] for e in live.wait(partial(live.events, name), 20, f"event of {name}")] == ["Scheduled"]


def test_unschedulable_pod_reports_then_binds_when_a_node_is_added(live: Live) -> None:
    live.apply(node("small", cpu="1"))
    live.start_scheduler()
    live.apply(pod("big", cpu="3"))
    events = live.wait(
        lambda: [e for e in live.events("big") if e["reason"] == "FailedScheduling"], 30, "FailedScheduling"
    )
    assert events[0]["type"] == "Warning"
    assert events[0]["action"] == "Scheduling"
    # kube-scheduler v1.34's words: DynamicResources' PostFilter text first, and a node smaller than the
    # request is no preemption candidate at all.
    assert events[0]["note"] == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    conditions = {c["type"]: c for c in live.pods()["big"]["status"]["conditions"]}
    assert (conditions["PodScheduled"]["status"], conditions["PodScheduled"]["reason"]) == ("False", "Unschedulable")
    live.apply(node("large", cpu="4"))
    assert live.wait_bound("big") == {"big": "large"}


def test_preemption_deletes_the_victim_and_binds_the_preemptor(live: Live) -> None:
    live.run_kubelet_standin()
    live.apply(
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        node("only", cpu="2"),
    )
    live.start_scheduler()
    live.apply(pod("victim", cpu="1500m", priorityClassName="low"))
    live.wait_bound("victim")
    victim_uid = live.pods()["victim"]["metadata"]["uid"]
    live.apply(pod("preemptor", cpu="1500m", priorityClassName="high"))
    assert live.wait_bound("preemptor") == {"preemptor": "only"}
    assert "victim" not in live.pods()
    preempted = live.wait(lambda: [e for e in live.events("victim") if e["reason"] == "Preempted"], 20, "Preempted")
    assert preempted[0]["regarding"]["uid"] == victim_uid
    assert preempted[0]["note"].startswith("Preempted by pod ")


def test_two_profiles_bind_only_their_own_pods(live: Live) -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [
            {"schedulerName": "alpha"},
            {"schedulerName": "beta", "plugins": {"score": {"disabled": [{"name": "*"}]}}},
        ],
    }
    live.apply(node("n1"))
    live.start_scheduler(config=config)
    live.apply(pod("a", schedulerName="alpha"), pod("b", schedulerName="beta"), pod("other", schedulerName="elsewhere"))
    assert live.wait_bound("a", "b") == {"a": "n1", "b": "n1"}
    scheduled = live.wait(lambda: live.events("b"), 20, "event of b")
    assert scheduled[0]["reportingController"] == "beta"
    live.apply(pod("late", schedulerName="alpha"))
    live.wait_bound("late")
    assert live.node_of("other") is None
    assert live.events("other") == []


def test_a_pod_the_scheduler_cannot_parse_gets_an_event_and_the_loop_goes_on(live: Live) -> None:
    # The API server accepts any value for Gt; the scheduler needs an integer.
    bad_affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "rank", "operator": "Gt", "values": ["high"]}]}]
            }
        }
    }
    live.apply(node("n1"))
    live.start_scheduler()
    live.apply(pod("bad", affinity=bad_affinity), pod("good"))
    assert live.wait_bound("good") == {"good": "n1"}
    events = live.wait(lambda: live.events("bad"), 20, "event of bad")
    assert events[0]["type"] == "Warning" and events[0]["reason"] == "FailedScheduling"
    assert "needs an integer value" in events[0]["note"]
    assert live.node_of("bad") is None


def test_leader_election_as_system_kube_scheduler_and_graceful_shutdown(live: Live) -> None:
    denied = live.plane.kubectl(
        "auth", "can-i", "create", "nodes", kubeconfig=live.plane.scheduler_kubeconfig, check=False
    )
    assert denied.stdout.strip() == "no"  # only its ClusterRoles: no more than kube-scheduler may do
    live.apply(node("n1"))
    proc = live.start_scheduler(
        "--leader-elect=true",
        "--leader-elect-lease-duration=6s",
        "--leader-elect-renew-deadline=4s",
        "--leader-elect-retry-period=1s",
    )
    live.apply(pod("p"))
    live.wait_bound("p")
    lease = live.get("lease", "kube-scheduler", namespace="kube-system")
    holder = lease["spec"]["holderIdentity"]
    assert holder and lease["spec"]["leaseDurationSeconds"] == 6
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    released = live.get("lease", "kube-scheduler", namespace="kube-system")["spec"]
    assert released["holderIdentity"] == "" and released["leaseDurationSeconds"] == 1
    lease_events = json.dumps(live.get("events", namespace="kube-system"))
    assert f"{holder} became leader" in lease_events


def test_the_secure_port_asks_the_api_server_who_may_read_metrics(live: Live) -> None:
    import ssl
    import urllib.error
    import urllib.request

    from testing.controlplane.fixture import free_port

    port = free_port()
    live.start_scheduler("--secure-port", str(port), "--bind-address", "127.0.0.1", "--leader-elect=false")
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the scheduler's self-signed certificate

    def get(path: str, token: str | None = None) -> int:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            with urllib.request.urlopen(
                urllib.request.Request(f"https://127.0.0.1:{port}{path}", headers=headers), context=context, timeout=10
            ) as resp:
                return int(resp.status)
        except urllib.error.HTTPError as err:
            return err.code
        except OSError:
            return 0

    assert live.wait(lambda: get("/readyz") == 200, 30, "/readyz")  # probes need no token
    assert get("/metrics") in (401, 403)
    assert get("/metrics", live.plane.admin_token) == 200  # system:masters, checked by TokenReview
