"""The converted prefix of a view, kept from one request to the next (behavior.md#request-reuse).

A host builds a request before every model call, and each request repeats the one before it plus a
step. Converting the whole view every time (normalisation, then the format's renderer) cost 100 ms
and more on a 5,000-message view, for one new step. `BuildMemo` keeps the conversion of the view up
to a *cut* and converts only what comes after it; the request is the same, byte for byte, as a
conversion of the whole view (tests/unit/test_build_memo.py checks it after random changes, in
every format, and on the real transcripts).

A cut may go before message `c` only where nothing after it can change what comes before it:

- `c` starts by closing what is open: a user prompt, or an assistant message that is not an entry
  of the response before it (`Normalizer.opens_turn`);
- every call before `c` took its result from before `c` (a result stored later would be its
  result); a call sent as interrupted is carried: a result for it after the cut makes the prefix
  unusable (the view is converted whole again);
- something after `c` is converted to a turn, where the writer's closing text goes;

and what crosses it is carried: the call IDs issued and the results no call took (reported at the
end, `Carried`), the call-ID map, the calls not replayed, the warnings and counts in their order
(`Report.absorb`), each message's share of `estimatedTokens` with what the turn in progress adds,
the costs of a provider response whose entries straddle it, the volatile blocks (no breakpoint
goes on them), and the newest assistant turn (the target's default model). A renderer that merges
a message across the cut (Anthropic and Gemini merge same-role messages) or changes one at the end
(breakpoints, the final-message rules) changes its own copy (`Rendered.own`).

With the per-turn reminder, two prefixes are kept. `prefix` is cut not after the newest user-role
message, which carries the reminder; `inner` is cut after it, inside the turn in progress, and its
output holds the reminder where a whole conversion puts it (its `reminder`). A long turn's steps
(in a session whose results are inline, MiMo's and OpenCode's, hundreds of steps under one prompt)
are converted from `inner`, one step each; it serves while the reminder is the same text and no
newer user-role message has taken it, and `prefix` serves the request after a new prompt. A
reminder that becomes a turn of its own (its message sends nothing else) keeps no inner cut.

A prefix is used again only when the view still starts with the same message objects, none of
them changed since (a change clears `Message.derived`, where the memo leaves its stamp; while
`Message.kept_changes` stays, no kept message of any memo changed and the stamps need no look),
followed by the same unchanged message at the cut (the cut went there because of what that
message is: a prompt with parts, the first entry of a new response), with the same options, target
and provider counting; otherwise the view is converted whole and the memo starts again from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from typing import Any

from ..estimate.provider_count import Counting, PartCost, counting_for, hidden_reasoning
from ..formats import RENDERERS, cache_ttl_for
from ..formats.context import RenderContext, Rendered
from ..formats.layered import LayeredMap
from ..formats.model import Turn
from ..formats.normalize import Carried, Normalizer, add_closing_text, add_reminder, prepare_message
from ..formats.report import Report
from ..formats.target import Target, resolve
from ..session.message import KEPT, Json, Message
from ..session.shapes import is_carrier
from .size import base_share, marked_parts

ModelInUse = tuple[str | None, str | None]


@dataclass(frozen=True)
class Options:
    """What a request is built for, besides its messages (the memo's key)."""

    fmt: str
    target: Target | None
    cache_ttl: str | None
    skill_flag: str
    model_in_use: ModelInUse | None


@dataclass
class Conversion:
    """A view converted: the messages in the format, the composed report, the call-ID map, the
    target resolved, the TTL taken, each contributing stored message's share of the size, and the
    first source of each output message."""

    rendered: Rendered
    report: Report
    call_ids: dict[str, str]
    target: Target
    cache_ttl: str | None
    shares: RequestShares
    firsts: list[str]


@dataclass
class _Share:
    """A contributing message's share: `outside` when the turn in progress started after it, plus
    `in_turn` (its response's hidden reasoning) when it is part of that turn."""

    message_id: str
    outside: int
    in_turn: int
    prompt: bool  # a user prompt: the turn in progress starts after the newest one


@dataclass
class _Prefix:
    """The conversion of `messages` (a view's first messages, up to a cut)."""

    messages: list[Message] = field(default_factory=list)
    opener: Message | None = None  # the message at the cut: the cut holds while it is unchanged
    key: tuple[Options, Target, Counting] | None = None
    carried: Carried | None = None
    norm: Report = field(default_factory=Report)  # the normalisation's warnings and counts
    render: Report = field(default_factory=Report)  # the renderer's
    out: Rendered = field(default_factory=Rendered)
    firsts: list[str] = field(default_factory=list)  # the first source of each of `out`'s messages
    call_ids: dict[str, str] = field(default_factory=dict)
    dropped_calls: set[str] = field(default_factory=set)
    newest_assistant: Turn | None = None
    shares: LayeredMap = field(default_factory=LayeredMap)  # outside the turn in progress
    trailing: LayeredMap = field(default_factory=LayeredMap)  # after the newest prompt: in_turn
    responses: dict[str, list[PartCost]] = field(default_factory=dict)
    volatile: list[Json] = field(default_factory=list)  # `out`'s volatile blocks (no breakpoint on them)
    changes: int = -1  # `Message.kept_changes` when its messages were last found unchanged
    reminder: str | None = None  # the per-turn reminder `out` holds (a cut inside the turn in progress)
    given_up: bool = False  # a conversion took `out`'s lists: this prefix serves no request again


EMPTY = _Prefix()


class RequestShares(Mapping[str, int]):
    """Each contributing stored message's share of a request's size (`estimatedTokens`), and their
    sum (`total`): the kept prefix's shares, what the turn in progress adds to those after its
    prompt, then the shares of the messages after the cut. All three are frozen, so the map, which
    only inspection reads, is made when first read: a request after one step costs its step."""

    def __init__(self, kept: LayeredMap, trailing: LayeredMap | None, live: dict[str, int]) -> None:
        self._parts: tuple[LayeredMap, LayeredMap | None, dict[str, int]] | None = (kept, trailing, live)
        self.total = kept.total + (trailing.total if trailing is not None else 0) + sum(live.values())
        self._merged: dict[str, int] = {}

    def _map(self) -> dict[str, int]:
        if self._parts is not None:
            kept, trailing, live = self._parts
            merged = kept.as_dict()
            for message_id, extra in (trailing.as_dict() if trailing is not None else {}).items():
                merged[message_id] += extra
            merged.update(live)
            self._merged, self._parts = merged, None
        return self._merged

    def __getitem__(self, key: str) -> int:
        return self._map()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._map())

    def __len__(self) -> int:
        return len(self._map())


