"""What a model tool answers, and how a long answer is paged (behavior.md#d18).

Every answer is budgeted: its text holds at most `cap` tokens (`est`, behavior.md#est) of the
content asked for, plus a trailer line that gives the offset to call again with. Offsets count
UTF-16 code units of the content (the unit of every offset the rebuild text shows, such as the
notes hint's "from character offset N"), so an offset read in a hint or a trailer can be passed
as it is. A cut never leaves half a surrogate pair (D9's rule).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .. import texts
from ..estimate.jstext import drop_dangling_high, len16, slice16
from ..session.message import Json

DEFAULT_ANSWER_TOKENS = 4000
UNITS_PER_TOKEN = 4  # est(s) is len16(s) / 4, rounded


@dataclass(frozen=True)
class ToolAnswer:
    """One answer: the text the model reads, whether it reports a mistake in the call, and the
    same facts for a program (MCP's `structuredContent`)."""

    text: str
    is_error: bool = False
    structured: Json = field(default_factory=dict)


class ToolRefusal(Exception):
    """Arguments the tool cannot act on; the message tells the model what to send instead."""


@dataclass(frozen=True)
class Page:
    text: str  # the content from `offset`, within the cap
    offset: int
    end: int  # the offset after the page
    total: int  # the content's length

    @property
    def next_offset(self) -> int | None:
        return self.end if self.end < self.total else None

    def structured(self) -> Json:
        return {"offset": self.offset, "nextOffset": self.next_offset, "totalChars": self.total}


def page(content: str, offset: int, cap_tokens: int) -> Page:
    """The part of `content` from `offset` (UTF-16 units) that fits `cap_tokens`, ending at a line
    end when one lies in the last fifth of the window. Raises ToolRefusal past the end."""
    total = len16(content)
    if offset > total or (offset == total and total > 0):
        raise ToolRefusal(texts.offset_past_end(offset, total))
    window = cap_tokens * UNITS_PER_TOKEN
    if total - offset <= window:
        return Page(slice16(content, offset), offset, total, total)
    piece = drop_dangling_high(slice16(content, offset, offset + window))
    line_end = piece.rfind("\n")
    if line_end >= 0 and len16(piece[: line_end + 1]) >= window * 4 // 5:
        piece = piece[: line_end + 1]
    return Page(piece, offset, offset + len16(piece), total)


def paged_answer(
    head: str | Callable[[Page], str], content: str, offset: int, cap_tokens: int, extra: Json | None = None
) -> ToolAnswer:
    """`head` (a line saying what this is, or made from the page), then the page of `content` from
    `offset`, then the trailer when more follows."""
    p = page(content, offset, cap_tokens)
    first = head(p) if callable(head) else head
    parts = [first, p.text] if first else [p.text]
    if p.next_offset is not None:
        parts.append(texts.answer_continues(p.total - p.end, p.next_offset))
    return ToolAnswer("\n".join(parts), structured={**(extra or {}), **p.structured()})


MAX_HITS_PER_ANSWER = 50


class HitPager:
    """A search's answer, paged by match: `offset` matches are skipped, then matches are shown
    while they fit the cap (at most `MAX_HITS_PER_ANSWER`), and the rest are only counted."""

    def __init__(self, offset: int, cap_tokens: int) -> None:
        self.offset = offset
        self.cap = cap_tokens * UNITS_PER_TOKEN
        self.shown: list[str] = []
        self.used = 0
        self.total = 0
        self.next_offset: int | None = None

    def match(self, entry: Callable[[], str]) -> None:
        """Count one match; `entry` writes its line(s), called only for a match that is shown."""
        self.total += 1
        if self.total <= self.offset or self.next_offset is not None:
            return
        text = entry()
        if self.shown and (self.used + len16(text) > self.cap or len(self.shown) == MAX_HITS_PER_ANSWER):
            self.next_offset = self.offset + len(self.shown)
            return
        self.shown.append(text)
        self.used += len16(text) + 1

    def answer(self, heading: str, extra: Json | None = None) -> ToolAnswer:
        """The heading, the shown matches, and the trailer when more follow. Raises ToolRefusal for
        an offset past the last match."""
        if self.offset and self.offset >= self.total:
            raise ToolRefusal(texts.hit_offset_past_end(self.offset, self.total))
        lines = [heading, *self.shown]
        if self.next_offset is not None:
            lines.append(texts.more_hits(self.total - self.next_offset, self.next_offset))
        structured = {
            **(extra or {}),
            "matches": self.total,
            "offset": self.offset,
            "shown": len(self.shown),
            "nextOffset": self.next_offset,
        }
        return ToolAnswer("\n".join(lines), structured=structured)
