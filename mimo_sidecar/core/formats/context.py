"""What every renderer shares: its inputs, its output, and the per-target helpers of the
normalisation (docs/formats.md, "Normalisation (every format)")."""

from __future__ import annotations

import itertools
import sys
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..estimate.jstext import is_blank
from . import report as r
from .call_ids import CallIdMap
from .model import Compaction, Json, Media, Reasoning, Text, ToolCall, ToolResult, Turn
from .target import Target, replay_refusal

# Fixed texts: byte-stable from request to request, so a cached prefix stays valid
# (docs/formats.md, "`cache`").
MEDIA_FROM_RESULT = "[Attachments returned by tool call {call_id}]"
MEDIA_PLACEHOLDER = "[Attachment not sent: {label} ({reason})]"
LEADING_USER_TEXT = "[Earlier conversation omitted]"
INLINED_TEXT_TYPES = frozenset({"text/plain", "application/x-directory"})


# Versions of a request's messages: each message a renderer makes or replaces takes the next one.
_VERSIONS = itertools.count()


def _counts(lists: tuple[object, ...]) -> list[int]:
    count = getattr(sys, "getrefcount", None)  # CPython's; elsewhere lists are never taken
    return [count(x) if count is not None else sys.maxsize for x in lists]


def _only_held_by_one(*lists: object) -> bool:
    """No reference to these lists but the one attribute each was read from: nothing else (the
    request they were lent to, its result) holds them any more."""
    return all(n <= _ALONE for n in _counts(lists))


def _counts_as_checked(*lists: object) -> list[int]:
    return _counts(lists)  # the calls and references `_only_held_by_one` makes


class _Probe:
    items: list[object]


_probe = _Probe()
_probe.items = []
# The count `_only_held_by_one` sees for a list that one attribute alone holds.
_ALONE = _counts_as_checked(_probe.items)[0]


