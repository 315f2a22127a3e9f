"""Extenders through ``simulate`` as users configure them: every verb, error, timeout and option."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched import simulate as _simulate
from kubesched.config import ConfigError
from kubesched.sim.annotations import EXTENDER_RESULTS
from kubesched.sim.output import write_manifests
from tests.extender import inproc
from tests.extender.server import ExtenderServer
from tests.factories import node_dict, pod_dict


def simulate(*args: Any, **kwargs: Any) -> Any:
    """These tests read the full trace records (filter verdicts, scores, extender verdicts)."""
    kwargs.setdefault("record", "full")
    return _simulate(*args, **kwargs)


def _config(*extenders: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "extenders": list(extenders),
    }


def _nodes(*names: str, **kw: Any) -> list[dict[str, Any]]:
    return [node_dict(n, **kw) for n in names]


def _priority(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def _pc(pod: dict[str, Any], name: str) -> dict[str, Any]:
    pod["spec"].pop("priority", None)
    pod["spec"]["priorityClassName"] = name
    return pod


def _reject(
    names: set[str], reason: str = "extender says no", *, unresolvable: bool = False, cache: bool = False
) -> Any:
    def answer(args: Any) -> Any:
        given = args["NodeNames"] if cache else [n["metadata"]["name"] for n in args["Nodes"]["items"]]
        kept = [n for n in given if n not in names]
        failed = {n: reason for n in given if n in names}
        key = "FailedAndUnresolvableNodes" if unresolvable else "FailedNodes"
        out: dict[str, Any] = {key: failed}
        if cache:
            out["NodeNames"] = kept
        else:
            out["Nodes"] = {"items": [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in kept]}
        return out

    return answer


def test_filter_drops_nodes_with_reasons_after_the_filter_plugins(server: ExtenderServer) -> None:
    server.handlers["filter"] = _reject({"node-a"})
    objs = [*_nodes("node-a", "node-b"), node_dict("small", cpu="100m"), pod_dict("p", cpu="1")]
    result = simulate(objs, config=_config({"urlPrefix": server.url, "filterVerb": "filter"}), tie_break="name")
    assert result.final == {"default/p": "node-b"}
    _, args = server.calls[0]
    # Only the nodes that passed the Filter plugins reach the extender, as whole Node objects.
    assert sorted(n["metadata"]["name"] for n in args["Nodes"]["items"]) == ["node-a", "node-b"]
    assert args["Pod"]["metadata"]["name"] == "p" and args["NodeNames"] is None
    record = result.attempts[0]
    assert record["filter"]["node-a"] == {
        "plugin": "Extender",
        "code": "Unschedulable",
        "reasons": ["extender says no"],
    }
    assert record["feasible"] == ["node-b"]
    assert record["extenders"]["filter"][server.url]["failedNodes"] == {"node-a": "extender says no"}


def test_filter_rejecting_everything_is_in_the_fit_error(server: ExtenderServer) -> None:
    server.handlers["filter"] = _reject({"node-a", "node-b"}, "no licence here", cache=True)
    objs = [*_nodes("node-a", "node-b"), pod_dict("p")]
    cfg = _config({"urlPrefix": server.url, "filterVerb": "filter", "nodeCacheCapable": True})
    result = simulate(objs, config=cfg)
    assert result.final == {"default/p": None}
    assert result.attempts[0]["message"].startswith("0/2 nodes are available: 2 no licence here.")
    assert server.calls[0][1]["NodeNames"] == ["node-a", "node-b"] or sorted(server.calls[0][1]["NodeNames"]) == [
        "node-a",
        "node-b",
    ]
    assert server.calls[0][1]["Nodes"] is None


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda s: s.status.__setitem__("filter", 500), "code 500"),
        (lambda s: s.handlers.__setitem__("filter", lambda a: {"Error": "quota service down"}), "quota service down"),
        (lambda s: s.delay.__setitem__("filter", 1.0), "timed out"),
        (
            lambda s: s.handlers.__setitem__("filter", lambda a: {"NodeNames": ["ghost"]}),
            'claims a filtered node "ghost" which is not found in the input node list',
        ),
        (lambda s: s.handlers.__setitem__("filter", lambda a: ["not", "an", "object"]), "not a JSON object"),
    ],
)
def test_filter_error_fails_the_attempt_unless_ignorable(server: ExtenderServer, setup: Any, message: str) -> None:
    setup(server)
    objs = [*_nodes("node-a"), pod_dict("p")]
    ext = {"urlPrefix": server.url, "filterVerb": "filter", "nodeCacheCapable": True, "httpTimeout": "200ms"}
    result = simulate(objs, config=_config(ext))
    assert result.final == {"default/p": None}
    assert result.attempts[0]["result"] == "Error"
    assert message in result.attempts[0]["message"]
    # The same extender marked ignorable is skipped, and the pod is scheduled.
    server.calls.clear()
    result = simulate(objs, config=_config({**ext, "ignorable": True}))
    assert result.final == {"default/p": "node-a"}
    assert server.verbs() == ["filter"]


def test_unreachable_extender_is_an_error() -> None:
    objs = [*_nodes("node-a"), pod_dict("p")]
    result = simulate(objs, config=_config({"urlPrefix": "http://127.0.0.1:9/x", "filterVerb": "filter"}))
    assert result.attempts[0]["result"] == "Error"
    assert "failed filter with extender at URL http://127.0.0.1:9/x/filter" in result.attempts[0]["message"]


def test_unresolvable_failure_keeps_preemption_off_the_node(server: ExtenderServer) -> None:
    server.handlers["filter"] = _reject({"node-a"}, "never here", unresolvable=True, cache=True)
    low = pod_dict("low", cpu="1", node_name="node-a")
    high = _pc(pod_dict("high", cpu="1"), "high")
    objs = [_priority("high", 100), *_nodes("node-a"), low, high]
    cfg = _config({"urlPrefix": server.url, "filterVerb": "filter", "nodeCacheCapable": True})
    result = simulate(objs, config=cfg)
    assert result.final == {"default/high": None}
    record = result.attempts[0]
    assert record["filter"]["node-a"]["code"] == "UnschedulableAndUnresolvable"
    assert record["message"] == (
        "0/1 nodes are available: 1 never here. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling."
    )
    assert result.deleted == []


def test_prioritize_scores_are_scaled_and_errors_ignored(server: ExtenderServer) -> None:
    server.handlers["prioritize"] = lambda a: [{"Host": n, "Score": 10 if n == "node-c" else 0} for n in a["NodeNames"]]
    objs = [*_nodes("node-a", "node-b", "node-c"), pod_dict("p", cpu="1")]
    ext = {"urlPrefix": server.url, "prioritizeVerb": "prioritize", "weight": 3, "nodeCacheCapable": True}
    result = simulate(objs, config=_config(ext), tie_break="name")
    assert result.final == {"default/p": "node-c"}
    scores = result.attempts[0]["scores"]
    assert scores["node-c"][server.url] == 10 * 3 * 10 and scores["node-a"][server.url] == 0
    assert result.attempts[0]["total"]["node-c"] - result.attempts[0]["total"]["node-a"] == 300
    # A failing prioritize verb gives no score and no error.
    server.status["prioritize"] = 500
    result = simulate(objs, config=_config(ext), tie_break="name")
    assert result.final == {"default/p": "node-a"}
    assert server.url not in result.attempts[0]["scores"]["node-a"]


def test_managed_resources_limit_interest_and_ignored_by_scheduler(server: ExtenderServer) -> None:
    server.handlers["filter"] = _reject(set(), cache=True)
    ext = {
        "urlPrefix": server.url,
        "filterVerb": "filter",
        "nodeCacheCapable": True,
        "managedResources": [{"name": "example.com/licence", "ignoredByScheduler": True}],
    }
    plain = pod_dict("plain")
    licensed = pod_dict("licensed", requests={"example.com/licence": "1"})
    licensed["spec"]["containers"][0]["resources"]["limits"] = {"example.com/licence": "1"}
    # No node advertises example.com/licence; NodeResourcesFit ignores it as told to.
    result = simulate([*_nodes("node-a"), plain, licensed], config=_config(ext))
    assert result.final == {"default/plain": "node-a", "default/licensed": "node-a"}
    assert [args["Pod"]["metadata"]["name"] for _, args in server.calls] == ["licensed"]
    # Without ignoredByScheduler the scheduler itself rejects the pod.
    ext["managedResources"] = [{"name": "example.com/licence"}]
    result = simulate([*_nodes("node-a"), licensed], config=_config(ext))
    assert result.final == {"default/licensed": None}
    assert "Insufficient example.com/licence" in result.attempts[0]["message"]


def test_bind_verb_replaces_the_default_binder(server: ExtenderServer) -> None:
    server.handlers["bind"] = lambda a: {}
    objs = [*_nodes("node-a"), pod_dict("p")]
    result = simulate(objs, config=_config({"urlPrefix": server.url, "bindVerb": "bind"}))
    assert result.final == {"default/p": "node-a"}
    uid = result.pods()[0]["metadata"]["uid"]
    assert server.calls == [("bind", {"PodName": "p", "PodNamespace": "default", "PodUID": uid, "Node": "node-a"})]


def test_bind_error_fails_the_binding_cycle(server: ExtenderServer) -> None:
    server.handlers["bind"] = lambda a: {"Error": "binding refused"}
    objs = [*_nodes("node-a"), pod_dict("p")]
    result = simulate(objs, config=_config({"urlPrefix": server.url, "bindVerb": "bind"}))
    assert result.final == {"default/p": None}
    assert result.attempts[0]["result"] == "Error" and "binding refused" in result.attempts[0]["message"]
    # Ignorable: the Bind plugins bind instead.
    result = simulate(objs, config=_config({"urlPrefix": server.url, "bindVerb": "bind", "ignorable": True}))
    assert result.final == {"default/p": "node-a"}


def test_preempt_verb_chooses_candidates_and_victims(server: ExtenderServer) -> None:
    def keep_node_b(args: Any) -> Any:
        return {"NodeNameToMetaVictims": {n: v for n, v in args["NodeNameToMetaVictims"].items() if n == "node-b"}}

    server.handlers["preempt"] = keep_node_b
    objs = [
        _priority("high", 100),
        _priority("mid", 5),
        *_nodes("node-a", "node-b"),
        pod_dict("low-a", cpu="3", node_name="node-a", uid="uid-a"),
        _pc(pod_dict("low-b", cpu="3", node_name="node-b", uid="uid-b"), "mid"),
        _pc(pod_dict("high", cpu="3"), "high"),
    ]
    ext = {"urlPrefix": server.url, "preemptVerb": "preempt", "nodeCacheCapable": True}
    result = simulate(objs, config=_config(ext))
    # The default choice (lowest-priority victim) would be node-a; the extender only allows node-b.
    assert simulate(objs).deleted == ["default/low-a"]
    assert result.deleted == ["default/low-b"]
    assert result.final == {"default/high": "node-b"}
    args = server.calls[0][1]
    # UIDs are seeded: each run deleted one victim, so the two runs together know both.
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in (*simulate(objs).pods(), *result.pods())}
    assert args["NodeNameToMetaVictims"] == {
        "node-a": {"Pods": [{"UID": uids["low-a"]}], "NumPDBViolations": 0},
        "node-b": {"Pods": [{"UID": uids["low-b"]}], "NumPDBViolations": 0},
    }


def test_preempt_verb_with_whole_pods_and_a_bad_answer(server: ExtenderServer) -> None:
    server.handlers["preempt"] = lambda a: {"NodeNameToMetaVictims": {"node-a": {"Pods": [{"UID": "nope"}]}}}
    objs = [
        _priority("high", 9),
        *_nodes("node-a"),
        pod_dict("low", cpu="3", node_name="node-a"),
        _pc(pod_dict("high", cpu="3"), "high"),
    ]
    result = simulate(objs, config=_config({"urlPrefix": server.url, "preemptVerb": "preempt"}))
    assert server.calls[0][1]["NodeNameToVictims"]["node-a"]["Pods"][0]["metadata"]["name"] == "low"
    assert result.deleted == [] and result.final == {"default/high": None}
    assert "claims to preempt pod (UID: nope)" in result.attempts[0]["message"]


def test_in_process_extender_and_annotations(tmp_path: Any) -> None:
    inproc.CALLS.clear()
    objs = [*_nodes("node-a", "node-b", "node-c"), pod_dict("p")]
    ext = {
        "urlPrefix": "python:tests.extender.inproc:handle",
        "filterVerb": "filter",
        "prioritizeVerb": "prioritize",
        "weight": 1,
        "nodeCacheCapable": True,
    }
    result = simulate(objs, config=_config(ext))
    assert result.final == {"default/p": "node-c"}
    assert [verb for verb, _ in inproc.CALLS] == ["filter", "prioritize"]
    write_manifests(result, tmp_path)
    pods = yaml.safe_load((tmp_path / "pods.yaml").read_text())
    pod = pods["items"][0] if "items" in pods else pods
    ann = pod["metadata"]["annotations"]
    verdict = json.loads(ann[EXTENDER_RESULTS["filter"]])
    assert verdict["python:tests.extender.inproc:handle"]["failedNodes"] == {"node-b": "in-process says no"}
    assert json.loads(ann[EXTENDER_RESULTS["prioritize"]])["python:tests.extender.inproc:handle"]["node-c"] == 10


def test_in_process_extender_failure_is_an_extender_error() -> None:
    objs = [*_nodes("node-a"), pod_dict("p")]
    ext = {"urlPrefix": "python:tests.extender.inproc:handle", "filterVerb": "boom"}
    result = simulate(objs, config=_config(ext))
    assert result.attempts[0]["result"] == "Error"
    assert "in-process failure" in result.attempts[0]["message"]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://x", "expected http(s)://"),
        ("python:no.such.module:fn", "cannot be loaded"),
        ("python:nocolon", "expected python:package.module:function"),
    ],
)
def test_bad_url_prefix_is_a_config_error(url: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"extenders\[0\]\.urlPrefix") as err:
        simulate([*_nodes("node-a")], config=_config({"urlPrefix": url, "filterVerb": "f"}))
    assert message in str(err.value)


def test_https_with_and_without_a_ca(tmp_path: Any) -> None:
    import base64

    from tests.extender.server import self_signed

    cert, key = self_signed(str(tmp_path), "extender.test")
    other_ca, _ = self_signed(str(tmp_path), "someone-else")
    server = ExtenderServer(tls=(cert, key))
    try:
        server.handlers["filter"] = _reject({"node-b"}, cache=True)
        objs = [*_nodes("node-a", "node-b"), pod_dict("p")]
        base = {"urlPrefix": server.url, "filterVerb": "filter", "nodeCacheCapable": True, "enableHTTPS": True}
        # HTTPS without a CA: the server is not verified (kube-scheduler's behaviour).
        assert simulate(objs, config=_config(base)).final == {"default/p": "node-a"}
        # With the server's CA (inline, base64 as in YAML) and the name its certificate carries.
        pem = base64.b64encode(Path(cert).read_bytes()).decode()
        verified = {**base, "tlsConfig": {"caData": pem, "serverName": "extender.test"}}
        assert simulate(objs, config=_config(verified)).final == {"default/p": "node-a"}
        # A CA that did not sign the certificate: the attempt fails with the TLS error.
        wrong = {**base, "tlsConfig": {"caFile": other_ca}}
        result = simulate(objs, config=_config(wrong))
        assert result.attempts[0]["result"] == "Error"
        assert "CERTIFICATE_VERIFY_FAILED" in result.attempts[0]["message"]
        assert len(server.calls) == 2
    finally:
        server.close()
