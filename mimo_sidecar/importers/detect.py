"""Which transcript format a path holds, decided from its content (names are only hints).

Rules, in order:

1. A directory: OpenCode's storage layout (a `storage/` directory, or `session/` + `message/`
   subdirectories) -> `opencode`; a directory holding `api_conversation_history.json` -> `cline`.
2. A file under `storage/session/` -> `opencode` (a session of the storage layout).
3. A JSON document: an object with `info` and `messages` -> `opencode` (export); an array of Claude
   Code records (the hook scripts' `chat.json`: most of its first 50 elements have a Claude Code
   `type` and a `uuid`/`sessionId`/`leafUuid`) -> `claude-code`; any other array -> `cline`. A
   document that does not parse is classified by its first bytes (`[` -> `claude-code` when a
   Claude Code key opens its first record, else `cline`; `{"info"` -> `opencode`) so that a
   truncated file gets the reader's precise error, not "unknown format".
4. JSONL: the first 50 parseable records vote. Codex records are envelopes
   `{"type": "session_meta"|"response_item"|"event_msg"|"turn_context"|"compacted", "payload"}` (or the
   2025 bare era: `record_type` lines, metadata with `instructions`); Claude Code records have a
   `type` such as `user`, `assistant`, `progress`, `summary` plus `uuid`/`sessionId`/`leafUuid`.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from .codex import ENVELOPES
from .errors import TranscriptError
from .fields import as_str
from .source import peek_jsonl, read_bytes

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


def detect_format(path: Path) -> str:
    if path.is_dir():
        return _detect_directory(path)
    if _in_storage_sessions(path):
        return "opencode"
    data = read_bytes(path)
    document = _whole_document(data)
    if isinstance(document, list):
        return "claude-code" if _claude_array(document) else "cline"
    if document is None and data.lstrip().startswith(b"["):
        return "claude-code" if _CLAUDE_ARRAY_START.match(data) else "cline"
    if isinstance(document, dict) and "info" in document and "messages" in document:
        return "opencode"
    if document is None and _OPENCODE_EXPORT_START.match(data):
        return "opencode"
    return _detect_jsonl(path, data)


def is_opencode_storage(path: Path) -> bool:
    return (path / "storage").is_dir() or ((path / "session").is_dir() and (path / "message").is_dir())


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


def _whole_document(data: bytes) -> object:
    if not data.lstrip().startswith((b"[", b"{")):
        return None
    try:
        document: object = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return document


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
    codex = claude = 0
    for record in peek_jsonl(data, PEEK):
        kind = as_str(record.get("type"))
        if (
            (kind in ENVELOPES and "payload" in record)
            or "record_type" in record
            or (kind is None and "instructions" in record and "id" in record)
        ):
            codex += 1
        elif _is_claude_record(record):
            claude += 1
    if codex > claude:
        return "codex"
    if claude > codex:
        return "claude-code"
    raise TranscriptError(path, "cannot tell the transcript format from the content; pass --format")