class OutputSlot:
    """What a caller keeps of the newest request of a memo, for as long as the memo lives (the RPC
    layer keeps the encoded slices of its lists there, keyed by `Rendered.versions`, so that a
    request after one step encodes that step). Emptied when the memo starts again from nothing: what
    it held can serve no request of the new start."""

    def __init__(self) -> None:
        self.value: object = None


class BuildMemo:
    """The prefixes of the newest request built through it (one per session, agent and purpose):
    `prefix`, cut before the message that carries the per-turn reminder (or anywhere without one),
    and `inner`, cut inside the turn in progress with the reminder in its output, which serves the
    requests that add steps to that turn (behavior.md#request-reuse)."""

    def __init__(self) -> None:
        self.stamp = object()  # the key of this memo's stamp in `Message.derived`
        self.prefix: _Prefix | None = None
        self.inner: _Prefix | None = None
        self.reused = 0  # messages taken from a prefix by the newest conversion (for tests)
        self.output = OutputSlot()
        self.ahead: _Ahead | None = None  # the view as `session/open` normalised it
        self.headed = 0  # messages the newest conversion took normalised from `ahead` (for tests)

    def normalise_ahead(self, msgs: Sequence[Message], skill_flag: str) -> None:
        """Normalise the view `msgs` now (`session/open`, while its messages are fresh from the
        parse): the memo's first conversion, in whatever format, then normalises only what came
        after the latest of its cuts that still holds (behavior.md#request-reuse). Cut as for a
        request with the per-turn reminder: that gives both cuts, and the one a request without it
        takes is among them."""
        self.ahead = None
        held = list(msgs)
        normalised = _normalise(held, skill_flag, EMPTY, Report(), True)
        if normalised is None or not normalised[1]:
            return
        turns, marks = normalised
        stamp = self.stamp
        for m in held[: marks[-1].cut + 1]:
            m.derived[stamp] = m.derived[KEPT] = True
        self.ahead = _Ahead(held, skill_flag, turns, marks, Message.kept_changes)

    def convert(
        self,
        msgs: Sequence[Message],
        options: Options,
        reminder: str | None,
        closing: tuple[str, str] | None,
    ) -> Conversion:
        inner, outer = self.inner, self.prefix
        self.prefix = self.inner = None  # released before converting (one conversion's objects at a time)
        result = None
        # How many messages the prefix held: a conversion that gives it up may extend its lists.
        held = 0
        if self._valid(inner, msgs, options, reminder):
            assert inner is not None
            prefix: _Prefix = inner
            held = len(inner.messages)
            result = _convert(msgs, options, reminder, closing, inner)
            # The outer prefix's messages begin the inner one's: they are valid with it.
        if result is None and self._valid(outer, msgs, options, reminder):
            assert outer is not None
            prefix = outer
            held = len(outer.messages)
            result = _convert(msgs, options, reminder, closing, outer)
        elif result is None:
            outer = None
        ahead, self.ahead = self.ahead, None  # one conversion at most takes it: it holds a view's turns
        self.headed = 0
        if result is None:
            prefix, held = EMPTY, 0
            self.output.value = None
            head = self._head(ahead, msgs, options) if ahead is not None else None
            result = _convert(msgs, options, reminder, closing, EMPTY, head)
            assert result is not None  # from the empty prefix nothing can refuse
            if head is not None and head.taken:
                self.headed = head.mark.cut
        conversion, snapshots = result
        self.reused = held
        if prefix.reminder is not None:  # from the inner prefix: the outer one still holds
            self.prefix = outer
            self.inner = snapshots[-1] if snapshots else None if prefix.given_up else prefix
        else:
            kept = prefix if prefix is not EMPTY and not prefix.given_up else None
            self.prefix = next((p for p in reversed(snapshots) if p.reminder is None), kept)
            self.inner = next((p for p in snapshots if p.reminder is not None), None)
        stamp = self.stamp
        start = held
        for snapshot in snapshots:
            for m in snapshot.messages[start:]:
                m.derived[stamp] = m.derived[KEPT] = True
            start = len(snapshot.messages)
            assert snapshot.opener is not None
            snapshot.opener.derived[stamp] = snapshot.opener.derived[KEPT] = True
        changes = Message.kept_changes  # the messages just stamped are as they are now
        for kept in (self.prefix, self.inner):
            if kept is not None and kept.changes == -1:
                kept.changes = changes
        return conversion

    def _head(self, ahead: _Ahead, msgs: Sequence[Message], options: Options) -> _Head | None:
        """The latest of `ahead`'s cuts before which `msgs` has the same messages, unchanged since
        the open, and at which it has the same opener (the cut went there because of what that
        message is)."""
        if ahead.skill_flag != options.skill_flag:
            return None
        stamp, held = self.stamp, ahead.messages
        unchanged = ahead.changes == Message.kept_changes
        for i in range(len(ahead.marks) - 1, -1, -1):
            mark = ahead.marks[i]
            if mark.cut >= len(msgs) or msgs[mark.cut] is not held[mark.cut]:
                continue
            head = msgs[: mark.cut + 1]
            if (head if isinstance(head, list) else list(head)) != held[: mark.cut + 1]:
                continue  # compared by identity: the same message objects
            if unchanged or all(map(dict.__contains__, map(_DERIVED, head), repeat(stamp))):
                return _Head(mark, ahead.turns[: mark.turns], ahead.marks[: i + 1])
        return None

    def _valid(
        self, prefix: _Prefix | None, msgs: Sequence[Message], options: Options, reminder: str | None
    ) -> bool:
        if prefix is None or prefix.key is None or prefix.key[0] != options:
            return False
        held = prefix.messages
        head = msgs[: len(held)]
        if len(msgs) <= len(held) or (head if isinstance(head, list) else list(head)) != held:
            return False  # compared by identity: the same message objects
        stamp = self.stamp
        opener = msgs[len(held)]
        if opener is not prefix.opener or stamp not in opener.derived:
            return False  # the cut went before this message because of what it was (a prompt, a new response)
        if prefix.reminder is not None and (
            prefix.reminder != reminder or any(m.role == "user" for m in msgs[len(held) :])
        ):
            return False  # the reminder it holds is another, or it has moved to a newer message
        # Every message unchanged since (a change clears `derived`): none of any memo changed since
        # they were last checked, else each checked (at C speed).
        changes = Message.kept_changes
        if prefix.changes != changes:
            if not all(map(dict.__contains__, map(_DERIVED, held), repeat(stamp))):
                return False
            prefix.changes = changes
        return True


