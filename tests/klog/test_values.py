"""Values spelt as Go spells them (kubesched.klog.values): strconv.Quote, encoding/json, klog's ObjectRef."""

from __future__ import annotations

import pytest

from kubesched.klog.values import ObjectRef, UnsupportedValue, go_float, go_json, go_quote, plain_float, text_string


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("node-3", '"node-3"'),
        ("", '""'),
        ('say "hi"', r'"say \"hi\""'),
        ("back\\slash", r'"back\\slash"'),
        ("tab\there", r'"tab\there"'),
        ("bell\a vt\v ff\f bs\b cr\r", r'"bell\a vt\v ff\f bs\b cr\r"'),
        ("nul\x00 esc\x1b del\x7f", r'"nul\x00 esc\x1b del\x7f"'),
        ("région café 日本", '"région café 日本"'),  # printable non-ASCII stays as it is
        ("nbsp\u00a0zwsp\u200b", r'"nbsp\u00a0zwsp\u200b"'),  # spaces other than ' ' and format characters
        ("private\U000f0000", r'"private\U000f0000"'),
        ("byte\udcff", r'"byte\xff"'),  # an undecodable byte carried as a surrogate
        ("r:\x00:z", r'"r:\x00:z"'),  # kube-scheduler's zone key
    ],
)
def test_go_quote(text: str, want: str) -> None:
    assert go_quote(text) == want


def test_a_string_spanning_lines_is_klogs_indented_block() -> None:
    assert text_string("line 1\nline 2") == "<\n\tline 1\n\tline 2\n >"
    assert text_string("ends with a break\n") == "<\n\tends with a break\n >"
    assert text_string('one "line"') == r'"one \"line\""'


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (3.0, "3"),
        (-0.0, "-0"),
        (0.5, "0.5"),
        (1.5e-7, "1.5e-7"),
        (1e-7, "1e-7"),
        (1e-10, "1e-10"),
        (1e-6, "0.000001"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (123456.789, "123456.789"),
        (1e16, "10000000000000000"),
    ],
)
def test_go_float(value: float, want: str) -> None:
    assert go_float(value) == want


def test_nan_is_refused_as_go_json_refuses_it() -> None:
    with pytest.raises(UnsupportedValue, match="unsupported value: NaN"):
        go_float(float("nan"))
    with pytest.raises(UnsupportedValue, match=r"\+Inf"):
        go_json([float("inf")])


def test_plain_float_never_uses_an_exponent() -> None:
    assert plain_float(1732575492123.4568) == "1732575492123.4568"
    assert plain_float(1e21) == "1000000000000000000000"
    assert plain_float(2.0) == "2"


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (None, "null"),
        (True, "true"),
        (7, "7"),
        ("s", '"s"'),
        (["a", 1, 2.0, None], '["a",1,2,null]'),
        ({"b": 1, "a": [True]}, '{"a":[true],"b":1}'),  # Go sorts map keys
        ({"NodeResourcesFit", "TaintToleration"}, '{"NodeResourcesFit":{},"TaintToleration":{}}'),  # sets.Set
        (frozenset(), "{}"),
        (
            [ObjectRef("web-1", "default"), ObjectRef("node-3")],
            '[{"name":"web-1","namespace":"default"},{"name":"node-3"}]',
        ),
        (["<b>&"], r'["\u003cb\u003e\u0026"]'),  # json.Marshal escapes HTML characters
        (["line\nbreak\u2028"], r'["line\nbreak\u2028"]'),
    ],
)
def test_go_json(value: object, want: str) -> None:
    assert go_json(value) == want


def test_the_json_format_does_not_escape_html() -> None:
    assert go_json(["<b>&"], escape_html=False) == '["<b>&"]'


def test_object_ref() -> None:
    assert str(ObjectRef("web-1", "default")) == "default/web-1"
    assert str(ObjectRef("node-3")) == "node-3"
    assert ObjectRef("node-3").as_json() == {"name": "node-3"}
