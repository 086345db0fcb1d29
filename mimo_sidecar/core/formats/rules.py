"""The provider-rules checker: what each provider refuses with a 400, per output format.

    check(fmt, messages, prefix=None, overrides=None, thinking=None, open_end=False) -> [Violation]

A pure function over any list in one of the output formats (the sidecar's own output, or a host's):
it returns every rule the list breaks, empty when a provider would accept it. `prefix` is
`prefix.request` (its cache breakpoints count; for `openai-chat` its `messages` go in front; for
`anthropic`, given, it must define `tools` when the history holds calls);
`overrides` is `request/build`'s `overrides` (a forced `thinking: disabled`); `thinking` is the
request's Anthropic thinking mode (None: the two `anthropic/thinking-*` rules about the final
assistant message are not checked); `open_end` says the host
appends a user turn before sending (the writer's fork), so the rules about the final message are
not checked.

Each `Violation` names its rule (`<format>/<rule>`, listed in `RULES`), the index of the message or
item and a detail.

Two rules are stricter or looser than the APIs' documentation, on the evidence of real traffic:
an Anthropic text block must hold non-whitespace text (the API's own 400 message: "text content
blocks must contain non-whitespace text"; Claude Code drops the whitespace-only blocks it stores
before sending), and a Responses `developer` message may sit anywhere in `input` (the Responses
documentation gives no position rule; Codex, OpenAI's own client, sends its history with developer messages
mid-conversation: model switches, aborted turns, permission changes).

A Responses reasoning item needs no `id` (the OpenAI SDK's type says it does): a request with
`store: false` carries the reasoning in `encrypted_content`, and Codex sends every reasoning item
without one (behavior.md#d16). What is refused is a reference the API cannot resolve: an item ID
without encrypted content, or an `fc_`/`msg_` ID whose reasoning item is not sent by its ID.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..estimate.jstext import is_blank

Json = dict[str, Any]

ANTHROPIC_ID = re.compile(r"^[A-Za-z0-9_-]+$")
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_BREAKPOINTS = 4
THINKING = frozenset({"thinking", "redacted_thinking"})
CHAT_ID_MAX = 40
RESPONSES_ID_MAX = 64
GEMINI_DATA_FIELDS = frozenset(
    {
        "text",
        "inlineData",
        "fileData",
        "functionCall",
        "functionResponse",
        "executableCode",
        "codeExecutionResult",
    }
)

RULES = {
    "anthropic/role": "roles are user and assistant only (system goes in `system`)",
    "anthropic/empty": "text blocks hold non-whitespace text; messages are non-empty",
    "anthropic/tool-use-unanswered": "every tool_use is answered by a tool_result in the next message",
    "anthropic/text-after-tool-use": "no text after a tool_use in an assistant message",
    "anthropic/orphan-tool-result": "every tool_result has its tool_use in the previous message",
    "anthropic/tool-result-not-first": "tool_result blocks come first in their user message",
    "anthropic/thinking-not-first": "thinking on: the final assistant message with tool_use starts so",
    "anthropic/thinking-when-off": "thinking off: the final assistant message has no thinking",
    "anthropic/thinking-misplaced": "thinking blocks only in assistant messages, with a signature or data",
    "anthropic/trailing-whitespace": "a final assistant text does not end in whitespace",
    "anthropic/tool-use-id": "tool_use ids use [A-Za-z0-9_-] and are unique",
    "anthropic/tool-input": "tool_use.input is an object",
    "anthropic/image": "images are JPEG/PNG/GIF/WebP, at most 5 MB",
    "anthropic/cache-control": "at most 4 cache_control breakpoints, never on thinking or empty text",
    "anthropic/tools-required": "a request whose history holds tool_use/tool_result blocks defines tools",
    "openai-chat/system-position": "system/developer messages only at the head",
    "openai-chat/tool-calls-unanswered": "one tool message per tool_call id, right after the tool_calls",
    "openai-chat/orphan-tool-message": "a tool message answers a tool_call of the assistant before it",
    "openai-chat/id-length": "tool_call ids are at most 40 characters",
    "openai-chat/tool-content": "tool message content is text only",
    "openai-chat/empty": "assistant content is null only with tool_calls; user content is non-empty",
    "openai-responses/system-position": "system messages only at the head (developer ones anywhere)",
    "openai-responses/call-unanswered": "every call has exactly one output, right after its calls",
    "openai-responses/orphan-output": "every output has its call before it",
    "openai-responses/id-length": "call_id is at most 64 characters",
    "openai-responses/reasoning": "reasoning has encrypted content (store: false) and its item follows it",
    "openai-responses/item-id-without-reasoning": "an fc_/msg_ item id needs its reasoning item, with its id",
    "openai-responses/duplicate-id": "no two input items share an id",
    "openai-responses/empty": "message content is non-empty",
    "gemini/role": "roles are user and model only",
    "gemini/first-turn": "contents start with a user turn",
    "gemini/call-position": "a functionCall turn follows a user or functionResponse turn",
    "gemini/response-count": "the turn after a functionCall turn has one functionResponse per call",
    "gemini/orphan-response": "functionResponse parts answer the functionCall turn right before",
    "gemini/part": "each part has exactly one non-empty data field",
    "gemini/thought-signature": "the first functionCall of each model turn has a thoughtSignature (Gemini 3)",
    "gemini/final-turn": "a request does not end on a model turn",
    "ai-sdk/system-position": "system messages only at the head",
    "ai-sdk/tool-message": "tool messages hold tool-result parts only",
    "ai-sdk/call-unanswered": "every tool-call has a tool-result in the tool message right after",
    "ai-sdk/orphan-result": "every tool-result answers a tool-call of the assistant message right before",
    "ai-sdk/empty": "text parts are non-empty",
}


@dataclass(frozen=True)
class Violation:
    rule: str
    index: int  # message / item / content index; -1 for the request as a whole
    detail: str


class _Found:
    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.items: list[Violation] = []

    def __call__(self, rule: str, index: int, detail: str) -> None:
        key = f"{self.fmt}/{rule}"
        assert key in RULES, key
        self.items.append(Violation(key, index, detail))


def _blank(text: Any) -> bool:
    """Anthropic answers 400 "text content blocks must contain non-whitespace text" for a text
    block that is empty or only whitespace (the documentation says non-empty; the API's own message
    is stricter)."""
    return not isinstance(text, str) or is_blank(text)


def _blocks(message: Json) -> list[Json]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


# =============================================================================================
# Anthropic Messages
# =============================================================================================
def _merged(messages: list[Json]) -> list[tuple[int, str, list[Json]]]:
    """Consecutive same-role messages as the API merges them: (first index, role, blocks)."""
    out: list[tuple[int, str, list[Json]]] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if out and out[-1][1] == role:
            out[-1][2].extend(_blocks(message))
        else:
            out.append((i, str(role), _blocks(message)))
    return out


def _check_anthropic(
    messages: list[Json], prefix: Json | None, thinking: bool | None, open_end: bool, v: _Found
) -> None:
    if prefix is not None and not prefix.get("tools") and _has_tool_blocks(messages):
        v("tools-required", -1, "tool_use/tool_result blocks in a request without tools")
    prefix = prefix or {}
    breakpoints = 0
    for holder in (prefix.get("system"), prefix.get("tools")):
        if isinstance(holder, list):
            breakpoints += sum(1 for b in holder if isinstance(b, dict) and "cache_control" in b)
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            v("role", i, f"role {role!r}")
        blocks = _blocks(message)
        if not blocks and not (role == "assistant" and i == len(messages) - 1):
            v("empty", i, "message with no content")
        for block in blocks:
            btype = block.get("type")
            if "cache_control" in block:
                breakpoints += 1
                if btype in THINKING or (btype == "text" and not block.get("text")):
                    v("cache-control", i, f"cache_control on a {btype} block")
            _anthropic_block(i, role, block, seen_ids, v)
    if breakpoints > MAX_BREAKPOINTS:
        v("cache-control", -1, f"{breakpoints} breakpoints")
    merged = _merged(messages)
    for k, (i, role, blocks) in enumerate(merged):
        _anthropic_pairing(k, i, role, blocks, merged, v)
    _anthropic_final(merged, thinking, open_end, v)


def _has_tool_blocks(messages: list[Json]) -> bool:
    return any(b.get("type") in ("tool_use", "tool_result") for m in messages for b in _blocks(m))


def _anthropic_block(i: int, role: Any, block: Json, seen_ids: set[str], v: _Found) -> None:
    btype = block.get("type")
    if btype == "text" and _blank(block.get("text")):
        v("empty", i, "empty or whitespace-only text block")
    elif btype in THINKING:
        if role != "assistant":
            v("thinking-misplaced", i, f"{btype} in a {role} message")
        if btype == "thinking" and not isinstance(block.get("signature"), str):
            v("thinking-misplaced", i, "thinking without a signature")
        if btype == "redacted_thinking" and not isinstance(block.get("data"), str):
            v("thinking-misplaced", i, "redacted_thinking without data")
    elif btype == "tool_use":
        tid = block.get("id")
        if not isinstance(tid, str) or not ANTHROPIC_ID.match(tid) or tid in seen_ids:
            v("tool-use-id", i, f"tool_use id {tid!r}")
        if isinstance(tid, str):
            seen_ids.add(tid)
        if not isinstance(block.get("input"), dict):
            v("tool-input", i, f"input of {tid!r} is not an object")
    elif btype == "image":
        _anthropic_image(i, block, v)
    elif btype == "tool_result":
        content = block.get("content")
        for inner in content if isinstance(content, list) else []:
            if isinstance(inner, dict) and inner.get("type") == "image":
                _anthropic_image(i, inner, v)
            if isinstance(inner, dict) and inner.get("type") == "text" and _blank(inner.get("text")):
                v("empty", i, "empty or whitespace-only text block in a tool_result")


def _anthropic_image(i: int, block: Json, v: _Found) -> None:
    raw = block.get("source")
    source: Json = raw if isinstance(raw, dict) else {}
    if source.get("type") == "base64":
        data = source.get("data")
        if source.get("media_type") not in IMAGE_TYPES:
            v("image", i, f"media_type {source.get('media_type')!r}")
        if isinstance(data, str) and len(data) * 3 // 4 > MAX_IMAGE_BYTES:
            v("image", i, "image over 5 MB")
    elif source.get("type") not in ("url", "file"):
        v("image", i, f"image source {source.get('type')!r}")


def _anthropic_pairing(
    k: int, i: int, role: str, blocks: list[Json], merged: list[tuple[int, str, list[Json]]], v: _Found
) -> None:
    if role == "assistant":
        uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        first_use = next((n for n, b in enumerate(blocks) if b.get("type") == "tool_use"), None)
        if first_use is not None and any(b.get("type") == "text" for b in blocks[first_use:]):
            v("text-after-tool-use", i, "text after a tool_use")
        if uses:
            following = merged[k + 1] if k + 1 < len(merged) else None
            answered = (
                {b.get("tool_use_id") for b in following[2] if b.get("type") == "tool_result"}
                if following
                else set()
            )
            missing = [u for u in uses if u not in answered]
            if missing:
                v("tool-use-unanswered", i, f"no tool_result in the next message for {missing}")
    else:
        results = [n for n, b in enumerate(blocks) if b.get("type") == "tool_result"]
        if results and results != list(range(len(results))):
            v("tool-result-not-first", i, "a tool_result after other content")
        previous = merged[k - 1] if k > 0 else None
        issued: set[Any] = (
            {b.get("id") for b in previous[2] if b.get("type") == "tool_use"}
            if previous and previous[1] == "assistant"
            else set()
        )
        seen: set[Any] = set()
        for n in results:
            tid = blocks[n].get("tool_use_id")
            if tid not in issued or tid in seen:
                v("orphan-tool-result", i, f"tool_result {tid!r} has no tool_use in the previous message")
            seen.add(tid)


def _anthropic_final(
    merged: list[tuple[int, str, list[Json]]], thinking: bool | None, open_end: bool, v: _Found
) -> None:
    assistants = [m for m in merged if m[1] == "assistant"]
    if not assistants:
        return
    i, _, blocks = assistants[-1]
    if thinking is True and any(b.get("type") == "tool_use" for b in blocks):
        if not blocks or blocks[0].get("type") not in THINKING:
            v(
                "thinking-not-first",
                i,
                f"the final assistant message starts with {blocks[0].get('type') if blocks else None!r}",
            )
    if thinking is False and any(b.get("type") in THINKING for b in blocks):
        v("thinking-when-off", i, "thinking in the final assistant message")
    if not open_end and merged[-1][1] == "assistant" and blocks:
        last = blocks[-1]
        if (
            last.get("type") == "text"
            and isinstance(last.get("text"), str)
            and last["text"] != last["text"].rstrip()
        ):
            v("trailing-whitespace", i, "final assistant text ends in whitespace")


# =============================================================================================
# OpenAI Chat Completions
# =============================================================================================
def _check_chat(messages: list[Json], prefix: Json, v: _Found) -> None:
    head = [m for m in prefix.get("messages") or [] if isinstance(m, dict)]
    offset = len(head)
    everything = head + messages
    seen_other = False
    k = 0
    while k < len(everything):
        message = everything[k]
        i = k - offset
        role = message.get("role")
        if role in ("system", "developer"):
            if seen_other:
                v("system-position", i, f"{role} message after the head")
            k += 1
            continue
        seen_other = True
        if role == "tool":
            v(
                "orphan-tool-message",
                i,
                f"tool message {message.get('tool_call_id')!r} without a preceding tool_calls",
            )
            k += 1
            continue
        if role == "user" and not _blocks(message):
            v("empty", i, "user message with no content")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") is None and not calls:
                v("empty", i, "assistant content null without tool_calls")
            ids = [c.get("id") for c in calls if isinstance(c, dict)]
            for cid in ids:
                if not isinstance(cid, str) or len(cid) > CHAT_ID_MAX:
                    v("id-length", i, f"tool_call id {cid!r}")
            k = _chat_answers(everything, k, ids, offset, v)
            continue
        k += 1


def _chat_answers(everything: list[Json], k: int, ids: list[Any], offset: int, v: _Found) -> int:
    """Consume the tool messages after assistant message k; return the next index to check."""
    pending = list(ids)
    j = k + 1
    while j < len(everything) and everything[j].get("role") == "tool":
        tool = everything[j]
        tid = tool.get("tool_call_id")
        if tid in pending:
            pending.remove(tid)
        else:
            v("orphan-tool-message", j - offset, f"tool message {tid!r} answers no pending tool_call")
        content = tool.get("content")
        if not isinstance(content, str) and any(b.get("type") != "text" for b in _blocks(tool)):
            v("tool-content", j - offset, "non-text content in a tool message")
        j += 1
    if pending:
        v("tool-calls-unanswered", k - offset, f"no tool message for {pending}")
    return j


# =============================================================================================
# OpenAI Responses
# =============================================================================================
CALL_TYPES = frozenset({"function_call", "custom_tool_call"})
OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})


def _check_responses(items: list[Json], v: _Found) -> None:
    """Outputs come right after their run of calls (assistant text and reasoning may sit between
    the calls of one response); a run ends at the first item after its outputs."""
    seen_other = False
    answered: set[Any] = set()
    ids: set[Any] = set()
    run: list[Any] = []  # the calls of the current run
    after_outputs = False
    for i, item in enumerate(items):
        itype = item.get("type", "message")
        role = item.get("role")
        if itype == "message" and role == "system":
            if seen_other:
                v("system-position", i, f"{role} message after the head")
            continue
        seen_other = True
        if itype in OUTPUT_TYPES:
            cid = item.get("call_id")
            if cid not in run or cid in answered:
                v("orphan-output", i, f"output {cid!r} without its call right before")
            answered.add(cid)
            after_outputs = True
            continue
        if after_outputs or (itype == "message" and role in ("user", "developer")):
            _unanswered(run, answered, i, v)
            run, after_outputs = [], False
        if "id" in item:
            if item["id"] in ids:
                v("duplicate-id", i, f"item id {item['id']!r} already used")
            ids.add(item["id"])
        if itype in CALL_TYPES:
            cid = item.get("call_id")
            if not isinstance(cid, str) or len(cid) > RESPONSES_ID_MAX:
                v("id-length", i, f"call_id {cid!r}")
            run.append(cid)
            if "id" in item and not _reasoning_before(items, i):
                v("item-id-without-reasoning", i, f"item id {item['id']!r}")
        elif itype == "reasoning":
            following = items[i + 1] if i + 1 < len(items) else None
            if not isinstance(item.get("encrypted_content"), str) or not item["encrypted_content"]:
                v("reasoning", i, "reasoning without encrypted_content (store: false has no stored item)")
            produced = following is not None and (
                following.get("type") in CALL_TYPES
                or (following.get("type", "message") == "message" and following.get("role") == "assistant")
            )
            if not produced:
                v("reasoning", i, "reasoning not followed by the item it produced")
        elif itype == "message":
            if not _blocks(item):
                v("empty", i, "message with no content")
            if role == "assistant" and "id" in item and not _reasoning_before(items, i):
                v("item-id-without-reasoning", i, f"item id {item['id']!r}")
    _unanswered(run, answered, len(items), v)


def _unanswered(run: list[Any], answered: set[Any], i: int, v: _Found) -> None:
    missing = [c for c in run if c not in answered]
    if missing:
        v("call-unanswered", i, f"no output right after the calls for {missing}")


def _reasoning_before(items: list[Json], i: int) -> bool:
    """Is the reasoning item of the response that item `i` is part of sent before it, with its ID? The API
    looks an `fc_`/`msg_` item's reasoning up by its `rs_` ID: one sent without an ID does not count."""
    j = i - 1
    while (
        j >= 0
        and items[j].get("type") in CALL_TYPES | {"message"}
        and items[j].get("role") not in ("user", "developer")
    ):
        j -= 1
    return j >= 0 and items[j].get("type") == "reasoning" and isinstance(items[j].get("id"), str)


