"""Pod affinity terms as parsed once per pod."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.errors import ObjectError
from kubesched.api.pod_affinity import PodAffinity, PodAffinityTerm


def test_label_keys_are_kept_as_written() -> None:
    term = PodAffinityTerm.from_dict(
        {
            "topologyKey": "zone",
            "labelSelector": {"matchLabels": {"app": "web"}},
            "matchLabelKeys": ["version", "track"],
            "mismatchLabelKeys": ["tenant"],
        },
        "default",
    )
    assert term.match_label_keys == ("version", "track")
    assert term.mismatch_label_keys == ("tenant",)
    # The scheduler never applies them itself (the API server merged them at creation).
    assert term.selector is not None and term.selector.matches({"app": "web", "version": "other"})
    assert PodAffinityTerm.from_dict({"topologyKey": "zone"}, "default").match_label_keys == ()


@pytest.mark.parametrize(
    ("field", "value"), [("matchLabelKeys", "version"), ("mismatchLabelKeys", [1]), ("namespaces", "default")]
)
def test_keys_must_be_lists_of_strings(field: str, value: Any) -> None:
    raw = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": {"topologyKey": "zone", field: value}}
            ]
        }
    }
    with pytest.raises(ObjectError) as info:
        PodAffinity.from_affinity(raw, "default")
    assert info.value.path == f"podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.{field}"
    assert "expected a list of strings" in info.value.reason
