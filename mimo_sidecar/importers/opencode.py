"""OpenCode sessions: `opencode export` JSON, or the on-disk storage layout (JSON files).

OpenCode's messages are already the sidecar's inline shape (`info` + `parts`,
behavior.md#data-model), so they are kept as they are: every `info` and part field,
`finish`/`tokens` as OpenCode recorded them, in-flight (`pending`/`running`) tools included. Only
their shape is checked, and `time.created` is normalised to milliseconds (raised where the order
disagrees, session_builder.py).

- Export: `{info: Session, messages: [{info, parts}], todos?}`, messages in OpenCode's order.
- Storage (`~/.local/share/opencode/storage/`, before OpenCode moved to SQLite):
  `session/<projectID>/<sessionID>.json`, `message/<sessionID>/<messageID>.json`,
  `part/<messageID>/<partID>.json`. IDs come from the file names (OpenCode's own rule), messages
  are ordered by (`time.created`, ID) and parts by ID, as OpenCode lists them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .detect import is_opencode_storage
from .errors import TranscriptError
from .fields import Json, as_dict, as_list, epoch_ms, nonempty_str
from .report import ImportReport
from .session_builder import Draft, SessionDraft
from .source import load_json, read_bytes

FORMAT = "opencode"
ROLES = ("user", "assistant")
UNREADABLE_FILE = "unreadable storage file (skipped on request)"


def read_opencode(
    path: Path, report: ImportReport, *, session: str | None, tolerate_bad_files: bool
) -> SessionDraft:
    if path.is_dir() or (path.suffix == ".json" and path.parent.parent.name == "session"):
        return _Storage(path, report, tolerate_bad_files).read(session)
    return _read_export(path, report)


def _read_export(path: Path, report: ImportReport) -> SessionDraft:
    document = as_dict(load_json(path, read_bytes(path)))
    if document is None:
        raise TranscriptError(path, "expected an object {info, messages} (opencode export)")
    info = as_dict(document.get("info"))
    messages = as_list(document.get("messages"))
    if info is None or messages is None:
        raise TranscriptError(
            path,
            "expected an object {info, messages} (opencode export)",
            where="info" if info is None else "messages",
        )
    session = _session(path, info, "info")
    report.records_read += len(messages)
    if "todos" in document:
        report.records_read += 1
        report.skip("todo list (not imported: no task ledger equivalent)")
    for index, raw in enumerate(messages):
        where = f"messages[{index}]"
        message = as_dict(raw)
        if message is None:
            raise TranscriptError(path, "a message must be an object {info, parts}", where=where)
        info_raw = as_dict(message.get("info"))
        if info_raw is None:
            raise TranscriptError(path, "info must be an object", where=f"{where}.info")
        parts = message.get("parts", [])
        if as_list(parts) is None:
            raise TranscriptError(path, "parts must be a list", where=f"{where}.parts")
        session.slice().append(_draft(path, info_raw, parts, where, nonempty_str(info_raw.get("id"))))
    return session


def _session(path: Path, info: Json, where: str, session_id: str | None = None) -> SessionDraft:
    sid = session_id or nonempty_str(info.get("id"))
    if sid is None:
        raise TranscriptError(path, "the session has no id", where=f"{where}.id")
    return SessionDraft(session_id=sid, project_id=nonempty_str(info.get("projectID")))


def _draft(path: Path, info: Json, parts: list[Any], where: str, mid: str | None, records: int = 1) -> Draft:
    if mid is None:
        raise TranscriptError(path, "a non-empty string is required", where=f"{where}.info.id")
    if info.get("role") not in ROLES:
        raise TranscriptError(path, "role must be 'user' or 'assistant'", where=f"{where}.info.role")
    if "agentID" in info and not isinstance(info["agentID"], str):
        raise TranscriptError(path, "agentID must be a string", where=f"{where}.info.agentID")
    for index, part in enumerate(parts):
        if not isinstance(part, dict):
            raise TranscriptError(path, "a part must be an object", where=f"{where}.parts[{index}]")
    time = as_dict(info.get("time")) or {}
    host_info = {key: value for key, value in info.items() if key != "time"}
    host_info["id"] = mid
    return Draft(
        host_info,
        list(parts),
        where=where,
        records=records,
        created=epoch_ms(time.get("created")),
        time_extra={key: value for key, value in time.items() if key != "created"},
        keep_finish=True,
    )


class _Storage:
    """The storage layout, rooted at the directory holding `session/`, `message/` and `part/`."""

    def __init__(self, path: Path, report: ImportReport, tolerate_bad_files: bool) -> None:
        self.report = report
        self.tolerate = tolerate_bad_files
        self.session_file: Path | None = None
        if path.is_file():
            self.session_file = path
            self.root = path.parent.parent.parent
        elif (path / "storage").is_dir():
            self.root = path / "storage"
        elif is_opencode_storage(path):
            self.root = path
        else:
            raise TranscriptError(path, "not an OpenCode storage directory (no session/ and message/ inside)")

    def read(self, wanted: str | None) -> SessionDraft:
        session_file = self.session_file or self._pick(wanted)
        info = self._load(session_file)
        if (
            info is None
        ):  # pragma: no cover - _load raises unless tolerating, and the session file is required
            raise TranscriptError(session_file, "unreadable session file")
        session = _session(session_file, info, "", session_file.stem)
        drafts = []
        for message_file in sorted((self.root / "message" / session.session_id).glob("*.json")):
            self.report.records_read += 1
            draft = self._message(message_file)
            if draft is not None:
                drafts.append(draft)
        drafts.sort(key=lambda d: (d.created or 0, d.id))
        session.slice().extend(drafts)
        return session

    def _pick(self, wanted: str | None) -> Path:
        sessions = sorted((self.root / "session").glob("*/*.json"))
        if wanted is not None:
            for candidate in sessions:
                if candidate.stem == wanted:
                    return candidate
            raise TranscriptError(self.root, f"no session {wanted!r} in this storage")
        if not sessions:
            raise TranscriptError(self.root, "no session found in this OpenCode storage")
        if len(sessions) > 1:
            names = ", ".join(p.stem for p in sessions[:5]) + (", ..." if len(sessions) > 5 else "")
            raise TranscriptError(
                self.root, f"{len(sessions)} sessions in this storage ({names}); choose one with --session"
            )
        return sessions[0]

    def _load(self, path: Path) -> Json | None:
        try:
            value = as_dict(load_json(path, read_bytes(path)))
            if value is None:
                raise TranscriptError(path, "expected a JSON object")
        except TranscriptError:
            if not self.tolerate:
                raise
            self.report.skip(UNREADABLE_FILE)
            return None
        return value

    def _message(self, message_file: Path) -> Draft | None:
        info = self._load(message_file)
        if info is None:
            return None
        parts = []
        for part_file in sorted((self.root / "part" / message_file.stem).glob("*.json")):
            self.report.records_read += 1
            part = self._load(part_file)
            if part is not None:
                parts.append({**part, "id": part_file.stem})
        return _draft(message_file, info, parts, message_file.name, message_file.stem, records=1 + len(parts))
