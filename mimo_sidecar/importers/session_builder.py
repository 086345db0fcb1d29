"""Assembling `session/open` params from the messages a format reader produced.

Each reader turns source records into `Draft`s (a message's `info` and `parts` plus what the
builder still has to settle) in creation order, one list per agent slice. `build_session` then
does what every format needs the same way:

- **Stop reasons and usage per provider response.** Drafts that share a `response` key are the
  stored entries of one provider response (Claude Code writes one entry per content block; a Codex
  response may be cut by a tool output). Only the *last* entry of a response gets `finish` and
  `tokens`: `finish` is the provider's stop reason when one was recorded, else inferred from the
  response's content (`"tool-calls"` if it issued a call, else `"stop"`), and `tokens` is the
  fullest usage recorded for the response (the one with the most output tokens; streamed entries
  repeat a growing usage). No usage recorded: `tokens` stays absent, never zeros.
- **Time.** `time.created` is the record's timestamp, raised to the previous message's when the
  file's order disagrees (a late write), so that the sidecar's listing order (`time.created`, then
  creation order) equals the order given here. A message without a timestamp takes the previous one.
- **IDs.** Message IDs are the host's; a repeated ID keeps its first message. Parts without an `id`
  get `<messageID>.<index>`, stable from run to run, except OpenAI Responses items: their `id` is
  the provider's item ID (`rs_…`, `fc_…`), which a request may send back, so a made-up one must
  never stand in for it.
- **Slices** are merged into one list by time (stable: the main slice first on ties), each slice
  keeping its own order.
- **Types.** Every message's `info` and every part must be of the types `core.session.data_model` declares,
  as `session/open` requires; a source whose data is not (a hand-edited export, a tool's own bug)
  is refused with a `TranscriptError` naming the message, the part and the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.session.data_model import MESSAGE_INFO, PART
from ..core.session.data_types import Kind, problems_of
from ..core.words import MAIN_AGENT
from .errors import TranscriptError
from .fields import Json, nonempty_str
from .report import ImportReport

# Responses items and content parts (docs/data-model.md, "Split shapes: field reference"): `id`, when present,
# is the provider's.
RESPONSES_ITEM_TYPES = frozenset(
    {
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "tool_search_output",
        "image_generation_call",
        "input_image",
        "input_file",
    }
)
# Sources that record no time per message (Aider: one per session; a Gemini CLI checkpoint: none) give
# each message its own, this far apart from the one before: the sidecar lists messages by time, and
# a rebuild's boundary is stamped 1 ms after its watermark, so equal times would hide the tail.
DERIVED_TIME_STEP_MS = 1000
FINISH_TOOL_CALLS = "tool-calls"
FINISH_STOP = "stop"


@dataclass
class Draft:
    """One message to be: the host's `info` (without `time`, `finish`, `tokens`) and its parts."""

    info: Json
    parts: list[Json]
    line: int | None = None  # source line (JSONL) for error messages
    where: str | None = None  # or a JSON path
    records: int = 1  # source records this message accounts for (0 for a second message of a record)
    created: int | None = None
    time_extra: Json = field(default_factory=dict)  # other `time` keys the host recorded (OpenCode)
    response: str | None = None  # provider response key: entries of one response share it
    stop: str | None = None  # `finish` mapped from a stop reason recorded on this entry
    usage: Json | None = None  # `tokens` mapped from a usage recorded on this entry
    calls: bool = False  # this entry issues at least one tool call
    keep_finish: bool = False  # the host already set `finish`/`tokens` (OpenCode): leave them
    provider_items: bool = False  # parts are OpenAI Responses items (Codex): no made-up item IDs

    @property
    def id(self) -> str:
        return str(self.info["id"])

    @property
    def role(self) -> str:
        return str(self.info.get("role", ""))


@dataclass
class SessionDraft:
    session_id: str
    slices: dict[str, list[Draft]] = field(default_factory=dict)
    project_id: str | None = None
    request_prefix: Json | None = None
    tool_name_map: dict[str, str] = field(default_factory=dict)  # the source tool's names -> MiMo's

    def slice(self, agent_id: str = MAIN_AGENT) -> list[Draft]:
        return self.slices.setdefault(agent_id, [])


