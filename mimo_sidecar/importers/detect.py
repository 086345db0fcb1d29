"""Which transcript format a path holds, decided from its content (names are only hints).

Rules, in order:

1. A directory: OpenCode's storage layout (a `storage/` directory, or `session/` + `message/`
   subdirectories) -> `opencode`; a directory holding `api_conversation_history.json` -> `cline`.
2. A file under `storage/session/` -> `opencode` (a session of the storage layout).
3. A JSON document: an object with `info` and `messages` -> `opencode` (export); a Gemini CLI chat
   (`sessionId`, `projectHash`, `messages`) or checkpoint (`{history}`, or an array of `{role,
   parts}`) -> `gemini`; an array of Claude Code records (the hook scripts' `chat.json`: most of its
   first 50 elements have a Claude Code `type` and a `uuid`/`sessionId`/`leafUuid`/`messageId`) ->
   `claude-code`; an array of `{role, content}` messages -> `cline`. A document that does not parse
   gets the parser's error naming its line, whatever it was meant to be (an array is taken for
   Claude Code's when a Claude Code key opens its first element, else for Cline's; `{"info"` for
   OpenCode's, so that their readers name the place).
4. Markdown with `# aider chat started at` lines -> `aider`.
5. JSONL: the first 50 parseable records vote. Codex records are envelopes
   `{"type": "session_meta"|"response_item"|"event_msg"|"turn_context"|"compacted", "payload"}` (or the
   2025 bare era: `record_type` lines, metadata with `instructions`); Claude Code records have a
   `type` such as `user`, `assistant`, `progress`, `summary` plus `uuid`/`sessionId`/`leafUuid`;
   Gemini CLI records are its recording's (`$set`, `$rewindTo`, `{id, type, content}`) or its
   stream-json events (`init`, `message`, `tool_use`, `tool_result`, `result`).

A file that fits none gets one line saying what the file is and what each format would need
(`unreadable`): `import` and `inspect` print the same line.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from .aider import looks_like_aider
from .codex import ENVELOPES
from .errors import TranscriptError
from .fields import as_dict, as_list, as_str
from .gemini_cli import is_chat_document, is_checkpoint_document, is_recording_record
from .gemini_stream import is_stream_event
from .source import load_json, opens_a_document, peek_jsonl, read_bytes, whole_document

CLAUDE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "ai-title",
        "custom-title",
    }
)
CLAUDE_KEYS = ("uuid", "sessionId", "leafUuid", "messageId")
CLINE_FILE = "api_conversation_history.json"
_OPENCODE_EXPORT_START = re.compile(rb'\s*\{\s*"info"\s*:')
# The first element of a Claude Code array names one of its keys before any nested value; Cline's
# messages start with `role` or `content`.
_CLAUDE_ARRAY_START = re.compile(rb'\s*\[\s*\{[^{\[]*?"(?:uuid|sessionId|leafUuid|parentUuid)"\s*:')
PEEK = 50
SESSION_OPEN = "session/open params"
# What each format is, for the answer to a file none of them reads.
NEEDS = (
    ("claude-code", "JSONL records with a type and a uuid or sessionId, or a JSON array of them"),
    ("codex", "JSONL records {type: session_meta|response_item|event_msg|..., payload}"),
    ("opencode", "an export {info, messages} or a storage directory"),
    ("cline", "a JSON array of {role, content} messages"),
    (
        "gemini",
        "a chat {sessionId, projectHash, messages}, a checkpoint {history}, a recording or stream-json",
    ),
    ("aider", "Markdown with '# aider chat started at' lines"),
    (SESSION_OPEN, "{sessionId, messages: [{info, parts}]}"),
)


def detect_format(path: Path) -> str:
    if path.is_dir():
        return _detect_directory(path)
    if _in_storage_sessions(path):
        return "opencode"
    data = read_bytes(path)
    document = whole_document(data)
    if document is not None:
        return _detect_document(path, document)
    if data.lstrip().startswith(b"["):
        return "claude-code" if _CLAUDE_ARRAY_START.match(data) else "cline"
    if _OPENCODE_EXPORT_START.match(data):
        return "opencode"
    if opens_a_document(data):
        load_json(path, data)  # raises: a damaged JSON document, its line and column named
    if looks_like_aider(data):
        return "aider"
    return _detect_jsonl(path, data)


def is_opencode_storage(path: Path) -> bool:
    return (path / "storage").is_dir() or ((path / "session").is_dir() and (path / "message").is_dir())


def is_session_open_params(document: Any) -> bool:
    """A `session/open` params object: `sessionId` and a `messages` list of objects with an `info`
    object (what the params validation then checks in full)."""
    found = as_dict(document)
    if found is None or "info" in found or not isinstance(found.get("sessionId"), str):
        return False
    messages = as_list(found.get("messages"))
    return messages is not None and all(
        isinstance(m, dict) and isinstance(m.get("info"), dict) for m in messages
    )


def _detect_directory(path: Path) -> str:
    if is_opencode_storage(path):
        return "opencode"
    if (path / CLINE_FILE).is_file():
        return "cline"
    raise TranscriptError(
        path, "no session found in this directory (expected OpenCode storage or a Cline task directory)"
    )


def _in_storage_sessions(path: Path) -> bool:
    parts = path.parts
    return len(parts) >= 4 and parts[-4] == "storage" and parts[-3] == "session" and path.suffix == ".json"


def _detect_document(path: Path, document: Any) -> str:
    found = as_dict(document)
    if found is not None and "info" in found and "messages" in found:
        return "opencode"
    if is_chat_document(document) or is_checkpoint_document(document):
        return "gemini"
    items = as_list(document)
    if items is not None and _claude_array(items):
        return "claude-code"
    if items is not None and (not items or _is_cline_message(items[0])):
        return "cline"
    if is_session_open_params(document):
        raise TranscriptError(
            path, "holds session/open params already: open them as they are (inspect reads them too)"
        )
    raise unreadable(path, _describe_document(document))


def _is_cline_message(item: Any) -> bool:
    found = as_dict(item)
    return found is not None and found.get("role") in ("user", "assistant") and "content" in found


def _is_claude_record(record: object) -> bool:
    return (
        isinstance(record, dict)
        and as_str(record.get("type")) in CLAUDE_TYPES
        and any(key in record for key in CLAUDE_KEYS)
    )


def _claude_array(document: list[object]) -> bool:
    head = document[:PEEK]
    return bool(head) and 2 * sum(1 for item in head if _is_claude_record(item)) > len(head)


def _detect_jsonl(path: Path, data: bytes) -> str:
    votes: Counter[str] = Counter()
    records = peek_jsonl(data, PEEK)
    for record in records:
        kind = as_str(record.get("type"))
        if (
            (kind in ENVELOPES and "payload" in record)
            or "record_type" in record
            or (kind is None and "instructions" in record and "id" in record)
        ):
            votes["codex"] += 1
        elif _is_claude_record(record):
            votes["claude-code"] += 1
        elif is_recording_record(record) or is_stream_event(record):
            votes["gemini"] += 1
    if votes:
        ranked = votes.most_common(2)
        if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
            return ranked[0][0]
        raise TranscriptError(
            path, f"records of {ranked[0][0]} and {ranked[1][0]} in equal numbers: pass --format to pick one"
        )
    raise unreadable(path, _describe_records(records) if records else _describe_text(data))


def unreadable(path: Path, what: str) -> TranscriptError:
    """The one-line answer for a file no format reads: what it is, what each format needs."""
    tried = "; ".join(f"{name}: {needs}" for name, needs in NEEDS)
    return TranscriptError(
        path, f"no importer reads this file: it is {what} (tried {tried}); pass --format to force one"
    )


def _keys(found: dict[str, Any]) -> str:
    names = sorted(found)
    return ", ".join(names[:6]) + (", ..." if len(names) > 6 else "") if names else "no keys"


def _describe_document(document: Any) -> str:
    if isinstance(document, dict):
        return f"a JSON object with keys {_keys(document)}"
    if isinstance(document, list):
        first = document[0]
        shown = (
            f"objects with keys {_keys(first)}"
            if isinstance(first, dict)
            else f"{type(first).__name__} values"
        )
        return f"a JSON array of {shown}"
    return "a single JSON value"  # pragma: no cover - whole_document only returns objects and arrays


def _describe_records(records: list[dict[str, Any]]) -> str:
    types = Counter(as_str(r.get("type")) for r in records if as_str(r.get("type")))
    if not types:
        return f"JSONL whose records have no type (keys {_keys(records[0])})"
    shown = ", ".join(f"{name} x{n}" for name, n in types.most_common(4))
    return f"JSONL whose records have the types {shown}"


def _describe_text(data: bytes) -> str:
    head = data[:4096]
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not a character cut at the end of the sample
            return "binary data, not text"
    if b"\x00" in head:
        return "binary data, not text"
    first = next((line for line in data.split(b"\n", 50)[:50] if line.strip()), b"")
    shown = first.decode("utf-8", "replace").strip()
    return f"text that is not JSON (first line: {shown[:60]!r})"
