"""Generate ``kubesched/api/field_schema.json``: the field names of every kind kubesched loads.

``python -m testing.api_fields`` rewrites the file; ``python -m testing.api_fields --check`` exits 1 when
it is out of date (the tests run the check when the sources are on the machine).

Strict field validation (an unknown or misspelt field is an error, as kube-apiserver's strict decoding
makes it) needs to know which fields each object type has. They come from the API server's own
OpenAPI v3 documents, ``api/openapi-spec/v3/*.json`` of the ``k8s.io/kubernetes`` module pinned in
``testing/controlplane/go.mod`` (read from the Go module cache), never from a hand-written list.
Only the types reachable from the kinds of :data:`kubesched.cluster.kinds.KNOWN_KINDS` are kept, and of
each type only what the check needs:

- ``types``: type name (``core.v1.PodSpec``) -> ``{field: shape}``; a shape is ``0`` for a field whose
  value is not walked (scalars, int-or-string, quantities, times, maps of those, and free-form
  objects: ``x-kubernetes-preserve-unknown-fields``, ``FieldsV1``, ``RawExtension``), else the type
  name of its value prefixed by one ``[]`` per list level and ``{}`` per map level
  (``[]core.v1.Container``, ``{}core.v1.EnvVarSource``).
- ``kinds``: apiVersion -> kind -> type name; ``List`` is the list wrapper any ``*List`` document uses.

PodGroup (``scheduling.x-k8s.io/v1alpha1``) is a custom resource of kubernetes-sigs/scheduler-plugins,
absent from the API server's documents: its schema is written out below from that project's CRD
(``manifests/coscheduling/crd.yaml``, plus ``status.scheduled`` of later releases).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kubesched.cluster.kinds import KNOWN_KINDS

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "kubesched" / "api" / "field_schema.json"
GO_MOD = ROOT / "testing" / "controlplane" / "go.mod"
PREFIXES = ("io.k8s.api.", "io.k8s.apimachinery.pkg.apis.", "io.k8s.apimachinery.pkg.")
LEAF = 0

#: scheduler-plugins' PodGroup v1alpha1 (a CRD: not in the API server's OpenAPI documents).
POD_GROUP_TYPES: dict[str, dict[str, Any]] = {
    "x-k8s.scheduling.v1alpha1.PodGroup": {
        "apiVersion": LEAF,
        "kind": LEAF,
        "metadata": "meta.v1.ObjectMeta",
        "spec": "x-k8s.scheduling.v1alpha1.PodGroupSpec",
        "status": "x-k8s.scheduling.v1alpha1.PodGroupStatus",
    },
    "x-k8s.scheduling.v1alpha1.PodGroupSpec": {
        "minMember": LEAF,
        "minResources": LEAF,
        "scheduleTimeoutSeconds": LEAF,
    },
    "x-k8s.scheduling.v1alpha1.PodGroupStatus": {
        "phase": LEAF,
        "occupiedBy": LEAF,
        "scheduled": LEAF,
        "running": LEAF,
        "succeeded": LEAF,
        "failed": LEAF,
        "scheduleStartTime": LEAF,
    },
}
POD_GROUP_API_VERSION = "scheduling.x-k8s.io/v1alpha1"


def kubernetes_version() -> str:
    """The ``k8s.io/kubernetes`` version that ``testing/controlplane/go.mod`` pins."""
    match = re.search(r"^(?:require)?\s*k8s\.io/kubernetes\s+(v\S+)", GO_MOD.read_text(), re.MULTILINE)
    if match is None:
        raise SystemExit(f"{GO_MOD}: no k8s.io/kubernetes requirement")
    return match.group(1)


def spec_folder(version: str) -> Path:
    cache = os.environ.get("GOMODCACHE") or str(Path(os.environ.get("GOPATH", Path.home() / "go")) / "pkg" / "mod")
    return Path(cache) / f"k8s.io/kubernetes@{version}" / "api" / "openapi-spec" / "v3"


def read_schemas(folder: Path) -> dict[str, Any]:
    """Every component schema of the OpenAPI v3 documents in ``folder``, by full name."""
    schemas: dict[str, Any] = {}
    for path in sorted(folder.glob("*.json")):
        schemas.update(json.loads(path.read_text()).get("components", {}).get("schemas", {}))
    return schemas


def short(name: str) -> str:
    for prefix in PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def kind_roots(schemas: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """(apiVersion, kind) -> schema name, from each schema's x-kubernetes-group-version-kind."""
    roots: dict[tuple[str, str], str] = {}
    for name, schema in schemas.items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            group, version = gvk["group"], gvk["version"]
            roots[(f"{group}/{version}" if group else version, gvk["kind"])] = name
    return roots


