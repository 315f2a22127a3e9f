"""CEL device selectors: compiled once per expression, evaluated per device, as kube-scheduler does.

A DeviceClass or a claim's request selects devices with CEL expressions over ``device``: ``driver``,
``attributes["domain"].name`` (typed: int, bool, string or a semantic version) and
``capacity["domain"].name`` (a quantity). The engine is cel-expr-python, the CEL project's own Python
binding of its C++ implementation: it parses, type-checks and runs the expression; kubesched declares
the environment Kubernetes gives DRA selectors and adds Kubernetes' library functions
(:mod:`kubesched.api.cel_library`).

How this environment meets kube-apiserver's:

- ``device.driver``, ``device.attributes`` and ``device.capacity`` are declared as qualified variables
  (typed string, map of maps of any value, map of maps of quantities); an unknown field such as
  ``device.foo`` fails to compile, reported as upstream reports it ("undefined field 'foo'").
- An expression must type to bool (or to an unknown type, checked again at run time); otherwise
  "must evaluate to bool or the unknown type, not string", as the API server says.
- A domain an expression names but the device lacks reads as an empty map, so
  ``has(device.attributes["other.example.com"].x)`` is false rather than an error; a missing attribute
  is a run-time error for that device, as upstream.
- Upstream limits the run-time cost of one evaluation to 1,000,000 CEL cost units and refuses, at
  validation, expressions whose estimated cost exceeds that. The engine here limits one evaluation to
  10,000 comprehension iterations instead (an evaluation never runs away; a selector that iterates
  further fails on every device), and nothing is estimated at validation.
- The Kubernetes base environment's ``cel.bind``, the strings extension, ``quantity``, ``semver`` and
  regex ``find``/``findAll`` are there; the rarely used URL, IP, CIDR, format, sets and lists
  libraries are not (an expression calling them fails to compile, naming the function).

The engine is imported on first use, so kubesched runs without it until a selector needs compiling.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kubesched.api import cel_library
from kubesched.api.dra import Device, DeviceAttribute, split_qualified_name

#: resourceapi.CELSelectorExpressionMaxLength.
MAX_EXPRESSION_LENGTH = 10 * 1024
#: Compiled expressions kept (a cluster has a handful of distinct selectors).
MAX_CACHED = 4096
_DOMAIN_RE = re.compile(r"""device\s*\.\s*(attributes|capacity)\s*\[\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\]""")
_STATUS_PREFIX_RE = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX_RE = re.compile(r"\s*\[[A-Z_]+\]$")
#: ``device.foo`` is an undeclared qualified name to the engine and an undefined field to upstream.
_UNDEFINED_FIELD_RE = re.compile(r"undeclared reference to 'device\.([A-Za-z_][A-Za-z0-9_]*)' \(in container ''\)")


class CelUnavailable(RuntimeError):
    """The CEL engine is not installed."""


class SelectorRuntimeError(Exception):
    """A selector failed on one device (a missing attribute, a wrong type): that device's verdict."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclass(frozen=True, slots=True)
class CompiledSelector:
    """One expression, compiled: ``error`` (the API server's detail) when it does not compile."""

    expression: str
    program: Any = None
    error: str | None = None
    #: Attribute and capacity domains the expression names literally (empty maps when a device lacks them).
    domains: tuple[tuple[str, str], ...] = ()


@functools.cache
def _environment(consumable_capacity: bool) -> Any:
    try:
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_bindings, ext_strings
    except ImportError:
        raise CelUnavailable(
            "CEL device selectors need the cel-expr-python package (pip install cel-expr-python)"
        ) from None
    t = cel.Type
    value = t.Map(t.STRING, t.DYN)
    kinds = {
        "string": t.STRING,
        "bool": t.BOOL,
        "int": t.INT,
        "double": t.DOUBLE,
        "value": value,
        "strings": t.List(t.STRING),
    }
    by_name: dict[str, list[Any]] = {}
    for name, overload_id, member, params, result, impl in cel_library.FUNCTIONS:
        by_name.setdefault(name, []).append(
            cel.Overload(overload_id, kinds[result], [kinds[p] for p in params], is_member=member, impl=impl)
        )
    variables = {
        "device.driver": t.STRING,
        "device.attributes": t.Map(t.STRING, t.Map(t.STRING, t.DYN)),
        "device.capacity": t.Map(t.STRING, t.Map(t.STRING, value)),
    }
    if consumable_capacity:
        variables["device.allowMultipleAllocations"] = t.BOOL
    return cel.NewEnv(
        variables=variables,
        functions=[cel.FunctionDecl(name, overloads) for name, overloads in by_name.items()],
        extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings()],
    )


_cache: dict[tuple[str, bool], CompiledSelector] = {}
_cache_lock = threading.Lock()


def compile_selector(expression: str, *, consumable_capacity: bool = False) -> CompiledSelector:
    """The compiled expression, from the cache when it was compiled before (cel.Cache's role)."""
    key = (expression, consumable_capacity)
    found = _cache.get(key)
    if found is not None:
        return found
    compiled = _compile(expression, consumable_capacity)
    with _cache_lock:
        if len(_cache) >= MAX_CACHED:
            _cache.clear()
        _cache[key] = compiled
    return compiled


