"""How a logged value is written, as Go writes it: quoted strings, numbers, JSON for the rest.

kube-scheduler's key/value pairs go through two encoders: klog's text format quotes strings the way Go's
``strconv.Quote`` does and writes anything else (numbers, lists, maps) with ``encoding/json``; the JSON
format writes every value as JSON. The functions here give Python values the same spelling, so that a
line reads the same whichever scheduler wrote it:

* a ``str`` is a Go string; an ``int`` a Go integer; a ``float`` is spelt as Go's shortest form (``3``
  for 3.0, ``1e-07`` becomes ``1e-7``);
* a list or tuple is a JSON array, a dict a JSON object with sorted keys (Go sorts map keys);
* a set is written as kube-scheduler's ``sets.Set`` is (a map to empty structs): ``{"a":{},"b":{}}``;
* an :class:`ObjectRef` (``klog.KObj``) is ``"ns/name"`` in text and ``{"name":…,"namespace":…}`` in JSON;
* an exception is its message; anything else is ``str(value)`` (Go's Stringer).
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """A reference to a Kubernetes object by namespace and name (klog's ``ObjectRef``)."""

    name: str
    namespace: str = ""

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def as_json(self) -> dict[str, str]:
        """The JSON shape (``namespace`` left out when empty, as its Go ``omitempty`` tag says)."""
        return {"name": self.name, "namespace": self.namespace} if self.namespace else {"name": self.name}


class UnsupportedValue(ValueError):
    """A value Go's JSON encoder refuses (NaN, infinities)."""


# -- strings ---------------------------------------------------------------------------------------------
_GO_ESCAPES = {
    "\a": r"\a",
    "\b": r"\b",
    "\f": r"\f",
    "\n": r"\n",
    "\r": r"\r",
    "\t": r"\t",
    "\v": r"\v",
    '"': r"\"",
    "\\": r"\\",
}


def go_quote(text: str) -> str:
    """``text`` in double quotes with Go's escapes: ``\\n``, ``\\"``, ``\\x7f``, ``\\u00a0``… (``strconv.Quote``).

    Printable characters, non-ASCII ones included, stay as they are; Python's notion of printable is
    Go's (letters, marks, numbers, punctuation, symbols and the ASCII space).
    """
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = []
    for ch in text:
        escaped = _GO_ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(_escape_code_point(ord(ch)))
    return '"' + "".join(out) + '"'


def _escape_code_point(cp: int) -> str:
    if cp < 0x20 or cp == 0x7F:
        return f"\\x{cp:02x}"
    if 0xDC80 <= cp <= 0xDCFF:
        return f"\\x{cp - 0xDC00:02x}"  # an undecodable byte carried as a lone surrogate
    if 0xD800 <= cp <= 0xDFFF:
        return "\\ufffd"  # not a character: Go writes the replacement character
    return f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}"


def text_string(text: str) -> str:
    """A string value in klog's text format: quoted, or, when it spans lines, klog's indented block
    (``<`` then each line after a tab, then `` >`` on a line of its own)."""
    if "\n" not in text:
        return go_quote(text)
    lines = text.split("\n")
    ends_with_break = lines[-1] == ""
    if ends_with_break:
        lines.pop()
    return "<\n" + "".join(f"\t{line}\n" for line in lines) + " >"


# -- numbers ---------------------------------------------------------------------------------------------
def go_float(value: float) -> str:
    """A float as Go's ``encoding/json`` writes it: shortest digits, plain notation between 1e-6 and
    1e21, otherwise an exponent without a leading zero (``1e-7``, ``1e+21``)."""
    if math.isnan(value) or math.isinf(value):
        raise UnsupportedValue(f"json: unsupported value: {_go_special(value)}")
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        mantissa, _, exponent = repr(value).partition("e")
        sign, digits = exponent[0], exponent[1:]
        if sign == "-" and len(digits) == 2 and digits[0] == "0":
            digits = digits[1:]
        return f"{mantissa.removesuffix('.0')}e{sign}{digits}"
    return plain_float(value)


def plain_float(value: float) -> str:
    """A float in plain notation with its shortest digits (``strconv.FormatFloat(f, 'f', -1, 64)``)."""
    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").removesuffix(".")
    return text


def _go_special(value: float) -> str:
    return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")


# -- JSON as Go writes it --------------------------------------------------------------------------------
def go_json(value: Any, *, escape_html: bool = True) -> str:
    """``value`` as Go's ``encoding/json`` encodes it (HTML characters escaped, as ``json.Marshal`` does,
    unless ``escape_html`` is off, as the JSON log format has it)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _json_string(value, escape_html)
    if isinstance(value, ObjectRef):
        return go_json(value.as_json(), escape_html=escape_html)
    if isinstance(value, Enum):
        return go_json(value.value, escape_html=escape_html)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return go_float(float(value))
    if isinstance(value, Mapping):
        items = sorted((str(k), v) for k, v in value.items())
        return (
            "{"
            + ",".join(f"{_json_string(k, escape_html)}:{go_json(v, escape_html=escape_html)}" for k, v in items)
            + "}"
        )
    if isinstance(value, set | frozenset):
        return "{" + ",".join(f"{_json_string(k, escape_html)}:{{}}" for k in sorted(map(str, value))) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v, escape_html=escape_html) for v in value) + "]"
    return _json_string(str(value), escape_html)


def _json_string(text: str, escape_html: bool) -> str:
    out = json.dumps(text, ensure_ascii=False)
    if escape_html and ("<" in out or ">" in out or "&" in out):
        out = out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    if "\u2028" in out or "\u2029" in out:
        out = out.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return out


def error_text(err: BaseException) -> str:
    """What Go's ``err.Error()`` would say: the exception's message, or its type when it has none."""
    return str(err) or type(err).__name__
