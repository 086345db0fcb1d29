"""Anthropic prompt-cache breakpoints on the messages (protocol.md, "`cache`").

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


def _mark_last_cacheable(
    blocks: list[Json], upto: int, control: Json, volatile: frozenset[int]
) -> int | None:
    """Mark the last cacheable block among `blocks[:upto]`; its index, or None."""
    for i in range(min(upto, len(blocks)) - 1, -1, -1):
        if cacheable(blocks[i], volatile):
            blocks[i] = {**blocks[i], "cache_control": dict(control)}
            return i
    return None


def place_message_breakpoints(
    messages: list[Json], boundary_index: int | None, ttl: str, volatile: frozenset[int] = frozenset()
) -> int:
    """Set the message breakpoints; returns how many were set. `volatile`: `id()`s of the blocks
    that never carry one (the reminder)."""
    control = cache_control(ttl)
    flat = [(m, b) for m, message in enumerate(messages) for b in range(len(message["content"]))]
    if not flat:
        return 0
    placed: list[int] = []  # flat positions of the breakpoints
    if boundary_index is not None:
        pos = _place_in_message(messages, flat, boundary_index, None, control, volatile)
        if pos is not None:
            placed.append(pos)
    newest = _place_in_message(messages, flat, len(messages) - 1, None, control, volatile)
    last_before = placed[-1] if placed else -1
    if newest is not None and newest not in placed:
        placed.append(newest)
        if newest - last_before > LOOKBACK:
            target = newest - ROLLING_DISTANCE
            m, b = flat[target]
            rolling = _place_in_message(messages, flat, m, b + 1, control, volatile)
            if rolling is not None and last_before < rolling < newest:
                placed.append(rolling)
    return len(placed)


def _place_in_message(
    messages: list[Json],
    flat: list[tuple[int, int]],
    m: int,
    upto: int | None,
    control: Json,
    volatile: frozenset[int],
) -> int | None:
    """Mark the last cacheable block of message `m` (before block `upto`); its flat position."""
    blocks = messages[m]["content"]
    for index in range(m, -1, -1):  # an uncacheable message: the nearest earlier one
        blocks = messages[index]["content"]
        b = _mark_last_cacheable(
            blocks, len(blocks) if upto is None or index != m else upto, control, volatile
        )
        if b is not None:
            return flat.index((index, b))
    return None
