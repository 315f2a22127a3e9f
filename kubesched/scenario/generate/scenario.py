"""Writing a generated scenario folder: nodes, pods and an optional timeline, as manifests.

Each object is written as one YAML document in JSON flow style (JSON is YAML), which is fast to write
and to read back with the C loader even for hundreds of thousands of pods; ``kubesched simulate DIR``
reads the folder like any other scenario.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

NODES_FILE = "nodes.yaml"
PODS_FILE = "pods.yaml"


def write_scenario(folder: str | Path, objects: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Write nodes to ``nodes.yaml`` and everything else (pods, in order) to ``pods.yaml`` under ``folder``.

    Objects are streamed: ``objects`` may be a generator of any length. Returns counts per file."""
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{out}: not a folder")
    out.mkdir(parents=True, exist_ok=True)
    counts = {NODES_FILE: 0, PODS_FILE: 0}
    with open(out / NODES_FILE, "w", encoding="utf-8") as nodes, open(out / PODS_FILE, "w", encoding="utf-8") as pods:
        for obj in objects:
            name = NODES_FILE if obj.get("kind") == "Node" else PODS_FILE
            fh = nodes if name == NODES_FILE else pods
            if counts[name]:
                fh.write("---\n")
            fh.write(json.dumps(obj, separators=(",", ":")))
            fh.write("\n")
            counts[name] += 1
    return counts
