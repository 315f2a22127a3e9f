"""Did-you-mean hints: the names closest to a misspelt one, for error messages.

Similarity is difflib's ratio, compared without case (``nodeaffinity`` is one letter away from
``NodeAffinity``, not five), and the suggestions come back spelt as the choices spell them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: difflib's default: below this ratio two names share too little to suggest one for the other.
CUTOFF = 0.6


def close_names(word: str, choices: Iterable[str], *, n: int = 3, cutoff: float = CUTOFF) -> list[str]:
    """Up to ``n`` of ``choices`` closest to ``word``, best first (ties in the order given)."""
    by_folded: dict[str, str] = {}
    for choice in choices:
        by_folded.setdefault(choice.casefold(), choice)
    folded = difflib.get_close_matches(word.casefold(), list(by_folded), n=n, cutoff=cutoff)
    return [by_folded[f] for f in folded]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean "X"?)`` with the closest choice, or "" when none is close; appended to a message."""
    close = close_names(word, choices, n=1)
    return f' (did you mean "{close[0]}"?)' if close else ""
