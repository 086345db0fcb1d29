"""Aider's chat history, `.aider.chat.history.md`: Markdown that Aider appends to as it runs.

What Aider writes (docs/importers.md, "Aider", has the full table):

- `# aider chat started at YYYY-MM-DD HH:MM:SS` opens a session; one file holds every session run
  in the project. The newest session with an exchange (an ask of the user's and a reply of the
  model's) is imported, and the report's notes say which one; `--session` picks another by its
  number (1 the oldest, as `survey` lists them), its ID or its start time. A session of commands
  alone (`/add`, `/commit`) is common at the end of a file: a user opened Aider and left.
- `#### ` lines are what the user typed (one line each, ending in Markdown's two-space line break).
  Answers Aider gave a prompt on the user's behalf, and Aider's own commands (`/add`, `/drop`...),
  are not sent to the model and are counted; `/ask`, `/code`, `/architect`, `/context` and `/help`
  with a question send the question (the mode goes to `info.mode`); `/run`, `/test` and `!` run a
  command; `/clear` and `/reset` empty the model's history.
- `> ` lines are Aider's own output: notices, prompts, `Tokens: …` (the usage of the reply before
  it), `Applied edit to …`, a failed edit's report, `Running …` (a command the model suggested),
  the lint report it sends back to the model.
- Any other text is the model's reply, `<thinking-content-…>` sections being its reasoning.

Edits in a reply become `edit` / `write` tool parts (aider_edits.py) and command runs `bash` tool
parts, with stable call IDs (`<message ID>.edit<k>`, `.run<k>`), so that the rebuild's activity digest
lists them and clears their old results. Aider never writes a command's output to this file, so a
run's result says so (core.texts.aider_command_output).

Accounting: every non-blank line is a record, imported (part of a message) or counted.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pydantic.alias_generators import to_camel

from ..core import texts
from . import aider_edits
from .errors import TranscriptError
from .fields import Json, epoch_ms
from .report import ImportReport
from .session_builder import Draft, SessionDraft, derive_times
from .source import read_bytes

FORMAT = "aider"
HEADER = re.compile(r"^# aider chat started at (?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
LINEBREAK = "  "  # Aider ends each `#### ` and `> ` line with Markdown's hard line break
CONFIRM = re.compile(r"\? \(Y\)es/\(N\)o.*\[[^\]]*\]: ?(?P<answer>\S*)\s*$")
TOKENS = re.compile(
    r"^Tokens: (?P<sent>[\d.]+k?) sent(?:, (?P<write>[\d.]+k?) cache write)?"
    r"(?:, (?P<hit>[\d.]+k?) cache hit)?, (?P<received>[\d.]+k?) received\."
)
MODEL = re.compile(r"^(?:Main )?[Mm]odel: (?P<name>\S+)")
APPLIED = re.compile(r"^Applied edit to (?P<path>.+?)\s*$")
FAILED = re.compile(
    r"^# \d+ SEARCH/REPLACE blocks? failed to match!|^The LLM did not conform to the edit format"
)
NO_MATCH = re.compile(r"failed to exactly match lines in (?P<path>\S+)")
RUNNING = re.compile(r"^Running (?P<command>.+?)\s*$")
ADD_OUTPUT = re.compile(r"^Add (?:[\d.]+k tokens of )?command output to the chat\?")
ADDED = re.compile(r"^Added (?P<lines>\d+) lines? of output to the chat\.")
LINT_START = "# Fix any errors below, if possible."
FIX_PROMPT = re.compile(r"^Attempt to fix (?:lint|test) errors\?")
THINKING = re.compile(r"<(thinking-content-[0-9a-f]+|think)>\n?(?P<body>.*?)\n?</\1>", re.DOTALL)
MODE_COMMANDS = {
    "/ask": "ask",
    "/code": "code",
    "/architect": "architect",
    "/context": "context",
    "/help": "help",
}
RUN_COMMANDS = frozenset({"/run", "/test", "!"})
CLEAR_COMMANDS = frozenset({"/clear", "/reset"})

SKIP_NOTICE = "Aider notice or prompt (not sent to the model)"
SKIP_COMMAND = "Aider command (not sent to the model)"
SKIP_ANSWER = "answer Aider gave a prompt for the user (not sent to the model)"
SKIP_OTHER_SESSION = "line of another session in this file (--session picks it)"


# -- lines and sessions -------------------------------------------------------------------------
@dataclass(frozen=True)
class Line:
    number: int  # 1-based in the file
    kind: str  # "user" (`#### `), "tool" (`> `) or "text" (the model's reply, blank lines)
    text: str  # without Aider's prefix and line break


@dataclass
class Session:
    session_id: str
    started: str
    lines: list[Line] = field(default_factory=list)
    characters: int = 0  # of its lines as the file holds them, from its header on

    @property
    def records(self) -> int:
        return sum(1 for line in self.lines if line.text.strip())


def looks_like_aider(data: bytes) -> bool:
    return any(HEADER.match(line.decode("utf-8", "replace")) for line in data.split(b"\n", 200)[:200])


def _decode(path: Path, data: bytes) -> list[str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TranscriptError(path, "invalid UTF-8", line=line) from None
    return [line.removesuffix("\r") for line in text.split("\n")]


def _classify(raw: str, strict: bool) -> tuple[str, str]:
    """A line's kind and text. `strict`: the file keeps Aider's line breaks, which tell Aider's lines
    from a reply's Markdown headings and quotes; a file whose trailing spaces were stripped is read
    by the prefixes alone."""
    ends = raw.endswith(LINEBREAK) or not strict
    body = raw.removesuffix(LINEBREAK) if strict else raw.rstrip()
    if ends and (body == "####" or body.startswith("#### ")):
        return "user", body[5:]
    if ends and (body == ">" or body.startswith("> ")):
        return "tool", body[2:]
    return "text", raw


def sessions_of(path: Path, data: bytes, report: ImportReport) -> list[Session]:
    raw_lines = _decode(path, data)
    strict = any(
        line.endswith(LINEBREAK) and line.startswith(("#### ", "> ", ">", "####")) for line in raw_lines
    )
    found: list[Session] = []
    for number, raw in enumerate(raw_lines, start=1):
        header = HEADER.match(raw)
        if header is not None:
            when = header.group("when")
            found.append(Session("aider-" + when.replace(" ", "T").replace(":", "-"), when))
            found[-1].characters = len(raw) + 1
            report.records_read += 1
            continue
        if found:
            found[-1].characters += len(raw) + 1  # and its line break
        kind, text = _classify(raw, strict)
        if not text.strip():  # not a record, but it keeps a reply's or an input's paragraphs apart
            if found:
                found[-1].lines.append(Line(number, kind, text))
            continue
        report.records_read += 1
        if not found:
            report.skip("line before the first session header")
            continue
        found[-1].lines.append(Line(number, kind, text))
    if not found:
        raise TranscriptError(path, "no '# aider chat started at' line: not an Aider chat history")
    return found


@dataclass(frozen=True)
class SessionSummary:
    """One session of a history, as `--list-sessions` shows it."""

    index: int  # 1 for the oldest (the file's first), as `--session N` takes it
    session_id: str
    started: str
    first_ask: str  # the first thing the user asked the model, on one line, cut at ASK_EXCERPT_CHARS
    messages: int  # what an import of it gives
    characters: int  # of its lines in the file
    has_exchange: bool  # a user ask, and a reply of the model's after it

    def as_dict(self) -> dict[str, object]:
        """The JSON `inspect --list-sessions --json` prints: the fields, camelCase."""
        return {to_camel(key): value for key, value in asdict(self).items()}


ASK_EXCERPT_CHARS = 60


def survey(path: Path, data: bytes) -> list[SessionSummary]:
    """Every session of the history, oldest first, each read as an import would read it."""
    found = sessions_of(path, data, ImportReport(format=FORMAT, source=str(path)))
    return [_summary(index, session) for index, session in enumerate(found, start=1)]


def _summary(index: int, session: Session) -> SessionSummary:
    builder = _build(session, ImportReport(format=FORMAT, source=""))  # a scratch report: nothing counted
    ask = " ".join(builder.first_ask.split())
    return SessionSummary(
        index=index,
        session_id=session.session_id,
        started=session.started,
        first_ask=ask if len(ask) <= ASK_EXCERPT_CHARS else ask[: ASK_EXCERPT_CHARS - 1] + "\u2026",
        messages=len(builder.out),
        characters=session.characters,
        has_exchange=builder.exchange,
    )


def pick_session(path: Path, found: list[Session], wanted: str | None, report: ImportReport) -> Session:
    """The session `wanted` names (its number, ID or start time), else the newest with an exchange;
    the report's notes say which one was taken when the file holds several."""
    chosen = _newest_with_exchange(path, found) if wanted is None else _named(path, found, wanted)
    at, total = found.index(chosen) + 1, len(found)
    taken = f"session {at} of {total}, started at {chosen.started}"
    if wanted is not None:
        report.note(f"{taken}, as --session {wanted} chose")
    elif at < total:
        newer = "the newer one has" if total - at == 1 else f"the {total - at} newer have"
        report.note(f"{taken}, the newest with an exchange: {newer} no exchange")
    elif total > 1:
        report.note(f"{taken}, the newest")
    for session in found:
        report.skip("session header", 1)
        if session is not chosen:
            report.skip(SKIP_OTHER_SESSION, session.records)
    return chosen


