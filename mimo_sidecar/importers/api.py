"""The entry point: pick the reader for a path, run it, build the params and the report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .aider import FORMAT as AIDER
from .aider import SessionSummary, read_aider, survey
from .asks import newest_user_ask
from .claude_code import read_claude_code
from .cline import read_cline
from .codex import read_codex
from .detect import detect_format
from .errors import TranscriptError
from .fields import Json
from .gemini_cli import read_gemini
from .opencode import read_opencode
from .report import ImportReport
from .session_builder import SessionDraft, build_session
from .source import read_bytes

FORMATS = ("claude-code", "codex", "opencode", "cline", "gemini", "aider")
EXCERPT_CHARS = 80


@dataclass(frozen=True)
class ImportResult:
    params: Json  # the `session/open` params
    report: ImportReport


Reader = Callable[[Path, ImportReport, "ReadOptions"], SessionDraft]


@dataclass(frozen=True)
class ReadOptions:
    session: str | None = None  # which session, when the source holds several (OpenCode storage,
    # a stream-json file of several Gemini CLI runs, an Aider history: also its number)
    tolerate_bad_lines: bool = False


def _readers() -> dict[str, Reader]:
    return {
        "claude-code": lambda p, r, o: read_claude_code(p, r, tolerate_bad_lines=o.tolerate_bad_lines),
        "codex": lambda p, r, o: read_codex(p, r, tolerate_bad_lines=o.tolerate_bad_lines),
        "opencode": lambda p, r, o: read_opencode(
            p, r, session=o.session, tolerate_bad_files=o.tolerate_bad_lines
        ),
        "cline": lambda p, r, o: read_cline(p, r),
        "gemini": lambda p, r, o: read_gemini(
            p, r, session=o.session, tolerate_bad_lines=o.tolerate_bad_lines
        ),
        "aider": lambda p, r, o: read_aider(p, r, session=o.session),
    }


def import_transcript(
    path: Path | str,
    format: str | None = None,
    *,
    session: str | None = None,
    tolerate_bad_lines: bool = False,
) -> ImportResult:
    """Read the transcript at `path` as `session/open` params.

    `format`: one of `FORMATS`; detected from the content when None. `session`: the session to
    import when the source holds several: its ID (OpenCode storage, Gemini CLI stream-json, Aider),
    an Aider session's start time or its number as `list_sessions` gives it (`"51"`). Without it an
    Aider history gives its newest session with an exchange, and `report.notes` says which.
    `tolerate_bad_lines`: skip and count JSONL lines that are not valid JSON objects instead of
    failing on the first one.
    Raises `TranscriptError` (and nothing else) when the source cannot be imported.
    """
    source = Path(path).expanduser()
    if not source.exists():
        raise TranscriptError(source, "no such file or directory")
    chosen = format or detect_format(source)
    readers = _readers()
    if chosen not in readers:
        raise TranscriptError(source, f"unknown format {chosen!r} (expected one of {', '.join(FORMATS)})")
    report = ImportReport(format=chosen, source=str(source))
    draft = readers[chosen](source, report, ReadOptions(session, tolerate_bad_lines))
    params = build_session(draft, report, str(source))
    if not params["messages"]:
        raise _nothing_imported(source, chosen, report, forced=format is not None)
    ask = newest_user_ask(params)
    if ask is not None:
        report.newest_user_ask = ask[0]
        report.newest_user_ask_excerpt = " ".join(ask[1].split())[:EXCERPT_CHARS]
    return ImportResult(params, report)


def list_sessions(path: Path | str, format: str | None = None) -> list[SessionSummary]:
    """The sessions of an Aider history, oldest first: number, start, first ask, size, whether it
    holds an exchange. Raises `TranscriptError` for a source of another format (one session each,
    or not listed yet: OpenCode storage and Gemini CLI stream-json take `session` by ID)."""
    source = Path(path).expanduser()
    if not source.exists():
        raise TranscriptError(source, "no such file or directory")
    chosen = format or detect_format(source)
    if chosen != AIDER:
        raise TranscriptError(source, f"listing sessions is offered for Aider histories; this is {chosen}")
    return survey(source, read_bytes(source))


def _nothing_imported(source: Path, chosen: str, report: ImportReport, *, forced: bool) -> TranscriptError:
    """A file that gave no message: a session of nothing, or (with `--format`) not that format."""
    reasons = ", ".join(f"{reason} x{n}" for reason, n in report.not_imported.most_common(3))
    detail = f"no {chosen} message in this file ({report.records_read} records read, none imported"
    detail += f": {reasons})" if reasons else ")"
    if forced:
        try:
            detected = detect_format(source)
        except TranscriptError:
            detected = None
        if detected is not None and detected != chosen:
            detail += f"; it reads as {detected}: drop --format or pass --format {detected}"
    return TranscriptError(source, detail)