# =============================================================================================
# Gemini
# =============================================================================================
def _check_gemini(contents: list[Json], signatures: bool, open_end: bool, v: _Found) -> None:
    if contents and contents[0].get("role") != "user":
        v("first-turn", 0, f"contents start with {contents[0].get('role')!r}")
    for i, content in enumerate(contents):
        role = content.get("role")
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        if role not in ("user", "model"):
            v("role", i, f"role {role!r}")
        if not parts:
            v("part", i, "content with no parts")
        for part in parts:
            fields = [f for f in GEMINI_DATA_FIELDS if f in part]
            if len(fields) != 1 or (fields == ["text"] and not part["text"]):
                v("part", i, f"part with data fields {sorted(fields)}")
        calls = [p["functionCall"] for p in parts if isinstance(p.get("functionCall"), dict)]
        responses = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
        previous = contents[i - 1] if i > 0 else None
        if calls:
            if previous is None or previous.get("role") != "user":
                v("call-position", i, "functionCall turn not right after a user turn")
            if signatures:
                first = next(p for p in parts if "functionCall" in p)
                if not first.get("thoughtSignature"):
                    v("thought-signature", i, "first functionCall without thoughtSignature")
            following = contents[i + 1] if i + 1 < len(contents) else None
            answers = [
                p["functionResponse"]
                for p in (following or {}).get("parts") or []
                if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
            ]
            if len(answers) != len(calls) or [a.get("name") for a in answers] != [
                c.get("name") for c in calls
            ]:
                v("response-count", i, f"{len(calls)} calls, {len(answers)} responses next")
        if responses:
            prev_calls = [
                p["functionCall"]
                for p in (previous or {}).get("parts") or []
                if isinstance(p, dict) and isinstance(p.get("functionCall"), dict)
            ]
            if role != "user" or not prev_calls:
                v("orphan-response", i, "functionResponse without a functionCall turn right before")
    if contents and not open_end and contents[-1].get("role") == "model":
        v("final-turn", len(contents) - 1, "the request ends on a model turn")


