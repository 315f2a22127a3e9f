"""The command line: exit codes, one-line errors for bad input, and the files a run writes."""

from __future__ import annotations

import gzip
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubesched import __version__
from kubesched.app.cli import COMMANDS, INPUT_ERRORS, build_parser, main
from kubesched.sim import simulate
from kubesched.sim.annotations import (
    FILTER_RESULT,
    FINAL_SCORE_RESULT,
    RESULT_HISTORY,
    SCORE_RESULT,
    SELECTED_NODE,
)
from tests.factories import node_dict, pod_dict

REPO = Path(__file__).resolve().parents[2]

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: small, labels: {kubernetes.io/hostname: small}}
status: {allocatable: {cpu: "1", memory: 2Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: big, labels: {kubernetes.io/hostname: big}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
"""

PODS = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 256Mi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: shop}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "16"}}}]
"""

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: {percentage}
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled:
      - name: {plugin}
"""


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    folder = tmp_path / "scenario"
    folder.mkdir()
    (folder / "nodes.yaml").write_text(NODES)
    (folder / "pods.yaml").write_text(PODS)
    return folder


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("kubesched: error: ")
    return lines[0]


BAD_POD = "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - {{name: c, image: x{extra}}}\n"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p\n",
            ["bad.yaml", "document 1", "invalid YAML"],
            id="malformed-yaml",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Gadget\nmetadata: {name: g}\n",
            ["bad.yaml", "unknown kind 'Gadget'"],
            id="unknown-kind",
        ),
        pytest.param(
            BAD_POD.format(extra=", resources: {requests: {cpu: lots}}"),
            ["bad.yaml", "document 1", "Pod default/p", "spec.containers[0].resources.requests.cpu"],
            id="invalid-quantity",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {}\n",
            ["bad.yaml", "metadata.name", "Required value"],
            id="missing-name",
        ),
    ],
)
def test_bad_manifest_is_one_line_naming_file_document_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, want: list[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    assert main(["simulate", str(bad)]) == 2
    line = _error_line(capsys)
    for part in want:
        assert part in line


@pytest.mark.parametrize(
    ("percentage", "plugin", "want"),
    [
        pytest.param(50, "NoSuchPlugin", ['plugin "NoSuchPlugin" does not exist'], id="unknown-plugin"),
        pytest.param(
            50,
            "NodeResourceFit",
            [
                'profiles[0].plugins.filter.enabled[0].name: plugin "NodeResourceFit" does '
                'not exist (did you mean "NodeResourcesFit"?)'
            ],
            id="misspelt-plugin",
        ),
        pytest.param(
            50,
            "no_such_module:Plugin",
            ['plugin "no_such_module:Plugin": importing no_such_module failed'],
            id="unimportable-out-of-tree-plugin",
        ),
        pytest.param(200, "NodeName", ["percentageOfNodesToScore"], id="bad-value-names-the-field"),
        pytest.param("[1", "NodeName", ["could not parse configuration"], id="malformed-config"),
    ],
)
def test_bad_config_is_one_line(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], percentage: object, plugin: str, want: list[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG.format(percentage=percentage, plugin=plugin))
    assert main(["simulate", str(scenario), "--config", str(config)]) == 2
    line = _error_line(capsys)
    for part in want:
        assert part in line


@pytest.mark.parametrize("which", ["scenario", "config"])
def test_missing_file_is_one_line(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str
) -> None:
    missing = tmp_path / "missing.yaml"
    args = ["simulate", str(missing)] if which == "scenario" else ["simulate", str(scenario), "--config", str(missing)]
    assert main(args) == 2
    assert "missing.yaml" in _error_line(capsys)


def test_run_prints_summary_and_writes_trace_and_annotated_manifests(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "trace.jsonl"
    out_dir = tmp_path / "out"
    code = main(
        [
            "simulate",
            str(scenario),
            "--tie-break",
            "name",
            "--seed",
            "3",
            "--trace",
            str(trace),
            "--output-dir",
            str(out_dir),
        ]
    )
    assert code == 0  # a pod left pending is a result, not an error
    out = capsys.readouterr().out
    assert out.startswith("Scheduled 1/2 pending pods")
    assert "shop/huge: 0/2 nodes are available: 2 Insufficient cpu." in out

    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [(r["pod"], r["attempt"], r["result"]) for r in records] == [
        ("shop/web", 1, "Scheduled"),
        ("shop/huge", 1, "Unschedulable"),
    ]
    web_record = records[0]
    assert set(web_record["feasible"]) == {"small", "big"}

    nodes = list(yaml.safe_load_all((out_dir / "nodes.yaml").read_text()))
    assert sorted(n["metadata"]["name"] for n in nodes) == ["big", "small"]
    pods = {p["metadata"]["name"]: p for p in yaml.safe_load_all((out_dir / "pods.yaml").read_text())}
    web = pods["web"]["metadata"]["annotations"]
    assert web[SELECTED_NODE] == web_record["node"] == pods["web"]["spec"]["nodeName"]
    assert json.loads(web[FINAL_SCORE_RESULT]) == {
        node: {plugin: str(score) for plugin, score in scores.items()} for node, scores in web_record["scores"].items()
    }
    assert json.loads(web[FILTER_RESULT])["small"]["NodeResourcesFit"] == "passed"
    assert set(json.loads(web[SCORE_RESULT])) == {"small", "big"}
    huge = pods["huge"]["metadata"]["annotations"]
    assert huge[SELECTED_NODE] == ""
    assert json.loads(huge[FILTER_RESULT])["small"]["NodeResourcesFit"] == "Insufficient cpu"
    assert len(json.loads(huge[RESULT_HISTORY])) == 1


def test_gz_trace_and_summarised_annotations_on_a_big_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = [*(node_dict(f"n{i:03d}", cpu="2") for i in range(120)), pod_dict("p", cpu="1")]
    scenario = tmp_path / "big.yaml"
    scenario.write_text(yaml.safe_dump_all(docs))
    trace, out_dir = tmp_path / "t.jsonl.gz", tmp_path / "out"
    assert main(["simulate", str(scenario), "--trace", str(trace), "--output-dir", str(out_dir)]) == 0
    assert "Trace: 1 attempts written to" in capsys.readouterr().out
    with gzip.open(trace, "rt") as f:
        (record,) = [json.loads(line) for line in f]
    # The adaptive percentage stops the search at 100 feasible nodes out of 120.
    assert len(record["feasible"]) == len(record["total"]) == record["evaluatedNodes"] == 100
    (pod,) = yaml.safe_load_all((out_dir / "pods.yaml").read_text())
    notes = pod["metadata"]["annotations"]
    assert json.loads(notes[FILTER_RESULT])["NodeResourcesFit"] == {"passed": 100}
    assert len(json.loads(notes[FINAL_SCORE_RESULT])) == 10
    assert "120 nodes" in notes["kubesched.io/result-detail"]


def test_progress_bar_only_when_asked_or_on_a_terminal(scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(scenario)]) == 0
    assert capsys.readouterr().err == ""  # captured stderr is no TTY
    assert main(["simulate", str(scenario), "--progress"]) == 0
    assert "scheduling" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"kubesched {__version__}",
        "emulates kube-scheduler v1.30, v1.34 (--emulated-version; default v1.34)",
    ]


@pytest.mark.parametrize(
    ("flags", "want"),
    [
        (
            ["--emulated-version", "1.29"],
            'invalid argument "1.29" for "--emulated-version" flag: emulated version 1.29 '
            "is not supported: kubesched emulates 1.30 and 1.34",
        ),
        (
            ["--feature-gates", "Nope=true"],
            'invalid argument "Nope=true" for "--feature-gates" flag: unrecognized feature gate: Nope',
        ),
        (
            ["--feature-gates", "SchedulerQueueingHints=false"],
            'invalid argument "SchedulerQueueingHints=false" for "--feature-gates" flag: cannot set feature gate '
            "SchedulerQueueingHints to false, feature is locked to true",
        ),
        (
            ["--emulated-version", "1.30", "--feature-gates", "SchedulerAsyncPreemption=true"],
            'invalid argument "SchedulerAsyncPreemption=true" for "--feature-gates" flag: cannot set feature gate '
            "SchedulerAsyncPreemption to true, feature is PreAlpha at emulated version 1.30",
        ),
    ],
)
@pytest.mark.parametrize("command", ["simulate", "capacity", "plan", "run"])
def test_a_bad_version_or_gate_is_one_line_before_anything_runs(
    capsys: pytest.CaptureFixture[str], flags: list[str], want: str, command: str
) -> None:
    extra = {
        "capacity": ["--pod", str(REPO / "examples" / "capacity" / "web-replica.yaml")],
        "plan": ["--node-template", str(REPO / "examples" / "capacity" / "gpu-node.yaml")],
    }.get(command, [])
    scenario = [] if command == "run" else [EXAMPLE]
    assert main([command, *scenario, *extra, *flags]) == 2
    assert _error_line(capsys) == f"kubesched: error: {want}"


@pytest.mark.parametrize(
    ("flags", "version"),
    [([], "v1.34"), (["--emulated-version", "1.30"], "v1.30"), (["--emulated-version", "v1.34.4"], "v1.34")],
)
def test_the_summary_names_the_emulated_version(
    capsys: pytest.CaptureFixture[str], flags: list[str], version: str
) -> None:
    assert main(["simulate", EXAMPLE, *flags]) == 0
    assert f"; kube-scheduler {version})" in capsys.readouterr().out.splitlines()[0]


def _modules_loaded_by(*argv: str) -> list[str]:
    """The modules a fresh interpreter holds after ``kubesched ARGV`` (which may exit, as --help does)."""
    driver = (
        "import json, sys\nfrom kubesched.app.cli import main\ntry:\n    main(sys.argv[1:])\n"
        "except SystemExit:\n    pass\nprint(json.dumps(sorted(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", driver, *argv], capture_output=True, text=True, cwd=REPO, check=True)
    return list(json.loads(proc.stdout.splitlines()[-1]))


def _under(modules: list[str], *packages: str) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)]


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["run", "--help"], id="help"),
        # Up to the connection: every module the run needs is imported by then (the kubeconfig is missing).
        pytest.param(["run", "--kubeconfig", "/nonexistent/kubeconfig", "--secure-port", "0"], id="start-up"),
    ],
)
def test_run_loads_no_simulator(argv: list[str]) -> None:
    loaded = _modules_loaded_by(*argv)
    assert "kubesched.app.run" in loaded
    assert _under(loaded, "kubesched.sim", "kubesched.embedded", "kubesched.scenario", "plotly") == []


@pytest.mark.parametrize("argv", [["--help"], ["version"]])
def test_help_and_version_load_no_command(argv: list[str]) -> None:
    loaded = _modules_loaded_by(*argv)
    others = [
        m
        for m in _under(loaded, "kubesched.app")
        if m not in ("kubesched.app", "kubesched.app.cli", "kubesched.app.version")
    ]
    assert others == []
    assert _under(loaded, "kubesched.sim", "kubesched.scheduler", "kubesched.live", "kubernetes", "plotly") == []


def test_every_command_builds_its_flags() -> None:
    parser = build_parser()
    for command in COMMANDS:
        args = {
            "simulate": ["s"],
            "capacity": ["s", "--pod", "p"],
            "plan": ["s", "--node-template", "n"],
            "explain": ["t", "p"],
            "snapshot": ["-o", "d"],
            "sweep": ["s"],
            "generate": ["perf", "-o", "d"],
        }.get(command.name, [])
        assert parser.parse_args([command.name, *args]).command == command.name


def test_every_input_error_named_exists() -> None:
    for module, name in INPUT_ERRORS:
        cls = getattr(importlib.import_module(module), name)
        assert isinstance(cls, type) and issubclass(cls, Exception), (module, name)


def test_an_error_that_is_no_input_error_is_not_hidden(monkeypatch: pytest.MonkeyPatch, scenario: Path) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr("kubesched.app.simulate.simulate", broken)
    with pytest.raises(KeyError, match="a bug"):
        main(["simulate", str(scenario)])


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "simulate" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (["--tie-break", "coin"], "argument --tie-break: invalid choice: 'coin'"),
        (["--seed", "abc"], "argument --seed: invalid int value: 'abc'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        (
            ["--validate", "lenient"],
            "argument --validate: expected strict, warn or ignore (or true, false), got 'lenient'",
        ),
    ],
)
def test_bad_option_value_is_a_one_line_usage_error(
    scenario: Path, capsys: pytest.CaptureFixture[str], args: list[str], want: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["simulate", str(scenario), *args])
    assert exc.value.code == 2
    line = _error_line(capsys)
    assert want in line and line.endswith(" --help')")


def test_python_dash_m_runs_the_cli(scenario: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", str(scenario)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Scheduled 1/2 pending pods")
    bad = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", str(scenario / "nope.yaml")],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("kubesched: error: ") and "Traceback" not in bad.stderr


def test_example_cluster_tells_the_story_its_comments_tell(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's first command, with the two-profile config: what 30-pending-pods.yaml promises."""
    code = main(
        [
            "simulate",
            str(REPO / "examples" / "cluster"),
            "--config",
            str(REPO / "examples" / "config.yaml"),
            "--tie-break",
            "name",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("Scheduled 53/57 pending pods")
    assert "batch/etl-5: preempted by payments/payments-api-0 on general-c1" in out
    pending = out.split("Pending ", 1)[1].split("\n\n", 1)[0]
    assert sorted(line.split(":")[0].strip() for line in pending.splitlines()[1:]) == [
        "batch/warehouse-load",
        "ml/llm-train",
        "ml/notebook",
    ]
    assert "3 node(s) had untolerated taint(s)" in pending


def test_example_checkout_pods_spread_and_the_cache_follows_them() -> None:
    """40-checkout.yaml: one checkout pod per zone and node; the cache in a checkout zone, on another node."""
    result = simulate([REPO / "examples" / "cluster"], tie_break="name")
    checkout = [result.final[f"web/checkout-{i}"] for i in range(3)]
    cache = result.final["web/cart-cache"]
    assert None not in checkout and cache is not None and result.cluster is not None
    zone_of = {
        n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/zone"]
        for n in result.cluster.list("Node")[0]
    }
    assert len({zone_of[n] for n in checkout if n}) == 3
    assert zone_of[cache] in {zone_of[n] for n in checkout if n} and cache not in checkout


def test_out_of_tree_example_plugin_filters_and_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/plugins (the README's plugin example) loads by import path and takes its args."""
    monkeypatch.syspath_prepend(str(REPO / "examples" / "plugins"))
    scenario = tmp_path / "spot.yaml"
    scenario.write_text("""\
apiVersion: v1
kind: Node
metadata: {name: spot-a, labels: {capacity-type: spot, topology.kubernetes.io/zone: eu-west-1a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: od-a, labels: {capacity-type: on-demand, topology.kubernetes.io/zone: eu-west-1a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: od-b, labels: {capacity-type: on-demand, topology.kubernetes.io/zone: eu-west-1b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: critical, labels: {tier: critical}}
spec: {containers: [{name: c, image: nginx}]}
""")
    trace = tmp_path / "trace.jsonl"
    code = main(
        [
            "simulate",
            str(scenario),
            "--config",
            str(REPO / "examples" / "plugins" / "config.yaml"),
            "--trace",
            str(trace),
        ]
    )
    assert code == 0, capsys.readouterr().err
    (record,) = [json.loads(line) for line in trace.read_text().splitlines()]
    assert record["filter"]["spot-a"]["plugin"] == "AvoidSpot"
    assert record["filter"]["spot-a"]["reasons"] == ["node(s) are spot capacity"]
    assert {n: s["AvoidSpot"] for n, s in record["scores"].items()} == {"od-a": 0, "od-b": 100}


# ---------------------------------------------------------------------------------------------------------
# Output paths are checked before the run, and the summary survives a late error


@pytest.mark.parametrize(
    ("flag", "make", "want"),
    [
        pytest.param(
            "--trace",
            "folder",
            "--trace: {path} is a folder; give a file name such as {path}/trace.jsonl",
            id="trace-is-a-folder",
        ),
        pytest.param("--trace", "no-parent", "--trace: folder {parent} does not exist", id="trace-folder-missing"),
        pytest.param("--output-dir", "file", "--output-dir: {path} is a file, not a folder", id="output-dir-is-a-file"),
        pytest.param(
            "--output-dir", "under-file", "--output-dir: {parent} is a file, not a folder", id="output-dir-under-a-file"
        ),
        pytest.param("--trace", "empty", "--trace: an empty path names no file", id="trace-empty"),
    ],
)
def test_bad_output_paths_fail_before_the_run(
    scenario: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flag: str,
    make: str,
    want: str,
) -> None:
    path = tmp_path / "out"
    if make == "folder":
        path.mkdir()
    elif make == "no-parent":
        path = tmp_path / "nowhere" / "t.jsonl"
    elif make == "file":
        path.write_text("")
    elif make == "under-file":
        path.write_text("")
        path = path / "sub"
    given = "" if make == "empty" else str(path)
    ran: list[bool] = []
    monkeypatch.setattr("kubesched.app.simulate.simulate", lambda *a, **k: ran.append(True))
    assert main(["simulate", str(scenario), flag, given]) == 2
    assert _error_line(capsys) == "kubesched: error: " + want.format(path=path, parent=path.parent)
    assert not ran


def test_the_summary_comes_before_a_late_output_error(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(result: object, out_dir: object, *rest: object) -> None:
        raise OSError(28, "No space left on device", str(out_dir))

    monkeypatch.setattr("kubesched.app.simulate.write_manifests", disk_full)
    out_dir = tmp_path / "out"
    assert main(["simulate", str(scenario), "--output-dir", str(out_dir)]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("Scheduled 1/2 pending pods")
    assert captured.err == f"kubesched: error: --output-dir: {out_dir}: No space left on device\n"


# ---------------------------------------------------------------------------------------------------------
# Every malformed input is one error line


def _laughs() -> str:
    return "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [" + ", ".join([f"*{p}"] * 10) + "]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param(_laughs(), "too many aliases", id="billion-laughs"),
        pytest.param("a: " + "[" * 100_000 + "]" * 100_000, "too deeply nested", id="deep-nesting"),
        pytest.param("", "no Kubernetes objects in this file", id="empty-file"),
        pytest.param(
            NODES + "---\napiVersion: v1\nkind: Node\nmetadata: {name: x}\nspec: {unschedulable: 'false'}\n",
            'document 3 (Node x): spec.unschedulable: expected a boolean (true or false), got string "false"',
            id="quoted-boolean",
        ),
        pytest.param(
            NODES + "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: [1]\n",
            "document 3 (PodDisruptionBudget default/b): spec: expected a mapping, got a list",
            id="pdb-spec",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: 1E}}\n",
            'status.allocatable.cpu: Invalid value: "1E": must be less than or equal to',
            id="overflow",
        ),
        pytest.param(
            BAD_POD.format(extra=", resources: {requests: {memroy: 1Gi}}"),
            'spec.containers[0].resources.requests.memroy: Invalid value: "memroy": must be a standard resource',
            id="misspelt-resource",
        ),
        pytest.param(
            BAD_POD.format(extra=", resources: {limits: {example.com/gpu: '0.5'}}"),
            'limits.example.com/gpu: Invalid value: "0.5": must be an integer',
            id="fractional-device",
        ),
    ],
)
def test_malformed_input_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, want: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    assert main(["simulate", str(bad)]) == 2
    line = _error_line(capsys)
    assert line.startswith(f"kubesched: error: {bad}")
    assert want in line


@pytest.mark.parametrize("args", [[""], ["{scenario}", "--config", ""]], ids=["empty-scenario", "empty-config"])
def test_empty_paths_are_errors(scenario: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    assert main(["simulate", *(a.format(scenario=scenario) for a in args)]) == 2
    assert "empty path" in _error_line(capsys)


# -- capacity, plan, explain, --report, --annotation-prefix on the example cluster ---------------------------

EXAMPLE = str(REPO / "examples" / "cluster")


def test_example_workloads_are_grouped_in_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", EXAMPLE, "--tie-break", "name"]) == 0
    out = capsys.readouterr().out
    workloads = out.split("Workloads:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert sorted(line.strip() for line in workloads) == [
        "DaemonSet monitoring/log-agent: 12/12 scheduled",
        "Deployment web/storefront: 4/4 scheduled",
        "Job batch/nightly-report: 4/4 scheduled",
        "StatefulSet payments/ledger: 3/3 scheduled",
    ]


def test_capacity_json(capsys: pytest.CaptureFixture[str]) -> None:
    template = REPO / "examples" / "capacity" / "web-replica.yaml"
    assert main(["capacity", EXAMPLE, "--pod", str(template), "-o", "json", "--tie-break", "name"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert set(got) == {"replicas", "placements", "stopReason"}
    assert got["replicas"] == sum(got["placements"].values()) > 0
    assert got["stopReason"].startswith("0/12 nodes are available: ")


def test_plan_json(capsys: pytest.CaptureFixture[str]) -> None:
    template = REPO / "examples" / "capacity" / "gpu-node.yaml"
    assert main(["plan", EXAMPLE, "--node-template", str(template), "-o", "json", "--max-nodes", "8"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert set(got) == {"nodesToAdd", "scheduled", "pending"}
    # One GPU node takes llm-train (a whole GPU node); the notebook does not tolerate the GPU taint,
    # warehouse-load fits no node and report-builder's scheduler is not configured: no node helps them.
    assert got["nodesToAdd"] == 1
    assert sorted(got["pending"]) == ["batch/report-builder", "batch/warehouse-load", "ml/notebook"]


def test_explain_a_pod_from_the_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace.jsonl"
    assert main(["simulate", EXAMPLE, "--trace", str(trace), "--tie-break", "name"]) == 0
    capsys.readouterr()
    assert main(["explain", str(trace), "payments/payments-api-0", "--attempt", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Pod payments/payments-api-0, attempt 1 of 2")
    assert "Victims: batch/etl-5" in out
    assert main(["explain", str(trace), "payments/nope"]) == 2
    assert capsys.readouterr().err == f"kubesched: error: no attempt for pod payments/nope in {trace}\n"


def test_report_and_simulator_annotations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, out_dir = tmp_path / "report.html", tmp_path / "out"
    assert (
        main(
            [
                "simulate",
                EXAMPLE,
                "--report",
                str(report),
                "--output-dir",
                str(out_dir),
                "--annotation-prefix",
                "kube-scheduler-simulator.sigs.k8s.io/",
            ]
        )
        == 0
    )
    assert f"Report written to {report}" in capsys.readouterr().out
    assert report.stat().st_size > 1_000_000 and 'data-resource="nvidia.com/gpu"' in report.read_text()
    pods = list(yaml.safe_load_all((out_dir / "pods.yaml").read_text()))
    annotated = [
        p
        for p in pods
        if "kube-scheduler-simulator.sigs.k8s.io/result-history" in (p["metadata"].get("annotations") or {})
    ]
    assert annotated and not any(FILTER_RESULT in (p["metadata"].get("annotations") or {}) for p in pods)
    assert main(["simulate", EXAMPLE, "--annotation-prefix", "no-slash"]) == 2


def test_a_bad_report_path_fails_before_the_run(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere" / "report.html"
    assert main(["simulate", str(scenario), "--report", str(missing)]) == 2
    assert _error_line(capsys) == f"kubesched: error: --report: folder {missing.parent} does not exist"
    assert main(["simulate", str(scenario), "--report", str(tmp_path)]) == 2
    assert _error_line(capsys).startswith(f"kubesched: error: --report: {tmp_path} is a folder")
    assert main(["simulate", str(scenario), "--report", str(tmp_path / "r.html"), "--group-by", "a/b/c"]) == 2
    assert _error_line(capsys).startswith("kubesched: error: --group-by: invalid label key 'a/b/c'")


def test_report_pools_follow_the_label_asked_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.html"
    assert main(["simulate", EXAMPLE, "--report", str(report), "--group-by", "topology.kubernetes.io/zone"]) == 0
    capsys.readouterr()
    assert "Nodes grouped by label <code>topology.kubernetes.io/zone</code> into 3 pools" in report.read_text()


# -- what simulate prints: -o json, -q, --nodes, --group-by, a reader that stops early ------------------------


def test_simulate_json_is_one_document_and_the_files_are_named_on_stderr(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "t.jsonl"
    assert main(["simulate", str(scenario), "-o", "json", "--trace", str(trace)]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert (doc["schemaVersion"], doc["total"], doc["scheduled"], doc["pending"]) == (1, 2, 1, 1)
    assert {p["pod"]: p["outcome"] for p in doc["pods"]} == {"shop/web": "Scheduled", "shop/huge": "Pending"}
    assert [n["name"] for n in doc["nodes"]] == ["big", "small"]
    assert f"attempts written to {trace}" in captured.err


def test_quiet_prints_nothing_but_errors(scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "out"
    assert main(["simulate", str(scenario), "-q", "--output-dir", str(out_dir)]) == 0
    assert capsys.readouterr() == ("", "")
    assert (out_dir / "pods.yaml").exists()
    assert main(["simulate", str(scenario / "nope.yaml"), "-q"]) == 2
    assert _error_line(capsys).startswith("kubesched: error: ")


def test_nodes_and_group_by_shape_the_node_section(scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(scenario), "--nodes", "0", "--group-by", "kubernetes.io/hostname"]) == 0
    out = capsys.readouterr().out
    assert "2 nodes in 2 pools by kubernetes.io/hostname:" in out
    assert "2 nodes not shown: --nodes all lists every node" in out
    assert main(["simulate", str(scenario), "--nodes", "all"]) == 0
    assert "pools" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (["--nodes", "some"], "argument --nodes: expected all or a number of nodes, got 'some'"),
        (["--nodes", "-1"], "argument --nodes: must be 0 or more, got -1"),
        (["-o", "yaml"], "argument -o/--output: invalid choice: 'yaml'"),
        (["-q", "-v"], "argument -v/--verbose: not allowed with argument -q/--quiet"),
    ],
)
def test_bad_output_flags_are_usage_errors(
    scenario: Path, capsys: pytest.CaptureFixture[str], args: list[str], want: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["simulate", str(scenario), *args])
    assert exc.value.code == 2
    assert want in _error_line(capsys)


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_reader_that_stops_early_ends_the_command_quietly(scenario: Path, tmp_path: Path, output: str) -> None:
    """``kubesched simulate … | head``, made certain: the read end closes before the summary is written."""
    report_dir = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched", "simulate", str(scenario), "-o", output, "--output-dir", str(report_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader has gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait() == 0, err
    assert err == ""  # no "Broken pipe" error, no "Exception ignored" note
    assert (report_dir / "pods.yaml").exists()  # the files are written all the same


def test_a_broken_pipe_that_is_not_standard_outputs_is_still_an_error(
    monkeypatch: pytest.MonkeyPatch, scenario: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("kubesched.app.simulate.simulate", broken)
    assert main(["simulate", str(scenario)]) == 2
    assert _error_line(capsys) == "kubesched: error: Broken pipe"


# ---------------------------------------------------------------------------------------------------------
# --validate: unknown and duplicate fields, as kubectl's --validate treats them

MISSPELT = """\
apiVersion: v1
kind: Node
metadata: {name: n}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  containers: [{name: c, image: x, resources: {request: {cpu: "64"}}}]
  nodeSelector: {disk: ssd}
  nodeSelector: {}
"""
REQUEST = (
    'document 2 (Pod default/big): spec.containers[0].resources.request: unknown field "request" '
    '(did you mean "requests"?)'
)
REPEAT = 'document 2 (Pod default/big): spec.nodeSelector: duplicate field "nodeSelector" (lines 11 and 12)'


@pytest.mark.parametrize("flag", [[], ["--validate", "strict"], ["--validate=true"], ["--validate", "Strict"]])
def test_unknown_and_duplicate_fields_are_refused_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: list[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(MISSPELT)
    assert main(["simulate", str(path), *flag]) == 2
    assert _error_line(capsys) == f"kubesched: error: {path}: {REPEAT}"


def test_warn_prints_each_field_once_and_lists_it_in_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(MISSPELT)
    assert main(["simulate", str(path), "--validate", "warn"]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"kubesched: WARNING: {path}: {REPEAT}",
        f"kubesched: WARNING: {path}: {REQUEST}",
    ]
    assert f"  {path}: {REQUEST}" in captured.out.splitlines()
    assert "Scheduled 1/1 pending pods" in captured.out  # the request was dropped: the pod asks for nothing


@pytest.mark.parametrize("flag", ["--validate=ignore", "--validate=false"])
def test_ignore_drops_silently(tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(MISSPELT)
    assert main(["simulate", str(path), flag]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "unknown field" not in captured.out


@pytest.mark.parametrize("command", ["capacity", "plan"])
def test_capacity_and_plan_take_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(MISSPELT)
    template = REPO / "examples" / "capacity" / ("web-replica.yaml" if command == "capacity" else "gpu-node.yaml")
    flag = "--pod" if command == "capacity" else "--node-template"
    assert main([command, str(path), flag, str(template), "-o", "json"]) == 2
    assert _error_line(capsys) == f"kubesched: error: {path}: {REPEAT}"
    assert main([command, str(path), flag, str(template), "-o", "json", "--validate", "warn"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)
    assert f"kubesched: WARNING: {path}: {REQUEST}" in captured.err.splitlines()