@dataclass
class Rendered:
    """One format's messages, with the stored messages each came from.

    A renderer appends to it turn by turn (`feed`), then applies its rules for the whole request
    (`finish`). The first `shared` messages may belong to a cached prefix (`build_memo`): a renderer
    never changes one of them in place, it changes its own copy (`own`, `extend_last`).

    A prefix kept at a cut lends its lists to the request that goes on past the cut (`lend`):
    the prefix is their first `upto` entries, and the request, which appends to them, copies them
    before it changes one of those (`_borrowed`), so that the lists of a 10,000-message request
    are not copied at every cut. The next conversion from the prefix takes them back, cut to
    `upto`, when nothing else holds them (the request was dropped), else copies that much.

    `versions[i]` is the version of message `i` and its sources: a new one each time a message is
    added or replaced by a copy, so that two requests whose message `i` has the same version hold
    the very same, unchanged, message and sources there (the transport encodes such a run of
    messages once, `transport.jsonrpc_codec.ListCache`). A message is changed in place only before
    its request is returned (it was added by this conversion), or with `changed`."""

    messages: list[Json] = field(default_factory=list)
    sources: list[list[str]] = field(default_factory=list)
    overrides: Json = field(default_factory=dict)  # request fields this history needs (thinking off)
    boundary_index: int | None = None  # the message holding the rebuild boundary's turn
    shared: int = 0
    versions: array[int] = field(default_factory=lambda: array("q"))
    upto: int | None = None  # lent: its messages are the lists' first `upto`
    _borrowed: int = 0  # the lists' first entries belong to the prefix that lent them
    _owned: set[int] = field(default_factory=set)  # shared positions already replaced by a copy

    def __len__(self) -> int:
        return self.upto if self.upto is not None else len(self.messages)

    def add(self, message: Json, sources: list[str]) -> None:
        self.messages.append(message)
        self.sources.append(list(sources))
        self.versions.append(next(_VERSIONS))

    def pop(self) -> None:
        """The last message left out."""
        self._writing(len(self.messages) - 1)
        self.messages.pop()
        self.sources.pop()
        self.versions.pop()
        self._owned.discard(len(self.messages))

    def own(self, index: int, key: str) -> Json:
        """Message `index`, copied first (with its `key` list and sources) when it is shared."""
        if index < self.shared and index not in self._owned:
            self._writing(index)
            self._owned.add(index)
            message = self.messages[index]
            self.messages[index] = {**message, key: list(message[key])}
            self.sources[index] = list(self.sources[index])
            self.versions[index] = next(_VERSIONS)
        return self.messages[index]

    def changed(self, index: int) -> None:
        """Message `index` was changed in place (the same change every request of a prefix makes)."""
        self._writing(index)
        self.versions[index] = next(_VERSIONS)

    def extend_last(self, key: str, content: list[Json], sources: list[str]) -> None:
        """Content of the same role added to the last message (as the API would merge them)."""
        last = len(self.messages) - 1
        self.own(last, key)[key].extend(content)
        held = self.sources[last]
        held += [s for s in sources if s not in held]

    def _writing(self, index: int) -> None:
        """Entry `index` of the lists is about to change: the lists are copied first when it belongs
        to the prefix that lent them."""
        if index < self._borrowed:
            self.messages, self.sources, self.versions = self.messages[:], self.sources[:], self.versions[:]
            self._borrowed = 0

    def lend(self) -> Rendered:
        """A request to go on appending to these lists: this one keeps their first entries, as
        many as it has now (`upto`)."""
        held = len(self.messages)
        self.upto = held
        return Rendered(
            self.messages, self.sources, dict(self.overrides), self.boundary_index, held, self.versions,
            _borrowed=held,
        )

    def resumed(self, take: bool = False) -> Rendered:
        """A copy to go on appending to, sharing every message with this one. With `take`, the
        lists themselves when nothing else holds them (touching each of 10,000 messages to copy
        them cost a build after one step more than the step), cut to this one's length: this one
        is left empty, for a prefix that is given up (`build_memo`)."""
        held = len(self)
        if take and _only_held_by_one(self.messages, self.sources, self.versions):
            messages, sources, versions = self.messages, self.sources, self.versions
            del messages[held:], sources[held:], versions[held:]
            overrides = self.overrides
            self.messages, self.sources, self.overrides, self.versions = [], [], {}, array("q")
            self.upto = None
        else:
            messages, sources = self.messages[:held], self.sources[:held]
            overrides, versions = dict(self.overrides), self.versions[:held]
        return Rendered(messages, sources, overrides, self.boundary_index, held, versions)


@dataclass
class RenderContext:
    target: Target
    report: r.Report
    ids: CallIdMap
    cache_ttl: str | None = None
    dropped_calls: set[str] = field(default_factory=set)  # calls not replayed: their results neither
    volatile: list[Json] = field(default_factory=list)  # rendered volatile blocks (Text.volatile)

    def not_replayed(self, call: ToolCall, source: str) -> bool:
        """A provider-executed call (and its result) is replayed only in `ai-sdk`."""
        if not call.provider_executed:
            return False
        self.report.tally(r.PROVIDER_EXECUTED_DROPPED, "provider-executed tool calls not replayed", source)
        self.dropped_calls.add(call.call_id)
        return True

    def replayed_results(self, turn: Turn) -> list[ToolResult]:
        return [b for b in turn.blocks if b.call_id not in self.dropped_calls]

    def moved_media(self, shapes: BlockShapes, call_id: str, moved: list[Json], source: str) -> list[Json]:
        """A result's media moved out of it, introduced by the fixed label (reported)."""
        if not moved:
            return []
        self.report.tally(r.MEDIA_MOVED, "tool-result attachments moved to a user message", source)
        return [shapes.text(MEDIA_FROM_RESULT.format(call_id=call_id)), *moved]

    def keep_reasoning(self, reasoning: Reasoning, turn: Turn, family: str | None, fmt: str) -> bool:
        refusal = replay_refusal(reasoning, turn, family, self.target)
        if refusal is None:
            return True
        self.report.tally(r.REASONING_DROPPED, f"reasoning not replayed to {fmt}: {refusal}", turn.sources[0])
        return False

    def compaction_dropped(self, source: str) -> None:
        self.report.tally(
            r.COMPACTION_DROPPED,
            "encrypted compaction summaries not sent (only the Responses API reads them; the label is)",
            source,
        )

    def media_placeholder(self, media: Media, reason: str, source: str) -> Text:
        self.report.tally(r.MEDIA_REPLACED, f"attachment replaced by a placeholder: {reason}", source)
        return Text(MEDIA_PLACEHOLDER.format(label=media.label(), reason=reason))


