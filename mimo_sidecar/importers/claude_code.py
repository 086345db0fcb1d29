"""Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`) and its subagents,
or the same records saved as one JSON array (hook scripts' `logs/chat.json`): both are read alike.

The active branch of the uuid DAG (claude_dag.py) becomes the main slice; each subagent file
(`<session>/subagents/agent-<id>.jsonl`, or `<session>__subagents__agent-<id>.jsonl` next to the
session) becomes the slice `agentID = <id>`. A subagent file given on its own (every message
record a sidechain entry) is a session of its own: its thread is the main slice, under the ID
`<session>__subagents__agent-<id>`. Per record (docs/importers.md has the full table):

- `assistant` -> an assistant message per entry, ID = `uuid`, content blocks kept as parts,
  `providerMessageID` = `message.id` (the entries of one response share it), `providerID`
  "anthropic", `modelID`. `finish` and `tokens` go on the response's last entry (session_builder).
  Entries of model `<synthetic>` / `isApiErrorMessage` (API errors shown in the UI) are not imported.
- `user` -> a user message; when it holds tool results and other content, the results stay on a
  pure carrier (ID = `uuid`) and the rest becomes a user message `<uuid>#text` right after it.
  `isMeta`, `isCompactSummary` and harness-marked text (harness.py) are `synthetic`.
- `system`/`compact_boundary` -> a user message with one `compaction` part: the sidecar's view
  starts there, as the model's did; the older history stays behind it.
- `queue-operation`: input the user typed while the agent worked. When it was delivered (`remove`,
  `dequeue`) and no user entry carries the same text, it becomes a user message placed before the
  next provider response, where the model first saw it.
- everything else (`progress`, `file-history-snapshot`, `summary`, other `system` records,
  `attachment`...) is bookkeeping: counted, not imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.words import MAIN_AGENT
from . import anthropic, tool_names, usage
from .claude_dag import active_branch, is_compact_boundary, is_compact_summary, is_message
from .errors import TranscriptError
from .fields import Json, as_dict, as_str, epoch_ms, nonempty_str
from .harness import CLAUDE_CODE_MARKERS, starts_with_marker, synthetic
from .report import ImportReport
from .session_builder import Draft, SessionDraft
from .source import Record, read_bytes, records_of

FORMAT = "claude-code"
SUBAGENT_SEPARATOR = "__subagents__"
SYNTHETIC_MODEL = "<synthetic>"
COMPACTION_SUFFIX = "#compaction"  # ID of a boundary added before a compaction summary that has none
INHERITED_RECORD = "subagent's copy of a session record (its context, imported in the main slice)"


def subagent_files(session_file: Path) -> list[Path]:
    """Subagent transcripts of a session file, in name order (both layouts)."""
    stem = session_file.name.removesuffix(".jsonl")
    found = set((session_file.parent / stem / "subagents").glob("agent-*.jsonl"))
    found |= set(session_file.parent.glob(f"{stem}{SUBAGENT_SEPARATOR}agent-*.jsonl"))
    return sorted(found, key=lambda p: p.name)


def read_claude_code(path: Path, report: ImportReport, *, tolerate_bad_lines: bool) -> SessionDraft:
    records = list(records_of(path, read_bytes(path), report, tolerate_bad_lines=tolerate_bad_lines))
    if is_subagent_transcript(records):
        agent = _agent_id(records, path)
        session = SessionDraft(
            session_id=f"{_session_id(records, path)}{SUBAGENT_SEPARATOR}agent-{agent}",
            tool_name_map=dict(tool_names.CLAUDE_CODE),
        )
        _FileReader(path, report, session, MAIN_AGENT, main_thread=False).read(records)
        return session
    session = SessionDraft(session_id=_session_id(records, path), tool_name_map=dict(tool_names.CLAUDE_CODE))
    _FileReader(path, report, session, MAIN_AGENT, main_thread=True).read(records)
    main_records = {draft.id for draft in session.slice(MAIN_AGENT)}
    for sub in subagent_files(path):
        sub_records = list(records_of(sub, read_bytes(sub), report, tolerate_bad_lines=tolerate_bad_lines))
        agent = _agent_id(sub_records, sub)
        reader = _FileReader(sub, report, session, agent, main_thread=False, inherited=main_records)
        reader.read(sub_records)
    return session


def is_subagent_transcript(records: list[Record]) -> bool:
    """A subagent's own file: it has message records and every one is a sidechain entry (a main
    session file's thread is not; names are only hints)."""
    messages = [rec.data for rec in records if is_message(rec.data)]
    return bool(messages) and all(data.get("isSidechain") is True for data in messages)


