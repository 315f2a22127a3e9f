"""Hashes and names as kube-controller-manager makes them."""

from __future__ import annotations

import random

import pytest

from kubesched.embedded.workloads.common import (
    NAME_ALPHABET,
    NameGenerator,
    compute_hash,
    fnv32a,
    safe_encode_string,
)


@pytest.mark.parametrize(
    ("data", "want"),
    [
        (b"", 0x811C9DC5),
        (b"a", 0xE40C292C),
        (b"foobar", 0xBF9CF968),
    ],
)
def test_fnv32a_matches_the_published_test_vectors(data: bytes, want: int) -> None:
    assert fnv32a(data) == want


def test_safe_encode_string_maps_each_character_into_the_vowel_free_alphabet() -> None:
    # "0" is 48, 48 % 27 = 21; "9" is 57, 57 % 27 = 3.
    assert safe_encode_string("09") == NAME_ALPHABET[21] + NAME_ALPHABET[3]
    assert set(safe_encode_string("1234567890")) <= set(NAME_ALPHABET)


def test_compute_hash_depends_on_template_and_collision_count_only() -> None:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    reordered = {"spec": {"containers": [{"image": "x", "name": "c"}]}, "metadata": {"labels": {"app": "web"}}}
    assert compute_hash(template) == compute_hash(reordered)
    assert compute_hash(template) != compute_hash(template, 1)
    assert compute_hash(template, 1) != compute_hash(template, 2)
    changed = {**template, "spec": {"containers": [{"name": "c", "image": "y"}]}}
    assert compute_hash(template) != compute_hash(changed)


def test_name_generator_appends_five_characters_from_a_seeded_rng() -> None:
    a, b = NameGenerator(random.Random(3)), NameGenerator(random.Random(3))
    names = [a.generate("web-") for _ in range(5)]
    assert names == [b.generate("web-") for _ in range(5)]
    assert all(n.startswith("web-") and len(n) == 9 and set(n[4:]) <= set(NAME_ALPHABET) for n in names)
    assert len(NameGenerator(random.Random(0)).generate("x" * 80)) == 63
