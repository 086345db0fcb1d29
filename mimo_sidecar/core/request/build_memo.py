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
- something after `c` is converted to a turn, where the writer's closing text goes; with the
  per-turn reminder, `c` is not after the newest user-role message, which carries it (in a session
  whose results are inline, MiMo's and OpenCode's, the turn in progress is then converted each
  time: its prompt holds the reminder);

and what crosses it is carried: the call IDs issued and the results no call took (reported at the
end, `Carried`), the call-ID map, the calls not replayed, the warnings and counts in their order
(`Report.absorb`), each message's share of `estimatedTokens` with what the turn in progress adds,
the costs of a provider response whose entries straddle it, and the newest assistant turn (the
target's default model). A renderer that merges a message across the cut (Anthropic and Gemini
merge same-role messages) or changes one at the end (breakpoints, the final-message rules) changes
its own copy (`Rendered.own`).

The prefix is used again only when the view still starts with the same message objects, none of
them changed since (a change clears `Message.derived`, where the memo leaves its stamp), followed by
the same unchanged message at the cut (the cut went there because of what that message is: a prompt
with parts, the first entry of a new response), with the same options, target and provider
counting; otherwise the view is converted whole and the memo starts again from it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..estimate.provider_count import Counting, PartCost, counting_for, hidden_reasoning
from ..formats import RENDERERS, cache_ttl_for
from ..formats.context import RenderContext, Rendered
from ..formats.model import Turn
from ..formats.normalize import Carried, Normalizer, add_closing_text, add_reminder
from ..formats.report import Report
from ..formats.target import Target, resolve
from ..session.message import Message
from ..session.shapes import is_carrier
from .size import base_share

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
    shares: dict[str, int]
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
    shares: dict[str, int] = field(default_factory=dict)  # outside the turn in progress
    trailing: list[tuple[str, int]] = field(default_factory=list)  # after the newest prompt: in_turn
    responses: dict[str, list[PartCost]] = field(default_factory=dict)


EMPTY = _Prefix()


class BuildMemo:
    """The prefix of the newest request built through it (one per session, agent and purpose)."""

    def __init__(self) -> None:
        self.stamp = object()  # the key of this memo's stamp in `Message.derived`
        self.prefix: _Prefix | None = None
        self.reused = 0  # messages taken from the prefix by the newest conversion (for tests)

    def convert(
        self,
        msgs: Sequence[Message],
        options: Options,
        reminder: str | None,
        closing: tuple[str, str] | None,
    ) -> Conversion:
        prefix = self._valid_prefix(msgs, options) or EMPTY
        self.prefix = None  # released before converting (one conversion's objects at a time)
        result = _convert(msgs, options, reminder, closing, prefix) if prefix is not EMPTY else None
        if result is None:
            prefix = EMPTY
            result = _convert(msgs, options, reminder, closing, EMPTY)
            assert result is not None  # from the empty prefix nothing can refuse
        conversion, snapshot = result
        self.reused = len(prefix.messages)
        self.prefix = snapshot or (prefix if prefix is not EMPTY else None)
        if snapshot is not None:
            stamp = self.stamp
            for m in snapshot.messages[len(prefix.messages) :]:
                m.derived[stamp] = True
            assert snapshot.opener is not None
            snapshot.opener.derived[stamp] = True
        return conversion

    def _valid_prefix(self, msgs: Sequence[Message], options: Options) -> _Prefix | None:
        prefix = self.prefix
        if prefix is None or prefix.key is None or prefix.key[0] != options:
            return None
        held = prefix.messages
        head = msgs[: len(held)]
        if len(msgs) <= len(held) or (head if isinstance(head, list) else list(head)) != held:
            return None  # compared by identity: the same message objects
        stamp = self.stamp
        opener = msgs[len(held)]
        if opener is not prefix.opener or stamp not in opener.derived:
            return None  # the cut went before this message because of what it was (a prompt, a new response)
        if not all(stamp in m.derived for m in held):
            return None
        return prefix


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


def _earlier(live: Sequence[Message], c: int) -> Iterator[Message]:
    return (live[i] for i in range(c - 1, -1, -1))


@dataclass
class _Mark:
    """The pass's state at the cut, before the messages after it were converted."""

    cut: int
    turns: int
    carried: Carried
    norm: Report


def _normalise(
    live: Sequence[Message], options: Options, prefix: _Prefix, report: Report, reminder: bool
) -> tuple[list[Turn], _Mark | None] | None:
    """The turns of `live` and the mark at its cut (None: a result in `live` answers a call the
    prefix sent as interrupted)."""
    normalizer = Normalizer(live, options.skill_flag, report, prefix.carried)
    if normalizer.answers_interrupted():
        return None
    cut = _candidate_cut(live, reminder)
    mark = None
    if cut is not None:
        normalizer.feed(0, cut)
        if normalizer.opens_turn(cut):
            normalizer.close()  # what `feed` would do first at `cut`
            if normalizer.reach < cut:
                mark = _Mark(cut, len(normalizer.turns), normalizer.carry(cut), report.copy())
        normalizer.feed(cut, len(live))
    else:
        normalizer.feed(0, len(live))
    turns = normalizer.finish()
    if mark is not None and len(turns) == mark.turns:
        mark = None  # nothing after the cut to carry the reminder or the closing text
    return turns, mark