def _compile(expression: str, consumable_capacity: bool) -> CompiledSelector:
    env = _environment(consumable_capacity)
    try:
        program = env.compile(expression)
    except RuntimeError as err:
        detail = _UNDEFINED_FIELD_RE.sub(r"undefined field '\1'", clean_message(str(err)))
        return CompiledSelector(expression, error="compilation failed: " + detail)
    result = type_name(program.return_type().name())
    if result not in ("bool", "dyn"):
        return CompiledSelector(expression, error=f"must evaluate to bool or the unknown type, not {result}")
    domains = tuple(
        sorted(
            {
                (m.group(1), m.group(2) if m.group(2) is not None else m.group(3))
                for m in _DOMAIN_RE.finditer(expression)
            }
        )
    )
    return CompiledSelector(expression, program=program, domains=domains)


def clean_message(message: str) -> str:
    """The engine's text without its status code (``INVALID_ARGUMENT: ...`` ``[INVALID_ARGUMENT]``)."""
    return _STATUS_SUFFIX_RE.sub("", _STATUS_PREFIX_RE.sub("", message.strip()))


#: The engine's run-time errors in the words of kube-scheduler's CEL implementation (what its Filter reports).
_RUNTIME_MESSAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r'^Key not found in map : "?(.*?)"?$'), r"no such key: \1"),
    (re.compile(r"^divide by zero$"), "division by zero"),
    (re.compile(r"^No matching overloads? found.*$"), "no such overload"),
    (re.compile(r"^Index error: index=(-?\d+) size=(\d+)$"), r"index '\1' out of range in list size '\2'"),
    (
        re.compile(r"^cannot convert (string|int|uint|double|bool|bytes) to (string|int|uint|double|bool|bytes)$"),
        r"type conversion error from '\1' to '\2'",
    ),
)


def runtime_message(message: str) -> str:
    """A run-time error as upstream words it (``no such key: model``); other texts as the engine says them."""
    text = clean_message(message)
    for pattern, replacement in _RUNTIME_MESSAGES:
        if pattern.match(text):
            return pattern.sub(replacement, text)
    return text


_TYPE_NAMES = {"NULL": "null_type", "DURATION": "google.protobuf.Duration", "TIMESTAMP": "google.protobuf.Timestamp"}


def type_name(engine_name: str) -> str:
    """CEL's spelling of a type (``list(int)``, ``map(string, dyn)``) from the engine's (``LIST<INT>``)."""
    text = engine_name
    for upper, lower in _TYPE_NAMES.items():
        text = re.sub(rf"\b{upper}\b", lower, text)
    return re.sub(r"\b[A-Z_]+\b", lambda m: m.group(0).lower(), text).replace("<", "(").replace(">", ")")


# ---------------------------------------------------------------------------------------------------------
# Evaluation


def _attribute_value(attribute: DeviceAttribute, name: str) -> Any:
    if attribute.kind != "version":
        return attribute.value
    try:
        return cel_library.semver_value(str(attribute.value))
    except ValueError as err:
        raise SelectorRuntimeError(f"attribute {name}: parse semantic version: {err}") from None


def device_input(device: Device, driver: str) -> dict[str, Any]:
    """The ``device`` variables of one device, built once per device view (kept in its memo)."""
    key = ("cel-input", driver)
    found = device.memo.get(key)
    if found is not None:
        if isinstance(found, SelectorRuntimeError):
            raise found
        return dict(found)
    attributes: dict[str, dict[str, Any]] = {}
    capacity: dict[str, dict[str, Any]] = {}
    try:
        for name, attribute in device.attributes.items():
            domain, ident = split_qualified_name(name, driver)
            attributes.setdefault(domain, {})[ident] = _attribute_value(attribute, name)
    except SelectorRuntimeError as err:
        device.memo[key] = err
        raise
    for name, amount in device.capacity.items():
        domain, ident = split_qualified_name(name, driver)
        capacity.setdefault(domain, {})[ident] = cel_library.quantity_value(Fraction(amount))
    data = {
        "device.driver": driver,
        "device.attributes": attributes,
        "device.capacity": capacity,
        "device.allowMultipleAllocations": bool(device.allow_multiple_allocations),
    }
    device.memo[key] = data
    return dict(data)


def _with_domains(data: dict[str, Any], domains: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """``data`` with an empty map for each named domain the device lacks (what upstream's lookup default
    gives); the device's own maps are copied before they change."""
    for field_name, domain in domains:
        key = f"device.{field_name}"
        maps: Mapping[str, Any] = data[key]
        if domain not in maps:
            data[key] = {**maps, domain: {}}
    return data


def evaluate(selector: CompiledSelector, device: Device, driver: str) -> bool:
    """Whether ``device`` (of ``driver``) matches; SelectorRuntimeError when the expression fails on it."""
    data = device_input(device, driver)
    if selector.domains:
        data = _with_domains(data, selector.domains)
    try:
        result = selector.program.eval(data=data)
    except RuntimeError as err:
        raise SelectorRuntimeError(runtime_message(str(err))) from None
    kind = result.type().name()
    if kind == "BOOL":
        return bool(result.value())
    if kind == "ERROR":
        raise SelectorRuntimeError(runtime_message(str(result.value())))
    name = type_name(kind)
    raise SelectorRuntimeError(
        f"CEL result of type {name} could not be converted to bool: type conversion error from '{name}' to 'bool'"
    )
