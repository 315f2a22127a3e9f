"""Unknown and duplicate fields: refused, reported or dropped, as kubectl's ``--validate`` chooses.

kubectl asks kube-apiserver to decode what it sends strictly by default, so a misspelt field
(``resources: {request: …}``, ``nodeSelectr``) is an error rather than a setting that silently does
nothing; the same strict decoding refuses a key given twice in a body (kubectl's own file reading
keeps the last value; kubesched refuses it, since the first value is lost without a word).
``validate`` has kubectl's three values: ``strict`` (the default) refuses the object, naming the
field; ``warn`` drops each such field and reports it once, however many objects repeat it, in the
warnings of the run and the log; ``ignore`` drops them silently. Only these checks are relaxed: what
validation refuses (:mod:`kubesched.api.validation`) stays refused.

The fields are found by :mod:`kubesched.api.unknown_fields` and
:class:`~kubesched.scenario.documents.DuplicateField`; the caller says how a problem reads in its own
terms (a manifest's file, document and object, a timeline's step), as an error to raise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from kubesched.api.field_schema import ObjectType
from kubesched.api.unknown_fields import unknown_fields, without_fields
from kubesched.scenario.documents import DuplicateField

STRICT, WARN, IGNORE = "strict", "warn", "ignore"
MODES = (STRICT, WARN, IGNORE)
#: kubectl's older boolean spellings.
ALIASES = {"true": STRICT, "false": IGNORE}
#: How many further fields a strict error lists after the one it names.
MORE_SHOWN = 3

logger = logging.getLogger(__name__)

#: Builds the error for a field of one object or document: (field path, reason) -> the error.
Refusal = Callable[[str, str], Exception]


def validate_mode(value: object) -> str:
    """``value`` as one of MODES: True and "true" are strict, False and "false" ignore (any case)."""
    if isinstance(value, bool):
        return STRICT if value else IGNORE
    if isinstance(value, str):
        mode = ALIASES.get(value.lower(), value.lower())
        if mode in MODES:
            return mode
    raise ValueError(f"validate: expected one of {', '.join(map(repr, MODES))} (or true, false), got {value!r}")


class FieldValidation:
    """One read's treatment of unknown and duplicate fields, and the warnings it gave (``warn``)."""

    def __init__(self, mode: str | bool = STRICT) -> None:
        self.mode = validate_mode(mode)
        #: (kind, path, reason) -> [the first warning's text, how many objects had it]
        self._warned: dict[tuple[str, str, str], list[Any]] = {}

    @classmethod
    def of(cls, validate: str | bool | FieldValidation) -> FieldValidation:
        """``validate`` itself when it is one (to share its warnings), else a new one in that mode."""
        return validate if isinstance(validate, FieldValidation) else cls(validate)

    def checked(self, obj: dict[str, Any], refuse: Refusal, of: ObjectType | None = None) -> dict[str, Any]:
        """``obj`` when it has no unknown field (by its kind's type, or ``of``); else refused, or a copy
        without them (the API server drops them, so the cluster never sees them)."""
        found = unknown_fields(obj, of)
        if not found:
            return obj
        self._apply([(u.path, u.reason) for u in found], refuse, str(obj.get("kind") or ""), "unknown")
        return without_fields(obj, [u.location for u in found])

    def repeated(self, duplicates: Sequence[DuplicateField], refuse: Refusal, kind: str = "") -> None:
        """Refuse or report the keys a document repeats (its data keeps the last value, as the API
        server does when it does not decode strictly)."""
        if duplicates:
            self._apply([(d.path, d.reason) for d in duplicates], refuse, kind, "duplicate")

    def _apply(self, problems: list[tuple[str, str]], refuse: Refusal, kind: str, what: str) -> None:
        if self.mode == STRICT:
            path, reason = problems[0]
            more = [p for p, _ in problems[1:]]
            if more:
                shown = ", ".join(more[:MORE_SHOWN]) + (", …" if len(more) > MORE_SHOWN else "")
                reason += f"; more {what} fields: {shown}"
            raise refuse(path, reason)
        if self.mode == WARN:
            for path, reason in problems:
                key = (kind, path, reason)
                seen = self._warned.get(key)
                if seen is None:
                    message = str(refuse(path, reason))
                    self._warned[key] = [message, 1]
                    logger.warning("%s", message)
                else:
                    seen[1] += 1

    def warnings(self) -> list[str]:
        """Each field dropped with ``warn``, once, in the order first met, with how many more objects
        had it."""
        return [
            message if count == 1 else f"{message} (also in {count - 1} more {'object' if count == 2 else 'objects'})"
            for message, count in self._warned.values()
        ]
