"""Finding a query in text, in bounded time (behavior.md#d18).

A plain query is found as a literal, without regard to case. A regular expression is run by RE2
(the `google-re2` package), whose matching time is linear in the length of the text whatever the
pattern: a pattern the model writes cannot backtrack catastrophically over a long history.
RE2's syntax is Perl's less backreferences and look-around; a pattern it refuses is answered with
RE2's reason. The pattern itself is bounded (`MAX_PATTERN_CHARS`) and so is the memory RE2 may use
to compile it, so that compiling costs little too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import re2

from .. import texts
from ..estimate.jstext import fold_ws
from .answer import ToolRefusal

MAX_PATTERN_CHARS = 1000
MAX_PROGRAM_BYTES = 8 << 20  # RE2's max_mem: a pattern that needs more is refused, not compiled
SNIPPET_BEFORE = 60
SNIPPET_AFTER = 120


@dataclass(frozen=True)
class Matcher:
    """A compiled query; `find` gives the first match's span in a text, or None."""

    pattern: Any

    def find(self, text: str) -> tuple[int, int] | None:
        try:
            match = self.pattern.search(text)
        except UnicodeEncodeError:  # a lone surrogate: RE2 reads UTF-8, so replace it (same length)
            match = self.pattern.search(_without_lone_surrogates(text))
        return None if match is None else (match.start(), match.end())


def matcher(query: str, regex: bool) -> Matcher:
    """The query compiled; raises ToolRefusal for an empty or over-long query or a bad pattern."""
    if not query:
        raise ToolRefusal(texts.QUERY_EMPTY)
    if len(query) > MAX_PATTERN_CHARS:
        raise ToolRefusal(texts.query_too_long(len(query), MAX_PATTERN_CHARS))
    options = re2.Options()
    options.log_errors = False  # RE2 would write its complaint to stderr
    options.max_mem = MAX_PROGRAM_BYTES
    if not regex:
        options.literal = True
        options.case_sensitive = False
    try:
        # RE2 reads UTF-8: a lone surrogate becomes U+FFFD, as it does in the texts searched.
        return Matcher(re2.compile(_without_lone_surrogates(query), options))
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        text = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
        raise ToolRefusal(texts.bad_pattern(text)) from None


def snippet(text: str, span: tuple[int, int]) -> str:
    """The match with some context on each side, on one line (whitespace runs folded)."""
    start, end = span
    end = min(end, start + SNIPPET_AFTER)
    a, b = max(0, start - SNIPPET_BEFORE), min(len(text), end + SNIPPET_AFTER)
    piece = fold_ws(text[a:b])
    return ("\u2026" if a > 0 else "") + piece + ("\u2026" if b < len(text) else "")


def _without_lone_surrogates(text: str) -> str:
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
