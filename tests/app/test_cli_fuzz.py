"""Fuzzing the command line with mutated manifests: bad input ends in a result or one error line.

Valid scenarios (the example cluster, cut down so that a run takes milliseconds, and a few
conformance scenarios) are mutated field by field: a value replaced by one of the wrong type, a
negative or huge number or an odd string; a field deleted; a key renamed (a resource name
misspelt). Each mutated scenario goes through ``kubesched.app.cli.main`` in-process. Whatever the
mutation, the run must finish with exit 0 (a simulation ran) or 2 (bad input, said in one line), and
nothing may reach stderr or the log as a traceback.
"""

from __future__ import annotations

import contextlib
import copy
import io
import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched import ConfigError, ManifestError, SimulationError, simulate
from kubesched.app.cli import main
from tests.corpus import CORPUS
from tests.dra import (
    DRIVER,
    allocated,
    claim_dict,
    device_class_dict,
    device_dict,
    first_available_dict,
    request_dict,
    slice_dict,
    template_dict,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "cluster"
CONFORMANCE_SCENARIOS = (
    "preempt-basic",
    "pts-zone-maxskew1",
    "vol-wffc-binding",
    "fit-extended-gpu",
    "scheduling-gates",
    "ipa-zone-affinity-anti-affinity",
    "ports-hostport-conflicts",
    "fit-pod-overhead",
    "na-required-operators",
    "taint-noschedule-operators",
)
#: Runs per test session; ``KUBESCHED_FUZZ_EXAMPLES=5000`` searches longer.
EXAMPLES = int(os.environ.get("KUBESCHED_FUZZ_EXAMPLES", "100"))
#: Wall-clock limit for one run: a mutated scenario must never make a simulation hang.
RUN_SECONDS = 60

EXTRA_KINDS: list[dict[str, Any]] = [
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "web"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "frontend"}}},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "frontend"}},
            "template": {
                "metadata": {"labels": {"app": "frontend"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    },
    {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "web"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    },
]


def _dra_pod(name: str, claims: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "resourceClaims": claims,
            "containers": [{"name": "c", "image": "cuda", "resources": {"claims": [{"name": claims[0]["name"]}]}}],
        },
    }