def build_session(session: SessionDraft, report: ImportReport, path: str) -> Json:
    """The `session/open` params; `report` gets the message and slice counts."""
    seen: set[str] = set()
    ranked: list[tuple[int, int, int, Draft]] = []
    for rank, (agent_id, drafts) in enumerate(session.slices.items()):
        kept = _unique(drafts, seen, report)
        _settle_responses(kept, report)
        _settle_time(kept, report)
        for index, draft in enumerate(kept):
            if agent_id != MAIN_AGENT:
                draft.info["agentID"] = agent_id
            ranked.append((draft.created or 0, rank, index, draft))
        if kept:
            report.slices[agent_id] = len(kept)
    ranked.sort(key=lambda item: item[:3])
    messages = [_message(draft, session.session_id, path) for *_, draft in ranked]
    report.session_id = session.session_id
    report.messages = len(messages)
    report.records_imported = sum(draft.records for *_, draft in ranked)
    params: Json = {"sessionId": session.session_id, "messages": messages}
    if session.project_id:
        params["projectId"] = session.project_id
    if session.request_prefix is not None:
        params["requestPrefix"] = session.request_prefix
    if session.tool_name_map:
        params["toolNameMap"] = dict(session.tool_name_map)
    return params


def _unique(drafts: list[Draft], seen: set[str], report: ImportReport) -> list[Draft]:
    kept = []
    for draft in drafts:
        if draft.id in seen:
            report.skip("repeated message ID (first kept)", draft.records)
            continue
        seen.add(draft.id)
        kept.append(draft)
    return kept


def _settle_responses(drafts: list[Draft], report: ImportReport) -> None:
    """`finish` and `tokens` on the last stored entry of each provider response."""
    groups: dict[str, list[Draft]] = {}
    for draft in drafts:
        if draft.role == "assistant" and not draft.keep_finish:
            groups.setdefault(draft.response or draft.id, []).append(draft)
    for entries in groups.values():
        last = entries[-1]
        stops = [d.stop for d in entries if d.stop]
        if stops:
            last.info["finish"] = stops[-1]
        else:
            last.info["finish"] = FINISH_TOOL_CALLS if any(d.calls for d in entries) else FINISH_STOP
            report.adjust("stop reason inferred from the response's content")
        usages = [d.usage for d in entries if d.usage is not None]
        if usages:
            last.info["tokens"] = max(reversed(usages), key=lambda u: int(u.get("output", 0)))
        else:
            report.adjust("no usage recorded (tokens left out)")


def _settle_time(drafts: list[Draft], report: ImportReport) -> None:
    previous: int | None = None
    for draft in drafts:
        if draft.created is None:
            if previous is not None:
                draft.created = previous
                report.adjust("timestamp missing (previous message's used)")
        elif previous is not None and draft.created < previous:
            draft.created = previous
            report.adjust("timestamp raised to keep creation order")
        if draft.created is not None:
            previous = draft.created


def _message(draft: Draft, session_id: str, path: str) -> Json:
    info = draft.info
    info.setdefault("sessionID", session_id)
    if draft.created is not None or draft.time_extra:
        time: Json = dict(draft.time_extra)
        if draft.created is not None:
            time["created"] = draft.created
        info["time"] = time
    parts = [_with_id(part, draft, index, path) for index, part in enumerate(draft.parts)]
    _check(MESSAGE_INFO, info, "info", draft, path)
    for index, part in enumerate(parts):
        _check(PART, part, f"content item {index}", draft, path)
    return {"info": info, "parts": parts}


def _check(kind: Kind, value: Json, what: str, draft: Draft, path: str) -> None:
    problems = problems_of(kind, value)
    if problems:
        first = problems[0]
        where = f"{what}: {first.path()}" if first.loc else what
        raise TranscriptError(
            path, f"message {draft.id}: {where}: {first.message}", line=draft.line, where=draft.where
        )


def _with_id(part: Json, draft: Draft, index: int, path: str) -> Json:
    if not nonempty_str(part.get("type")):
        raise TranscriptError(path, f"content item {index} has no type", line=draft.line, where=draft.where)
    if "messageID" in part and not nonempty_str(part["messageID"]):
        raise TranscriptError(
            path,
            f"content item {index}: messageID must be a non-empty string",
            line=draft.line,
            where=draft.where,
        )
    pid: Any = part.get("id")
    if pid is None:
        if draft.provider_items and part["type"] in RESPONSES_ITEM_TYPES:
            return part
        return {"id": f"{draft.id}.{index}", **part}
    if not nonempty_str(pid):
        raise TranscriptError(
            path, f"content item {index}: id must be a non-empty string", line=draft.line, where=draft.where
        )
    return part


def derive_times(drafts: list[Draft], start: int | None, report: ImportReport) -> None:
    """`time.created` for a source without per-message times: `start` + `DERIVED_TIME_STEP_MS` per
    message, in order (no `start`: nothing is set)."""
    if start is None:
        return
    for index, draft in enumerate(drafts):
        draft.created = start + index * DERIVED_TIME_STEP_MS
    report.adjust("time derived from the source's one time (a second a message)", len(drafts))