def _session_id(records: list[Record], path: Path) -> str:
    for rec in reversed(records):
        sid = nonempty_str(rec.data.get("sessionId"))
        if sid is not None:
            return sid
    return path.name.removesuffix(".jsonl").removesuffix(".json")


def _agent_id(records: list[Record], path: Path) -> str:
    for rec in records:
        agent = nonempty_str(rec.data.get("agentId"))
        if agent is not None:
            return agent
    name = path.name.removesuffix(".jsonl")
    return name.rsplit("agent-", 1)[-1] or name


@dataclass
class _Queued:
    """An input typed while the agent was busy (`queue-operation` `enqueue`)."""

    record: Record
    text: str
    settled: bool = False  # delivered (as an entry or as steering input) or withdrawn


@dataclass
class _FileReader:
    path: Path
    report: ImportReport
    session: SessionDraft
    agent: str
    main_thread: bool
    # IDs of the main slice: a subagent file can copy the session's records (a side question starts
    # from the whole conversation); those are the main slice's messages, imported there once.
    inherited: set[str] = field(default_factory=set)
    queued: list[_Queued] = field(default_factory=list)
    steering: list[Draft] = field(default_factory=list)
    # Graph-order positions of the user entries that delivered a queued input (each delivers one).
    claimed_entries: set[int] = field(default_factory=set)
    last_response: str | None = None
    position: dict[int, int] = field(default_factory=dict)  # id(record) -> its place in graph order
    user_texts: list[tuple[int, str | None]] = field(default_factory=list)  # (position, plain text)

    @property
    def out(self) -> list[Draft]:
        return self.session.slice(self.agent)

    def read(self, records: list[Record]) -> None:
        branch = active_branch(records, main_thread=self.main_thread)
        active = {id(rec) for rec in branch.records}
        self.report.adjust("dangling parent link bridged", branch.bridges)
        self.report.adjust(
            "compaction without a logical parent bridged to the history before it", branch.compactions_bridged
        )
        self.report.adjust("record placed after its parent, written later", branch.moved)
        self.report.adjust(
            "sibling-branch entry kept (parallel tool result or response entry)", branch.siblings
        )
        self.position = {id(rec): index for index, rec in enumerate(branch.order)}
        self.user_texts = [
            (self.position[id(rec)], _plain_text(rec.data))
            for rec in branch.records
            if rec.data.get("type") == "user"
        ]
        for rec in branch.order:
            kind = as_str(rec.data.get("type")) or "(no type)"
            if id(rec) in active and rec.data.get("uuid") in self.inherited:
                self.report.skip(INHERITED_RECORD)
            elif id(rec) in active:
                if is_compact_boundary(rec.data):
                    self._boundary(rec)
                else:
                    self._message(rec)
            elif rec.line in branch.repeated:
                self.report.skip("record repeating an earlier uuid (a resumed session's copy)")
            elif kind == "queue-operation":
                self._queue_operation(rec)
            else:
                self.report.skip(_skip_reason(rec.data, self.main_thread))
        self._flush_steering()
        for item in self.queued:
            if not item.settled:
                self.report.skip("queued input never delivered")

    # -- records on the branch -------------------------------------------------------------
    def _message(self, rec: Record) -> None:
        data = rec.data
        message = as_dict(data.get("message"))
        if message is None:
            raise TranscriptError(
                self.path,
                f"{data.get('type')} record without a message object",
                line=rec.at_line,
                where=rec.where,
            )
        blocks = anthropic.blocks_of(message.get("content"), str(self.path), rec.at_line, rec.where)
        if data["type"] == "assistant":
            self._assistant(rec, message, blocks)
        else:
            self._user(rec, blocks)

    def _assistant(self, rec: Record, message: Json, blocks: list[Json]) -> None:
        data = rec.data
        if message.get("model") == SYNTHETIC_MODEL or data.get("isApiErrorMessage") is True:
            self.report.skip("API error entry (shown in the UI, not sent to the model)")
            return
        if not blocks:
            self.report.skip("entry without content")
            return
        response = nonempty_str(message.get("id"))
        if response is not None and response != self.last_response:
            self._flush_steering()  # input typed during the previous response reached the model here
        self.last_response = response or str(data["uuid"])
        info: Json = {"id": data["uuid"], "role": "assistant"}
        if response is not None:
            info["providerMessageID"] = response
        info["providerID"] = anthropic.PROVIDER_ID
        model = nonempty_str(message.get("model"))
        if model is not None:
            info["modelID"] = model
        self.out.append(
            Draft(
                info,
                blocks,
                line=rec.at_line,
                where=rec.where,
                created=epoch_ms(data.get("timestamp")),
                response=self.last_response,
                stop=anthropic.finish_of(message.get("stop_reason")),
                usage=usage.from_anthropic(message.get("usage")),
                calls=anthropic.issues_calls(blocks),
            )
        )

    def _user(self, rec: Record, blocks: list[Json]) -> None:
        data = rec.data
        if is_compact_summary(data) and not self._after_boundary():
            self._boundary(rec, f"{data['uuid']}{COMPACTION_SUFFIX}")
            self.report.adjust("compaction summary without a boundary record: boundary added before it")
        harness = data.get("isMeta") is True or data.get("isCompactSummary") is True
        blocks = [synthetic(b) if harness or _is_harness_text(b) else b for b in blocks]
        drafts = anthropic.user_turn(
            blocks,
            str(data["uuid"]),
            epoch_ms(data.get("timestamp")),
            self.report,
            line=rec.at_line,
            where=rec.where,
        )
        if not drafts:
            self.report.skip("entry without content")
        self.out.extend(drafts)

    def _after_boundary(self) -> bool:
        return bool(self.out) and [p.get("type") for p in self.out[-1].parts] == ["compaction"]

    def _boundary(self, rec: Record, mid: str | None = None) -> None:
        """A compaction boundary: the record's own, or (`mid`) one added before a compaction summary
        that has none (it accounts for no record of its own)."""
        data = rec.data
        part: Json = {"type": "compaction"}
        trigger = as_str((as_dict(data.get("compactMetadata")) or {}).get("trigger"))
        if trigger in ("auto", "manual"):
            part["auto"] = trigger == "auto"
        self.out.append(
            Draft(
                {"id": mid or data["uuid"], "role": "user"},
                [part],
                line=rec.at_line,
                where=rec.where,
                created=epoch_ms(data.get("timestamp")),
                records=0 if mid else 1,
            )
        )

    # -- queued input ------------------------------------------------------------------------
    def _queue_operation(self, rec: Record) -> None:
        operation = rec.data.get("operation")
        if operation == "enqueue" and (text := nonempty_str(rec.data.get("content"))) is not None:
            item = _Queued(rec, text)
            entry = next(
                (
                    at
                    for at, body in self.user_texts
                    if at > self.position[id(rec)]
                    and at not in self.claimed_entries
                    and body is not None
                    and body.strip() == text.strip()
                ),
                None,
            )
            if entry is not None:
                self.claimed_entries.add(entry)
                item.settled = True
                self.report.skip("queued input (delivered as a user entry)")
            self.queued.append(item)
            return
        if operation in ("remove", "dequeue"):
            pending = next((q for q in self.queued if not q.settled), None)
            if pending is None:
                self.report.skip("queue-operation without a pending input")
                return
            pending.settled = True
            self._steer(pending, rec)
            return
        if operation == "popAll":
            for item in self.queued:
                if not item.settled:
                    item.settled = True
                    self.report.skip("queued input withdrawn (popAll)")
        self.report.skip("queue-operation record")

    def _steer(self, item: _Queued, delivered: Record) -> None:
        part: Json = {"type": "text", "text": item.text}
        if starts_with_marker(item.text, CLAUDE_CODE_MARKERS):
            part = synthetic(part)
        sid = self.session.session_id
        draft = Draft(
            {"id": f"{sid}.queued.{item.record.tag}", "role": "user"},
            [part],
            line=item.record.at_line,
            where=item.record.where,
            created=epoch_ms(delivered.data.get("timestamp")),
            records=2,
        )
        self.steering.append(draft)
        self.report.adjust("queued input imported as a user message")

    def _flush_steering(self) -> None:
        self.out.extend(self.steering)
        self.steering.clear()


def _is_harness_text(block: Json) -> bool:
    text = block.get("text")
    return (
        block.get("type") == "text"
        and isinstance(text, str)
        and starts_with_marker(text, CLAUDE_CODE_MARKERS)
    )


def _plain_text(data: Json) -> str | None:
    """The text of a user entry made of text only (to match queued input against)."""
    message = as_dict(data.get("message")) or {}
    content = message.get("content")
    if isinstance(content, str):
        return content
    if (
        isinstance(content, list)
        and content
        and all(
            isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
            for b in content
        )
    ):
        return "\n".join(b["text"] for b in content)
    return None


def _skip_reason(data: Json, main_thread: bool) -> str:
    kind = as_str(data.get("type")) or "(no type)"
    if is_message(data):
        if main_thread and data.get("isSidechain") is True:
            return "inline sidechain entry"
        return f"{kind} entry off the active branch"
    if kind == "system":
        return f"system record ({as_str(data.get('subtype')) or 'no subtype'})"
    return f"{kind} record"
