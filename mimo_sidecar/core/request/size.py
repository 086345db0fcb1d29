"""The estimated size of a request, without building it, as its provider counts it (behavior.md#d15,
behavior.md#collapse, behavior.md#request).

`request_tokens` is what `request/build` reports as `estimatedTokens` for a view: the stored
messages the collapse keeps, each part counted the way the provider of the request counts it
(`provider_count`: media by its pixels or pages, replay tokens not as text, replayed reasoning at
the tokens it stands for), from each message's cached part costs. A result that carries a
compaction mark is sent as the cleared placeholder, so what it no longer sends is taken off; marks a
rebuild is about to set can be counted the same way. The conversion itself is skipped, as it costs a
hundred times more on a long view: a message that converts to nothing (an aborted assistant message
without content) still counts. The trigger's usage fallback and the inflation guard use it.

The reference's own estimate (`Message.tokens`, behavior.md#message-estimate) is not this one: the
watermark, the caps and the sections keep it, byte for byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import texts
from ..estimate.jsjson import js_json_length
from ..estimate.jstext import est_len
from ..estimate.provider_count import Counting, PartCost, cost_tokens, hidden_reasoning, part_cost
from ..rebuild.boundary import PlannedMark, cleared_value, is_marked
from ..rebuild.collapse import collapse
from ..session.message import Json, Message
from ..session.ordering import Ordering
from ..session.shapes import is_carrier

_PLACEHOLDER_TOKENS = est_len(js_json_length(texts.CLEARED_TOOL_RESULT) or 0)


@dataclass(frozen=True)
class RequestSizes:
    """The request a rebuild replaces and the one it leaves, in estimated tokens (the frozen
    prefix, the same on both sides, is not counted). The inflation guard compares them."""

    before: int  # the current view, collapsed
    after: int  # the boundary plus the view after it, collapsed by the new boundary


def request_tokens(
    view: Sequence[Message],
    ordering: Ordering,
    counting: Counting,
    planned: Sequence[PlannedMark] = (),
    now_ms: int = 0,
) -> int:
    """Estimated tokens of a request over `view` for `counting`'s provider: the stored messages the
    collapse keeps, less what their compaction marks replace with the cleared placeholder;
    `planned` marks (to be set at `now_ms`) are counted as if they were set."""
    kept = collapse(list(view), ordering).messages
    total = messages_tokens(kept, counting)
    if planned:
        sent = {id(p) for m in kept for p in m.parts}
        for mark in planned:
            if id(mark.part) in sent:
                marked = mark.marked(now_ms)
                total += _tokens(marked, counting) - _tokens(mark.part, counting)
                total -= cleared_tokens(marked, counting)
    return total


def messages_tokens(messages: Sequence[Message], counting: Counting) -> int:
    """The request-size figure of these messages, in request order (see `request_tokens`)."""
    return sum(message_token_counts(messages, counting))


def message_token_counts(messages: Sequence[Message], counting: Counting) -> list[int]:
    """Each message's share of `messages_tokens`: its parts, less what its compaction marks clear;
    and, on the message holding a response's usage record, the reasoning that response produced
    beyond its visible text (`hidden_reasoning`, over every entry of the response stored so far:
    Claude Code writes one entry per block, the usage on the last) where the provider keeps it
    (every turn, or only the turn in progress)."""
    turn = current_turn_start(messages)
    responses: dict[str, list[PartCost]] = {}  # providerMessageID → the costs of its entries
    shares = []
    for i, m in enumerate(messages):
        share = base_share(m, counting)
        if m.role == "assistant":
            costs = m.part_costs()
            response = m.info.get("providerMessageID")
            if isinstance(response, str) and response:
                costs = responses.setdefault(response, [])
                costs += m.part_costs()
            tokens = m.info.get("tokens")
            if tokens is not None and (counting.keeps_all_reasoning or i >= turn):
                share += hidden_reasoning(tokens, costs, counting)
        shares.append(share)
    return shares


def base_share(message: Message, counting: Counting) -> int:
    """A message's share of the request before the hidden reasoning of its response: its parts,
    less what its compaction marks clear."""
    return message.request_tokens(counting) - _cleared_tokens(message, counting)


def current_turn_start(messages: Sequence[Message]) -> int:
    """The index after the newest user message that is not only tool results: the messages of the
    turn in progress, whose reasoning every provider keeps (older turns' only some models)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "user" and not is_carrier(m):
            return i + 1
    return 0


def _tokens(part: Json, counting: Counting) -> int:
    return cost_tokens(part_cost(part), counting)


def cleared_tokens(part: Json, counting: Counting) -> int:
    """What a compaction mark on `part` saves: what its result sent (text, and an inline result's
    attachments), less the placeholder sent instead."""
    value = cleared_value(part)
    state = part.get("state")
    attachments = state.get("attachments") if part.get("type") == "tool" and isinstance(state, dict) else None
    if value is None and not attachments:
        return 0
    sent = cost_tokens(part_cost(value), counting) if value is not None else 0
    if attachments:
        sent += sum(cost_tokens(part_cost(a), counting) for a in attachments if isinstance(a, dict))
    return max(0, sent - _PLACEHOLDER_TOKENS) if sent else 0


def marked_parts(message: Message) -> list[Json]:
    """The message's parts that carry a compaction mark, found once per version of it."""
    marked: list[Json] | None = message.derived.get(_MARKED)
    if marked is None:
        marked = message.derived[_MARKED] = [p for p in message.parts if is_marked(p)]
    return marked


_MARKED = "marked-parts"


def _cleared_tokens(message: Message, counting: Counting) -> int:
    if not marked_parts(message):
        return 0
    key = ("cleared-tokens", counting)
    cached = message.derived.get(key)
    if cached is None:
        cached = message.derived[key] = sum(
            cleared_tokens(p, counting) for p in message.parts if is_marked(p)
        )
    return int(cached)


def prefix_tokens(prefix: Json | None) -> int:
    """Estimated tokens of the frozen request prefix (system parts and tool definitions)."""
    if not prefix:
        return 0
    length = js_json_length([prefix.get("system") or [], prefix.get("tools") or []])
    return est_len(length) if length is not None else 0