_DERIVED = attrgetter("derived")


def prepare(msgs: Iterable[Message]) -> None:
    """What every conversion takes from each message, computed while its parts are fresh from the
    parse (`session/open`): the parts' provider costs, from the JSON lengths their estimate took,
    and what an assistant message converts to. The first request after the open then converts
    what any later one would (behavior.md#request-reuse)."""
    for m in msgs:
        m.plain_request_tokens()  # the parts' costs first
        marked_parts(m)
        prepare_message(m)


def convert(
    msgs: Sequence[Message], options: Options, reminder: str | None, closing: tuple[str, str] | None
) -> Conversion:
    """The whole view converted, with no memo."""
    result = _convert(msgs, options, reminder, closing, EMPTY)
    assert result is not None  # from the empty prefix nothing can refuse
    return result[0]


def _candidate_cut(live: Sequence[Message], reminder: bool) -> int | None:
    """The latest position that may take a cut (checked again as the pass reaches it): at a prompt
    or at the first entry of an assistant response; with a reminder, not after the newest
    user-role message (the message that carries it)."""
    last = len(live) - 1
    if reminder:
        last = next((i for i in range(last, -1, -1) if live[i].role == "user"), -1)
    for c in range(last, 0, -1):
        m = live[c]
        if not m.parts or (is_carrier(m) and m.role != "assistant"):
            continue
        if m.role == "user":
            return c
        if m.role == "assistant":
            response = m.info.get("providerMessageID")
            before = next((x for x in _earlier(live, c) if x.role == "assistant" and x.parts), None)
            if not response or before is None or before.info.get("providerMessageID") != response:
                return c
    return None


