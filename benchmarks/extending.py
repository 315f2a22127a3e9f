"""``python -m benchmarks.extending [--quick]``: what extending the scheduler costs, via ``kubesched.simulate``.

Three measurements, each through ``kubesched.simulate`` with default options (pods one at a time),
compared in the same run with the same scenario without the extension:

- plugin-overhead: a trivial Python Filter + Score plugin at 5000 nodes, per-node form against the
  batch form; the figure is the extra wall time per scheduled pod.
- extender: an HTTP extender (filter + prioritize, nodeCacheCapable) on loopback; the figure is the
  extra wall time per pod, and per round trip (two verbs per pod). A bare transport round trip is
  timed too.
- gangs: Coscheduling on 1000 nodes where 100 gangs of 8 pods compete for room for 60; checks that
  exactly 60 gangs are placed whole and no gang is left partly bound.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import kubesched
from benchmarks.workloads import node_dict, pod_dict
from kubesched.extender.config import ExtenderConfig
from kubesched.extender.transport import HTTPTransport

_HERE = Path(__file__).resolve().parent
API = "kubescheduler.config.k8s.io/v1"


def _config(*plugins: str, extenders: list[dict[str, Any]] | None = None, queue_sort: str = "") -> dict[str, Any]:
    cfg: dict[str, Any] = {"apiVersion": API, "kind": "KubeSchedulerConfiguration"}
    if plugins:
        profile: dict[str, Any] = {
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": p} for p in plugins]}},
        }
        if queue_sort:
            profile["plugins"]["queueSort"] = {"enabled": [{"name": queue_sort}], "disabled": [{"name": "*"}]}
        cfg["profiles"] = [profile]
    if extenders:
        cfg["extenders"] = extenders
    return cfg


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _per_pod(objs: list[dict[str, Any]], cfg: dict[str, Any], repeats: int) -> tuple[float, float, Any]:
    """(wall seconds, scheduling seconds per pod, result), best of ``repeats``.

    Per pod is timed between the first and the last pod of the run through ``simulate``'s progress
    callback (pods arrive one at a time), so loading the cluster is not charged to the pods.
    """
    best: tuple[float, float, Any] | None = None
    for _ in range(repeats):
        stamps: list[float] = []

        def progress(done: int, total: int, stamps: list[float] = stamps) -> None:
            stamps.append(time.perf_counter())

        wall, result = _timed(partial(kubesched.simulate, objs, config=cfg, progress=progress))
        per_pod = (stamps[-1] - stamps[0]) / (len(stamps) - 1)
        if best is None or per_pod < best[1]:
            best = (wall, per_pod, result)
    assert best is not None
    return best


# -- plugin overhead ----------------------------------------------------------------------------------
def plugin_overhead(nodes: int, pods: int, repeats: int = 5) -> list[dict[str, Any]]:
    objs = [node_dict(i) for i in range(nodes)] + [pod_dict(f"pod-{i}") for i in range(pods)]
    variants = (
        ("default plugins", None),
        ("+ trivial filter+score, per-node form", "benchmarks.trivial_plugins:TrivialPerNode"),
        ("+ trivial filter+score, batch form", "benchmarks.trivial_plugins:TrivialBatch"),
    )
    best: dict[str, tuple[float, float, Any]] = {}
    # Rounds interleave the variants, so that a burst of load elsewhere hits all of them alike.
    for _ in range(repeats):
        for label, plugin in variants:
            run = _per_pod(objs, _config(plugin) if plugin else _config(), 1)
            if label not in best or run[1] < best[label][1]:
                best[label] = run
    rows = []
    base = best["default plugins"][1]
    for label, plugin in variants:
        wall, per_pod, result = best[label]
        assert all(result.final.values()), "every pod must be scheduled"
        evaluated = result.attempts[-1]["evaluatedNodes"]
        rows.append(
            {
                "case": "plugin-overhead",
                "variant": label,
                "nodes": nodes,
                "pods": pods,
                "wall_s": wall,
                "per_pod_ms": per_pod * 1000,
                "extra_ms": (per_pod - base) * 1000 if plugin else None,
                "note": f"{evaluated} nodes filtered per pod, best of {repeats}",
            }
        )
    return rows


# -- extender -----------------------------------------------------------------------------------------
class _Extender:
    """A loopback extender that keeps every node and scores them by name length."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once: no delayed-ACK stall

            def do_POST(self) -> None:
                args = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                names = args.get("NodeNames") or []
                if self.path.endswith("/filter"):
                    answer: Any = {"NodeNames": names, "FailedNodes": {}}
                else:
                    answer = [{"Host": n, "Score": len(n) % 11} for n in names]
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/ext"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def extender(nodes: int, pods: int) -> list[dict[str, Any]]:
    server = _Extender()
    try:
        objs = [node_dict(i) for i in range(nodes)] + [pod_dict(f"pod-{i}") for i in range(pods)]
        ext = {
            "urlPrefix": server.url,
            "filterVerb": "filter",
            "prioritizeVerb": "prioritize",
            "weight": 1,
            "nodeCacheCapable": True,
        }
        base_wall, base, _ = _per_pod(objs, _config(), 3)
        wall, per_pod, result = _per_pod(objs, _config(extenders=[ext]), 3)
        assert all(result.final.values())
        transport = HTTPTransport(ExtenderConfig.from_dict(ext))
        rounds = 500
        args = {"Pod": objs[-1], "NodeNames": ["node-1"], "Nodes": None}
        bare, _ = _timed(lambda: [transport.send("filter", args) for _ in range(rounds)])
        transport.close()
    finally:
        server.close()
    extra = (per_pod - base) * 1000
    return [
        {
            "case": "extender",
            "variant": "default plugins",
            "nodes": nodes,
            "pods": pods,
            "wall_s": base_wall,
            "per_pod_ms": base * 1000,
            "extra_ms": None,
        },
        {
            "case": "extender",
            "variant": "+ HTTP extender filter+prioritize (2 round trips/pod)",
            "nodes": nodes,
            "pods": pods,
            "wall_s": wall,
            "per_pod_ms": per_pod * 1000,
            "extra_ms": extra,
            "note": f"{extra / 2:.2f} ms per round trip in the cycle",
        },
        {
            "case": "extender",
            "variant": "bare loopback round trip (transport only)",
            "nodes": 1,
            "pods": rounds,
            "wall_s": bare,
            "per_pod_ms": bare / rounds * 1000,
            "extra_ms": None,
        },
    ]


