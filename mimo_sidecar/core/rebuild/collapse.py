"""Collapse by ID range (behavior.md#collapse): leave out of the request what the boundary's digest already
says.

The newest checkpoint boundary `B` says "(coveredUpTo, digestUpTo] is summarised in my
# Recent activity list". Non-user messages in that creation-order range are dropped from the
main agent's request; user messages always stay. The range is tested with `ord` (behavior.md#ordering), not
with positions, so a tail message that sorts before the back-dated boundary is still caught.

A step the digest recorded with calls still waiting (D20) comes back when their results arrive:
an issuing message whose result is held by a carrier after the range, or one of whose calls the
boundary lists in `interruptedCalls` and that now has a result, is kept with every entry of its
provider response, so the result is sent after the boundary with its call (and reported).

Split shapes (D8): a carrier is not a user message here. Each of its results follows the issuing
assistant message: when the issuer is dropped, the result is dropped from the carrier; a carrier
left with no part is dropped too. Trimmed carriers are new `Message` views over the same host dicts
(stored messages are never mutated).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any

from .. import texts
from ..session.message import Message
from ..session.ordering import Ordering
from ..session.shapes import (
    MESSAGE_LEVEL_RESULT,
    LogicalCall,
    is_carrier,
    logical_calls,
    provider_id,
    tool_results,
)

# The checkpoint part's list of the calls its digest shows as interrupted (D20).
INTERRUPTED_CALLS = "interruptedCalls"


@dataclass(frozen=True, slots=True)
class CollapseResult:
    messages: list[Message]  # the input list itself when nothing was removed
    removed_ids: tuple[str, ...] = ()  # messages left out entirely
    trimmed_ids: tuple[str, ...] = ()  # carriers kept without the results of removed calls
    restated_ids: tuple[str, ...] = ()  # digested messages kept: results of their calls arrived later
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
    doomed_parts = frozenset(r.part_index for r in doomed)
    # Kept per version of the carrier: the same object from one request to the next, so that a
    # converted prefix that holds it stays valid (`build_memo`).
    key = ("collapse.trimmed", doomed_parts)
    if key not in carrier.derived:
        parts = [p for i, p in enumerate(carrier.parts) if i not in doomed_parts]
        carrier.derived[key] = Message(carrier.info, parts, seq=carrier.seq) if parts else None
    trimmed: Message | None = carrier.derived[key]
    return trimmed


def _interrupted_calls(boundary: Message) -> frozenset[str]:
    listed = (boundary.first_part("checkpoint") or {}).get(INTERRUPTED_CALLS)
    return frozenset(c for c in listed if isinstance(c, str)) if isinstance(listed, list) else frozenset()


def _arrived_late(
    call: LogicalCall, span: DigestedRange, ordering: Ordering, interrupted: frozenset[str]
) -> bool:
    """A result the digest could not show: held after the digested range, or of a call it listed
    as interrupted."""
    if call.result is None:
        return False
    if call.carrier is not None and not call.inline and span.digested < ordering.key_of(call.carrier):
        return True
    return call.call_id in interrupted and call.state().get("status") not in ("pending", "running")


def _restated(
    messages: list[Message],
    calls: dict[str, LogicalCall],
    removed: set[int],
    span: DigestedRange,
    ordering: Ordering,
    interrupted: frozenset[str],
) -> tuple[set[int], list[str]]:
    """The removed messages to keep after all (every entry of a response with a late result) and the
    calls whose results brought them back."""
    late = [
        c for c in calls.values() if id(c.issuer) in removed and _arrived_late(c, span, ordering, interrupted)
    ]
    responses = {provider_id(c.issuer) for c in late}
    back = {
        id(m) for m in messages if id(m) in removed and m.role == "assistant" and provider_id(m) in responses
    }
    return back, [c.call_id for c in late]


def collapse(
    messages: list[Message], ordering: Ordering, boundary: Message | None | EllipsisType = ...
) -> CollapseResult:
    """behavior.md#collapse over the main agent's request list; `messages` is returned as is when nothing
    changes. `boundary`: the newest checkpoint boundary of `messages` when the caller knows it
    (`Session.view_checkpoint_boundary`: a long view is not walked on every build to find it)."""
    if boundary is ...:
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
    calls = logical_calls(messages) if removed else {}
    back, late_calls = _restated(messages, calls, removed, span, ordering, _interrupted_calls(boundary))
    removed -= back
    dropped_calls = {call_id for call_id, call in calls.items() if id(call.issuer) in removed}

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
    restated_ids = tuple(m.id for m in messages if id(m) in back)
    warnings = (texts.steps_restated(late_calls),) if late_calls else ()
    if not removed_ids and not trimmed_ids:
        return CollapseResult(messages, restated_ids=restated_ids, warnings=warnings)
    return CollapseResult(kept, tuple(removed_ids), tuple(trimmed_ids), restated_ids, warnings)