def _candidate_cuts(live: Sequence[Message], reminder: bool) -> list[int]:
    """The candidate cuts, in order: with a reminder to place in `live`, the latest before the
    message that carries it and the latest after it (inside the turn in progress, the prefix then
    holding the reminder); else the latest."""
    cuts = [c for c in {_candidate_cut(live, reminder), _candidate_cut(live, False)} if c is not None]
    return sorted(cuts)


def _earlier(live: Sequence[Message], c: int) -> Iterator[Message]:
    return (live[i] for i in range(c - 1, -1, -1))


@dataclass
class _Mark:
    """The pass's state at the cut, before the messages after it were converted."""

    cut: int
    turns: int
    carried: Carried
    norm: Report


@dataclass
class _Ahead:
    """The view as `session/open` normalised it (`BuildMemo.normalise_ahead`): its messages, its
    turns and the marks at its cuts, for the memo's first conversion."""

    messages: list[Message]
    skill_flag: str
    turns: list[Turn]
    marks: list[_Mark]
    changes: int  # `Message.kept_changes` once its messages were stamped


@dataclass
class _Head:
    """What a conversion takes of an `_Ahead`: the turns up to `mark`, the latest cut whose
    messages it still has unchanged, and the marks up to it."""

    mark: _Mark
    turns: list[Turn]
    marks: list[_Mark]
    # The conversion normalised from it (else the whole view: a result after the cut answers a
    # call sent as interrupted before it).
    taken: bool = False