def text_before_calls(blocks: list[Any], source: str, report: r.Report) -> list[Any]:
    """Text that follows a tool call moves before the first call (the order of reasoning and
    calls is kept: signed thinking must stay where the model put it)."""
    first_call = next((i for i, b in enumerate(blocks) if isinstance(b, ToolCall)), None)
    if first_call is None:
        return blocks
    late_texts = [b for b in blocks[first_call:] if isinstance(b, Text)]
    if not late_texts:
        return blocks
    report.tally(r.TEXT_MOVED, "text blocks after a tool call moved before the calls", source)
    rest = [b for b in blocks[first_call:] if not isinstance(b, Text)]
    return blocks[:first_call] + late_texts + rest


def object_input(call: ToolCall, source: str, report: r.Report) -> Json:
    """Anthropic `input` / Gemini `args` must be an object: other inputs become `{"input": value}`."""
    if isinstance(call.input, dict):
        return call.input
    if call.input is None:
        return {}
    report.tally(r.TOOL_INPUT_WRAPPED, 'non-object tool inputs sent as {"input": …}', source)
    return {"input": call.input}


def inlined_text(media: Media, ctx: RenderContext, source: str) -> bool:
    """A MiMo text file part: the host already inlines its text (`file-skipped`)."""
    if media.mime in INLINED_TEXT_TYPES and media.native is None:
        ctx.report.tally(r.FILE_SKIPPED, "text file parts not sent (the host inlines their text)", source)
        return True
    return False


@dataclass(frozen=True)
class BlockShapes:
    """How one format writes a text block and a media block (None: not sent)."""

    text: Callable[[str], Json]
    media: Callable[[Media, RenderContext, str], Json | None]

    def is_text(self, block: Json) -> bool:
        return block.keys() == self.text("").keys() and block.get("type") == self.text("").get("type")


def user_blocks(turn: Turn, ctx: RenderContext, shapes: BlockShapes) -> list[Json]:
    """A user turn's text and media blocks in the format's shapes."""
    content: list[Json] = []
    for block in turn.blocks:
        if isinstance(block, Text):
            content.append(shapes.text(block.text))
            if block.volatile:
                ctx.volatile.append(content[-1])
        elif isinstance(block, Compaction):
            ctx.compaction_dropped(turn.sources[0])
        elif isinstance(block, Media):
            rendered = shapes.media(block, ctx, turn.sources[0])
            if rendered is not None:
                content.append(rendered)
    return content


def result_blocks(
    result: ToolResult, ctx: RenderContext, source: str, shapes: BlockShapes, moved: list[Json]
) -> list[Json]:
    """A tool result's content blocks; media goes to `moved` when the target takes none in results."""
    items: list[Json] = []
    for block in result.content:
        if isinstance(block, Text):
            if not is_blank(block.text):
                items.append(shapes.text(block.text))
            elif block.text:
                ctx.report.tally(r.BLANK_TEXT_DROPPED, "whitespace-only text blocks not sent", source)
            continue
        rendered = shapes.media(block, ctx, source)
        if rendered is None:
            continue
        if not shapes.is_text(rendered) and ctx.target.tool_result_media is False:
            moved.append(rendered)
        else:
            items.append(rendered)
    return items
