"""Which pods of a trace a name given to ``kubesched explain`` means, when no pod has that exact name.

Pods of workloads carry generated names, which nobody types from memory. A name is read, in turn, as

- a workload reference ``Kind/namespace/name`` (``Deployment/shop/api``, kubectl's short kinds too:
  ``deploy``, ``rs``, ``sts``, ``ds``, ``job``), matched by the names the workload controllers give
  their pods: a Deployment's ReplicaSet is ``<deployment>-<pod-template-hash>``, a ReplicaSet's,
  DaemonSet's or Job's pods ``<owner>-<5 random characters>`` (an indexed Job's
  ``<job>-<index>-<5 characters>``), a StatefulSet's ``<set>-<ordinal>``;
- a prefix of ``namespace/name`` (a bare name: of a name in the default namespace, else in any);

and when nothing matches, the closest pod names and workload names are suggested.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher

from kubesched.embedded.workloads.common import MAX_GENERATED_NAME_LENGTH, NAME_ALPHABET, RANDOM_LENGTH
from kubesched.util.suggest import CUTOFF

#: kubectl's names for the workload kinds (kind, plural, short name), folded to lower case.
WORKLOAD_KINDS: Mapping[str, str] = {
    alias: kind
    for kind, aliases in {
        "Deployment": ("deployment", "deployments", "deploy"),
        "ReplicaSet": ("replicaset", "replicasets", "rs"),
        "StatefulSet": ("statefulset", "statefulsets", "sts"),
        "DaemonSet": ("daemonset", "daemonsets", "ds"),
        "Job": ("job", "jobs"),
    }.items()
    for alias in aliases
}

_RANDOM = f"[{NAME_ALPHABET}]"
#: What follows ``<owner>-`` before the random suffix, per kind: a Deployment's pod-template hash
#: (a 32-bit number's decimal digits mapped into the alphabet: 1 to 10 characters), an index.
_MIDDLE = {"Deployment": f"{_RANDOM}{{1,10}}-", "ReplicaSet": "", "DaemonSet": "", "Job": r"(?:\d+-)?"}
#: How much less like the query a name in another namespace is (the same name there is still suggested).
OTHER_NAMESPACE_PENALTY = 0.1
#: How a pod's name shows each kind's naming, for messages.
_SHAPE = {
    "Deployment": "{name}-<hash>-<suffix>",
    "ReplicaSet": "{name}-<suffix>",
    "DaemonSet": "{name}-<suffix>",
    "Job": "{name}-<suffix>",
    "StatefulSet": "{name}-<ordinal>",
}


def pod_key(name: str) -> str:
    """``namespace/name``; a bare name means the default namespace."""
    return name if "/" in name else f"default/{name}"


@dataclass(frozen=True, slots=True)
class WorkloadRef:
    """``Kind/namespace/name``: a workload whose pods are found by their generated names."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    def pod_shape(self) -> str:
        """How its pods are named, e.g. ``shop/api-<hash>-<suffix>``."""
        return f"{self.namespace}/" + _SHAPE[self.kind].format(name=self.name)

    def owns(self, key: str) -> bool:
        """Whether the pod ``namespace/name`` has a name this workload's controller would give it."""
        namespace, _, pod = key.partition("/")
        if namespace != self.namespace:
            return False
        if self.kind == "StatefulSet":
            return re.fullmatch(re.escape(self.name) + r"-\d+", pod) is not None
        stem = generated_stem(pod)
        if stem is None:
            return False
        base = f"{self.name}-"
        if len(stem) >= MAX_GENERATED_NAME_LENGTH:  # the generated base was cut: only its start is known
            return stem.startswith(base[:MAX_GENERATED_NAME_LENGTH])
        return re.fullmatch(re.escape(base) + _MIDDLE[self.kind], stem) is not None


def parse_workload(text: str) -> WorkloadRef | None:
    """``Kind/namespace/name`` (or ``Kind/name`` in the default namespace) for a workload kind, else None."""
    parts = text.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        return None
    kind = WORKLOAD_KINDS.get(parts[0].lower())
    if kind is None:
        return None
    namespace, name = (parts[1], parts[2]) if len(parts) == 3 else ("default", parts[1])
    return WorkloadRef(kind, namespace, name)


