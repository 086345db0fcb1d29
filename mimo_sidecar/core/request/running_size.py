"""The estimated request size of a view as a running sum (behavior.md#d15, behavior.md#collapse).

`request_size.request_tokens` recounts a view from its messages' cached costs: cheap per message,
but a walk of the whole view. The usage fallback of `rebuild/compute` (a step without a usage
record: Codex and Cline transcripts, providers that report late) asked for it on every step, so a
step cost grew with the session: 0.8 ms at 500 messages, 25 ms at 5,000. `RunningSize` keeps the
figure of one view (an agent's slice from its boundary on, counted for one provider) and the share
of each of its messages; the session tells it which messages changed (`touch`), and a query
re-counts only those. It equals a full recount exactly (tests/unit/test_running_size.py checks it
after random sequences of changes).

What a message's share depends on beyond itself, and how a change to it is followed:

- **the turn in progress**: the reasoning a response produced counts only in the current turn for
  most models (`request_size.current_turn_start`). The newest user prompt is kept; a new prompt
  that is the newest message of the view closes the turn (nothing after it yet), any other change
  to prompts is recounted;
- **the response**: entries of one provider response share its reasoning figure, so a change to
  one re-counts the entries of its response (a handful);
- **the collapse**: after a rebuild, the boundary's digest leaves steps out (`collapse`). A
  change can alter that only when it touches a message in the digested range, or tool results
  answering a call issued there (a late result brings its step back, D20): those are recounted;
  the steps after the range, and their results, are followed one by one;
- **the view itself**: a new boundary, a resort (D3), an inherited context or a large batch (more
  changes than half the view) are recounted; that is the cost of the change that caused it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..estimate.provider_count import Counting, PartCost, hidden_reasoning
from ..rebuild.collapse import INTERRUPTED_CALLS, DigestedRange, collapse, digested_range
from ..session.message import Message
from ..session.shapes import is_carrier, tool_results, tool_uses
from .size import base_share, current_turn_start, request_tokens

if TYPE_CHECKING:
    from ..session.session import Session

# Past this many changes since the last query (and half the view), a recount is cheaper.
_RECOUNT_AT = 64


@dataclass(slots=True)
class _Share:
    base: int  # the parts, less what compaction marks clear
    response: str | None  # the provider response it was counted under
    reasoning: int = 0  # the hidden reasoning of its response, when it holds the usage record
    counts_reasoning: bool = False  # an assistant entry with a usage record
    turn: int | None = None  # the turn it was counted in as part of the turn in progress


class RunningSize:
    """The request-size figure of `agent_id`'s view counted for `counting`'s provider."""

    def __init__(self, session: Session, agent_id: str, counting: Counting) -> None:
        # The session is held only while a query runs: it holds its followers, and a cycle between
        # the two would leave a closed session to the cyclic collector (paused while requests run).
        self._session: Session = session
        self._agent_id = agent_id
        self._counting = counting
        self._touched: set[Message] = set()
        self._stale = True  # a recount is due
        self._shares: dict[Message, _Share] = {}
        self._responses: dict[str, list[Message]] = {}  # providerMessageID → its entries in the view
        self._start: Message | None = None
        self._id_mode = session.id_mode
        del self._session
        self._span: DigestedRange | None = None  # the digest the collapse applies, if any
        self._span_calls: frozenset[str] = frozenset()  # the calls issued in that range
        self._turn_user: Message | None = None  # the newest prompt of the view
        self._base = 0
        self._reasoning_all = 0
        self._reasoning_turn = 0  # of the entries after `_turn_user`
        self._turn = 0  # bumped when a new prompt closes the turn in progress

    # -- notifications from the session -------------------------------------------------------
    def touch(self, message: Message) -> None:
        if self._stale:
            return
        self._touched.add(message)
        if len(self._touched) > max(_RECOUNT_AT, len(self._shares) // 2):
            self.invalidate()  # a recount is cheaper, and the set stays small

    def invalidate(self) -> None:
        self._stale = True
        self._touched.clear()

    # -- the figure ---------------------------------------------------------------------------
    def tokens(self, session: Session, view: Sequence[Message]) -> int:
        """The figure for `view`, which must be `session`'s current view of the agent."""
        self._session = session
        try:
            return self._tokens(view)
        finally:
            del self._session

    def _tokens(self, view: Sequence[Message]) -> int:
        start = self._session.view_start(self._agent_id)
        if (
            self._stale
            or start is not self._start
            or self._id_mode != self._session.id_mode
            or not self._follow()
        ):
            self._recount(view, start)
        self._touched.clear()
        reasoning = self._reasoning_all if self._counting.keeps_all_reasoning else self._reasoning_turn
        return self._base + reasoning

    def _recount(self, view: Sequence[Message], start: Message | None) -> None:
        self._stale = False
        self._start = start
        self._id_mode = self._session.id_mode
        self._shares.clear()
        self._responses.clear()
        self._base = self._reasoning_all = self._reasoning_turn = 0
        listed = list(view)
        self._note_span(listed)
        kept = collapse(listed, self._session.ordering()).messages
        turn = current_turn_start(kept)
        self._turn_user = kept[turn - 1] if turn > 0 else None
        for m in kept:
            self._add(m, in_turn=None)
        for i, m in enumerate(kept):
            if m.role == "assistant" and self._shares[m].response is None:
                self._set_reasoning(m, m.part_costs(), in_turn=i >= turn)
        for entries in self._responses.values():
            self._count_response(entries)

    def _note_span(self, listed: list[Message]) -> None:
        """The digested range of the view's checkpoint boundary, and the calls issued within it."""
        self._span, self._span_calls = None, frozenset()
        boundary = listed[0] if listed and listed[0].is_checkpoint_boundary() else None
        if boundary is None:
            return
        ordering = self._session.ordering()
        span = self._span = digested_range(boundary, ordering)[0]
        if span is None:
            return
        calls = {u.call_id for m in listed if span.collapses(ordering.key_of(m)) for u in tool_uses(m)}
        listed_calls = (boundary.first_part("checkpoint") or {}).get(INTERRUPTED_CALLS)
        if isinstance(listed_calls, list):
            calls.update(c for c in listed_calls if isinstance(c, str))
        self._span_calls = frozenset(calls)

    # -- following changes ----------------------------------------------------------------------
    def _follow(self) -> bool:
        """Apply the touched messages' new shares; False when a recount is needed instead."""
        responses: set[str] = set()
        for m in self._touched:
            old = self._shares.get(m)
            in_view = self._in_view(m)
            if m.carries_boundary_part() or (
                m is self._turn_user and not (in_view and _is_prompt(m) and self._is_newest(m))
            ):
                return False
            if old is None and not in_view:
                continue  # another slice's message, or one behind the boundary
            if not self._outside_span(m, in_view):
                return False
            if in_view and _is_prompt(m) and m is not self._turn_user and self._after_turn(m):
                if not self._is_newest(m):
                    return False  # a prompt listed inside the turn in progress splits it
                self._reasoning_turn = 0  # a new turn: nothing after its prompt yet
                self._turn += 1
                self._turn_user = m
            if old is not None:
                self._drop(m, old)
            if in_view:
                self._add(m, in_turn=self._after_turn(m))
            responses.update(r for r in (old.response if old else None, self._response(m)) if r is not None)
        for response in responses:
            self._regroup(response)
        return True

    def _outside_span(self, m: Message, in_view: bool) -> bool:
        """A change to `m` cannot alter what the collapse leaves out."""
        span = self._span
        if span is None:
            return True
        if not in_view or not span.digested < self._session.ordering().key_of(m):
            return False
        return not is_carrier(m) or not any(r.call_id in self._span_calls for r in tool_results(m))

    def _in_view(self, m: Message) -> bool:
        session = self._session
        if session.get(m.id) is not m or m.agent_id != self._agent_id:
            return False
        start = self._start
        return start is None or session.listing_key(m) >= session.listing_key(start)

    def _is_newest(self, m: Message) -> bool:
        """`m` is listed last in the view."""
        return next(iter(self._session.newest_first(self._agent_id)), None) is m

    def _after_turn(self, m: Message) -> bool:
        turn_user = self._turn_user
        if turn_user is None:
            return True
        return self._session.listing_key(m) > self._session.listing_key(turn_user)

    def _response(self, m: Message) -> str | None:
        share = self._shares.get(m)
        return share.response if share is not None else None

    def _add(self, m: Message, in_turn: bool | None) -> None:
        """Count `m`'s parts; its reasoning too when `in_turn` is known and it has no response to
        share it with (the entries of a response are counted together: `_regroup`)."""
        response = m.info.get("providerMessageID") if m.role == "assistant" else None
        share = self._shares[m] = _Share(
            base_share(m, self._counting), response if isinstance(response, str) and response else None
        )
        self._base += share.base
        if share.response is not None:
            self._responses.setdefault(share.response, []).append(m)
        elif in_turn is not None and m.role == "assistant":
            self._set_reasoning(m, m.part_costs(), in_turn=in_turn)

    def _drop(self, m: Message, old: _Share) -> None:
        del self._shares[m]
        self._base -= old.base
        self._take_reasoning(old)
        if old.response is not None:
            entries = self._responses.get(old.response)
            if entries is not None and m in entries:
                entries.remove(m)

    def _regroup(self, response: str) -> None:
        """Re-count the reasoning of a response's entries, in listing order."""
        entries = self._responses.get(response)
        if not entries:
            self._responses.pop(response, None)
            return
        entries.sort(key=self._session.listing_key)
        for m in entries:
            self._take_reasoning(self._shares[m])
        self._count_response(entries)

    def _count_response(self, entries: list[Message]) -> None:
        costs: list[PartCost] = []
        for m in entries:
            costs += m.part_costs()
            self._set_reasoning(m, costs, in_turn=self._after_turn(m))

    def _set_reasoning(self, m: Message, costs: list[PartCost], *, in_turn: bool) -> None:
        tokens = m.info.get("tokens")
        if tokens is None:
            return
        share = self._shares[m]
        share.counts_reasoning = True
        share.reasoning = hidden_reasoning(tokens, costs, self._counting)
        self._reasoning_all += share.reasoning
        if in_turn:
            self._reasoning_turn += share.reasoning
            share.turn = self._turn

    def _take_reasoning(self, share: _Share) -> None:
        if not share.counts_reasoning:
            return
        self._reasoning_all -= share.reasoning
        if share.turn == self._turn:
            self._reasoning_turn -= share.reasoning
        share.reasoning, share.counts_reasoning, share.turn = 0, False, None


def _is_prompt(m: Message) -> bool:
    """A user message that is not only tool results: it opens a turn."""
    return m.role == "user" and not is_carrier(m)


def view_request_tokens(session: Session, agent_id: str, counting: Counting) -> int:
    """`request_size.request_tokens` of the agent's context view, from its running sum (a forked
    session's inherited context, which changes with its parent, is counted afresh)."""
    view = session.context_view(agent_id)
    if session.inherits_context(agent_id):
        return request_tokens(view, session.ordering(), counting)
    key = ("request-size", agent_id, counting)
    return session.follower(key, lambda: RunningSize(session, agent_id, counting)).tokens(session, view)