def _newest_with_exchange(path: Path, found: list[Session]) -> Session:
    for session in reversed(found):
        if _build(session, ImportReport(format=FORMAT, source="")).exchange:
            return session
    raise TranscriptError(
        path,
        f"no session in this file has an exchange: none of its {len(found)} session(s) holds a user ask "
        "answered by the model (only Aider commands, notices or unanswered asks); "
        "pick one by its number with --session N to import it anyway (--list-sessions lists them)",
    )


def _named(path: Path, found: list[Session], wanted: str) -> Session:
    if wanted.isdigit():
        index = int(wanted)
        if not 1 <= index <= len(found):
            raise TranscriptError(
                path,
                f"session {wanted}: there is no such session; this file holds {len(found)}, numbered 1 "
                f"(the oldest) to {len(found)} (--list-sessions lists them)",
            )
        return found[index - 1]
    match = [s for s in found if wanted in (s.session_id, s.started)]
    if not match:
        known = ", ".join(s.session_id for s in found)
        raise TranscriptError(
            path, f"no session {wanted!r} in this file (sessions 1 to {len(found)}: {known})"
        )
    return match[-1]


def read_aider(path: Path, report: ImportReport, *, session: str | None = None) -> SessionDraft:
    chosen = pick_session(path, sessions_of(path, read_bytes(path), report), session, report)
    draft = SessionDraft(session_id=chosen.session_id)
    builder = _build(chosen, report)
    derive_times(builder.out, builder.started, report)  # Aider writes one time per session
    draft.slice().extend(builder.out)
    return draft


