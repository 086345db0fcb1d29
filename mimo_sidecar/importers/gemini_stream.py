"""Gemini CLI headless output, `gemini -p ... --output-format stream-json`: one JSON event a line.

Events (Gemini CLI's `JsonStreamEvent`): `init {session_id, model}` opens a run; `message {role,
content, delta?}` is the user's prompt or the model's text (`delta: true` pieces are joined);
`tool_use {tool_name, tool_id, parameters}` a call and `tool_result {tool_id, status, output?,
error?}` its result; `error {severity, message}` a notice to the user; `result {status, stats}` ends
the run. Every event has an ISO `timestamp`.

One model response is the text and calls up to the first result: the calls of a response are all
announced before any runs, so model output after a result is the next response. A file may hold
several runs (a script appending each run to one log): the newest is imported unless `--session`
names another by its `session_id`; the others are counted. Lines before a run's `init` are not
Gemini CLI's (it writes `init` first) and are counted too.

The `result` event's `stats` are the run's totals over all its model calls, not the size of one
request: they are counted and left out, never taken for a step's usage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import gemini_parts as gp
from . import tool_names
from .errors import TranscriptError
from .fields import Json, as_dict, as_str, epoch_ms, nonempty_str
from .harness import GEMINI_MARKERS, starts_with_marker, synthetic
from .report import ImportReport
from .session_builder import Draft, SessionDraft
from .source import Record

EVENT_TYPES = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})
SKIP_OTHER_RUN = "event of another run in this file (--session picks it)"
SKIP_BEFORE_INIT = "line outside a run, between init and result (not written by Gemini CLI)"


def is_stream_event(record: Json) -> bool:
    kind = as_str(record.get("type"))
    if kind not in EVENT_TYPES or "payload" in record:
        return False
    if kind == "message":  # Codex's bare-era items are messages too, with content lists
        return isinstance(record.get("content"), str) and record.get("role") in ("user", "assistant")
    return kind != "init" or isinstance(record.get("session_id"), str)


@dataclass
class Run:
    session_id: str | None
    model: str | None
    records: list[Record] = field(default_factory=list)


def split_runs(records: list[Record], report: ImportReport) -> list[Run]:
    """The runs of the file, each from its `init` on (a file without any `init` is one run)."""
    if not any(r.data.get("type") == "init" for r in records):
        return [Run(None, None, list(records))]
    runs: list[Run] = []
    open_run = False  # between an init and its result
    for rec in records:
        kind = rec.data.get("type")
        if kind == "init":
            runs.append(Run(as_str(rec.data.get("session_id")), nonempty_str(rec.data.get("model"))))
            open_run = True
        if open_run:
            runs[-1].records.append(rec)
        else:
            report.skip(SKIP_BEFORE_INIT)
        open_run = open_run and kind != "result"
    return runs


def pick_run(path: Path, runs: list[Run], session: str | None, report: ImportReport) -> Run:
    if session is None:
        chosen = runs[-1]
    else:
        found = next((r for r in runs if r.session_id == session), None)
        if found is None:
            known = ", ".join(r.session_id or "(no session_id)" for r in runs)
            raise TranscriptError(path, f"no run with session_id {session!r} in this file (runs: {known})")
        chosen = found
    for run in runs:
        if run is not chosen:
            report.skip(SKIP_OTHER_RUN, len(run.records))
    return chosen


def read_stream(
    path: Path, records: list[Record], report: ImportReport, *, session: str | None
) -> SessionDraft:
    run = pick_run(path, split_runs(records, report), session, report)
    sid = run.session_id or f"gemini-{path.stem}"
    draft = SessionDraft(session_id=sid, tool_name_map=dict(tool_names.GEMINI_CLI))
    builder = _RunBuilder(sid, run.model, report)
    for rec in run.records:
        builder.event(rec)
    draft.slice().extend(builder.out)
    return draft


@dataclass
class _RunBuilder:
    session_id: str
    model: str | None
    report: ImportReport
    out: list[Draft] = field(default_factory=list)
    calls: dict[str, tuple[Json, Draft]] = field(default_factory=dict)  # tool_id -> tool part, response
    response: Draft | None = None  # the model response being read
    answered: bool = False  # a result came since it began: further model output is a new response
    delta: bool = False  # its last part is text still being streamed

    def event(self, rec: Record) -> None:
        data, kind = rec.data, as_str(rec.data.get("type"))
        if kind == "init":
            self.report.skip("run start (init: its session_id and model kept)")
        elif kind == "message" and data.get("role") == "user":
            self._user(rec)
        elif kind == "message" and data.get("role") == "assistant":
            self._text(rec)
        elif kind == "tool_use":
            self._tool_use(rec)
        elif kind == "tool_result":
            self._tool_result(rec)
        elif kind == "error":
            self.report.skip("error event (shown to the user, not sent to the model)")
        elif kind == "result":
            self.report.skip("run statistics (the run's totals, not one step's usage)")
            self.response = None
        else:
            self.report.skip("line of an unknown kind")

    def _created(self, data: Json) -> int | None:
        return epoch_ms(data.get("timestamp")) or epoch_ms(data.get("ts"))

    def _user(self, rec: Record) -> None:
        self.response = None
        text = as_str(rec.data.get("content")) or ""
        if not text:
            self.report.skip("message without content")
            return
        part: Json = {"type": "text", "text": text}
        part = synthetic(part) if starts_with_marker(text, GEMINI_MARKERS) else part
        mid = f"{self.session_id}.L{rec.line}"
        self.out.append(
            Draft({"id": mid, "role": "user"}, [part], line=rec.line, created=self._created(rec.data))
        )

    def _current(self, rec: Record) -> Draft:
        """The response this model output belongs to (a new one after a result)."""
        if self.response is None or self.answered:
            info: Json = {
                "id": f"{self.session_id}.L{rec.line}",
                "role": "assistant",
                "providerID": gp.PROVIDER_ID,
            }
            if self.model is not None:
                info["modelID"] = self.model
            self.response = Draft(info, [], line=rec.line, created=self._created(rec.data), records=0)
            self.out.append(self.response)
            self.answered = self.delta = False
        self.response.records += 1
        return self.response

    def _text(self, rec: Record) -> None:
        text = as_str(rec.data.get("content")) or ""
        response = self._current(rec)
        streamed = rec.data.get("delta") is True
        if streamed and self.delta and response.parts:
            response.parts[-1]["text"] += text
            self.report.adjust("text delta joined to the text before it")
        elif text:
            response.parts.append({"type": "text", "text": text})
        self.delta = streamed

    def _tool_use(self, rec: Record) -> None:
        data = rec.data
        response = self._current(rec)
        call_id = nonempty_str(data.get("tool_id")) or gp.synthetic_call_id(response.id, len(self.calls))
        name = as_str(data.get("tool_name")) or ""
        part = gp.running_call(call_id, name, data.get("parameters"), self._created(data))
        response.parts.append(part)
        response.calls = True
        self.calls.setdefault(call_id, (part, response))
        self.delta = False

    def _tool_result(self, rec: Record) -> None:
        data = rec.data
        found = self.calls.get(nonempty_str(data.get("tool_id")) or "")
        if found is None or found[0]["state"]["status"] != "running":
            self.report.skip("tool result without its call")
            return
        part, response = found
        failed = data.get("status") == "error"
        error = as_dict(data.get("error")) or {}
        output = as_str(data.get("output"))
        text = (as_str(error.get("message")) or output or "") if failed else (output or "")
        gp.end_call(part, text, error=failed)
        response.records += 1
        self.answered = True
