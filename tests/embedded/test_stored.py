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