def _build(session: Session, report: ImportReport) -> _Builder:
    builder = _Builder(session.session_id, epoch_ms(session.started.replace(" ", "T")), report)
    for kind, block in _blocks(session.lines):
        builder.block(kind, block)
    builder.close_reply()
    return builder


def _blocks(lines: list[Line]) -> list[tuple[str, list[Line]]]:
    """Consecutive lines of one kind; a reply's blank lines stay in it, other blank lines part blocks."""
    blocks: list[tuple[str, list[Line]]] = []
    for line in lines:
        if blocks and blocks[-1][0] == line.kind:
            blocks[-1][1].append(line)
        else:
            blocks.append((line.kind, [line]))
    return [(kind, block) for kind, block in blocks if any(line.text.strip() for line in block)]


# -- the model's replies ---------------------------------------------------------------------------
@dataclass
class _Reply:
    """A reply being read: its text, and what Aider's output after it says about it."""

    draft: Draft
    text: str
    written: set[str] = field(default_factory=set)  # files Aider applied an edit to
    failure: str | None = None  # the report of edits that failed
    runs: list[Json] = field(default_factory=list)  # commands Aider ran for it

    def parts(self) -> list[Json]:
        parts: list[Json] = []
        edits = 0
        for segment in aider_edits.segments(self.text, frozenset(self.written)):
            if isinstance(segment, str):
                parts.extend(_text_parts(segment))
                continue
            part = self._edit_part(segment, f"{self.draft.id}.edit{edits}")
            if part is None:
                parts.extend(_text_parts(_as_written(segment)))
            else:
                parts.append(part)
                edits += 1
        return parts + self.runs

    def _edit_part(self, edit: aider_edits.Edit, call_id: str) -> Json | None:
        """The edit as a tool part, or None when nothing says Aider applied it or failed to."""
        failed = self.failure is not None and (
            edit.path in set(NO_MATCH.findall(self.failure)) or "applied successfully" not in self.failure
        )
        if (
            not failed
            and edit.path not in self.written
            and "applied successfully" not in (self.failure or "")
        ):
            return None
        tool_input = (
            {"filePath": edit.path, "oldString": edit.old, "newString": edit.new}
            if edit.tool == "edit"
            else {"filePath": edit.path, "content": edit.new}
        )
        state: Json = {"status": "error" if failed else "completed", "input": tool_input}
        state["error" if failed else "output"] = self.failure if failed else f"Applied edit to {edit.path}"
        state.update({"title": edit.path, "metadata": {}})
        return {"type": "tool", "callID": call_id, "tool": edit.tool, "state": state}


