"""matchLabelKeys and mismatchLabelKeys, as the API server treats them when a pod is created.

Pod (anti-)affinity terms and topology spread constraints may name label keys whose values the pod's
own labels give. kube-apiserver folds them into the label selector when the pod is created (never on
update), each key the pod carries becoming a ``key In (value)`` requirement (``NotIn`` for
mismatchLabelKeys), and then validates the result:

- pod affinity (gate MatchLabelKeysInPodAffinity: off in v1.30, GA in v1.34): with the gate off both
  fields are dropped, so nothing is merged;
- topology spread (MatchLabelKeysInPodTopologySpread, on in both, plus
  MatchLabelKeysInPodTopologySpreadSelectorMerge, new and on in v1.34): v1.30 keeps the keys for the
  scheduler to merge and validates them the old way; v1.34 merges them here too (the scheduler still
  merges them as well, which repeats a requirement and changes nothing).

Errors carry upstream's field paths and words, including its quirk of indexing the "exists in both
matchLabelKeys and labelSelector" error under the term's own path.

One liberty: a pod read back from an API server (a ``kubesched snapshot``, a state replayed from a
live cluster) already carries the requirements the merge adds. They are recognised as the merge's
own and not added again, nor counted as the key being in the selector already, where kube-apiserver
would refuse to create such a pod a second time. The selector that results is the same.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubesched.api.resource_names import qualified_name_error
from kubesched.cluster.protocol import Invalid
from kubesched.config.features import FeatureGates

AFFINITY_GATE = "MatchLabelKeysInPodAffinity"
SPREAD_GATE = "MatchLabelKeysInPodTopologySpread"
SPREAD_MERGE_GATE = "MatchLabelKeysInPodTopologySpreadSelectorMerge"

MATCH = "matchLabelKeys"
MISMATCH = "mismatchLabelKeys"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
NO_SELECTOR = "Forbidden: must not be specified when labelSelector is not set"


def prepare_label_keys(pod: dict[str, Any], features: FeatureGates) -> None:
    """Drop the disabled fields, merge the keys into the selectors, validate: the pod's create path.

    Works in place on the API server's private copy; raises :class:`Invalid` as the API server would.
    """
    spec = pod.get("spec")
    if not isinstance(spec, dict) or not (spec.get("affinity") or spec.get("topologySpreadConstraints")):
        return  # no term and no constraint: nothing to drop, merge or validate (most pods)
    labels = (pod.get("metadata") or {}).get("labels") or {}
    terms = list(affinity_terms(spec))
    constraints = [
        (f"spec.topologySpreadConstraints[{i}]", c)
        for i, c in enumerate(_list(spec.get("topologySpreadConstraints")))
        if isinstance(c, dict)
    ]
    affinity_on = features.enabled(AFFINITY_GATE)
    spread_on = features.enabled(SPREAD_GATE)
    spread_merge = spread_on and features.enabled(SPREAD_MERGE_GATE)
    for _, term in terms:
        if not affinity_on:
            term.pop(MATCH, None)
            term.pop(MISMATCH, None)
    if not spread_on:
        for _, c in constraints:
            c.pop(MATCH, None)
    if affinity_on:
        for _, term in terms:
            merge_label_keys(term, labels, ((MATCH, "In"), (MISMATCH, "NotIn")))
    if spread_merge:
        for _, c in constraints:
            merge_label_keys(c, labels, ((MATCH, "In"),))
    try:
        errors = _validate(terms, constraints, spread_merge, labels)
    except _NotStrings as err:
        errors = [str(err)]
    if errors:
        raise invalid(pod, errors)


def _validate(
    terms: list[tuple[str, dict[str, Any]]],
    constraints: list[tuple[str, dict[str, Any]]],
    spread_merge: bool,
    labels: Mapping[str, Any],
) -> list[str]:
    errors: list[str] = []
    for path, term in terms:
        errors += label_keys_errors(
            path, _keys(term, MATCH, path), _keys(term, MISMATCH, path), term.get("labelSelector")
        )
    for path, c in constraints:
        keys = _keys(c, MATCH, path)
        if spread_merge:
            errors += label_keys_errors(path, keys, (), c.get("labelSelector"))
        else:
            errors += legacy_spread_errors(f"{path}.{MATCH}", keys, c.get("labelSelector"), labels)
    return errors


def affinity_terms(spec: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, term) of every pod affinity and anti-affinity term, required and preferred."""
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict):
        return
    for kind in ("podAffinity", "podAntiAffinity"):
        block = affinity.get(kind)
        if not isinstance(block, dict):
            continue
        base = f"spec.affinity.{kind}"
        for i, term in enumerate(_list(block.get(REQUIRED))):
            if isinstance(term, dict):
                yield f"{base}.{REQUIRED}[{i}]", term
        for i, weighted in enumerate(_list(block.get(PREFERRED))):
            term = weighted.get("podAffinityTerm") if isinstance(weighted, dict) else None
            if isinstance(term, dict):
                yield f"{base}.{PREFERRED}[{i}].podAffinityTerm", term


