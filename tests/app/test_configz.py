"""/configz's document (kubesched.app.configz): kube-scheduler's shape, checked against what kube-scheduler
v1.34.4 itself served for the same file."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from kubesched.app.configz import componentconfig, go_duration
from kubesched.config import load_config

#: GET /configz of kube-scheduler v1.34.4 (testing/controlplane's build) started with CONFIG below.
UPSTREAM = Path(__file__).parent / "configz" / "kube-scheduler-v1.34.4.json"
CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "clientConnection": {"kubeconfig": "/etc/kubesched/kubeconfig"},
    "leaderElection": {"leaderElect": False},
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 5}]}},
        }
    ],
}


def test_the_document_is_kube_schedulers() -> None:
    upstream = json.loads(UPSTREAM.read_text())
    assert componentconfig(load_config(CONFIG)) == upstream


def test_extenders_with_go_names_and_no_private_key() -> None:
    extender = {
        "urlPrefix": "https://ext:8443",
        "filterVerb": "filter",
        "weight": 2,
        "enableHTTPS": True,
        "httpTimeout": "5s",
        "tlsConfig": {"caFile": "/ca.crt", "keyData": "c2VjcmV0"},
        "managedResources": [{"name": "example.com/foo", "ignoredByScheduler": True}],
    }
    served = componentconfig(load_config({**CONFIG, "extenders": [extender]}))["componentconfig"]["Extenders"]
    assert served == [
        {
            "URLPrefix": "https://ext:8443",
            "FilterVerb": "filter",
            "Weight": 2,
            "EnableHTTPS": True,
            "HTTPTimeout": "5s",
            "TLSConfig": {"CAFile": "/ca.crt", "KeyData": "<redacted>"},
            "ManagedResources": [{"Name": "example.com/foo", "IgnoredByScheduler": True}],
        }
    ]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (0.000001, "1µs"),
        (0.5, "500ms"),
        (0.0015, "1.5ms"),
        (1.5, "1.5s"),
        (15, "15s"),
        (90, "1m30s"),
        (600, "10m0s"),
        (3600, "1h0m0s"),
        (5400.25, "1h30m0.25s"),
        (-2, "-2s"),
    ],
)
def test_durations_as_go_writes_them(seconds: float, text: str) -> None:
    assert go_duration(timedelta(seconds=seconds)) == text
