"""Did-you-mean hints: difflib's closeness, without regard to case, spelt as the choices are."""

from __future__ import annotations

import pytest

from kubesched.util.suggest import close_names, did_you_mean

PLUGINS = ["NodeAffinity", "NodeName", "NodePorts", "NodeResourcesFit", "NodeResourcesBalancedAllocation"]


@pytest.mark.parametrize(
    ("word", "want"),
    [
        ("NodeResourceFit", ' (did you mean "NodeResourcesFit"?)'),
        ("nodeaffinity", ' (did you mean "NodeAffinity"?)'),
        ("NODEPORTS", ' (did you mean "NodePorts"?)'),
        ("Coscheduling", ""),
    ],
)
def test_did_you_mean(word: str, want: str) -> None:
    assert did_you_mean(word, PLUGINS) == want


def test_close_names_best_first_at_most_n() -> None:
    choices = ["volumezone", "VolumeBinding", "VolumeZone", "VolumeRestrictions"]
    assert close_names("VolumeZon", choices, n=3) == ["volumezone", "VolumeBinding"]  # the first spelling wins
    assert close_names("VolumeZon", choices, n=1) == ["volumezone"]
