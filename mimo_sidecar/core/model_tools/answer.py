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
from ..jstext import drop_dangling_high, len16, slice16
from ..message import Json

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