def _normalise(
    live: Sequence[Message],
    skill_flag: str,
    prefix: _Prefix,
    report: Report,
    reminder: bool,
    head: _Head | None = None,
) -> tuple[list[Turn], list[_Mark]] | None:
    """The turns of `live` and the marks at its cuts (None: a result in `live` answers a call the
    prefix, or the head, sent as interrupted). With `head` (normalised by `session/open`, `prefix`
    empty), the pass starts at the head's cut, from its state there, and `report` holds its
    report at that cut."""
    start = head.mark.cut if head is not None else 0
    rest = live[start:] if head is not None else live
    carried = head.mark.carried if head is not None else prefix.carried
    normalizer = Normalizer(rest, skill_flag, report, carried)
    if normalizer.answers_interrupted():
        return None
    marks = list(head.marks) if head is not None else []
    held = len(head.turns) if head is not None else 0
    fed = 0
    for cut in _candidate_cuts(rest, reminder):
        normalizer.feed(fed, cut)
        fed = cut
        if normalizer.opens_turn(cut):
            normalizer.close()  # what `feed` would do first at `cut`
            if normalizer.reach < cut:
                marks.append(
                    _Mark(start + cut, held + len(normalizer.turns), normalizer.carry(cut), report.copy())
                )
    normalizer.feed(fed, len(rest))
    turns = normalizer.finish()
    if head is not None:
        turns = [*head.turns, *turns]
    # Nothing after the cut to carry the reminder or the closing text: not kept.
    return turns, [mark for mark in marks if mark.turns < len(turns)]