# =============================================================================================
# AI SDK
# =============================================================================================
def _check_ai_sdk(messages: list[Json], v: _Found) -> None:
    seen_other = False
    pending: list[Any] = []
    owner = -1
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "system":
            if seen_other:
                v("system-position", i, "system message after the head")
            continue
        seen_other = True
        parts = _blocks(message)
        for part in parts:
            if part.get("type") == "text" and not part.get("text"):
                v("empty", i, "empty text part")
        if role == "tool":
            for part in parts:
                if part.get("type") != "tool-result":
                    v("tool-message", i, f"{part.get('type')!r} part in a tool message")
                elif part.get("toolCallId") in pending:
                    pending.remove(part.get("toolCallId"))
                else:
                    v("orphan-result", i, f"tool-result {part.get('toolCallId')!r} without its call")
            continue
        if pending:
            v("call-unanswered", owner, f"no tool-result for {pending}")
        pending = [p.get("toolCallId") for p in parts if role == "assistant" and p.get("type") == "tool-call"]
        owner = i
    if pending:
        v("call-unanswered", owner, f"no tool-result for {pending}")


# =============================================================================================
# Entry point
# =============================================================================================
def check(
    fmt: str,
    messages: Iterable[Json],
    *,
    prefix: Json | None = None,
    overrides: Json | None = None,
    thinking: bool | None = None,
    gemini_signatures: bool = True,
    open_end: bool = False,
) -> list[Violation]:
    """Every provider rule `messages` (in format `fmt`) breaks; see the module docstring."""
    items = list(messages)
    found = _Found(fmt)
    given_prefix = prefix
    prefix = prefix or {}
    forced = (overrides or {}).get("thinking")
    if isinstance(forced, dict) and forced.get("type") == "disabled":
        thinking = False
    checkers: dict[str, Callable[[], None]] = {
        "anthropic": lambda: _check_anthropic(items, given_prefix, thinking, open_end, found),
        "openai-chat": lambda: _check_chat(items, prefix, found),
        "openai-responses": lambda: _check_responses(items, found),
        "gemini": lambda: _check_gemini(items, gemini_signatures, open_end, found),
        "ai-sdk": lambda: _check_ai_sdk(items, found),
    }
    checkers[fmt]()
    return found.items
