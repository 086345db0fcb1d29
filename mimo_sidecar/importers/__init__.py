"""Importers: real agent transcripts as `session/open` params (docs/importers.md).

    from . import import_transcript
    result = import_transcript("~/.claude/projects/-home-me-repo/5d1c….jsonl")
    client.request("session/open", result.params)
    print(result.report.table(), file=sys.stderr)

Formats (`FORMATS`): `claude-code` (session JSONL with its subagent files), `codex` (Codex CLI
rollout JSONL), `opencode` (`opencode export` JSON, or the on-disk `storage/` layout), `cline`
(`api_conversation_history.json`), `gemini` (Gemini CLI's saved chat, JSONL recording, `/chat save`
checkpoint or headless stream-json), `aider` (`.aider.chat.history.md`). `detect_format` picks one
from the content when none is given. `list_sessions` lists the sessions of an Aider history.

Pure library: no pygls, no asyncio, no output of its own. Errors: `TranscriptError` only, naming
the file and the line (or JSON path). Mapping rules per format: docs/importers.md.
"""

from __future__ import annotations

from .aider import SessionSummary
from .api import FORMATS, ImportResult, import_transcript, list_sessions
from .asks import newest_user_ask
from .detect import detect_format
from .errors import TranscriptError
from .report import ImportReport

__all__ = [
    "FORMATS",
    "ImportReport",
    "ImportResult",
    "SessionSummary",
    "TranscriptError",
    "detect_format",
    "import_transcript",
    "list_sessions",
    "newest_user_ask",
]
