"""Node templates for ``plan``: a Node, and the ResourceSlices that publish its devices.

A node whose devices a DRA driver publishes is not one object but several: the Node and one or more
ResourceSlices naming it in ``spec.nodeName``. A template file may therefore hold, beside its one Node,
the ResourceSlices of that node; each copy of the template gets its own slices, renamed for the new
node: the node's name in a slice's name and pool name (its first occurrence as a whole word) is replaced
by the copy's, or the copy's name is appended when the node's name is not in them, and ``spec.nodeName``
names the copy. Pool names stay unique per driver, as a driver publishing one pool per node makes them.

Only node-local slices are copied: a slice reaching nodes by selector or ``allNodes`` is shared, so it
belongs to the scenario, not to a node template.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.api.dra import ResourceSlice
from kubesched.api.errors import ObjectError
from kubesched.scenario.field_validation import FieldValidation
from kubesched.scenario.manifests import Manifest, ManifestError, load_manifests
from kubesched.scenario.pipeline import field_validation, load_template, validate_objects
from kubesched.sim.simulate import SimulationError

SLICE_KIND = "ResourceSlice"


def node_copies(template: Mapping[str, Any], count: int) -> list[dict[str, Any]]:
    """``count`` copies of the node template named ``<name>-1`` … ``<name>-<count>``."""
    base = str((template.get("metadata") or {}).get("name") or "").rstrip("-")
    nodes = []
    for i in range(1, count + 1):
        node = copy.deepcopy(dict(template))
        node["metadata"] = {**(node.get("metadata") or {}), "name": f"{base}-{i}"}
        node["metadata"].pop("generateName", None)
        labels = dict(node["metadata"].get("labels") or {})
        if "kubernetes.io/hostname" in labels:
            labels["kubernetes.io/hostname"] = f"{base}-{i}"
            node["metadata"]["labels"] = labels
        nodes.append(node)
    return nodes


@dataclass(frozen=True, slots=True)
class NodeTemplate:
    """One Node and the node-local ResourceSlices that come with each copy of it."""

    node: Manifest
    slices: tuple[Manifest, ...] = ()

    @property
    def name(self) -> str:
        return str(self.node.obj["metadata"]["name"])

    def copies(self, count: int) -> list[list[dict[str, Any]]]:
        """``count`` copies (``<name>-1`` … ``<name>-<count>``), each the node then its slices."""
        return [
            [node, *(renamed_slice(s.obj, self.name, node["metadata"]["name"]) for s in self.slices)]
            for node in node_copies(self.node.obj, count)
        ]

    def manifests(self, count: int) -> list[Manifest]:
        """The first ``count`` copies as manifests to add to a scenario."""
        return [
            Manifest(f"<node template {self.node.source}>", i + 1, obj)
            for i, obj in enumerate(o for group in self.copies(count) for o in group)
        ]


def load_node_template(
    template: str | Path | Mapping[str, Any] | NodeTemplate, validate: str | bool | FieldValidation = "strict"
) -> NodeTemplate:
    """A node template from a file (one Node, any number of ResourceSlices naming it), or a Node given as
    a dict; SimulationError or ManifestError naming the file and document otherwise."""
    if isinstance(template, NodeTemplate):
        return template
    fields = field_validation(validate)
    if isinstance(template, Mapping):
        return NodeTemplate(load_template(template, "Node", fields))
    manifests = load_manifests([template], fields=fields)
    nodes = [m for m in manifests if m.kind == "Node"]
    others = [m for m in manifests if m.kind not in ("Node", SLICE_KIND)]
    if len(nodes) != 1 or others:
        found = ", ".join(str(m.obj.get("kind")) for m in manifests) or "nothing"
        raise SimulationError(f"{template}: expected exactly one Node (and its ResourceSlices), found {found}")
    node = load_template(nodes[0].obj, "Node", fields)
    node = Manifest(str(template), nodes[0].doc_index, node.obj)
    validate_objects([node])
    slices = tuple(m for m in manifests if m.kind == SLICE_KIND)
    for m in slices:
        _check_slice(m, str(node.obj["metadata"]["name"]))
    return NodeTemplate(node, slices)


def _check_slice(m: Manifest, node_name: str) -> None:
    try:
        parsed = ResourceSlice.from_dict(m.obj)
    except (ObjectError, ValueError, TypeError, KeyError) as err:
        raise ManifestError(m.source, m.doc_index, m.kind, m.display_name, "", str(err)) from None
    if parsed.node_name != node_name:
        raise ManifestError(
            m.source,
            m.doc_index,
            m.kind,
            m.display_name,
            "spec.nodeName",
            f"must name the template's node {node_name!r} (only node-local slices are copied with a node)",
        )


def renamed_slice(obj: Mapping[str, Any], old: str, new: str) -> dict[str, Any]:
    """A copy of a node-local slice for node ``new``: its name, pool and nodeName follow the node."""
    out = copy.deepcopy(dict(obj))
    meta = out.setdefault("metadata", {})
    meta["name"] = _renamed(str(meta.get("name") or SLICE_KIND.lower()), old, new)
    meta.pop("generateName", None)
    meta.pop("uid", None)
    meta.pop("resourceVersion", None)
    spec = out.setdefault("spec", {})
    spec["nodeName"] = new
    pool = dict(spec.get("pool") or {})
    pool["name"] = _renamed(str(pool.get("name") or ""), old, new)
    spec["pool"] = pool
    return out


def _renamed(name: str, old: str, new: str) -> str:
    """The first whole occurrence of ``old`` (not part of a longer word) replaced, else ``new`` appended."""
    renamed, count = re.subn(rf"(?<![a-z0-9]){re.escape(old)}(?![a-z0-9])", new, name, count=1) if old else (name, 0)
    if count:
        return renamed
    return f"{name}-{new}" if name else new
