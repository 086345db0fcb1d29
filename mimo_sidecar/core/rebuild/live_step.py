"""The digest point `D` of an insert: what its boundary digests, and what it leaves live after it
(behavior.md#digest-point, D19, D20).

MiMo digests the whole list a rebuild is given (`D` = its last message). On an automatic rebuild in
the middle of a tool loop that list ends with the step the model has just taken: its calls are
digested into one line each and collapsed out of the request, while the closing reminder tells the
model to "respond to the tool results below". Here the newest step stays live instead:

- D19: on an automatic rebuild (`auto`, `overflow`) whose list ends in a step that called tools
  (the last message is that response, with `finish: "tool-calls"`, or a carrier of its results),
  `D` is the message before that step (`checkpoint.keep_newest_step`, on by default);
- D20: a newest step with a call still waiting for its result is never digested, whatever the
  reason and whatever `D` the host named: a digest would record it as interrupted, and its result,
  arriving a moment later, would be collapsed with it (`checkpoint.keep_pending_step`, on by
  default; off, such a step is digested as MiMo does).

A step is one provider response: its entries (`providerMessageID`) and the carriers of its results
after them, never separated from a result of its calls (the watermark's adjustment decides).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .. import texts
from ..session.message import Message
from ..session.ordering import Ordering
from ..session.shapes import is_carrier, logical_calls, provider_id
from .boundary import LastMessageInfo, classify
from .watermark import LazyProjection, adjust

UNRESOLVED = frozenset({"pending", "running"})
# Why `D` is where it is: the list's last message; moved before the newest step (D19) or before
# its unanswered calls (D20); or the host's `digestUpTo`.
DigestRule = Literal["tail", "newest-step", "pending-calls", "host"]


@dataclass(frozen=True, slots=True)
class NewestStep:
    start: int  # index of the step's first message in the list
    call_ids: tuple[str, ...]  # the calls the step issued
    unresolved: tuple[str, ...]  # those without a result yet
    ends_list: bool  # only the step's own entries and carriers from `start` to the end


@dataclass(frozen=True, slots=True)
class DigestPoint:
    message_id: str | None  # D; None when nothing is left to digest
    rule: DigestRule
    # Index of the step's first message when the step stays live because D moved before it: its
    # results are what the model answers next, so microcompaction leaves them alone.
    live_from: int | None
    last_info: LastMessageInfo | None  # the classification the closing reminder is chosen by
    warning: str | None = None


def newest_step(msgs: Sequence[Message]) -> NewestStep | None:
    """The list's newest assistant response with what follows it, or None without one."""
    newest = next((i for i in range(len(msgs) - 1, -1, -1) if _is_response(msgs[i])), None)
    if newest is None:
        return None
    pid = provider_id(msgs[newest])
    start = newest
    for i in range(newest - 1, -1, -1):
        m = msgs[i]
        if _is_response(m) and provider_id(m) == pid:
            start = i  # an earlier entry of the same response (Claude Code writes one per block)
        elif not is_carrier(m):
            break
    start = adjust(LazyProjection(msgs), start)
    step = msgs[start:]
    issued = {id(m) for m in step if _is_response(m)}
    calls = [c for c in logical_calls(step).values() if id(c.issuer) in issued]
    unresolved = tuple(c.call_id for c in calls if c.state().get("status") in UNRESOLVED)
    ends_list = all(_is_response(m) or is_carrier(m) for m in step)
    return NewestStep(start, tuple(c.call_id for c in calls), unresolved, ends_list)


def digest_point(
    msgs: Sequence[Message],
    *,
    automatic: bool,
    keep_newest_step: bool,
    requested: str | None,
    ordering: Ordering,
    keep_pending_step: bool = True,
) -> DigestPoint:
    """Where the digest of an insert over `msgs` ends (module docstring), with the classification
    of what the model reads after the boundary."""
    last_info = classify(msgs)
    step = newest_step(msgs)
    waiting = keep_pending_step and step is not None and bool(step.unresolved)
    if requested is not None:
        if step is None or not waiting or not _at_or_after(requested, msgs[step.start], ordering):
            return _requested(msgs, requested, last_info)
        return _before(msgs, step, "pending-calls", texts.digest_point_moved(requested, step.unresolved))
    if step is not None and waiting:
        return _before(msgs, step, "pending-calls")
    if automatic and keep_newest_step and step is not None and _loop_step(step, last_info):
        return _before(msgs, step, "newest-step")
    return DigestPoint(msgs[-1].id if msgs else None, "tail", None, last_info)


def _before(
    msgs: Sequence[Message], step: NewestStep, rule: DigestRule, warning: str | None = None
) -> DigestPoint:
    """`D` just before the step, which stays live. A step waiting for results is a loop step, whatever
    its `finish` says yet (a response still streaming has none): the reminder says so."""
    info = classify(msgs)
    if step.unresolved:
        info = LastMessageInfo("assistant", "tool-calls", step_live=True)
    elif info is not None:
        info = LastMessageInfo(info.kind, info.finish, step_live=True)
    d = msgs[step.start - 1].id if step.start > 0 else None
    return DigestPoint(d, rule, step.start, info, warning)


def _requested(msgs: Sequence[Message], requested: str, info: LastMessageInfo | None) -> DigestPoint:
    """The host's `D`: what the list holds after it stays live (and microcompaction treats it as
    MiMo does: the host chose what to keep)."""
    at = next((i for i in range(len(msgs) - 1, -1, -1) if msgs[i].id == requested), None)
    if at is not None and at < len(msgs) - 1 and info is not None:
        info = LastMessageInfo(info.kind, info.finish, step_live=True)
    return DigestPoint(requested, "host", None, info)


def _loop_step(step: NewestStep, info: LastMessageInfo | None) -> bool:
    """The list ends in a step that called tools and whose reminder sends the model to their
    results: the last message is the response with `finish: "tool-calls"`, or a carrier of it."""
    ends_in_calls = info is not None and (info.kind == "tool" or info.finish == "tool-calls")
    return bool(step.call_ids) and step.ends_list and ends_in_calls


def _is_response(m: Message) -> bool:
    return m.role == "assistant"


def _at_or_after(message_id: str, first: Message, ordering: Ordering) -> bool:
    key, start = ordering.key(message_id), ordering.key_of(first)
    return key is not None and start is not None and bool(key >= start)
