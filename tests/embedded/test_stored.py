"""The stored-object helpers: copies that share nothing mutable, new versions that share the rest."""

from __future__ import annotations

from typing import Any

from kubesched.embedded.stored import copy_json


def test_copy_json_copies_every_container_and_keeps_the_leaves() -> None:
    from collections import OrderedDict

    nested: dict[str, Any] = {"a": [1, 2.5, True, None, "s", {"b": [{"c": 1}]}], "d": OrderedDict(e=[3])}
    copied = copy_json(nested)
    assert copied == nested
    assert copied["a"] is not nested["a"] and copied["a"][5] is not nested["a"][5]
    assert copied["a"][5]["b"][0] is not nested["a"][5]["b"][0]
    assert type(copied["d"]) is dict and copied["d"]["e"] is not nested["d"]["e"]
    copied["a"][5]["b"][0]["c"] = 2
    assert nested["a"][5]["b"][0]["c"] == 1


def test_copy_json_keeps_the_key_order_and_deep_copies_what_is_not_json() -> None:
    from datetime import UTC, datetime

    class Tags(list[str]):
        pass

    when = [datetime(2024, 1, 1, tzinfo=UTC)]
    nested: dict[str, Any] = {"z": 1, "a": {"y": [when], "b": "x"}, "m": Tags(["t"]), "t": ([1],)}
    copied = copy_json(nested)
    assert copied == nested and list(copied) == ["z", "a", "m", "t"] and list(copied["a"]) == ["y", "b"]
    assert copied["a"]["y"][0] is not when and copied["a"]["y"][0] == when
    assert type(copied["m"]) is list and copied["t"][0] is not nested["t"][0]