def _convert(
    msgs: Sequence[Message],
    options: Options,
    reminder: str | None,
    closing: tuple[str, str] | None,
    prefix: _Prefix,
) -> tuple[Conversion, _Prefix | None] | None:
    """The conversion of `msgs` from `prefix` (None: the prefix cannot serve this request), and the
    prefix up to the newest cut, when there is one after `prefix`'s."""
    live = msgs[len(prefix.messages) :]
    norm = Report()
    normalised = _normalise(live, options, prefix, norm, reminder is not None)
    if normalised is None:
        return None
    turns, mark = normalised
    split = mark.turns if mark is not None else 0
    tail = turns[split:]
    if prefix is not EMPTY and (
        not tail or (reminder is not None and not any(m.role == "user" for m in live))
    ):
        return None  # the reminder or the closing text would go into the prefix
    if reminder is not None:
        add_reminder(tail, live[mark.cut if mark is not None else 0 :], reminder, norm)
    if closing is not None:
        add_closing_text(tail, *closing)
    turns[split:] = tail

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
    ctx = RenderContext(target, render_report, ids, cache_ttl, set(prefix.dropped_calls))
    out = prefix.out.resumed()
    snapshot = None
    if mark is not None:
        renderer.feed(turns[: mark.turns], ctx, out)
        snapshot = _snapshot(prefix, live, mark, key, out, ctx, turns[: mark.turns], counting)
        out = snapshot.out.resumed()
        renderer.feed(turns[mark.turns :], ctx, out)
    else:
        renderer.feed(turns, ctx, out)
    renderer.finish(out, ctx)
    if len(out.messages) < len(prefix.out.messages):
        return None  # the final-message rules left out a message the prefix holds
    if snapshot is not None and len(out.messages) < len(snapshot.out.messages):
        snapshot = None  # the same, for a message before the new cut: not kept
    report.absorb(prefix.render)
    report.absorb(render_report)
    shares = _request_shares(prefix, live, out, counting)
    firsts = _firsts(snapshot or prefix, out)
    return Conversion(out, report, ids.mapped, target, cache_ttl, shares, firsts), snapshot


def _firsts(kept: _Prefix, out: Rendered) -> list[str]:
    """A message's first source never changes once it is made (a merge adds sources after it)."""
    return [*kept.firsts, *(group[0] for group in out.sources[len(kept.firsts) :])]


def _snapshot(
    prefix: _Prefix,
    live: Sequence[Message],
    mark: _Mark,
    key: tuple[Options, Target, Counting],
    out: Rendered,
    ctx: RenderContext,
    turns: Sequence[Turn],
    counting: Counting,
) -> _Prefix:
    """The prefix up to the mark's cut, made while the request is rendered (before anything after
    the cut is fed)."""
    norm = prefix.norm.copy()
    norm.absorb(mark.norm)
    render = prefix.render.copy()
    render.absorb(ctx.report)
    before = live[: mark.cut]
    responses = dict(prefix.responses)
    shares = _shares(_contributing(before, out, len(prefix.out.messages)), counting, responses)
    newest = next((t for t in reversed(turns) if t.role == "assistant" and (t.provider or t.model)), None)
    return _Prefix(
        messages=[*prefix.messages, *before],
        opener=live[mark.cut],
        key=key,
        carried=mark.carried,
        norm=norm,
        render=render,
        out=out,  # given up by the caller, which goes on from a copy (`resumed`)
        firsts=_firsts(prefix, out),
        call_ids=dict(ctx.ids.mapped),
        dropped_calls=set(ctx.dropped_calls),
        newest_assistant=newest or prefix.newest_assistant,
        shares={**prefix.shares, **{s.message_id: s.outside for s in shares}},
        trailing=_trailing(prefix.trailing, shares),
        responses=responses,
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


def _trailing(earlier: list[tuple[str, int]], shares: Sequence[_Share]) -> list[tuple[str, int]]:
    """What the turn in progress adds, for the messages after the newest prompt."""
    start = next((i + 1 for i in range(len(shares) - 1, -1, -1) if shares[i].prompt), None)
    kept = list(earlier) if start is None else []
    return kept + [(s.message_id, s.in_turn) for s in shares[start or 0 :] if s.in_turn]


def _request_shares(
    prefix: _Prefix, live: Sequence[Message], out: Rendered, counting: Counting
) -> dict[str, int]:
    shares = _shares(_contributing(live, out, len(prefix.out.messages)), counting, dict(prefix.responses))
    total = dict(prefix.shares)
    start = next((i + 1 for i in range(len(shares) - 1, -1, -1) if shares[i].prompt), None)
    if start is None:
        for message_id, extra in prefix.trailing:
            total[message_id] += extra
    for i, s in enumerate(shares):
        total[s.message_id] = s.outside + (s.in_turn if start is None or i >= start else 0)
    return total


__all__ = ["BuildMemo", "Conversion", "Options", "convert"]