# -- gangs ----------------------------------------------------------------------------------------------
def gangs(nodes: int, groups: int, size: int, room_for: int, *, burst: bool) -> list[dict[str, Any]]:
    """``nodes`` 1-cpu nodes, all but ``room_for * size`` of them full; gangs of 1-cpu pods."""
    objs: list[dict[str, Any]] = []
    free = room_for * size
    for i in range(nodes):
        node = node_dict(i)
        node["status"]["allocatable"]["cpu"] = node["status"]["capacity"]["cpu"] = "1"
        objs.append(node)
    for i in range(nodes - free):
        filler = pod_dict(f"filler-{i}", f"node-{i}")
        filler["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
        objs.append(filler)
    for g in range(groups):
        objs.append(
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": f"gang-{g}", "namespace": "default"},
                "spec": {"minMember": size, "scheduleTimeoutSeconds": 10},
            }
        )
        for m in range(size):
            pod = pod_dict(f"gang-{g}-{m}")
            pod["metadata"].update(namespace="default", labels={"scheduling.x-k8s.io/pod-group": f"gang-{g}"})
            pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
            objs.append(pod)
    cfg = _config("Coscheduling", queue_sort="Coscheduling")
    wall, result = _timed(lambda: kubesched.simulate(objs, config=cfg, burst=burst))
    placed: dict[str, int] = {}
    for key, node in result.final.items():
        if node:
            gang = key.split("/")[1].rsplit("-", 1)[0]
            placed[gang] = placed.get(gang, 0) + 1
    whole = sum(1 for n in placed.values() if n == size)
    partial = sum(1 for n in placed.values() if n != size)
    pods = groups * size
    variant = f"{groups} gangs of {size}, room for {room_for}" + (" (burst)" if burst else "")
    return [
        {
            "case": "gangs",
            "variant": variant,
            "nodes": nodes,
            "pods": pods,
            "wall_s": wall,
            "per_pod_ms": wall / pods * 1000,
            "extra_ms": None,
            "note": f"{whole} gangs placed whole, {partial} partly; {len(result.attempts)} attempts, "
            f"{result.virtual_seconds:.0f}s virtual",
        }
    ]


COLUMNS = ("case", "variant", "nodes", "pods", "wall s", "ms/pod", "extra ms/pod", "note")


def format_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for r in rows:
        extra = "-" if r.get("extra_ms") is None else f"{r['extra_ms']:.2f}"
        cells = [
            r["case"],
            r["variant"],
            r["nodes"],
            r["pods"],
            f"{r['wall_s']:.2f}",
            f"{r['per_pod_ms']:.2f}",
            extra,
            r.get("note", ""),
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.extending", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--only", choices=("plugin-overhead", "extender", "gangs"))
    args = parser.parse_args(argv)
    sys.path.insert(0, str(_HERE.parent))
    rows: list[dict[str, Any]] = []
    q = args.quick
    # Warm up (imports, caches) so that the first measured run is not charged for them.
    kubesched.simulate([node_dict(i) for i in range(10)] + [pod_dict("warm")], config=_config())
    if args.only in (None, "plugin-overhead"):
        rows += plugin_overhead(200 if q else 5000, 10 if q else 200)
    if args.only in (None, "extender"):
        rows += extender(20 if q else 100, 10 if q else 200)
    if args.only in (None, "gangs"):
        for burst in (False, True):
            rows += gangs(100, 10, 4, 6, burst=burst) if q else gangs(1000, 100, 8, 60, burst=burst)
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
