"""The history tool (behavior.md#d18): the session's stored messages, in full, whatever a rebuild
removed from the model's view.

- `around`: one message by ID, then its neighbours in its slice (listing order), every part in
  full, cleared results included (`transcript`).
- `search`: a query over every stored message of the session (every slice; boundaries left out,
  their text is the sidecar's summary of what is searched here anyway, and so are the sidecar's own
  tool calls and results): one hit per matching part, newest first, with the message's ID, role
  and time and a snippet; paged by hit.
- `result`: one tool call by its call ID (the stored one, or the one a provider format sent after
  remapping it to the provider's limits), with its input and its whole result.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

from .. import texts
from ..estimate.jsjson import js_stringify
from ..formats import call_ids
from ..session.message import Message
from ..session.shapes import LogicalCall, logical_calls, tool_results, tool_uses
from ..words import HistoryOperation
from .answer import HitPager, ToolAnswer, ToolRefusal, paged_answer
from .arguments import Arguments
from .context import ToolContext
from .matching import Matcher, matcher, snippet
from .transcript import call_text, created, message_text

OPERATIONS: tuple[HistoryOperation, ...] = ("around", "search", "result")
DEFAULT_NEIGHBOURS = 2
MAX_NEIGHBOURS = 20


def call(ctx: ToolContext, args: Arguments) -> ToolAnswer:
    operation = args.operation(OPERATIONS)
    if operation == "around":
        args.only(("messageID", "before", "after", "offset"))
        return around(
            ctx,
            args.required_string("messageID"),
            args.integer("before", DEFAULT_NEIGHBOURS, maximum=MAX_NEIGHBOURS),
            args.integer("after", DEFAULT_NEIGHBOURS, maximum=MAX_NEIGHBOURS),
            args.integer("offset", 0),
        )
    if operation == "search":
        args.only(("query", "regex", "offset"))
        found = matcher(args.required_string("query"), args.boolean("regex", False))
        return search(ctx, found, args.integer("offset", 0))
    args.only(("callID", "offset"))
    return result(ctx, args.required_string("callID"), args.integer("offset", 0))


# -- around -----------------------------------------------------------------------------------------
def around(ctx: ToolContext, message_id: str, before: int, after: int, offset: int) -> ToolAnswer:
    session = ctx.session
    message = session.find_in_context(message_id)
    if message is None:
        raise ToolRefusal(texts.no_stored_message(message_id))
    listing = session.slice(message.agent_id) if session.get(message_id) is not None else []
    if not listing:
        listing = session.inherited_context()
    at = next(i for i, m in enumerate(listing) if m is message)
    earlier, later = listing[max(0, at - before) : at], listing[at + 1 : at + 1 + after]
    sections = [texts.asked_message_heading(message_id), message_text(message)]
    if earlier:
        sections += [texts.neighbours_before(len(earlier)), *map(message_text, earlier)]
    if later:
        sections += [texts.neighbours_after(len(later)), *map(message_text, later)]
    return paged_answer("", "\n\n".join(sections), offset, ctx.answer_tokens, {"messageID": message_id})


# -- search -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Field:
    message: Message
    label: str
    text: str


def _fields(ctx: ToolContext) -> Iterator[_Field]:
    """Every searchable text of the session, newest message first, in part order within one."""
    own = ctx.own_tool_names
    messages = ctx.session.messages()
    own_calls = {u.call_id for m in messages for u in tool_uses(m) if u.name in own}
    for message in reversed(messages):
        if message.is_boundary():
            continue
        uses = {u.part_index: u for u in tool_uses(message)}
        results = {r.part_index: r for r in tool_results(message)}
        for index in sorted({*uses, *results}):
            use, res = uses.get(index), results.get(index)
            if use is not None and use.call_id not in own_calls:
                yield _Field(message, texts.call_label(use.name, use.call_id), _use_text(use.name, use.input))
            if res is not None and res.call_id not in own_calls:
                yield _Field(message, texts.result_of(res.call_id), res.content)
        for i, part in enumerate(message.parts):
            if i in uses or i in results:
                continue
            text = _part_text(part)
            if text:
                yield _Field(message, str(part.get("type")), text)


def _use_text(name: str, tool_input: object) -> str:
    return f"{name} {js_stringify(tool_input) or ''}"


def _part_text(part: dict[str, object]) -> str:
    ptype = part.get("type")
    if ptype in ("text", "reasoning"):
        return str(part.get("text") or "")
    if ptype == "subtask":
        return f"{part.get('description') or ''}\n{part.get('prompt') or ''}"
    if ptype == "file":
        return str(part.get("filename") or "")
    return ""


def search(ctx: ToolContext, found: Matcher, offset: int) -> ToolAnswer:
    pager = HitPager(offset, ctx.answer_tokens)
    for field_ in _fields(ctx):
        span = found.find(field_.text)
        if span is not None:
            pager.match(partial(_hit, field_, span))
    return pager.answer(texts.hits_heading(pager.total, offset, len(pager.shown)))


def _hit(field_: _Field, span: tuple[int, int]) -> str:
    m = field_.message
    return texts.history_hit(m.id, m.role, created(m), field_.label, snippet(field_.text, span))


# -- result -----------------------------------------------------------------------------------------
MAPS = (call_ids.anthropic, call_ids.openai_chat, call_ids.openai_responses)


def find_call(ctx: ToolContext, call_id: str) -> LogicalCall | None:
    """The logical call with the stored ID `call_id`, or whose ID a provider format remapped to it."""
    calls = logical_calls(ctx.session.messages())
    found = calls.get(call_id)
    if found is not None:
        return found
    for make in MAPS:
        id_map = make()
        for stored, logical in calls.items():
            if id_map(stored) == call_id:
                return logical
    return None


def result(ctx: ToolContext, call_id: str, offset: int) -> ToolAnswer:
    found = find_call(ctx, call_id)
    if found is None:
        raise ToolRefusal(texts.no_stored_call(call_id))
    return paged_answer("", call_text(found), offset, ctx.answer_tokens, {"callID": found.call_id})