def _as_written(edit: aider_edits.Edit) -> str:
    if edit.tool == "write":
        return f"{edit.path}\n```\n{edit.new}\n```"
    return f"{edit.path}\n<<<<<<< SEARCH\n{edit.old}\n=======\n{edit.new}\n>>>>>>> REPLACE"


def _text_parts(text: str) -> list[Json]:
    """Reply text, its reasoning sections as reasoning parts."""
    parts: list[Json] = []
    at = 0
    for match in THINKING.finditer(text):
        if text[at : match.start()].strip():
            parts.append({"type": "text", "text": text[at : match.start()].strip("\n")})
        if match.group("body").strip():
            parts.append({"type": "reasoning", "text": match.group("body").strip("\n")})
        at = match.end()
    if text[at:].strip():
        parts.append({"type": "text", "text": text[at:].strip("\n")})
    return parts


def _count(value: str | None) -> int:
    """`1.9k` -> 1900: Aider prints counts of a thousand and more rounded, in thousands."""
    if not value:
        return 0
    return round(float(value[:-1]) * 1000) if value.endswith("k") else round(float(value))


def _tokens(match: re.Match[str]) -> Json:
    sent, hit, write = _count(match.group("sent")), _count(match.group("hit")), _count(match.group("write"))
    received = _count(match.group("received"))
    return {
        "input": max(sent - hit - write, 0),
        "output": received,
        "reasoning": 0,
        "cache": {"read": hit, "write": write},
        "total": sent + received,
    }


def _bash_call(call_id: str, command: str) -> Json:
    state: Json = {
        "status": "completed",
        "input": {"command": command},
        "output": texts.aider_command_output(None, None),
    }
    state.update({"title": command, "metadata": {}})
    return {"type": "tool", "callID": call_id, "tool": "bash", "state": state}


