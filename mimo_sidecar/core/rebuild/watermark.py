"""The checkpoint watermark: how much history the next checkpoint covers (behavior.md#watermark).

`compute_boundary` picks the newest message to cover so that a tail of roughly 10000–20000 tokens with at
least five text-bearing messages stays live (behavior.md#watermark-compute). `adjust` then moves the cut so
that no tool call is separated from its result and no provider message is split
(behavior.md#watermark-adjust); it is a real walker for split host shapes (DEVIATION D8) and provably a no-op
on MiMo's inline shape. `watermark_for` combines both with the sidecar's caller convention `adjust(w + 1) -
1`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from ..session.message import Message
from ..session.shapes import provider_id, tool_results, tool_uses

TAIL_MIN_TOKENS = 10000
TAIL_MAX_TOKENS = 20000
TAIL_MIN_TEXT_BLOCK_MESSAGES = 5


# -- behavior.md#watermark-compute -----------------------------------------------------------------
def _last_finished_assistant(msgs: Sequence[Message]) -> int | None:
    # "finish present, any value" (behavior.md#watermark-compute), unlike behavior.md#trigger-loop's truthy
    # finish.
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i].role == "assistant" and msgs[i].has_finish:
            return i
    return None


def compute_boundary(msgs: Sequence[Message]) -> int | None:
    """Index of the watermark candidate (`computeBoundary`, behavior.md#watermark-compute); None when `msgs`
    is empty.

    The returned message is covered and is also counted in the tail sum, exactly as in MiMo.
    """
    if not msgs:
        return None
    a = _last_finished_assistant(msgs)
    if a is None or a == 0:
        return 0
    s = a - 1
    total = sum(m.tokens for m in msgs[s:])
    blocks = sum(1 for m in msgs[s:] if m.has_text_block())
    if total >= TAIL_MAX_TOKENS:
        return s  # soft ceiling: one huge turn stays whole rather than pulling the start forward
    while (
        s > 0
        and total < TAIL_MAX_TOKENS
        and (total < TAIL_MIN_TOKENS or blocks < TAIL_MIN_TEXT_BLOCK_MESSAGES)
    ):
        s -= 1
        total += msgs[s].tokens
        if msgs[s].has_text_block():
            blocks += 1
    return s


# -- behavior.md#watermark-adjust ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Element:
    """One message as the walker sees it: role, provider-message ID, its uses and its results."""

    role: str
    id: str
    use_ids: frozenset[str]
    result_ids: tuple[str, ...]


def element_of(m: Message) -> Element:
    """One message's projection, cached on the message until it changes."""
    e = m.derived.get("watermark.element")
    if e is None:
        e = Element(
            m.role,
            provider_id(m),
            frozenset(u.call_id for u in tool_uses(m)),
            tuple(r.call_id for r in tool_results(m)),
        )
        m.derived["watermark.element"] = e
    return e


def project(msgs: Sequence[Message]) -> list[Element]:
    """The behavior.md#watermark-adjust projection. Inline `tool` parts give a use and a result on the same
    element."""
    return [element_of(m) for m in msgs]


class LazyProjection(Sequence[Element]):
    """The projection of `msgs`, computed element by element as the walker reads it.

    The walker reads the kept range and then steps back only while orphan results remain, so a
    watermark costs the tail, not the whole history (`rebuild/compute` must not grow with the
    session's size).
    """

    def __init__(self, msgs: Sequence[Message]) -> None:
        self._msgs = msgs

    def __len__(self) -> int:
        return len(self._msgs)

    @overload
    def __getitem__(self, index: int) -> Element: ...

    @overload
    def __getitem__(self, index: slice) -> list[Element]: ...

    def __getitem__(self, index: int | slice) -> Element | list[Element]:
        if isinstance(index, slice):
            return [element_of(m) for m in self._msgs[index]]
        return element_of(self._msgs[index])


def _pair_orphan_results(elems: Sequence[Element], c: int) -> int:
    """Step 1: pull `c` back to the assistant issuing any result in `[c..]` whose use is not there."""
    kept = elems[c:]
    used = set().union(*(e.use_ids for e in kept))
    orphans = {r for e in kept for r in e.result_ids if r not in used}
    i = c - 1
    while orphans and i >= 0:
        e = elems[i]
        if e.role == "assistant":
            matched = e.use_ids & orphans
            if matched:
                c = i
                orphans -= matched
        i -= 1
    return c


def _join_provider_message(elems: Sequence[Element], c: int) -> int:
    """Step 2: never start the kept range inside one provider message."""
    while c > 0 and elems[c - 1].id == elems[c].id:
        c -= 1
    return c


def adjust(elems: Sequence[Element], c: int) -> int:
    """`c` = first index of the kept range; returns the adjusted first index (behavior.md#watermark-adjust).

    The sidecar repeats both steps until `c` stops moving (item 4), so a range pulled back by
    step 2 is re-checked for orphans. `c` never increases, so the loop ends.
    """
    if c <= 0 or c >= len(elems):
        return c
    while True:
        moved = _join_provider_message(elems, _pair_orphan_results(elems, c))
        if moved == c:
            return c
        c = moved


# -- caller convention -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class WatermarkResult:
    index: int  # the watermark `w'`: covered, inclusive
    id: str
    boundary_index: int  # what `compute_boundary` chose before the adjustment
    tail_tokens: int  # Σ tokens of the messages after the watermark
    tail_text_blocks: int  # messages after the watermark that have a text block

    @property
    def adjusted(self) -> bool:
        return self.index != self.boundary_index


def adjusted_watermark(msgs: Sequence[Message], w: int) -> int:
    """`adjust(w + 1) - 1` (behavior.md#watermark-caller-convention); -1 means no valid watermark."""
    if w + 1 >= len(msgs):
        return w
    return adjust(LazyProjection(msgs), w + 1) - 1


def watermark_for(msgs: Sequence[Message]) -> WatermarkResult | None:
    """The watermark a starting writer should cover, or None (empty view / nothing coverable)."""
    w = compute_boundary(msgs)
    if w is None:
        return None
    wm = adjusted_watermark(msgs, w)
    if wm < 0:
        return None
    tail = msgs[wm + 1 :]
    return WatermarkResult(
        index=wm,
        id=msgs[wm].id,
        boundary_index=w,
        tail_tokens=sum(m.tokens for m in tail),
        tail_text_blocks=sum(1 for m in tail if m.has_text_block()),
    )