def _convert(
    msgs: Sequence[Message],
    options: Options,
    reminder: str | None,
    closing: tuple[str, str] | None,
    prefix: _Prefix,
    head: _Head | None = None,
) -> tuple[Conversion, list[_Prefix]] | None:
    """The conversion of `msgs` from `prefix` (None: the prefix cannot serve this request), and the
    prefixes up to the new cuts after `prefix`'s, in order; `head`: the normalisation `session/open`
    made of `msgs`'s first messages (with the empty prefix only)."""
    live = msgs[len(prefix.messages) :]
    placing = reminder is not None and prefix.reminder is None  # the reminder goes into `live`
    norm = head.mark.norm.copy() if head is not None else Report()
    normalised = _normalise(live, options.skill_flag, prefix, norm, placing, head)
    if normalised is None and head is not None:  # the head cannot serve: the whole view again
        norm = Report()
        normalised = _normalise(live, options.skill_flag, prefix, norm, placing)
    elif head is not None:
        head.taken = True
    if normalised is None:
        return None
    turns, marks = normalised
    carrier = next((m for m in reversed(live) if m.role == "user"), None) if placing else None
    position = {m.id: i for i, m in enumerate(live)}
    outer = [k for k in marks if carrier is None or k.cut <= position[carrier.id]]
    split = outer[-1].turns if outer else 0
    tail = turns[split:]
    if prefix is not EMPTY and (not tail or (placing and carrier is None)):
        return None  # the reminder or the closing text would go into the prefix
    if reminder is not None and placing:
        count = len(tail)
        add_reminder(tail, live[outer[-1].cut if outer else 0 :], reminder, norm)
        if len(tail) != count or carrier is None:
            marks = outer  # the reminder became a turn of its own: no cut after it
    if closing is not None:
        add_closing_text(tail, *closing)
    turns[split:] = tail
    if carrier is not None and len(marks) > len(outer):
        holders = [i for i, t in enumerate(turns) if carrier.id in t.sources]
        if not holders or holders[-1] >= marks[-1].turns:
            marks = outer  # the reminder's turn is not before the inner cut

    renderer = RENDERERS[options.fmt]
    scan = [prefix.newest_assistant, *turns] if prefix.newest_assistant is not None else turns
    target = resolve(
        options.target, scan, filter_by_default=renderer.default_model, model_in_use=options.model_in_use
    )
    model = (target.provider_id, target.model_id)
    counting = counting_for(*(model if any(model) else options.model_in_use or (None, None)), options.fmt)
    key = (options, target, counting)
    if prefix is not EMPTY and prefix.key != key:
        return None

    report = Report()
    report.absorb(prefix.norm)
    report.absorb(norm)
    cache_ttl = cache_ttl_for(options.fmt, options.cache_ttl, report)
    ids = renderer.call_ids()
    ids.mapped = dict(prefix.call_ids)
    render_report = Report()
    ctx = RenderContext(
        target, render_report, ids, cache_ttl, set(prefix.dropped_calls), list(prefix.volatile)
    )
    # The prefix's output lists are taken rather than copied when a new cut will replace it in its
    # role (an inner prefix by any new cut, another by a new cut before the reminder's message): the
    # memo then keeps the new prefix, or none should that cut not hold after all (`convert`).
    held_messages = len(prefix.out)
    replaced = bool(marks) if prefix.reminder is not None else bool(outer)
    prefix.given_up = prefix is not EMPTY and replaced
    out = prefix.out.resumed(take=prefix.given_up)
    snapshots: list[_Prefix] = []
    fed = 0
    for i, mark in enumerate(marks):
        base = snapshots[-1] if snapshots else prefix
        renderer.feed(turns[fed : mark.turns], ctx, out)
        held = reminder if i >= len(outer) else None  # an inner cut: the reminder is before it
        base_messages = held_messages if base is prefix else len(base.out)
        snapshots.append(
            _snapshot(
                prefix,
                base,
                base_messages,
                live,
                marks[i - 1].cut if i else 0,
                mark,
                key,
                out,
                ctx,
                turns[fed : mark.turns],
                counting,
                held,
            )
        )
        out = out.lend()
        fed = mark.turns
    renderer.feed(turns[fed:], ctx, out)
    renderer.finish(out, ctx)
    if len(out.messages) < held_messages:
        return None  # the final-message rules left out a message the prefix holds
    # The same, for a message before a new cut: that prefix and those after it are not kept.
    short = (i for i, p in enumerate(snapshots) if len(out.messages) < len(p.out))
    snapshots = snapshots[: next(short, len(snapshots))]
    report.absorb(prefix.render)
    report.absorb(render_report)
    # The shares from the newest new prefix on: what the next request from it would compute (the
    # whole view's shares were computed twice in a first build).
    kept = snapshots[-1] if snapshots else prefix
    since = marks[len(snapshots) - 1].cut if snapshots else 0
    kept_messages = len(kept.out) if snapshots else held_messages
    shares = _request_shares(kept, kept_messages, live[since:], out, counting)
    firsts = _firsts(kept, out)
    return Conversion(out, report, ids.mapped, target, cache_ttl, shares, firsts), snapshots


def _firsts(kept: _Prefix, out: Rendered) -> list[str]:
    """A message's first source never changes once it is made (a merge adds sources after it)."""
    return [*kept.firsts, *(group[0] for group in out.sources[len(kept.firsts) :])]


def _grown(items: list[Any], added: Iterable[Any], take: bool) -> list[Any]:
    """`items` followed by `added`: `items` itself, extended, when it is `take`n (its prefix is
    given up), else a new list."""
    if take:
        items.extend(added)
        return items
    return [*items, *added]