#: Devices: a class, slices on two nodes and a network-attached one, claims (shared, prioritized, constrained,
#: allocated) and the pods that use them.
DRA_SCENARIO: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"gpu-{i}", "labels": {"zone": "a"}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }
    for i in range(2)
] + [
    device_class_dict("gpu", f'device.driver == "{DRIVER}"'),
    device_class_dict("big-gpu", 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'),
    *(
        slice_dict(
            f"gpu-{i}",
            [
                device_dict(f"g{j}", {"model": "a100" if j else "h100", "cuda": "v12.1.0"}, {"memory": "80Gi"})
                for j in range(2)
            ],
            node=f"gpu-{i}",
        )
        for i in range(2)
    ),
    slice_dict("net", ["n0"], all_nodes=True, pool="net"),
    claim_dict("shared", request_dict("r")),
    claim_dict("pair", request_dict("a"), request_dict("b"), constraints=[{"matchAttribute": f"{DRIVER}/model"}]),
    claim_dict("either", first_available_dict("r", request_dict("big", "big-gpu", count=3), request_dict("one"))),
    claim_dict("held", request_dict("r"), status=allocated(("r", DRIVER, "gpu-1", "g1"))),
    template_dict("per-pod", request_dict("r", selectors=[f'device.attributes["{DRIVER}"].model == "a100"'])),
    _dra_pod("uses-shared", [{"name": "gpu", "resourceClaimName": "shared"}]),
    _dra_pod("also-shared", [{"name": "gpu", "resourceClaimName": "shared"}]),
    _dra_pod("pair", [{"name": "gpu", "resourceClaimName": "pair"}, {"name": "extra", "resourceClaimName": "either"}]),
    _dra_pod("from-template", [{"name": "gpu", "resourceClaimTemplateName": "per-pod"}]),
]


#: The same devices with bad requests (a class that does not exist, more devices than exist, a selector failing
#: on the devices, a template that does not exist, two slices of one pool naming a device twice): a seed whose
#: mutations go through the plugin's error paths.
DRA_BAD_SCENARIO: list[dict[str, Any]] = [
    *DRA_SCENARIO,
    slice_dict("gpu-0-again", ["g1"], node="gpu-0", pool="twice", count=2),
    slice_dict("gpu-0-twice", ["g1"], node="gpu-0", pool="twice", count=2),
    claim_dict("no-class", request_dict("r", "tpu")),
    claim_dict("greedy", request_dict("r", count=9)),
    claim_dict("odd", request_dict("r", selectors=[f'device.attributes["{DRIVER}"].cores > 2'])),
    _dra_pod("no-class", [{"name": "gpu", "resourceClaimName": "no-class"}]),
    _dra_pod("greedy", [{"name": "gpu", "resourceClaimName": "greedy"}]),
    _dra_pod("odd", [{"name": "gpu", "resourceClaimName": "odd"}]),
    _dra_pod("no-template", [{"name": "gpu", "resourceClaimTemplateName": "nowhere"}]),
]


def _docs(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _example_scenario() -> list[Any]:
    """The example cluster cut down: every namespace, class and service, 4 nodes, a few pods each."""
    docs: list[Any] = []
    for file in sorted(EXAMPLE.glob("*.yaml")):
        found = _docs(file)
        nodes = [d for d in found if d.get("kind") == "Node"][:4]
        pods = [d for d in found if d.get("kind") == "Pod"][:4]
        docs += [d for d in found if d.get("kind") not in ("Node", "Pod")] + nodes + pods
    return docs + EXTRA_KINDS


def _seed_scenarios() -> list[list[Any]]:
    scenarios = [_example_scenario(), DRA_SCENARIO, DRA_BAD_SCENARIO]
    for name in CONFORMANCE_SCENARIOS:
        path = CORPUS / name / "scenario.yaml"
        if path.is_file():
            scenarios.append(_docs(path))
    return scenarios


SCENARIOS = _seed_scenarios()

ODD_VALUES: list[Any] = [
    None,
    "",
    " ",
    "abc",
    "false",
    "true",
    "1",
    "-1",
    "0.5",
    "1e400",
    "-5",
    "9999999Ei",
    "1E",
    "100E",
    "0x10",
    "1/2",
    "\u0000",
    "é",
    "x" * 300,
    "a/b/c",
    "-",
    True,
    False,
    0,
    1,
    -1,
    7,
    65536,
    70000,
    2**31,
    -(2**31) - 1,
    2**63,
    10**30,
    -(10**30),
    0.5,
    -0.5,
    1e300,
    float("inf"),
    float("nan"),
    [],
    {},
    [1],
    {"a": 1},
    [[[]]],
    {"": ""},
    [{"a": None}],
]
ODD_KEYS = [
    "CPU",
    "memroy",
    "gpu",
    "example.com/",
    "a/b/c",
    "",
    " ",
    "1",
    "hugepages-3Mi",
    "requests.cpu",
    "kubernetes.io/x",
    "nvidia.com/gpu",
]
OPERATIONS = ("replace", "replace", "replace", "delete", "rename", "negate", "scale", "wrap")


def _children(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return list(node)
    if isinstance(node, list):
        return list(range(len(node)))
    return []


def _mutate(docs: list[Any], data: st.DataObject) -> None:
    """Walk from the top to a random field and apply one mutation there."""
    parent: Any = docs
    key: Any = data.draw(st.integers(0, len(docs) - 1), label="document")
    # Mostly deep: the top-level fields (kind, apiVersion) are the least interesting ones.
    while _children(parent[key]) and data.draw(st.integers(0, 6), label="deeper") > 0:
        parent = parent[key]
        options = _children(parent)
        key = options[data.draw(st.integers(0, len(options) - 1), label="child")]
    operation = data.draw(st.sampled_from(OPERATIONS), label="operation")
    value = parent[key]
    if operation == "delete" and isinstance(parent, dict):
        del parent[key]
    elif operation == "rename" and isinstance(parent, dict):
        parent[data.draw(st.sampled_from(ODD_KEYS), label="new key")] = parent.pop(key)
    elif operation == "negate" and isinstance(value, int | float) and not isinstance(value, bool):
        parent[key] = -value
    elif operation == "negate" and isinstance(value, str):
        parent[key] = "-" + value
    elif operation == "scale" and isinstance(value, str) and value[:1].isdigit():
        parent[key] = value + "00000000000000000000"
    elif operation == "wrap":
        parent[key] = data.draw(st.sampled_from([[value], {"value": value}]), label="wrapped")
    else:
        parent[key] = copy.deepcopy(data.draw(st.sampled_from(ODD_VALUES), label="value"))


@contextlib.contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the simulation did not finish within {seconds}s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


class _Tracebacks(logging.Handler):
    """Log records that carry an exception (a handler that caught a bug and logged it)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(record)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def test_fuzzed_scenario_corpus_is_valid(workdir: Path) -> None:
    """Unmutated, every seed scenario runs (exit 0): the mutations are what the fuzz test varies."""
    assert len(SCENARIOS) > 1 or not CORPUS.is_dir()
    for i, docs in enumerate(SCENARIOS):
        path = workdir / f"seed-{i}.yaml"
        path.write_text(yaml.safe_dump_all(docs))
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["simulate", str(path), "--seed", "1"]) == 0, path


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(scenario=st.integers(0, len(SCENARIOS) - 1), mutations=st.integers(1, 3), burst=st.booleans(), data=st.data())
def test_mutated_manifests_end_in_exit_0_or_2_without_a_traceback(
    workdir: Path, scenario: int, mutations: int, burst: bool, data: st.DataObject
) -> None:
    docs = yaml.safe_load(yaml.safe_dump(SCENARIOS[scenario]))  # a private deep copy
    for _ in range(mutations):
        _mutate(docs, data)
    path = workdir / "mutated.yaml"
    path.write_text(yaml.safe_dump_all(docs, allow_unicode=True))
    out, err = io.StringIO(), io.StringIO()
    tracebacks = _Tracebacks()
    logging.getLogger().addHandler(tracebacks)
    try:
        with _time_limit(RUN_SECONDS), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["simulate", str(path), "--seed", "1", *(["--burst"] if burst else [])])
    finally:
        logging.getLogger().removeHandler(tracebacks)
    stderr = err.getvalue()
    assert code in (0, 2), stderr
    assert "Traceback" not in stderr, stderr
    assert not tracebacks.records, [r.getMessage() for r in tracebacks.records]
    if code == 2:
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("kubesched: error: "), stderr
    else:
        assert out.getvalue().startswith("Scheduled ")


@settings(max_examples=max(EXAMPLES // 2, 1), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=st.integers(0, len(SCENARIOS) - 1), data=st.data())
def test_mutated_objects_through_the_python_api_end_in_a_result_or_a_value_error(
    scenario: int, data: st.DataObject
) -> None:
    """``simulate()`` with object dicts: the same mutations give a result or a ValueError, never anything else."""
    docs = yaml.safe_load(yaml.safe_dump(SCENARIOS[scenario]))
    _mutate(docs, data)
    try:
        with _time_limit(RUN_SECONDS):
            result = simulate(docs, seed=1)
    except (ManifestError, SimulationError, ConfigError) as err:
        assert "\n" not in str(err)
    else:
        given = {
            f"{(d.get('metadata') or {}).get('namespace') or 'default'}/{(d.get('metadata') or {}).get('name')}"
            for d in docs
            if isinstance(d, dict)
        }
        # Pods beyond the given ones can only be those a workload controller created.
        assert set(result.final) - given <= set(result.workloads)


def _without(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d.get("kind") != kind]


def _bad_pod(claim: str) -> dict[str, Any]:
    """The pod ``bad``, using the claim a row of bad input is about."""
    return {
        **_dra_pod("bad", [{"name": "gpu", "resourceClaimName": claim}]),
        "metadata": {"name": "bad", "namespace": "default", "creationTimestamp": "2000-01-01T00:00:00Z"},
    }


_PREEMPTION_NOT_HELPFUL = "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
#: What the pod ``bad`` of a row is told (the plugin's status, as kube-scheduler words it).
DRA_BAD_STATUS: dict[str, str] = {
    "a claim naming a class that does not exist": (
        "0/2 nodes are available: request r: device class tpu does not exist. no new claims to deallocate, "
        f"{_PREEMPTION_NOT_HELPFUL}"
    ),
    "two slices of one pool naming the same device": (
        'running "DynamicResources" filter plugin: pool p is invalid: duplicate device name g0'
    ),
    "more devices requested than exist": (
        f"0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, {_PREEMPTION_NOT_HELPFUL}"
    ),
    "more devices than a claim may hold": (
        'running "DynamicResources" filter plugin: claim default/greedier: number of requested devices 33 exceeds '
        "the claim limit of 32"
    ),
    "a selector failing on every device": (
        'running "DynamicResources" filter plugin: claim default/odd: selector #0: CEL runtime error: no such key: '
        "cores"
    ),
}


#: Bad DRA input: each ends in a simulation (exit 0) or one error line naming the object and field (exit 2).
DRA_BAD_INPUT: list[tuple[str, list[dict[str, Any]], int, str]] = [
    (
        "a claim naming a class that does not exist",
        [*DRA_SCENARIO, claim_dict("nowhere", request_dict("r", "tpu")), _bad_pod("nowhere")],
        0,
        "",
    ),
    (
        "a selector that is not a boolean",
        [*DRA_SCENARIO, device_class_dict("wrong", "device.driver")],
        2,
        'spec.selectors[0].cel.expression: Invalid value: "device.driver": must evaluate to bool or the unknown type, '
        "not string",
    ),
    (
        "a selector that does not compile",
        [*DRA_SCENARIO, device_class_dict("broken", 'device.attributes["x"')],
        2,
        "spec.selectors[0].cel.expression: Invalid value",
    ),
    (
        "a slice naming a device twice",
        [*DRA_SCENARIO, slice_dict("dup", ["g0", "g0"], node="gpu-0", pool="dup")],
        2,
        'spec.devices[1].name: Duplicate value: "g0"',
    ),
    (
        "two slices of one pool at different generations",
        [*DRA_SCENARIO, slice_dict("gpu-0-old", ["g7"], node="gpu-0", pool="gpu-0", generation=1)],
        0,
        "",
    ),
    (
        "two slices of one pool naming the same device",
        [
            *_without(DRA_SCENARIO, "ResourceSlice"),
            slice_dict("a", ["g0"], node="gpu-0", pool="p", count=2),
            slice_dict("b", ["g0"], node="gpu-0", pool="p", count=2),
            claim_dict("any", request_dict("r")),
            _bad_pod("any"),
        ],
        0,
        "",
    ),
    (
        "more devices requested than exist",
        [*DRA_SCENARIO, claim_dict("greedy", request_dict("r", count=30)), _bad_pod("greedy")],
        0,
        "",
    ),
    (
        "more devices than a claim may hold",
        [*DRA_SCENARIO, claim_dict("greedier", request_dict("r", count=33)), _bad_pod("greedier")],
        0,
        "",
    ),
    (
        "a selector failing on every device",
        [
            *DRA_SCENARIO,
            claim_dict("odd", request_dict("r", selectors=[f'device.attributes["{DRIVER}"].cores > 2'])),
            _bad_pod("odd"),
        ],
        0,
        "",
    ),
    (
        "a claim reserved by too many pods",
        [
            *DRA_SCENARIO,
            claim_dict(
                "popular",
                request_dict("r"),
                status={
                    **allocated(("r", DRIVER, "gpu-0", "g0")),
                    "reservedFor": [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(257)],
                },
            ),
        ],
        2,
        "status.reservedFor: Too many: 257: must have at most 256 items",
    ),
    (
        "a container using a claim its pod does not name",
        [
            *DRA_SCENARIO,
            {
                **_dra_pod("stray", [{"name": "gpu", "resourceClaimName": "shared"}]),
                "spec": {
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}],
                    "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "tpu"}]}}],
                },
            },
        ],
        2,
        'spec.containers[0].resources.claims[0]: Not found: "tpu"',
    ),
]


@pytest.mark.parametrize(("name", "docs", "code", "message"), DRA_BAD_INPUT, ids=[row[0] for row in DRA_BAD_INPUT])
def test_bad_dra_input_ends_in_a_result_or_one_error_line(
    workdir: Path, name: str, docs: list[dict[str, Any]], code: int, message: str
) -> None:
    path = workdir / "dra.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out, err = io.StringIO(), io.StringIO()
    with _time_limit(RUN_SECONDS), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["simulate", str(path), "--seed", "1"]) == code, err.getvalue()
    if code == 2:
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"kubesched: error: {path}: document ") and message in lines[0]
    else:
        assert out.getvalue().startswith("Scheduled ")


@pytest.mark.parametrize("name", sorted(DRA_BAD_STATUS))
def test_bad_dra_input_tells_the_pod_what_kube_scheduler_would(name: str) -> None:
    """Through the Python API: the pod using the bad claim gets the plugin's status, and stays pending."""
    (docs,) = [row[1] for row in DRA_BAD_INPUT if row[0] == name]
    with _time_limit(RUN_SECONDS):
        result = simulate(copy.deepcopy(docs), seed=1, tie_break="name")
    assert result.final["default/bad"] is None
    assert next(a["message"] for a in result.attempts if a["pod"] == "default/bad") == DRA_BAD_STATUS[name]