def merge_label_keys(holder: dict[str, Any], labels: Mapping[str, Any], fields: tuple[tuple[str, str], ...]) -> None:
    """Append ``key <op> (the pod's value)`` to ``holder``'s labelSelector for each key the pod carries.

    Nothing when the selector is absent (it selects nothing, and stays so) or no key is named.
    """
    selector = holder.get("labelSelector")
    if not isinstance(selector, dict) or not any(holder.get(name) for name, _ in fields):
        return
    existing = _list(selector.get("matchExpressions"))
    added = [
        requirement
        for name, operator in fields
        for key in _list(holder.get(name))
        if isinstance(key, str)
        and key in labels
        and (requirement := merged_requirement(key, operator, labels[key])) not in existing
    ]
    if added:
        selector["matchExpressions"] = [*existing, *added]


def merged_requirement(key: str, operator: str, value: Any) -> dict[str, Any]:
    """The requirement the merge adds for ``key``: ``key In (value)`` or ``key NotIn (value)``."""
    return {"key": key, "operator": operator, "values": [value]}


def label_keys_errors(path: str, match: tuple[str, ...], mismatch: tuple[str, ...], selector: Any) -> list[str]:
    """ValidateMatchLabelKeysAndMismatchLabelKeys, on a selector the keys were merged into."""
    errors: list[str] = []
    for name, keys in ((MATCH, match), (MISMATCH, mismatch)):
        if not keys:
            continue
        if selector is None:
            errors.append(f"{path}.{name}: {NO_SELECTOR}")
            continue
        errors += [
            f"{path}.{name}[{i}]: Invalid value: {_quote(key)}: {problem}"
            for i, key in enumerate(keys)
            if (problem := qualified_name_error(key)) is not None
        ]
    if isinstance(selector, dict):
        index = {key: i for i, key in enumerate(match)}
        seen = {str(k) for k in (selector.get("matchLabels") or {})}
        for expr in _list(selector.get("matchExpressions")):
            key = expr.get("key") if isinstance(expr, dict) else None
            if not isinstance(key, str):
                continue
            if key in index and key in seen:
                errors.append(
                    f"{path}[{index[key]}]: Invalid value: {_quote(key)}: "
                    "exists in both matchLabelKeys and labelSelector"
                )
            seen.add(key)
    mismatched = set(mismatch)
    errors += [
        f"{path}.{MATCH}[{i}]: Invalid value: {_quote(key)}: exists in both matchLabelKeys and mismatchLabelKeys"
        for i, key in enumerate(match)
        if key in mismatched
    ]
    return errors


def legacy_spread_errors(path: str, keys: tuple[str, ...], selector: Any, labels: Mapping[str, Any]) -> list[str]:
    """ValidateMatchLabelKeysInTopologySpread: the keys before any merge (v1.30's rule). A requirement
    a v1.34 API server merged in already is not counted as the key being in the selector."""
    if not keys:
        return []
    errors: list[str] = []
    taken: set[str] = set()
    if isinstance(selector, dict):
        merged = [merged_requirement(k, "In", labels[k]) for k in keys if k in labels]
        taken = {str(k) for k in (selector.get("matchLabels") or {})}
        taken |= {
            str(e.get("key"))
            for e in _list(selector.get("matchExpressions"))
            if isinstance(e, dict) and e not in merged
        }
    else:
        errors.append(f"{path}: {NO_SELECTOR}")
    for i, key in enumerate(keys):
        problem = qualified_name_error(key)
        if problem is not None:
            errors.append(f"{path}[{i}]: Invalid value: {_quote(key)}: {problem}")
        if key in taken:
            errors.append(f"{path}[{i}]: Invalid value: {_quote(key)}: exists in both matchLabelKeys and labelSelector")
    return errors


def invalid(pod: Mapping[str, Any], errors: list[str]) -> Invalid:
    """The API server's 422 for a pod: one error as is, several as a bracketed list."""
    name = str((pod.get("metadata") or {}).get("name") or "")
    detail = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return Invalid(f'Pod "{name}" is invalid: {detail}')


class _NotStrings(Exception):
    """A keys field that is not a list of strings (the API server would not even decode it)."""


def _keys(holder: Mapping[str, Any], name: str, path: str) -> tuple[str, ...]:
    value = holder.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
        raise _NotStrings(f"{path}.{name}: expected a list of strings")
    return tuple(value)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _quote(text: str) -> str:
    """Go's %q for the plain strings label keys are."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