def _snapshot(
    prefix: _Prefix,
    base: _Prefix,
    base_messages: int,
    live: Sequence[Message],
    since: int,
    mark: _Mark,
    key: tuple[Options, Target, Counting],
    out: Rendered,
    ctx: RenderContext,
    turns: Sequence[Turn],
    counting: Counting,
    reminder: str | None,
) -> _Prefix:
    """The prefix up to the mark's cut, made while the request is rendered (before anything after
    the cut is fed): `base` (`prefix`, or the snapshot at an earlier cut of this pass) followed by
    `live[since : mark.cut]` and `turns`; `reminder`: the per-turn reminder they hold (the cut is
    inside the turn in progress). A base given up gives its lists to it."""
    norm = prefix.norm.copy()
    norm.absorb(mark.norm)
    render = prefix.render.copy()
    render.absorb(ctx.report)
    before = live[since : mark.cut]
    responses = dict(base.responses)
    shares = _shares(_contributing(before, out, base_messages), counting, responses)
    newest = next((t for t in reversed(turns) if t.role == "assistant" and (t.provider or t.model)), None)
    return _Prefix(
        messages=_grown(base.messages, before, base.given_up),
        opener=live[mark.cut],
        key=key,
        carried=mark.carried,
        norm=norm,
        render=render,
        out=out,  # the caller goes on with the lists it lends (`Rendered.lend`)
        firsts=_grown(base.firsts, [group[0] for group in out.sources[len(base.firsts) :]], base.given_up),
        call_ids=dict(ctx.ids.mapped),
        dropped_calls=set(ctx.dropped_calls),
        newest_assistant=newest or base.newest_assistant,
        shares=base.shares.plus({s.message_id: s.outside for s in shares}),
        trailing=_trailing(base.trailing, shares),
        responses=responses,
        volatile=list(ctx.volatile),
        reminder=reminder if reminder is not None else base.reminder,
    )


def _contributing(live: Sequence[Message], out: Rendered, start: int) -> list[Message]:
    """The messages of `live` the request holds something of (from output message `start - 1` on:
    the one before may have taken a merge)."""
    used = {source for group in out.sources[max(0, start - 1) :] for source in group}
    return [m for m in live if m.id in used]


def _shares(
    contributing: Sequence[Message], counting: Counting, responses: dict[str, list[PartCost]]
) -> list[_Share]:
    """`request_size.message_token_counts` one message at a time, the response costs carried in
    `responses` (a list from the prefix is copied before it grows)."""
    out = []
    for m in contributing:
        base = base_share(m, counting)
        extra = 0
        if m.role == "assistant":
            costs = m.part_costs()
            response = m.info.get("providerMessageID")
            if isinstance(response, str) and response:
                costs = responses[response] = [*responses.get(response, ()), *costs]
            tokens = m.info.get("tokens")
            if tokens is not None:
                extra = hidden_reasoning(tokens, costs, counting)
        if counting.keeps_all_reasoning:
            base, extra = base + extra, 0
        out.append(_Share(m.id, base, extra, m.role == "user" and not is_carrier(m)))
    return out


def _trailing(earlier: LayeredMap, shares: Sequence[_Share]) -> LayeredMap:
    """What the turn in progress adds, for the messages after the newest prompt."""
    start = next((i + 1 for i in range(len(shares) - 1, -1, -1) if shares[i].prompt), None)
    kept = earlier if start is None else LayeredMap()
    return kept.plus({s.message_id: s.in_turn for s in shares[start or 0 :] if s.in_turn})


def _request_shares(
    prefix: _Prefix, held_messages: int, live: Sequence[Message], out: Rendered, counting: Counting
) -> RequestShares:
    shares = _shares(_contributing(live, out, held_messages), counting, dict(prefix.responses))
    start = next((i + 1 for i in range(len(shares) - 1, -1, -1) if shares[i].prompt), None)
    live_shares = {
        s.message_id: s.outside + (s.in_turn if start is None or i >= start else 0)
        for i, s in enumerate(shares)
    }
    return RequestShares(prefix.shares, prefix.trailing if start is None else None, live_shares)


__all__ = ["BuildMemo", "Conversion", "Options", "OutputSlot", "convert", "prepare"]
