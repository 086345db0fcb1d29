"""Anthropic prompt-cache breakpoints on the messages (docs/formats.md, "`cache`").

At most 3 here, plus the one `prefix` puts on the last block of the frozen prefix (4 in all):

1. the last block of the rebuild boundary's message: everything up to the boundary is the stable
   part of the history from one rebuild to the next;
2. the last block of the newest message: the next turn reads this turn's prefix from it;
3. a rolling one when more than `LOOKBACK` blocks separate the two: on the last cacheable block at
   least `ROLLING_DISTANCE` blocks before the end, so a turn that appends many blocks (a parallel
   fan-out) still finds the previous entry within the API's 20-block lookback.

A breakpoint sits on the last cacheable block of its message: never on `thinking` /
`redacted_thinking` blocks or empty text, and never on a *volatile* block, the per-turn memory
reminder: it moves to the newest user-role message every turn (in Anthropic-shaped sessions, to the
newest tool-result carrier every step), so an entry written through it would never be read again.
The breakpoint goes on the block before it, whose bytes the next turn repeats. Markers are set on
the renderer's own block dicts (never on stored data). The bytes up to a breakpoint depend only on
the messages before it, so they stay identical from turn n to n+1 while those messages do not change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Json = dict[str, Any]
LOOKBACK = 20
ROLLING_DISTANCE = 15
NOT_CACHEABLE = frozenset({"thinking", "redacted_thinking"})


def cache_control(ttl: str) -> Json:
    return {"type": "ephemeral", "ttl": ttl}


def cacheable(block: Json, volatile: frozenset[int] = frozenset()) -> bool:
    """A block that may carry a breakpoint; `volatile` holds the `id()`s of volatile blocks."""
    return (
        block.get("type") not in NOT_CACHEABLE
        and not (block.get("type") == "text" and not block.get("text"))
        and id(block) not in volatile
    )


Position = tuple[int, int]  # (message, block): in request order, as tuples compare
OwnContent = Callable[[int], Json]  # message index → that message, safe to change (copy-on-write)


def _mark_last_cacheable(
    messages: list[Json], m: int, upto: int, control: Json, volatile: frozenset[int], own: OwnContent
) -> int | None:
    """Mark the last cacheable block among message `m`'s first `upto` blocks; its index, or None."""
    blocks = messages[m]["content"]
    for i in range(min(upto, len(blocks)) - 1, -1, -1):
        if cacheable(blocks[i], volatile):
            content = own(m)["content"]
            content[i] = {**content[i], "cache_control": dict(control)}
            return i
    return None


def _own_in_place(messages: list[Json]) -> OwnContent:
    return messages.__getitem__


def place_message_breakpoints(
    messages: list[Json],
    boundary_index: int | None,
    ttl: str,
    volatile: frozenset[int] = frozenset(),
    own: OwnContent | None = None,
) -> int:
    """Set the message breakpoints; returns how many were set. `volatile`: `id()`s of the blocks
    that never carry one (the reminder); `own(i)`: message `i` as it may be changed (the renderer's
    copy of a message a cached prefix shares; by default the message itself). Only the blocks
    near the end and the boundary's are visited, whatever the length of the request."""
    control = cache_control(ttl)
    own = own or _own_in_place(messages)
    if not any(message["content"] for message in reversed(messages)):
        return 0
    placed: list[Position] = []
    if boundary_index is not None:
        pos = _place_in_message(messages, boundary_index, None, control, volatile, own)
        if pos is not None:
            placed.append(pos)
    newest = _place_in_message(messages, len(messages) - 1, None, control, volatile, own)
    last_before = placed[-1] if placed else None
    if newest is not None and newest not in placed:
        placed.append(newest)
        if _gap_exceeds(messages, last_before, newest, LOOKBACK):
            m, b = _blocks_back(messages, newest, ROLLING_DISTANCE)
            rolling = _place_in_message(messages, m, b + 1, control, volatile, own)
            if rolling is not None and (last_before is None or last_before < rolling) and rolling < newest:
                placed.append(rolling)
    return len(placed)


def _gap_exceeds(messages: list[Json], first: Position | None, last: Position, limit: int) -> bool:
    """Whether more than `limit` blocks separate `first` (None: before every block) from `last`,
    counting back from `last` only as far as `limit`."""
    m2, b2 = last
    if first is not None and first[0] == m2:
        return b2 - first[1] > limit
    gap = b2 + 1
    stop = first[0] if first is not None else -1
    for j in range(m2 - 1, stop, -1):
        gap += len(messages[j]["content"])
        if gap > limit:
            return True
    if first is not None:
        gap += len(messages[first[0]]["content"]) - first[1] - 1
    return gap > limit


def _blocks_back(messages: list[Json], pos: Position, count: int) -> Position:
    """The block `count` blocks before `pos` (it exists: the caller checked the gap)."""
    m, b = pos
    while b < count:
        count -= b + 1
        m -= 1
        b = len(messages[m]["content"]) - 1
    return m, b - count


def _place_in_message(
    messages: list[Json],
    m: int,
    upto: int | None,
    control: Json,
    volatile: frozenset[int],
    own: OwnContent,
) -> Position | None:
    """Mark the last cacheable block of message `m` (before block `upto`); its position."""
    for index in range(m, -1, -1):  # an uncacheable message: the nearest earlier one
        blocks = messages[index]["content"]
        limit = len(blocks) if upto is None or index != m else upto
        b = _mark_last_cacheable(messages, index, limit, control, volatile, own)
        if b is not None:
            return index, b
    return None
