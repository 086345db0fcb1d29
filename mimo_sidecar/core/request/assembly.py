"""Request assembly (behavior.md#request): a slice's view → the messages the host sends to the model.

Pipeline: the view (the caller passes `session.view()`, behavior.md#view) → collapse (main agent
only) → normalisation (`formats.normalize`: conversion, one turn per provider response, pairing;
behavior.md#part-conversion, behavior.md#request-validity) → per-turn reminder
(behavior.md#memory-reminder) → the output format's renderer (`formats`). Nothing here changes
the session's data: the reminder and every placeholder exist only in the returned request. With a
`build_memo.BuildMemo`, the conversion up to the view's newest cut is kept for the next request
(behavior.md#request-reuse): the same output, converted from what is new.

`BuiltRequest.source_groups[i]` lists the stored messages output message `i` comes from (several
when split entries of one provider response are merged, or when the results of one step come from
several carriers); `sources[i]` is the first of them. One stored message can also yield several
output messages (an inline assistant message yields an assistant and a tool message per step; a
carrier's text after its results becomes a user message).

`host_view` gives the same request in the host's own stored shape instead (protocol.md "The view
in the host's shape"): the messages it is converted from, for a host whose own converter sends them
(OpenCode, whose message shape is the sidecar's).

`estimated_tokens` is the request-size figure of the stored messages that contributed to the request,
as the provider of its format and target counts them (`request_size.messages_tokens`, behavior.md#d15;
compacted results as their placeholder): an estimate of the stored data, not of the converted JSON.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import EllipsisType

from ..formats import DEFAULT_FORMAT, Target
from ..formats.ai_sdk import tool_output
from ..formats.model import Json, ToolCall
from ..formats.normalize import inline_result
from ..formats.report import Report
from ..rebuild.collapse import collapse
from ..session.message import Message
from ..session.ordering import Ordering
from ..texts import CHECKPOINT_LABEL
from .build_memo import BuildMemo, Options, OutputSlot, convert


@dataclass(frozen=True)
class BuiltRequest:
    messages: list[Json]
    sources: list[str]
    collapsed_ids: list[str] = field(default_factory=list)  # stored messages left out by the collapse
    warnings: list[str] = field(default_factory=list)
    estimated_tokens: int = 0
    message_tokens: Mapping[str, int] = field(default_factory=dict)  # stored message → its share of it
    source_groups: list[list[str]] = field(default_factory=list)
    call_id_map: dict[str, str] = field(default_factory=dict)  # mapped call ID → stored call ID
    overrides: Json = field(default_factory=dict)  # request fields the history needs (thinking off)
    format: str = DEFAULT_FORMAT
    target: Target | None = None  # the target with its defaults resolved
    cache_ttl: str | None = None  # the breakpoints' TTL, when the format took them
    kept: list[Message] = field(default_factory=list)  # what was converted: the view after the collapse
    # `versions[i]`: message i's version (`formats.context.Rendered`); `output`: the memo's slot
    # for what the caller keeps of this request (None without a memo).
    versions: array[int] = field(default_factory=lambda: array("q"))
    output: OutputSlot | None = None


def inline_output(state: Json) -> Json:
    """behavior.md#part-conversion for an inline tool state, as an AI SDK tool-result `output`."""
    return tool_output(inline_result(ToolCall("", "", None), state))


SKILL_CATALOG_FLAG = "skillCatalog"  # the part metadata flag of a skill catalog (behavior.md#part-conversion)