def generated_stem(name: str) -> str | None:
    """``name`` without the random suffix the API server appends to a generateName, or None if it has none."""
    if len(name) <= RANDOM_LENGTH or not all(c in NAME_ALPHABET for c in name[-RANDOM_LENGTH:]):
        return None
    return name[:-RANDOM_LENGTH]


def owner_of(key: str) -> tuple[str | None, str] | None:
    """The workload a pod's name says it belongs to, and its kind when the name shows it:
    ``("Deployment", "shop/api")`` for ``shop/api-7d9c5b8f4-x2bq4``, ``("StatefulSet", "db/pg")`` for
    ``db/pg-0``, ``(None, "ops/agent")`` for ``ops/agent-x2bq4`` (a ReplicaSet's, DaemonSet's or Job's)."""
    namespace, _, pod = key.partition("/")
    stem = generated_stem(pod)
    if stem is not None and stem.endswith("-"):
        base = stem[:-1]
        deployment = re.fullmatch(f"(.+)-{_RANDOM}{{1,10}}", base)
        if deployment:
            return "Deployment", f"{namespace}/{deployment.group(1)}"
        return None, f"{namespace}/{re.sub(r'-[0-9]+$', '', base)}"  # an indexed Job's index dropped
    ordinal = re.fullmatch(r"(.+)-[0-9]+", pod)
    return ("StatefulSet", f"{namespace}/{ordinal.group(1)}") if ordinal else None


def matching_pods(text: str, keys: Iterable[str]) -> tuple[str, list[str]]:
    """What ``text`` was read as (for messages) and the pods it names, sorted.

    A bare name that starts no pod name in the default namespace is looked for in every namespace,
    then as a namespace.
    """
    keys = list(keys)
    workload = parse_workload(text)
    if workload is not None:
        return str(workload), sorted(k for k in keys if workload.owns(k))
    key = pod_key(text)
    found = [k for k in keys if k.startswith(key)]
    if found or "/" in text:
        return key, sorted(found)
    found = [k for k in keys if k.partition("/")[2].startswith(text)]
    if found:
        return text, sorted(found)
    return f"namespace {text}", sorted(k for k in keys if k.partition("/")[0] == text)


def suggestions(text: str, keys: Iterable[str], n: int = 3) -> list[str]:
    """The pod names and workload names (as ``namespace/name`` prefixes) closest to ``text``, best first.

    Names are compared by name, those in another namespace than the one asked for a little less
    alike (so the same name there is suggested when only the namespace was wrong); a bare name is
    compared with names in every namespace alike. For a workload reference, the workloads the pods' names
    show, as ``Kind/namespace/name`` (the kind asked for where the names cannot tell).
    """
    keys = list(keys)
    owners = {o for o in map(owner_of, keys) if o is not None}
    workload = parse_workload(text)
    if workload is not None:
        refs = {f"{kind or workload.kind}/{owner}": owner for kind, owner in owners}
        refs.pop(str(workload), None)
        close = _closest(f"{workload.namespace}/{workload.name}", set(refs.values()), n * 2)
        return [ref for owner in close for ref in sorted(refs) if refs[ref] == owner][:n]
    names = [*(owner for _, owner in owners), *keys]
    return _closest(text, names, n, by_name="/" not in text)


def _closest(query: str, candidates: Iterable[str], n: int, *, by_name: bool = False) -> list[str]:
    """Up to ``n`` candidates whose name is like the query's, best first; another namespace costs a little."""
    namespace, _, name = query.lower().partition("/")
    if by_name:
        namespace, name = "", namespace
    scored = []
    for candidate in set(candidates):
        their_namespace, _, their_name = candidate.lower().partition("/")
        ratio = SequenceMatcher(None, name, their_name).ratio()
        if not by_name and their_namespace != namespace:
            ratio -= OTHER_NAMESPACE_PENALTY
        if ratio >= CUTOFF:
            scored.append((-ratio, candidate))
    return [candidate for _, candidate in sorted(scored)[:n]]
