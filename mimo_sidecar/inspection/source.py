"""What `inspect` reads: a transcript (through the importers) or a `session/open` params file.

A `session/open` params file is a JSON object holding `sessionId` and a `messages` list of
`{info, parts}` (`importers.detect.is_session_open_params`: items with an `info` object), as a
host sends it (protocol.md, `session/open`). It may carry one extra key, `model`, with the
model's limits in the shape of `rebuild/compute`'s `model` (`{contextWindow, inputLimit?,
maxOutputTokens?, providerId?, modelId?}`): the bundled `examples/sample/session.json` is such a
file. Everything else is handed to the importers, which detect the transcript format (or take the
one given).

Errors are `TranscriptError`s, one line naming the file and the place, exactly as `import` reports
them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from ..core.session.message import Json
from ..core.words import MAIN_AGENT
from ..importers import ImportReport, TranscriptError, import_transcript
from ..importers.detect import is_session_open_params
from ..importers.source import read_bytes, whole_document
from ..wire.rebuild import ModelLimits
from ..wire.session import OpenParams

SESSION_OPEN = "session-open"
MODEL_KEY = "model"  # the one key a params file may add to session/open's (its model limits)


@dataclass(frozen=True)
class InspectSource:
    """The session to inspect, as `session/open` params, and where they came from."""

    path: str
    format: str  # an importer format, or "session-open"
    params: Json
    model: ModelLimits | None = None  # the file's `model` key (params files only)
    slices: dict[str, int] = field(default_factory=dict)  # agentID -> messages
    not_imported: int = 0  # source records the importer left out (transcripts only)
    adjusted: int = 0  # records it adjusted
    notes: list[str] = field(default_factory=list)  # what of the file inspect does not use, or chose

    @property
    def session_id(self) -> str:
        return str(self.params["sessionId"])

    @property
    def messages(self) -> int:
        return sum(self.slices.values())


def read_source(
    path: str | Path,
    format: str | None = None,
    *,
    session: str | None = None,
    tolerate_bad_lines: bool = False,
) -> InspectSource:
    """Read FILE as `session/open` params. `format`: an importer format, `"session-open"`, or None
    to detect. Raises `TranscriptError` (and nothing else) for a file that cannot be used."""
    source = Path(path).expanduser()
    if format == SESSION_OPEN or (format is None and _looks_like_params(source)):
        return _read_params_file(source)
    result = import_transcript(source, format, session=session, tolerate_bad_lines=tolerate_bad_lines)
    return _from_import(str(source), result.params, result.report)


def _looks_like_params(path: Path) -> bool:
    """A JSON object with `sessionId` and a `messages` list of `{info, ...}` (the importers' own
    test, so that a file neither reads gets the same answer from `inspect` as from `import`)."""
    if not path.is_file():
        return False
    return is_session_open_params(whole_document(read_bytes(path)))


def _read_params_file(path: Path) -> InspectSource:
    data = read_bytes(path)
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise TranscriptError(path, f"not a JSON document: {exc}") from None
    if not isinstance(document, dict):
        raise TranscriptError(path, "a session/open params file must hold a JSON object")
    params = dict(document)
    model = _model_limits(path, params.pop(MODEL_KEY, None))
    try:
        OpenParams.model_validate(params)
    except ValidationError as exc:
        raise TranscriptError(path, "not valid session/open params: " + _first_error(exc)) from None
    slices: dict[str, int] = {}
    for message in params["messages"]:
        agent = message["info"].get("agentID") or MAIN_AGENT
        slices[agent] = slices.get(agent, 0) + 1
    notes = []
    if params.get("parent"):
        notes.append("the file names a parent session: its inherited context is not loaded")
    return InspectSource(str(path), SESSION_OPEN, params, model, slices, notes=notes)


def _model_limits(path: Path, raw: Any) -> ModelLimits | None:
    if raw is None:
        return None
    try:
        return ModelLimits.model_validate(raw)
    except ValidationError as exc:
        raise TranscriptError(path, f"{MODEL_KEY}: " + _first_error(exc)) from None


def _first_error(exc: ValidationError) -> str:
    """The first problem pydantic found, as `where: what` (the rest, if any, counted)."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"]) or "the object"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def _from_import(path: str, params: Json, report: ImportReport) -> InspectSource:
    return InspectSource(
        path,
        report.format,
        params,
        None,
        dict(report.slices),
        sum(report.not_imported.values()),
        sum(report.adjusted.values()),
        notes=list(report.notes),  # which session of several the importer took
    )