def build_messages(
    messages: Sequence[Message],
    *,
    collapse_tail: bool,
    ordering: Ordering,
    reminder: str | None,
    skill_catalog_flag: str = SKILL_CATALOG_FLAG,
    fmt: str = DEFAULT_FORMAT,
    target: Target | None = None,
    cache_ttl: str | None = None,
    closing: tuple[str, str] | None = None,
    model_in_use: tuple[str | None, str | None] | None = None,
    memo: BuildMemo | None = None,
    boundary: Message | None | EllipsisType = ...,
) -> BuiltRequest:
    """View → (collapse) → normalised turns (+ reminder, + closing text) → the messages of format
    `fmt`. `closing` is `(text, source)`: a last user text that no stored message holds (the
    writer's instructions), attributed to the stored message `source`. `model_in_use` (provider,
    model) is the target's default when the host names none; without it, the newest assistant
    turn of the request. With `memo`, the conversion of the view up to its newest cut is kept and
    reused by the next request built through it (`build_memo`): the same request, converted from
    what is new. `boundary`: the view's newest checkpoint boundary, when the caller knows it (collapse)."""
    msgs, collapsed_ids, collapse_warnings = _collapsed(messages, collapse_tail, ordering, boundary)
    options = Options(fmt, target, cache_ttl, skill_catalog_flag, model_in_use)
    done = (memo.convert if memo is not None else convert)(msgs, options, reminder, closing)
    report = Report(collapse_warnings)
    report.absorb(done.report)
    return BuiltRequest(
        messages=done.rendered.messages,
        sources=done.firsts,
        collapsed_ids=collapsed_ids,
        warnings=report.flush(),
        estimated_tokens=done.shares.total,
        message_tokens=done.shares,
        source_groups=done.rendered.sources,
        call_id_map=done.call_ids,
        overrides=done.rendered.overrides,
        format=fmt,
        target=done.target,
        cache_ttl=done.cache_ttl,
        kept=msgs,
        versions=done.rendered.versions,
        output=memo.output if memo is not None else None,
    )


def normalise_ahead(
    messages: Sequence[Message],
    *,
    collapse_tail: bool,
    ordering: Ordering,
    memo: BuildMemo,
    skill_catalog_flag: str = SKILL_CATALOG_FLAG,
    boundary: Message | None | EllipsisType = ...,
) -> None:
    """Normalise the view now, as `build_messages` would, for the memo's first request
    (`BuildMemo.normalise_ahead`: `session/open` calls it while the messages are fresh)."""
    msgs, _, _ = _collapsed(messages, collapse_tail, ordering, boundary)
    memo.normalise_ahead(msgs, skill_catalog_flag)


def _collapsed(
    messages: Sequence[Message],
    collapse_tail: bool,
    ordering: Ordering,
    boundary: Message | None | EllipsisType,
) -> tuple[list[Message], list[str], list[str]]:
    """The view the request is converted from, the IDs collapse left out and its warnings."""
    # A list is the caller's own copy of the view (`engine.build`): kept as it is, not copied again.
    msgs = messages if isinstance(messages, list) else list(messages)
    if not collapse_tail:
        return msgs, [], []
    collapsed = collapse(msgs, ordering, boundary)
    return list(collapsed.messages), list(collapsed.removed_ids), list(collapsed.warnings)


def host_view(kept: Sequence[Message], reminder: str | None) -> list[Json]:
    """The request in the host's stored shape (protocol.md "The view in the host's shape"): each
    message the request is converted from, `{info, parts}` as stored (compaction marks included),
    in request order, with the two things only a request holds made parts the host can send:

    - the boundary's `checkpoint` part, which no host converts, becomes the synthetic text part the
      request sends for it (its label, behavior.md#part-conversion), with the part's `id`;
    - the per-turn memory reminder is a synthetic text part at the end of the newest user message
      (behavior.md#memory-reminder), without an `id`: it is never stored.

    The stored dicts are shared, never changed: a message that gains or loses a part gets a new
    parts list."""
    target = next((m.id for m in reversed(kept) if m.role == "user"), None) if reminder is not None else None
    view: list[Json] = []
    for m in kept:
        parts = m.parts
        if any(p.get("type") == "checkpoint" for p in parts):
            parts = [_label_part(p) if p.get("type") == "checkpoint" else p for p in parts]
        if m.id == target and reminder is not None:
            parts = [*parts, _own_part(m.info, {"type": "text", "text": reminder, "synthetic": True})]
        view.append({"info": m.info, "parts": parts})
    return view


def _label_part(checkpoint: Json) -> Json:
    """A checkpoint part as the text the request sends for it (keeping its IDs)."""
    ids: Json = {k: checkpoint[k] for k in ("id", "sessionID", "messageID") if k in checkpoint}
    return {**ids, "type": "text", "text": CHECKPOINT_LABEL, "synthetic": True}


def _own_part(info: Json, part: Json) -> Json:
    """`part` with the session and message IDs of the message it is added to, where it has them."""
    ids = {"sessionID": info.get("sessionID"), "messageID": info.get("id")}
    return {**{k: v for k, v in ids.items() if v is not None}, **part}