# -- the session, block after block ------------------------------------------------------------------
@dataclass
class _Builder:
    session_id: str
    started: int | None
    report: ImportReport
    out: list[Draft] = field(default_factory=list)
    reply: _Reply | None = None
    model: str | None = None
    run: tuple[Json, Draft] | None = None  # the latest command run, which later output lines speak of
    first_ask: str = ""  # the first text the user sent the model
    exchange: bool = False  # a reply of the model's came after an ask of the user's

    def _mid(self, line: Line) -> str:
        return f"{self.session_id}.L{line.number}"

    def _add(self, draft: Draft) -> Draft:
        self.out.append(draft)
        return draft

    def block(self, kind: str, lines: list[Line]) -> None:
        if kind == "user":
            self.close_reply()
            self._user(lines)
        elif kind == "tool":
            self._tool(lines)
        else:
            self.close_reply()
            self._reply(lines)

    def close_reply(self) -> None:
        if self.reply is not None:
            self.reply.draft.parts = self.reply.parts()
            self.reply.draft.calls = any(p["type"] == "tool" for p in self.reply.draft.parts)
            self.reply = None

    # a reply
    def _reply(self, lines: list[Line]) -> None:
        info: Json = {"id": self._mid(lines[0]), "role": "assistant"}
        if self.model is not None:
            provider, _, model = self.model.rpartition("/")
            info.update({"providerID": provider, "modelID": model} if provider else {"modelID": model})
        records = sum(1 for line in lines if line.text.strip())
        # `stop`: Aider applies a reply's edits and runs its commands after the model has finished, and
        # then hands the turn back to the user: its calls never wait for the model to go on.
        draft = self._add(Draft(info, [], line=lines[0].number, records=records, stop="stop"))
        self.reply = _Reply(draft, "\n".join(line.text for line in lines).strip("\n"))
        self.exchange = self.exchange or bool(self.first_ask)

    # what the user typed
    def _user(self, lines: list[Line]) -> None:
        text = "\n".join(line.text for line in lines)
        records = sum(1 for line in lines if line.text.strip())
        mid = self._mid(lines[0])
        command, _, rest = text.partition(" ")
        if text.startswith("!"):
            command, rest = "!", text[1:]
        if text.strip() == "<blank>":
            self.report.skip("empty input", records)
        elif len(lines) == 1 and CONFIRM.search(text):
            self.report.skip(SKIP_ANSWER, records)
        elif command in MODE_COMMANDS and rest.strip():
            draft = Draft({"id": mid, "role": "user", "mode": MODE_COMMANDS[command]}, [], records=records)
            self._add(draft).parts = [{"type": "text", "text": rest}]
            self.first_ask = self.first_ask or rest
        elif command in RUN_COMMANDS and rest.strip():
            self._user_run(mid, text, rest.strip(), records)
        elif command in CLEAR_COMMANDS:
            parts = [
                {"type": "compaction", "auto": False},
                {"type": "text", "text": texts.AIDER_CHAT_CLEARED, "synthetic": True},
            ]
            self._add(Draft({"id": mid, "role": "user"}, parts, records=records))
        elif text.startswith("/"):
            self.report.skip(SKIP_COMMAND, records)
        else:
            self._add(Draft({"id": mid, "role": "user"}, [{"type": "text", "text": text}], records=records))
            self.first_ask = self.first_ask or text

    def _user_run(self, mid: str, typed: str, command: str, records: int) -> None:
        """`/run cmd`: what the user typed, then the run, as the call of an assistant message (Aider
        itself answers a run it adds to the chat with an assistant turn)."""
        self._add(
            Draft(
                {"id": mid, "role": "user"},
                [{"type": "text", "text": typed, "synthetic": True}],
                records=records,
            )
        )
        call = _bash_call(f"{mid}.run0", command)
        run = self._add(Draft({"id": f"{mid}.run", "role": "assistant"}, [call], records=0, stop="stop"))
        self.run = (call, run)
        self.report.adjust("command the user ran stored as a call of an assistant message")

    # Aider's own output
    def _tool(self, lines: list[Line]) -> None:
        capture: list[Line] | None = None  # a lint report being read, or a failed edit's report
        failure = False
        for line in lines:
            text = line.text
            if capture is not None:
                capture.append(line)
                if not failure and FIX_PROMPT.match(text):
                    self._lint(capture, CONFIRM.search(text))
                    capture = None
                continue
            if text == LINT_START or (FAILED.match(text) and self.reply is not None):
                capture, failure = [line], text != LINT_START
                continue
            self._notice(line)
        if capture is not None and failure and self.reply is not None:
            self.reply.failure = "\n".join(line.text for line in capture).strip()
            self.reply.draft.records += len([line for line in capture if line.text.strip()])
        elif capture is not None:
            self.report.skip(SKIP_NOTICE, len([line for line in capture if line.text.strip()]))

    def _lint(self, capture: list[Line], answer: re.Match[str] | None) -> None:
        records = len([line for line in capture if line.text.strip()])
        if answer is None or not answer.group("answer").lower().startswith("y"):
            self.report.skip("lint or test report the user did not send", records)
            return
        report = "\n".join(line.text for line in capture[:-1]).strip()
        part = {"type": "text", "text": report, "synthetic": True}
        self._add(Draft({"id": self._mid(capture[0]), "role": "user"}, [part], records=records))

    def _notice(self, line: Line) -> None:
        """One line of Aider's output: imported into the message it says something about."""
        if not line.text.strip():
            return
        owner = self._about(line.text)
        if owner is None:
            if model := MODEL.match(line.text):
                self.model = model.group("name")
            self.report.skip(SKIP_NOTICE)
        else:
            owner.records += 1

    def _about(self, text: str) -> Draft | None:
        """The message the line adds to (usage, an applied edit, a run), or None for a notice."""
        reply = self.reply
        if (tokens := TOKENS.match(text)) and reply is not None and reply.draft.usage is None:
            reply.draft.usage = _tokens(tokens)
            self.report.adjust("usage read from Aider's rounded Tokens line")
            return reply.draft
        if (applied := APPLIED.match(text)) and reply is not None:
            reply.written.add(applied.group("path"))
            return reply.draft
        if (running := RUNNING.match(text)) and reply is not None:
            call = _bash_call(f"{reply.draft.id}.run{len(reply.runs)}", running.group("command"))
            reply.runs.append(call)
            self.run = (call, reply.draft)
            return reply.draft
        if self.run is not None and (ADD_OUTPUT.match(text) or ADDED.match(text)):
            self._run_output(text)
            return self.run[1]
        return None

    def _run_output(self, text: str) -> None:
        call, _ = self.run  # type: ignore[misc]  # its one caller checks it is set
        added = ADDED.match(text)
        if added is not None:
            call["state"]["output"] = texts.aider_command_output(int(added.group("lines")), True)
            return
        answer = CONFIRM.search(text)
        if answer is not None and not answer.group("answer").lower().startswith("y"):
            call["state"]["output"] = texts.aider_command_output(None, False)
