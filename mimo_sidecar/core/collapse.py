"""Collapse by ID range (behavior.md#collapse): leave out of the request what the boundary's digest already
says.

The newest checkpoint boundary `B` says "(coveredUpTo, digestUpTo] is summarised in my
# Recent activity list". Non-user messages in that creation-order range are dropped from the
main agent's request; user messages always stay. The range is tested with `ord` (behavior.md#ordering), not
with positions, so a tail message that sorts before the back-dated boundary is still caught.

Split shapes (D8): a carrier is not a user message here. Each of its results follows the issuing
assistant message: when the issuer is dropped, the result is dropped from the carrier; a carrier
left with no part is dropped too. Trimmed carriers are new `Message` views over the same host dicts
(stored messages are never mutated).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from . import texts
from .message import Message
from .ordering import Ordering
from .shapes import MESSAGE_LEVEL_RESULT, is_carrier, logical_calls, tool_results


@dataclass(frozen=True, slots=True)
class CollapseResult:
    messages: list[Message]  # the input list itself when nothing was removed
    removed_ids: tuple[str, ...] = ()  # messages left out entirely
    trimmed_ids: tuple[str, ...] = ()  # carriers kept without the results of removed calls
    warnings: tuple[str, ...] = field(default=())

    @property
    def changed(self) -> bool:
        return bool(self.removed_ids or self.trimmed_ids)


def _newest_checkpoint_boundary(messages: list[Message]) -> Message | None:
    for m in reversed(messages):
        if m.is_checkpoint_boundary():
            return m
    return None


@dataclass(frozen=True, slots=True)
class DigestedRange:
    """The creation-order range `(coveredUpTo, digestUpTo]` a checkpoint boundary digested."""

    covered: Any  # ord(coveredUpTo)
    digested: Any  # ord(digestUpTo)

    def collapses(self, key: Any) -> bool:
        return bool(self.covered < key <= self.digested)


def digested_range(boundary: Message, ordering: Ordering) -> tuple[DigestedRange | None, str | None]:
    """The ord range the boundary digested, or (None, warning) when it cannot be located."""
    cp = boundary.first_part("checkpoint") or {}
    digest_up_to = cp.get("digestUpTo")
    if not isinstance(digest_up_to, str) or not digest_up_to:
        return None, None  # legacy boundary or one without activity: nothing was digested
    covered_up_to = cp.get("coveredUpTo")
    covered = ordering.key(covered_up_to if isinstance(covered_up_to, str) else None)
    if covered is None:
        return None, texts.collapse_unknown_endpoint_warning("coveredUpTo", covered_up_to)
    digested = ordering.key(digest_up_to)
    if digested is None:
        return None, texts.collapse_unknown_endpoint_warning("digestUpTo", digest_up_to)
    return DigestedRange(covered, digested), None


def _trim_carrier(carrier: Message, dropped_call_ids: set[str]) -> Message | None:
    """The carrier without the results of dropped calls: itself, a trimmed view, or None (empty)."""
    doomed = [r for r in tool_results(carrier) if r.call_id in dropped_call_ids]
    if not doomed:
        return carrier
    if any(r.part_index == MESSAGE_LEVEL_RESULT for r in doomed):
        return None  # an OpenAI tool-role message is its result
    doomed_parts = {r.part_index for r in doomed}
    parts = [p for i, p in enumerate(carrier.parts) if i not in doomed_parts]
    if not parts:
        return None
    return Message(carrier.info, parts, seq=carrier.seq)


def _dropped_call_ids(messages: Iterable[Message], removed: set[int]) -> set[str]:
    return {call_id for call_id, call in logical_calls(messages).items() if id(call.issuer) in removed}


def collapse(messages: list[Message], ordering: Ordering) -> CollapseResult:
    """behavior.md#collapse over the main agent's request list; `messages` is returned as is when nothing
    changes."""
    boundary = _newest_checkpoint_boundary(messages)
    if boundary is None:
        return CollapseResult(messages)
    span, warning = digested_range(boundary, ordering)
    if span is None:
        return CollapseResult(messages, warnings=(warning,) if warning else ())

    # Rule 3: keep m iff ord(m) <= covered, ord(m) > digested, or m is a user message (carriers are
    # not user messages, but their fate is decided by their results below).
    removed = {
        id(m)
        for m in messages
        if m.role != "user" and not is_carrier(m) and span.collapses(ordering.key_of(m))
    }
    dropped_calls = _dropped_call_ids(messages, removed) if removed else set()

    kept: list[Message] = []
    removed_ids: list[str] = []
    trimmed_ids: list[str] = []
    for m in messages:
        if id(m) in removed:
            removed_ids.append(m.id)
            continue
        view = _trim_carrier(m, dropped_calls) if dropped_calls and is_carrier(m) else m
        if view is None:
            removed_ids.append(m.id)
        else:
            if view is not m:
                trimmed_ids.append(m.id)
            kept.append(view)
    if not removed_ids and not trimmed_ids:
        return CollapseResult(messages)
    return CollapseResult(kept, tuple(removed_ids), tuple(trimmed_ids))
