"""Gemini CLI sessions: the saved chat, its JSONL recording, and `/chat save` checkpoints.

Forms (docs/importers.md, "Gemini CLI"):

- **Chat** (`~/.gemini/tmp/<project>/chats/session-*.json`): `{sessionId, projectHash, startTime,
  lastUpdated, messages: MessageRecord[]}`.
- **Recording** (the current `session-*.jsonl`): a metadata line `{sessionId, projectHash, ...}`,
  then `MessageRecord` lines and control lines. Replayed in order, as Gemini CLI's writer held the
  conversation: a record whose `id` was seen replaces it in place (the last write wins: tool calls
  and tokens are added by re-appending the message); `{"$rewindTo": id}` removes that message and
  every later one (an unknown ID removes all, as Gemini CLI's loader does); `{"$set": {...}}`
  updates metadata, and `$set.messages` replaces the whole list at that point.
- **Checkpoint** (`/chat save <tag>`: `checkpoint-<tag>.json`): `{history: Content[]}` or a bare
  `Content[]` of `{role: "user" | "model", parts}`, results as `functionResponse` parts of the next
  user content.

Headless stream-json is `gemini_stream.py`. Part conversion is `gemini_parts.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.estimate.jsjson import js_stringify
from . import gemini_parts as gp
from . import tool_names
from .errors import TranscriptError
from .fields import Json, as_dict, as_list, as_str, epoch_ms, nonempty_str
from .gemini_stream import is_stream_event, read_stream
from .harness import GEMINI_MARKERS, starts_with_marker, synthetic
from .report import ImportReport
from .session_builder import DERIVED_TIME_STEP_MS, Draft, SessionDraft, derive_times
from .source import Record, jsonl_records, load_json, opens_a_document, read_bytes, whole_document

FORMAT = "gemini"
RECORD_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
NOT_SENT_TYPES = frozenset({"info", "error", "warning"})
COMMAND_PREFIXES = ("/", "?")  # slash commands and help: Gemini CLI never sends them to the model
REWIND, SET = "$rewindTo", "$set"

SKIP_NOT_SENT = "info, error or warning record (shown to the user, not sent to the model)"
SKIP_COMMAND = "slash command (not sent to the model)"
SKIP_EMPTY = "message without content"
SKIP_OVERWRITTEN = "earlier write of a message written again (the last write kept)"
SKIP_REWOUND = "message removed by a later $rewindTo"
SKIP_REPLACED = "message replaced by a later $set.messages"


# -- what the forms look like (detection) ----------------------------------------------------------
def is_chat_document(document: Any) -> bool:
    found = as_dict(document)
    return (
        found is not None
        and isinstance(found.get("messages"), list)
        and "projectHash" in found
        and "sessionId" in found
    )


def is_checkpoint_document(document: Any) -> bool:
    """`{history: Content[]}`, or a bare list whose first item is a `{role, parts}` content (an empty
    bare list stays Cline's)."""
    found = as_dict(document)
    history = as_list(found.get("history")) if found is not None else as_list(document)
    if history is None or not history:
        return history is not None and found is not None
    first = as_dict(history[0])
    return (
        first is not None and first.get("role") in ("user", "model") and isinstance(first.get("parts"), list)
    )


def is_recording_record(record: Json) -> bool:
    if isinstance(record.get(REWIND), str) or isinstance(record.get(SET), dict):
        return True
    if isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
        return True
    kind = as_str(record.get("type"))
    return isinstance(record.get("id"), str) and kind in RECORD_TYPES and "content" in record


# -- the forms -------------------------------------------------------------------------------------
def read_chat(path: Path, document: Json, report: ImportReport) -> SessionDraft:
    messages = as_list(document.get("messages")) or []
    report.records_read += len(messages)
    session = _session(path, document)
    for index, raw in enumerate(messages):
        where = f"messages[{index}]"
        record = as_dict(raw)
        if record is None:
            raise TranscriptError(path, "a message record must be an object", where=where)
        draft = record_draft(record, str(path), report, where=where)
        if isinstance(draft, str):
            report.skip(draft)
        else:
            session.slice().append(draft)
    return session


def _session(path: Path, metadata: Json) -> SessionDraft:
    return SessionDraft(
        session_id=nonempty_str(metadata.get("sessionId")) or f"gemini-{path.stem}",
        project_id=nonempty_str(metadata.get("projectHash")),
        tool_name_map=dict(tool_names.GEMINI_CLI),
    )


@dataclass
class _Replay:
    """The conversation as Gemini CLI's writer held it, line after line."""

    entries: dict[str, tuple[Json, int]] = field(default_factory=dict)  # id -> (record, line)
    fate: dict[int, str] = field(default_factory=dict)  # line -> why it contributes nothing
    metadata: Json = field(default_factory=dict)

    def drop(self, ids: list[str], reason: str) -> None:
        for mid in ids:
            self.fate[self.entries.pop(mid)[1]] = reason

    def record(self, rec: Record, report: ImportReport) -> None:
        data = rec.data
        if isinstance(data.get(REWIND), str):
            self._rewind(data[REWIND], report)
            self.fate[rec.line] = "rewind marker ($rewindTo)"
        elif isinstance(data.get("id"), str):
            if data["id"] in self.entries:
                self.fate[self.entries[data["id"]][1]] = SKIP_OVERWRITTEN
            self.entries[data["id"]] = (data, rec.line)  # an ID seen before keeps its place
        elif isinstance(data.get(SET), dict):
            self._set(data[SET], rec.line)
        elif isinstance(data.get("sessionId"), str):
            self.metadata.update(data)
            self.fate[rec.line] = "session metadata (its IDs kept)"
        else:
            self.fate[rec.line] = "record of an unknown kind"

    def _rewind(self, target: str, report: ImportReport) -> None:
        ids = list(self.entries)
        if target not in self.entries:
            report.adjust("$rewindTo an unknown message: everything before it removed, as Gemini CLI does")
        self.drop(ids[ids.index(target) :] if target in self.entries else ids, SKIP_REWOUND)

    def _set(self, update: Json, line: int) -> None:
        self.metadata.update({k: v for k, v in update.items() if k != "messages"})
        messages = as_list(update.get("messages"))
        if not messages:
            self.fate[line] = "metadata update ($set)"
            return
        self.drop(list(self.entries), SKIP_REPLACED)
        self.fate[line] = SKIP_REPLACED
        for item in messages:
            found = as_dict(item)
            if found is not None and isinstance(found.get("id"), str):
                self.entries[found["id"]] = (found, line)


def read_recording(path: Path, records: list[Record], report: ImportReport) -> SessionDraft:
    replay = _Replay()
    for rec in records:
        replay.record(rec, report)
    session = _session(path, replay.metadata)
    by_line: dict[int, list[Json]] = {}
    for record, line in replay.entries.values():
        by_line.setdefault(line, []).append(record)
    drafts: list[Draft] = []
    for line, group in by_line.items():
        made = [record_draft(record, str(path), report, line=line) for record in group]
        kept = [d for d in made if isinstance(d, Draft)]
        if not kept:
            report.skip(str(made[0]))
        for index, draft in enumerate(kept):
            draft.records = 1 if index == 0 else 0
        drafts.extend(kept)
    order = {mid: i for i, mid in enumerate(replay.entries)}
    session.slice().extend(sorted(drafts, key=lambda d: order[d.id]))
    for line, reason in replay.fate.items():
        if line not in by_line:
            report.skip(reason)
    return session


def read_checkpoint(path: Path, document: Any, report: ImportReport) -> SessionDraft:
    found = as_dict(document)
    history = as_list(found.get("history")) if found is not None else as_list(document)
    base = "history" if found is not None else ""
    session = SessionDraft(session_id=f"gemini-{path.stem}", tool_name_map=dict(tool_names.GEMINI_CLI))
    report.records_read += len(history or [])
    out = session.slice()
    last_model: Draft | None = None
    for index, raw in enumerate(history or []):
        where = f"{base}[{index}]"
        content = as_dict(raw)
        if content is None:
            raise TranscriptError(path, "a history item must be a {role, parts} object", where=where)
        mid = f"{session.session_id}.{index}"
        role = content.get("role")
        if role == "model":
            last_model = _model_content(content.get("parts"), mid, where, report)
            out.append(last_model)
        elif role == "user":
            out.extend(_user_content(content.get("parts"), mid, where, last_model, report))
        else:
            raise TranscriptError(path, f"role must be 'user' or 'model', not {role!r}", where=where)
    derive_times(out, _saved_at(path, len(out)), report)  # the form records no time
    return session


def _saved_at(path: Path, messages: int) -> int | None:
    """The history's messages end when the checkpoint was saved (the file's modification time)."""
    try:
        saved = int(path.stat().st_mtime) * 1000
    except OSError:
        return None
    return max(saved - messages * DERIVED_TIME_STEP_MS, 0)


def _model_content(parts: Any, mid: str, where: str, report: ImportReport) -> Draft:
    converted = gp.convert(parts, mid)
    _count_unsent(converted, report)
    info = {"id": mid, "role": "assistant", "providerID": gp.PROVIDER_ID}
    return Draft(info, converted.parts, where=where, calls=bool(converted.calls))


def _user_content(
    parts: Any, mid: str, where: str, last_model: Draft | None, report: ImportReport
) -> list[Draft]:
    """A user content: its function responses end the calls of the model content before it; the
    rest (what the user or Gemini CLI wrote) is a user message."""
    responses = [p for p in gp.gemini_parts(parts) if as_dict((as_dict(p) or {}).get("functionResponse"))]
    rest = [p for p in gp.gemini_parts(parts) if p not in responses]
    open_calls = [
        c for c in (last_model.parts if last_model else []) if c.get("state", {}).get("status") == "running"
    ]
    for response in responses:
        _answer(response["functionResponse"], open_calls, report)
    converted = gp.convert(rest, mid)
    _count_unsent(converted, report)
    if not converted.parts:
        if responses and last_model is not None:
            last_model.records += 1  # the results are in the model message's tool parts
            return []
        report.skip(SKIP_EMPTY)
        return []
    return [Draft({"id": mid, "role": "user"}, _flag_harness(converted.parts), where=where)]


def _answer(response: Json, open_calls: list[Json], report: ImportReport) -> None:
    call_id, name = nonempty_str(response.get("id")), as_str(response.get("name"))
    call = next((c for c in open_calls if call_id and c["callID"] == call_id), None) or next(
        (c for c in open_calls if c["tool"] == name), None
    )
    if call is None:
        report.adjust("function response without its call (left out)")
        return
    open_calls.remove(call)
    text, failed = gp.response_text(response.get("response"))
    gp.end_call(call, text, error=failed)


# -- one message record ------------------------------------------------------------------------------
def record_draft(
    record: Json, path: str, report: ImportReport, *, line: int | None = None, where: str | None = None
) -> Draft | str:
    """A `MessageRecord` as a draft, or the reason it is not imported."""
    mid = nonempty_str(record.get("id"))
    if mid is None:
        raise TranscriptError(path, "a message record needs a non-empty string id", line=line, where=where)
    kind = as_str(record.get("type"))
    created = epoch_ms(record.get("timestamp"))
    if kind in NOT_SENT_TYPES:
        return SKIP_NOT_SENT
    if kind == "user":
        return _user_record(record, mid, created, report, line, where)
    if kind == "gemini":
        return _gemini_record(record, mid, created, report, line, where)
    raise TranscriptError(
        path,
        f"type must be one of {', '.join(sorted(RECORD_TYPES))}, not {js_stringify(record.get('type'))}",
        line=line,
        where=where,
    )


def _user_record(
    record: Json, mid: str, created: int | None, report: ImportReport, line: int | None, where: str | None
) -> Draft | str:
    converted = gp.convert(record.get("content"), mid)
    _count_unsent(converted, report)
    text = "".join(p["text"] for p in converted.parts if p["type"] == "text")
    if text.strip().startswith(COMMAND_PREFIXES):
        return SKIP_COMMAND
    if not converted.parts:
        return SKIP_EMPTY
    return Draft(
        {"id": mid, "role": "user"}, _flag_harness(converted.parts), line=line, where=where, created=created
    )


def _gemini_record(
    record: Json, mid: str, created: int | None, report: ImportReport, line: int | None, where: str | None
) -> Draft | str:
    converted = gp.convert(record.get("content"), mid)
    _count_unsent(converted, report)
    parts = gp.thought_parts(record.get("thoughts")) + converted.parts
    _merge_tool_calls(parts, as_list(record.get("toolCalls")) or [], mid)
    if not parts:
        return SKIP_EMPTY
    info: Json = {"id": mid, "role": "assistant", "providerID": gp.PROVIDER_ID}
    if (model := nonempty_str(record.get("model"))) is not None:
        info["modelID"] = model
    calls = any(p.get("type") == gp.INLINE_TOOL for p in parts)
    return Draft(
        info,
        parts,
        line=line,
        where=where,
        created=created,
        usage=gp.tokens_of(record.get("tokens")),
        calls=calls,
    )


def _merge_tool_calls(parts: list[Json], records: list[Any], mid: str) -> None:
    """The `toolCalls` records as tool parts: one that a call in the content already stands for
    (same ID, else same name and arguments) takes its place; the others follow the content."""
    for index, raw in enumerate(records):
        record = as_dict(raw)
        if record is None:
            continue
        call_id = nonempty_str(record.get("id")) or gp.synthetic_call_id(mid, index)
        part = gp.tool_call_part(record, call_id)
        same = next((i for i, p in enumerate(parts) if _stands_for(p, record, call_id)), None)
        if same is None:
            parts.append(part)
        else:
            parts[same] = {
                **part,
                **({"metadata": parts[same]["metadata"]} if "metadata" in parts[same] else {}),
            }


def _stands_for(part: Json, record: Json, call_id: str) -> bool:
    if part.get("type") != gp.INLINE_TOOL or part.get("state", {}).get("status") != "running":
        return False
    if part["callID"] == call_id:
        return True
    return bool(part["tool"] == record.get("name") and part["state"].get("input") == record.get("args"))


def _flag_harness(parts: list[Json]) -> list[Json]:
    return [
        synthetic(p) if p["type"] == "text" and starts_with_marker(p["text"], GEMINI_MARKERS) else p
        for p in parts
    ]


def _count_unsent(converted: gp.Converted, report: ImportReport) -> None:
    for kind in converted.unsent:
        report.adjust(f"content part left out (a {kind} part has no equivalent in the data model)")


# -- the entry point -------------------------------------------------------------------------------
def read_gemini(
    path: Path, report: ImportReport, *, session: str | None = None, tolerate_bad_lines: bool = False
) -> SessionDraft:
    """Any Gemini CLI form, told from the content (`session`: the run of a stream-json file)."""
    data = read_bytes(path)
    document = whole_document(data)
    if document is not None:
        if is_chat_document(document):
            return read_chat(path, document, report)
        if is_checkpoint_document(document):
            return read_checkpoint(path, document, report)
        if not isinstance(document, dict):
            raise TranscriptError(path, "not a Gemini CLI chat, recording, checkpoint or stream-json file")
    elif opens_a_document(data):
        load_json(path, data)  # a damaged JSON document: the parser names the line and column
    records = list(jsonl_records(path, data, report, tolerate_bad_lines=tolerate_bad_lines))
    if any(is_stream_event(r.data) for r in records[:50]) and not any(
        is_recording_record(r.data) for r in records[:50]
    ):
        return read_stream(path, records, report, session=session)
    return read_recording(path, records, report)