class Extractor:
    """Walks schemas from the roots, keeping the fields of each object type reached."""

    def __init__(self, schemas: Mapping[str, Any]) -> None:
        self.schemas = schemas
        self.types: dict[str, dict[str, Any]] = {}

    def add(self, name: str) -> str:
        """Extract type ``name`` and what it reaches; its short name."""
        todo = [name]
        while todo:
            current = todo.pop()
            if short(current) in self.types:
                continue
            fields: dict[str, Any] = {}
            self.types[short(current)] = fields
            for field, prop in sorted(self.schemas[current].get("properties", {}).items()):
                fields[field], reached = self.shape(prop)
                todo.extend(reached)
        return short(name)

    def shape(self, prop: Mapping[str, Any]) -> tuple[Any, list[str]]:
        """The encoded shape of a property schema and the object types it refers to."""
        if prop.get("x-kubernetes-preserve-unknown-fields") or prop.get("x-kubernetes-int-or-string"):
            return LEAF, []
        ref = prop.get("$ref") or next((p["$ref"] for p in prop.get("allOf", ()) if "$ref" in p), None)
        if ref is not None:
            name = ref.rsplit("/", 1)[-1]
            return (short(name), [name]) if self.is_object(self.schemas[name]) else (LEAF, [])
        if prop.get("type") == "array":
            return self.nested("[]", prop.get("items", {}))
        if prop.get("type") == "object":
            if isinstance(prop.get("additionalProperties"), Mapping):
                return self.nested("{}", prop["additionalProperties"])
            if prop.get("properties"):
                raise SystemExit(f"inline object schemas are not expected: {sorted(prop['properties'])}")
        return LEAF, []

    def nested(self, prefix: str, inner: Mapping[str, Any]) -> tuple[Any, list[str]]:
        shape, reached = self.shape(inner)
        return (LEAF, []) if shape == LEAF else (prefix + shape, reached)

    @staticmethod
    def is_object(schema: Mapping[str, Any]) -> bool:
        """An object with fields of its own (free-form objects and maps are not walked)."""
        return bool(schema.get("properties")) and not schema.get("x-kubernetes-preserve-unknown-fields")


def generate(schemas: Mapping[str, Any], kinds: Iterable[tuple[str, str]], source: str) -> dict[str, Any]:
    """The data file's content for ``kinds`` ((apiVersion, kind) pairs)."""
    roots = kind_roots(schemas)
    extractor = Extractor(schemas)
    by_version: dict[str, dict[str, str]] = {}
    missing = []
    for api_version, kind in sorted(kinds):
        if (api_version, kind) == (POD_GROUP_API_VERSION, "PodGroup"):
            continue
        name = roots.get((api_version, kind))
        if name is None:
            missing.append(f"{api_version} {kind}")
            continue
        by_version.setdefault(api_version, {})[kind] = extractor.add(name)
    if missing:
        raise SystemExit(f"no OpenAPI schema for: {', '.join(missing)}")
    list_meta = extractor.add("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")
    types = dict(extractor.types)
    types["List"] = {"apiVersion": LEAF, "items": LEAF, "kind": LEAF, "metadata": list_meta}
    types.update(POD_GROUP_TYPES)
    by_version.setdefault(POD_GROUP_API_VERSION, {})["PodGroup"] = "x-k8s.scheduling.v1alpha1.PodGroup"
    return {
        "source": source,
        "kinds": {v: dict(sorted(k.items())) for v, k in sorted(by_version.items())},
        "types": dict(sorted(types.items())),
    }


def render(data: Mapping[str, Any]) -> str:
    """Compact JSON, one type per line (small, and a regenerated file diffs by type)."""
    lines = ["{", f'"source": {json.dumps(data["source"])},', f'"kinds": {_compact(data["kinds"])},', '"types": {']
    items = list(data["types"].items())
    for i, (name, fields) in enumerate(items):
        lines.append(f"{json.dumps(name)}: {_compact(fields)}" + ("," if i < len(items) - 1 else ""))
    lines += ["}", "}"]
    return "\n".join(lines) + "\n"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def known_kinds() -> list[tuple[str, str]]:
    return [(version, info.kind) for info in KNOWN_KINDS.values() for version in info.api_versions]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testing.api_fields", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the data file is out of date")
    args = parser.parse_args(argv)
    version = kubernetes_version()
    folder = spec_folder(version)
    if not folder.is_dir():
        print(f"{folder}: not found (run `go mod download k8s.io/kubernetes@{version}`)", file=sys.stderr)
        return 2
    text = render(generate(read_schemas(folder), known_kinds(), f"k8s.io/kubernetes {version} api/openapi-spec/v3"))
    if args.check:
        current = OUTPUT.read_text() if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT.relative_to(ROOT)} is out of date: run python -m testing.api_fields", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)}: {len(text)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
