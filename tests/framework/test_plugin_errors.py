"""A misbehaving out-of-tree plugin is an Error status naming it, or (at load) exit 2, never a crash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched import simulate
from kubesched.app.cli import main
from kubesched.framework.extension_points import FrameworkError
from kubesched.plugins.registry import PluginLoadError
from tests.factories import node_dict, pod_dict

BAD = "tests.framework.bad_plugins:Bad"


def _config(plugin: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"enabled": [{"name": plugin}]}},
    }
    if args is not None:
        profile["pluginConfig"] = [{"name": plugin, "args": args}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


OBJECTS = [node_dict("node-a"), node_dict("node-b"), pod_dict("p")]


@pytest.mark.parametrize(
    ("point", "how", "garbage", "message"),
    [
        ("pre_filter", "raise", None, 'running PreFilter plugin "Bad": pre_filter exploded'),
        ("pre_filter", "garbage", "no", "running PreFilter plugin \"Bad\": returned str 'no', expected a (value"),
        ("pre_filter", "garbage", "int", 'running PreFilter plugin "Bad": returned int 7'),
        ("filter", "raise", None, 'running "Bad" filter plugin: filter exploded'),
        ("filter", "garbage", "no", "running \"Bad\" filter plugin: returned str 'no', expected a Status or None"),
        ("pre_score", "raise", None, 'running PreScore plugin "Bad": pre_score exploded'),
        ("pre_score", "garbage", "no", 'running PreScore plugin "Bad": returned str'),
        ("score", "raise", None, 'running Score plugins: plugin "Bad" failed with: score exploded'),
        ("score", "garbage", "int", 'plugin "Bad" failed with: returned int 7, expected a (value, Status | None) pair'),
        ("score", "garbage", "nan-pair", 'plugin "Bad" failed with: returned float nan, expected int or integer'),
        ("score", "garbage", "huge-pair", 'plugin "Bad" failed with: score 1180591620717411303424 is out of the int64'),
        ("reserve", "raise", None, 'running Reserve plugin "Bad": reserve exploded'),
        ("reserve", "garbage", "no", 'running Reserve plugin "Bad": returned str'),
        ("permit", "raise", None, 'running Permit plugin "Bad": permit exploded'),
        ("permit", "garbage", "no", 'running Permit plugin "Bad": returned str'),
        ("pre_bind", "raise", None, 'running PreBind plugin "Bad": pre_bind exploded'),
    ],
)
def test_extension_point_failure_is_an_error_status_naming_the_plugin(
    point: str, how: str, garbage: Any, message: str
) -> None:
    args = {"point": point, "how": how, **({"garbage": garbage} if garbage else {})}
    result = simulate(OBJECTS, config=_config(BAD, args))
    assert result.final == {"default/p": None}
    first = result.attempts[0]
    assert first["result"] == "Error"
    assert message in first["message"]


def test_a_filter_error_is_the_verdict_of_the_node_it_came_from() -> None:
    # kube-scheduler stops the walk at the first node whose Filter errs; that node got the Error as
    # its verdict, and the cycle evaluated only it.
    result = simulate(OBJECTS, config=_config(BAD, {"point": "filter"}), tie_break="name", record="full")
    first = result.attempts[0]
    assert first["result"] == "Error" and first["evaluatedNodes"] == 1
    assert first["filter"] == {
        "node-a": {"plugin": "Bad", "code": "Error", "reasons": ['running "Bad" filter plugin: filter exploded']}
    }


@pytest.mark.parametrize("how", ["raise", "garbage"])
def test_post_filter_failure_is_an_error(how: str) -> None:
    objs = [node_dict("node-a", cpu="1"), pod_dict("p", cpu="2")]
    result = simulate(objs, config=_config(BAD, {"point": "post_filter", "how": how}))
    # As in kube-scheduler, a PostFilter error leaves the attempt Unschedulable, its message appended.
    first = result.attempts[0]
    assert first["result"] == "Unschedulable"
    assert first["message"].startswith('0/1 nodes are available: 1 Insufficient cpu. running PostFilter plugin "Bad": ')
    assert result.final == {"default/p": None}


@pytest.mark.parametrize("point", ["unreserve", "post_bind"])
def test_failures_where_nothing_can_be_reported_are_logged_and_ignored(point: str) -> None:
    result = simulate(OBJECTS, config=_config(BAD, {"point": point}))
    assert result.final["default/p"] in ("node-a", "node-b")


def test_no_traceback_without_verbose(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump_all(OBJECTS))
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(_config(BAD, {"point": "filter"})))
    assert main(["simulate", str(scenario), "--config", str(config)]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err and err == ""
    assert 'running "Bad" filter plugin: filter exploded' in out
    assert main(["simulate", str(scenario), "--config", str(config), "-v"]) == 0
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (None, 'plugin "nosuchmodule_xyz:Plugin": importing nosuchmodule_xyz failed: ModuleNotFoundError'),
        ("def broken(:\n", 'plugin "{mod}:Plugin": importing {mod} failed: SyntaxError: '),
        ("raise RuntimeError('import-time failure')\n", "failed: RuntimeError: import-time failure"),
        ("class Other:\n    pass\n", 'plugin "{mod}:Plugin": module {mod} has no attribute Plugin'),
    ],
)
def test_plugin_load_failures_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    source: str | None,
    message: str,
) -> None:
    import yaml

    mod = f"plug_{abs(hash(message)) % 10**8}"
    if source is None:
        mod = "nosuchmodule_xyz"
    else:
        (tmp_path / f"{mod}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump_all(OBJECTS))
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(_config(f"{mod}:Plugin")))
    assert main(["simulate", str(scenario), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched: error: ") and err.count("\n") == 1
    assert message.format(mod=mod) in err
    assert "Traceback" not in err


def test_exception_in_init_is_a_load_error() -> None:
    with pytest.raises(PluginLoadError) as err:
        simulate(OBJECTS, config=_config("tests.framework.bad_plugins:FailsInInit"))
    assert str(err.value) == (
        'plugin "tests.framework.bad_plugins:FailsInInit": building it failed: '
        "RuntimeError: cannot start without a licence server"
    )


def test_events_to_register_must_be_cluster_events() -> None:
    with pytest.raises(FrameworkError, match='plugin "BadEvents": events_to_register returned str'):
        simulate(OBJECTS, config=_config("tests.framework.bad_plugins:BadEvents"))


def test_a_failing_queue_sort_falls_back_to_priority_order() -> None:
    cfg = _config("tests.framework.bad_plugins:BadSort")
    cfg["profiles"][0]["plugins"]["queueSort"] = {
        "enabled": [{"name": "tests.framework.bad_plugins:BadSort"}],
        "disabled": [{"name": "*"}],
    }
    objs = [node_dict("node-a"), *(pod_dict(f"p{i}") for i in range(4))]
    result = simulate(objs, config=cfg, burst=True)
    assert all(result.final.values()) and len(result.final) == 4


@pytest.mark.parametrize(
    ("what", "message"),
    [
        ("filter", 'running "BadBatch" filter plugin: filter_nodes returned list [], expected a BatchFilterResult'),
        ("score", 'running Score plugins: plugin "BadBatch" failed with: returned 1 scores for 2 nodes'),
    ],
)
def test_batch_forms_answering_garbage_are_errors(what: str, message: str) -> None:
    result = simulate(OBJECTS, config=_config("tests.framework.bad_plugins:BadBatch", {"what": what}))
    assert result.attempts[0]["result"] == "Error"
    assert message in result.attempts[0]["message"]
