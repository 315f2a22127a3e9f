"""Writing a generated scenario folder: nodes, devices, pods and an optional timeline, as manifests.

Each object is written as one YAML document in JSON flow style (JSON is YAML), which is fast to write
and to read back with the C loader even for hundreds of thousands of pods; ``kubesched simulate DIR``
reads the folder like any other scenario. Nodes go to ``nodes.yaml``, DRA objects (DeviceClasses,
ResourceSlices, claims and their templates) to ``devices.yaml`` when there are any, everything else
(pods, in order) to ``pods.yaml``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TextIO

from kubesched.scenario.generate.devices import DEVICE_KINDS

NODES_FILE = "nodes.yaml"
DEVICES_FILE = "devices.yaml"
PODS_FILE = "pods.yaml"


def _file_for(kind: object) -> str:
    if kind == "Node":
        return NODES_FILE
    return DEVICES_FILE if kind in DEVICE_KINDS else PODS_FILE


def write_scenario(folder: str | Path, objects: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Write ``objects`` under ``folder`` (see the module docstring); ``nodes.yaml`` and ``pods.yaml``
    always, ``devices.yaml`` when a DRA object comes.

    Objects are streamed: ``objects`` may be a generator of any length. The files are written beside
    their final names and put in place only once every object was written, so a generator that fails
    half-way (a bad option found late) leaves an earlier scenario in the folder as it was. Returns
    counts per file."""
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{out}: not a folder")
    out.mkdir(parents=True, exist_ok=True)
    counts = {NODES_FILE: 0, PODS_FILE: 0}
    written: list[str] = [NODES_FILE, PODS_FILE]
    try:
        with ExitStack() as stack:
            files: dict[str, TextIO] = {
                name: stack.enter_context(open(_partial(out, name), "w", encoding="utf-8"))
                for name in (NODES_FILE, PODS_FILE)
            }
            for obj in objects:
                name = _file_for(obj.get("kind"))
                if name not in files:
                    written.append(name)
                    files[name] = stack.enter_context(open(_partial(out, name), "w", encoding="utf-8"))
                    counts[name] = 0
                fh = files[name]
                if counts[name]:
                    fh.write("---\n")
                fh.write(json.dumps(obj, separators=(",", ":")))
                fh.write("\n")
                counts[name] += 1
    except BaseException:
        for name in written:
            _partial(out, name).unlink(missing_ok=True)
        raise
    (out / DEVICES_FILE).unlink(missing_ok=True)  # a stale one from an earlier run would be read too
    for name in written:
        _partial(out, name).replace(out / name)
    return {name: counts[name] for name in (NODES_FILE, DEVICES_FILE, PODS_FILE) if name in counts}


def _partial(folder: Path, name: str) -> Path:
    """Where ``name`` is written until the whole scenario is (a dot file: not read as a manifest)."""
    return folder / f".{name}.partial"
