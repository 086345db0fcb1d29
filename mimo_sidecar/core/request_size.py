"""The estimated size of a request, without building it (behavior.md#message-estimate, behavior.md#collapse,
behavior.md#request).

`request_tokens` starts from what `request/build` reports as `estimatedTokens` for a view: the
cached estimates of the stored messages the collapse keeps (a carrier trimmed by the collapse
counts as trimmed). A result that carries a compaction mark is sent as the cleared placeholder, so
the text it no longer sends is taken off; marks a rebuild is about to set can be counted the same
way. The conversion itself is skipped, as it costs a hundred times more on a long view: a message
that converts to nothing (an aborted assistant message without content) still counts. The
trigger's usage fallback and the inflation guard use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import texts
from .boundary import PlannedMark, cleared_value, is_marked
from .collapse import collapse
from .jsjson import js_json_length
from .jstext import est_len
from .message import Json, Message, part_tokens
from .ordering import Ordering

_PLACEHOLDER_TOKENS = est_len(js_json_length(texts.CLEARED_TOOL_RESULT) or 0)


@dataclass(frozen=True)
class RequestSizes:
    """The request a rebuild replaces and the one it leaves, in estimated tokens (the frozen
    prefix, the same on both sides, is not counted). The inflation guard compares them."""

    before: int  # the current view, collapsed
    after: int  # the boundary plus the view after it, collapsed by the new boundary


def request_tokens(
    view: Sequence[Message], ordering: Ordering, planned: Sequence[PlannedMark] = (), now_ms: int = 0
) -> int:
    """Estimated tokens of a request over `view`: the stored messages the collapse keeps, less
    what their compaction marks replace with the cleared placeholder; `planned` marks (to be set
    at `now_ms`) are counted as if they were set."""
    kept = collapse(list(view), ordering).messages
    total = sum(m.tokens - _cleared_tokens(m) for m in kept)
    if planned:
        sent = {id(p) for m in kept for p in m.parts}
        for mark in planned:
            if id(mark.part) in sent:
                marked = mark.marked(now_ms)
                total += part_tokens(marked) - part_tokens(mark.part) - cleared_tokens(marked)
    return total


def cleared_tokens(part: Json) -> int:
    """What a compaction mark on `part` saves: its result text, less the placeholder sent instead."""
    value = cleared_value(part)
    length = js_json_length(value) if value is not None else None
    return max(0, est_len(length) - _PLACEHOLDER_TOKENS) if length else 0


def _cleared_tokens(message: Message) -> int:
    cached = message.derived.get("cleared_tokens")
    if cached is None:
        cached = message.derived["cleared_tokens"] = sum(
            cleared_tokens(p) for p in message.parts if is_marked(p)
        )
    return int(cached)


def prefix_tokens(prefix: Json | None) -> int:
    """Estimated tokens of the frozen request prefix (system parts and tool definitions)."""
    if not prefix:
        return 0
    length = js_json_length([prefix.get("system") or [], prefix.get("tools") or []])
    return est_len(length) if length is not None else 0
