"""Cline `api_conversation_history.json` (`tasks/<taskId>/`): a JSON array of Anthropic messages.

Each element becomes a message (docs/importers.md has the full table). Assistant content blocks are
kept as parts (`tool_use`, `text`, `thinking` with its signature, Cline's extra keys included);
`modelInfo` gives `modelID`/`providerID`/`mode`, `metrics.tokens` the `tokens`, `ts` the time.

Cline stores a tool's output as user *text* that starts with `[<tool> for '<arg>'] Result:` (or
`[<tool>] Result:`), in the order of the calls of the assistant message before it. Such a text
becomes a `tool_result` part for the matching call (same tool name, else the next open call), so
calls and results pair up as in the Messages API. The results form a pure carrier; the rest of the
turn (the user's `<feedback>`/`<user_message>`/`<answer>` text, Cline's `<environment_details>`
and notices) becomes a user message right after it, with Cline's notices synthetic.
Calls left without a result (an interrupted task) stay unanswered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import anthropic, tool_names, usage
from .errors import TranscriptError
from .fields import Json, as_count, as_dict, as_list, epoch_ms, nonempty_str
from .harness import CLINE_RESULT_HEADER, is_cline_user_text, synthetic
from .report import ImportReport
from .session_builder import Draft, SessionDraft
from .source import load_json, read_bytes

FORMAT = "cline"


def read_cline(path: Path, report: ImportReport) -> SessionDraft:
    if path.is_dir():
        path = path / "api_conversation_history.json"
    history = as_list(load_json(path, read_bytes(path)))
    if history is None:
        raise TranscriptError(path, "expected a JSON array of messages (Cline api_conversation_history.json)")
    report.records_read += len(history)
    session = SessionDraft(session_id=_session_id(path, history), tool_name_map=dict(tool_names.CLINE))
    out = session.slice()
    open_calls: list[Json] = []  # tool_use blocks of the last assistant message still unanswered
    for index, raw in enumerate(history):
        where = f"[{index}]"
        message = as_dict(raw)
        if message is None:
            raise TranscriptError(path, "a message must be an object", where=where)
        role = message.get("role")
        blocks = anthropic.blocks_of(message.get("content"), str(path), None, where)
        mid = nonempty_str(message.get("id")) or f"{session.session_id}.{index}"
        created = epoch_ms(message.get("ts"))
        if role == "assistant":
            out.append(_assistant(message, blocks, mid, created, where))
            open_calls = [b for b in blocks if b.get("type") == anthropic.USE_TYPE]
        elif role == "user":
            drafts = _user_turn(blocks, open_calls, mid, created, where, report)
            open_calls = []
            if not drafts:
                report.skip("message without content")
            out.extend(drafts)
        else:
            raise TranscriptError(path, f"role must be 'user' or 'assistant', not {role!r}", where=where)
    return session


def _session_id(path: Path, history: list[Any]) -> str:
    """The task ID: Cline names the task directory after it (a millisecond timestamp)."""
    if path.parent.name.isdigit():
        return path.parent.name
    first = as_dict(history[0]) if history else None
    ts = as_count(first.get("ts")) if first else None
    return f"cline-{ts}" if ts is not None else f"cline-{path.parent.name or path.stem}"


def _assistant(message: Json, blocks: list[Json], mid: str, created: int | None, where: str) -> Draft:
    info: Json = {"id": mid, "role": "assistant"}
    model = as_dict(message.get("modelInfo")) or {}
    info["providerID"] = nonempty_str(model.get("providerId")) or anthropic.PROVIDER_ID
    if (model_id := nonempty_str(model.get("modelId"))) is not None:
        info["modelID"] = model_id
    if (mode := nonempty_str(model.get("mode"))) is not None:
        info["mode"] = mode
    return Draft(
        info,
        blocks,
        where=where,
        created=created,
        usage=_tokens_of(message.get("metrics")),
        calls=anthropic.issues_calls(blocks),
    )


def _user_turn(
    blocks: list[Json],
    open_calls: list[Json],
    mid: str,
    created: int | None,
    where: str,
    report: ImportReport,
) -> list[Draft]:
    results: list[Json] = []
    rest: list[Json] = []
    pending = list(open_calls)
    for block in blocks:
        call = _answered_call(block, pending)
        if call is not None:
            pending.remove(call)
            results.append(
                {"type": anthropic.RESULT_TYPE, "tool_use_id": call["id"], "content": block["text"]}
            )
            continue
        if block.get("type") == anthropic.RESULT_TYPE:
            results.append(block)  # a native tool_result block (newer Cline versions)
            continue
        text = block.get("text")
        is_text = block.get("type") == "text" and isinstance(text, str)
        rest.append(synthetic(block) if is_text and not is_cline_user_text(str(text)) else block)
    report.adjust("tool output text paired with its call as a tool_result", len(open_calls) - len(pending))
    return anthropic.user_turn(results + rest, mid, created, report, where=where)


def _answered_call(block: Json, pending: list[Json]) -> Json | None:
    """The open call this text block is the output of, if it is a tool output at all."""
    text = block.get("text")
    if block.get("type") != "text" or not isinstance(text, str) or not pending:
        return None
    header = CLINE_RESULT_HEADER.match(text.lstrip())
    if header is None:
        return None
    tool = header.group("tool")
    named = next((call for call in pending if call.get("name") == tool), None)
    return named if named is not None else pending[0]


def _tokens_of(metrics: Any) -> Json | None:
    """`metrics.tokens {prompt, completion, cached}`: Cline uses OpenAI's names and meaning."""
    tokens = as_dict((as_dict(metrics) or {}).get("tokens")) or {}
    return usage.from_openai_counts(tokens.get("prompt"), tokens.get("completion"), tokens.get("cached"))
