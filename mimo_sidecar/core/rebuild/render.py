"""Rendering the rebuild text (behavior.md#render): preamble, nine budgeted sections, closing sentence,
reminder.

`render(inputs)` is pure over its inputs plus fresh reads of the memory files (behavior.md#render-inputs). It
never touches a `Session`: the engine hands it the already selected tasks, actors, recent-user candidates and
activity tail, so the function is deterministic for a given disk state.

The text is assembled from a list of *blocks* — one per section, plus the fixed head (preamble) and the fixed
foot (closing sentence and reminder). Each block holds the lines it contributes to `L` (behavior.md#assembly).
The optional total cap (DEVIATION D7, behavior.md#total-cap) removes whole blocks, or Recent-user entries, and
re-joins the remaining lines; nothing is rendered twice.

Every block also yields a `SectionReport`, so the host can see what was emitted, what was cut and
why. `SectionReport.tokens` is `est` of the block's own lines joined with "\\n" (for pushSection
blocks that includes the trailing empty line's newline; for "# Recent activity" it is the digest
text itself, without the separating empty line in front of it).

Errors: a session or project ID that cannot be a path component (`memory_files.UnsafeName`) makes
the affected files unreadable (reported as a warning); every other exception propagates and the
caller treats it as an empty render (behavior.md#insert-steps).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import texts
from ..config import PushCaps
from ..estimate.jsjson import js_number
from ..estimate.jstext import drop_dangling_high, est, is_blank, js_trim, len16, slice16
from ..memory.budgeted_read import BudgetedText, proportional_read, section_aware_read
from ..memory.files import MemoryRoot, UnsafeName
from ..session.message import Json, Message
from ..tool_pointers import REFERENCE_TEXTS, PointerTexts
from ..words import MAIN_AGENT
from .boundary import LastMessageInfo
from .recent_user import RecentUser, recent_user_entries
from .tail_digest import MAX_LINES as ACTIVITY_MAX_LINES
from .tail_digest import build_digest

# behavior.md#section-tasks: the cut keeps cap − 60 units; the note is ≤ 59 units + "\n"
LEDGER_NOTE_RESERVE = 60

# Stable machine names of the nine sections, in output order (behavior.md#section-caps).
KEY_TASKS = "tasks"
KEY_CHECKPOINT = "checkpoint"
KEY_ACTORS = "actors"
KEY_RECENT_USER = "recent_user"
KEY_PROJECT_MEMORY = "project_memory"
KEY_GLOBAL_MEMORY = "global_memory"
KEY_NOTES = "notes"
KEY_MEMORY_KEYS = "memory_keys"
KEY_ACTIVITY = "activity"

# D7 (behavior.md#total-cap): whole sections shed first, in this order; then Recent user entries, oldest
# first.
SHED_ORDER = (KEY_MEMORY_KEYS, KEY_GLOBAL_MEMORY, KEY_NOTES, KEY_PROJECT_MEMORY, KEY_ACTORS)


# =============================================================================================
# Public data
# =============================================================================================
@dataclass(frozen=True)
class RenderInputs:
    """Everything `render` needs besides the files it reads fresh (behavior.md#render-inputs).

    `tasks`: `session.listed_tasks(now, days)` (archived excluded, created_at order, D5). `actors`:
    `session.active_actors()` (this session's active background actors, D1). `recent_candidates`: the newest
    200 main-slice messages, chronological (behavior.md#section-recent-user). `tail`: main-slice messages with
    ord(W) < ord(m) <= ord(D), or None when D or W is not given. `memory_keys`: the host-supplied key order,
    or None to list them from disk (behavior.md#section-memory-keys). `newest_user_ask`: the newest genuine
    user ask of the main slice, kept per D13 (behavior.md#section-recent-user).
    """

    session_id: str
    project_id: str | None
    memory: MemoryRoot
    caps: PushCaps
    tasks: Sequence[Json] = ()
    actors: Sequence[Json] = ()
    recent_candidates: Sequence[Message] = ()
    tail: Sequence[Message] | None = None
    last_message_info: LastMessageInfo | None = None
    agent_id: str | None = None
    memory_keys: Sequence[str] | None = None
    newest_user_ask: Message | None = None
    pointers: PointerTexts = REFERENCE_TEXTS  # how the texts name the model's tools (D18)


@dataclass(frozen=True)
class SectionReport:
    key: str
    heading: str  # e.g. "# Tasks ledger"
    tokens: int  # est of the section's emitted lines joined with "\n"; 0 when absent
    cap: int | None
    unit: str  # "chars" | "tokens" | "lines"
    present: bool
    truncated: bool = False
    shed: bool = False  # some or all of it was removed by the total cap (D7)
    reason: str | None = None  # why absent, truncated or shed
    path: str | None = None  # file-backed sections


@dataclass(frozen=True)
class RenderedContent:
    """What the rebuild text holds, for the fidelity report (after any shedding, D7)."""

    user_entry_ids: tuple[str, ...] = ()  # Recent user input entries, chronological
    truncated_user_ids: frozenset[str] = frozenset()  # entries cut by truncateUser
    user_ask_appended: str | None = None  # D13: why the newest ask was appended
    user_ask_unfit: str | None = None  # D13: why it could not be
    listed_task_ids: frozenset[str] = frozenset()  # tasks the ledger lists (within its cap)
    digest_lines: tuple[str, ...] = ()  # the lines of the "# Recent activity" section


@dataclass(frozen=True)
class RenderResult:
    text: str
    has_activity: bool
    sections: list[SectionReport]
    total_tokens: int
    total_cap: int | None
    over_cap: bool
    warnings: list[str]
    bailed: bool  # the early bail of behavior.md#early-bail fired
    shed_units: list[str] = field(default_factory=list)  # D7, in shedding order
    empty_reason: str | None = None  # why `text` is empty (agent gate, early bail)
    content: RenderedContent = field(default_factory=RenderedContent)
    # The tools the text names (its preamble, markers, hints, notes, reminder), as it writes them (D18).
    tools_named: tuple[str, ...] = ()


# =============================================================================================
# Blocks
# =============================================================================================
@dataclass
class _Block:
    """One section's contribution to `L`, plus what its report needs."""

    key: str
    heading: str
    cap: int | None
    unit: str
    lines: list[str] = field(default_factory=list)  # [] when the section is absent
    truncated: bool = False
    reason: str | None = None
    path: str | None = None
    shed: bool = False
    entries: list[tuple[str, str]] | None = None  # Recent user input only: (message ID, entry)
    listed: frozenset[str] = frozenset()  # Tasks ledger only: the IDs of the tasks it lists
    length16: int = 0  # Σ len16(line): cached for the D7 arithmetic

    def set_lines(self, lines: list[str]) -> None:
        self.lines = lines
        self.length16 = sum(len16(line) for line in lines)

    def report(self) -> SectionReport:
        present = bool(self.lines)
        tokens = est("\n".join(self.lines)) if present else 0
        if self.key == KEY_ACTIVITY and present:
            tokens = est(self.lines[-1])  # the digest text, without the separating empty line
        return SectionReport(
            self.key,
            self.heading,
            tokens,
            self.cap,
            self.unit,
            present,
            self.truncated,
            self.shed,
            self.reason,
            self.path,
        )


def _heading(name: str) -> str:
    return "# " + name


def push_section(heading: str, body: str, file_path: str | None = None) -> list[str]:
    """behavior.md#push-section `pushSection`: heading, optional `File:` line, stripped/trimmed body if
    non-empty, ""."""
    lines = [_heading(heading)]
    if file_path is not None:
        lines.append(texts.FILE_LINE_PREFIX + file_path)
    body_text = strip_h1(body) if file_path is not None else js_trim(body)
    if body_text:
        lines.append(body_text)
    lines.append("")
    return lines


def _is_fence(line: str) -> bool:
    # Kind and length are not matched (four backticks toggle too); an indented fence does not count.
    return line.startswith("```") or line.startswith("~~~")


def _is_h1(line: str) -> bool:
    # `^# [^#]`: any character but "#" after the space, "\r" included; "# " alone is kept.
    return len(line) > 2 and line.startswith("# ") and line[2] != "#"


def strip_h1(text: str) -> str:
    """behavior.md#strip-h1 `stripH1`: drop top-level `# ` headings outside code fences, then JS-trim."""
    kept: list[str] = []
    in_fence = False
    for line in text.split("\n"):
        if _is_fence(line):
            in_fence = not in_fence
            kept.append(line)
        elif in_fence or not _is_h1(line):
            kept.append(line)
    return js_trim("\n".join(kept))


def _js_text(value: Any) -> str:
    """A host field in a template string; absent/null fields render as "" (team choice)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, list):  # Array.prototype.toString: elements joined by ","
        return ",".join(_js_text(v) for v in value)
    return "[object Object]"  # what a template string makes of any other object


# =============================================================================================
# behavior.md#section-tasks Tasks ledger
# =============================================================================================
def task_id_text(task: Json) -> str:
    """A task's ID as the ledger writes it."""
    return _js_text(task.get("id"))


def _task_head(task: Json) -> str:
    return f"- {task_id_text(task)} {_js_text(task.get('status'))}"


def _task_line(task: Json) -> str:
    return _task_head(task) + texts.TASK_SEPARATOR + _js_text(task.get("summary"))


def _child_token(child: Json) -> str:
    status = _js_text(child.get("status"))
    return texts.STATUS_GLYPHS.get(status, status) + task_id_text(child)


def _id_key(value: Any) -> tuple[str, Any] | None:
    """A task ID as a key that matches the way a JavaScript `Map` compares IDs: strings, numbers
    and booleans by value, each type apart; an object or array the host sent as an ID matches
    nothing (it is a new object every time the JSON is parsed)."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        try:
            return ("number", float(value))  # JavaScript numbers are doubles: 1 and 1.0 are one ID
        except OverflowError:
            return ("number", math.copysign(math.inf, value))
    if isinstance(value, str):
        return ("string", value)
    return None


def ledger_layout(tasks: Sequence[Json]) -> tuple[str, list[tuple[str, int]]]:
    """The untruncated ledger, and for each task it lists, its ID and the UTF-16 offset where the
    task's entry has been written out (its ID and status; a child's glyph and ID)."""
    children: dict[tuple[str, Any], list[Json]] = {}
    for task in tasks:
        parent = _id_key(task.get("parent_task_id")) if task.get("parent_task_id") else None
        if parent is not None:
            children.setdefault(parent, []).append(task)
    lines: list[str] = []
    ends: list[tuple[str, int]] = []
    offset = 0
    for task in tasks:
        if task.get("parent_task_id"):
            continue  # children appear under their parent; orphans and grandchildren never
        ends.append((task_id_text(task), offset + len16(_task_head(task))))
        lines.append(_task_line(task))
        offset += len16(lines[-1]) + 1
        key = _id_key(task.get("id"))
        kids = children.get(key) if key is not None else None
        if kids:
            tokens = [_child_token(c) for c in kids]
            end = offset + len16("  " + texts.SUBTASKS_LABEL)
            for child, token in zip(kids, tokens, strict=True):
                end += len16(token)
                ends.append((task_id_text(child), end))
                end += len16(" / ")
            lines.append("  " + texts.SUBTASKS_LABEL + " / ".join(tokens))
            offset += len16(lines[-1]) + 1
    return "\n".join(lines), ends


def ledger_text(tasks: Sequence[Json]) -> str:
    """The untruncated ledger: top-level tasks, each with one line of its direct children."""
    return ledger_layout(tasks)[0]


def truncate_ledger(s: str, cap: int, note: str = texts.LEDGER_TRUNCATED) -> tuple[str, bool]:
    """`s[0 : cap − 60] + "\\n" + note` when over the cap (a negative end counts from the end,
    behavior.md#js-negative-slice); a high surrogate left dangling by the cut is dropped (D9)."""
    if len16(s) <= cap:
        return s, False
    return drop_dangling_high(slice16(s, 0, cap - LEDGER_NOTE_RESERVE)) + "\n" + note, True


def _tasks_block(tasks: Sequence[Json], cap: int, note: str) -> _Block:
    block = _Block(KEY_TASKS, _heading(texts.HEADING_TASKS), cap, "chars")
    if not tasks:
        block.reason = "no tasks"
        block.set_lines(push_section(texts.HEADING_TASKS, texts.NO_TASKS))
        return block
    full, ends = ledger_layout(tasks)
    body, block.truncated = truncate_ledger(full, cap, note)
    kept16 = len16(body)
    if block.truncated:
        block.reason = f"over cap: ledger cut from {len16(full)} to {kept16} chars"
        kept16 -= len16("\n" + note)
    block.listed = frozenset(tid for tid, end in ends if end <= kept16)
    block.set_lines(push_section(texts.HEADING_TASKS, body))
    return block


# =============================================================================================
# File-backed sections (behavior.md#section-checkpoint, behavior.md#file-backed-sections)
# =============================================================================================
@dataclass(frozen=True)
class _FileInput:
    path: str | None
    read: BudgetedText | None  # None: nothing usable (missing, unreadable, no project)
    reason: str | None = None  # why `read` is None
    shown: str | None = None  # the path as the model's texts show it (`PointerTexts.memory_path`)


Reader = Callable[[str, int, str, PointerTexts], BudgetedText]


def _read_file(
    memory: MemoryRoot,
    label: str,
    path_of: Callable[[], str],
    budget: int,
    reader: Reader,
    warnings: list[str],
    hints: PointerTexts,
) -> _FileInput:
    try:
        path = path_of()
    except UnsafeName as exc:
        warnings.append(f"{label}: {exc}")
        return _FileInput(None, None, "unsafe name")
    outcome = memory.read_text(path)
    if outcome.problem is not None and outcome.problem != "missing":
        warnings.append(f"{label}: {path}: {outcome.problem}")
    if outcome.text is None:
        reason = "file missing" if outcome.problem == "missing" else f"unreadable ({outcome.problem})"
        return _FileInput(path, None, reason)
    shown = hints.memory_path(path, memory.relative)
    return _FileInput(path, reader(outcome.text, budget, shown, hints), shown=shown)


def _project_memory_input(inputs: RenderInputs, warnings: list[str]) -> _FileInput:
    pid = inputs.project_id
    if pid is None:
        return _FileInput(None, None, "no project")
    memory = inputs.memory
    try:
        # behavior.md#memory-layout: rename memory.md first (idempotent)
        memory.migrate_legacy_project_memory(pid)
    except UnsafeName as exc:
        warnings.append(f"project memory: {exc}")
        return _FileInput(None, None, "unsafe name")
    return _read_file(
        memory,
        "project memory",
        lambda: memory.project_memory_path(pid),
        inputs.caps.memory,
        section_aware_read,
        warnings,
        inputs.pointers,
    )


@dataclass(frozen=True)
class _Files:
    checkpoint: _FileInput
    project: _FileInput
    global_: _FileInput
    notes: _FileInput


def _read_files(inputs: RenderInputs, warnings: list[str]) -> _Files:
    memory, sid, caps, hints = inputs.memory, inputs.session_id, inputs.caps, inputs.pointers
    checkpoint = _read_file(
        memory,
        "checkpoint",
        lambda: memory.checkpoint_path(sid),
        caps.checkpoint,
        section_aware_read,
        warnings,
        hints,
    )
    project = _project_memory_input(inputs, warnings)
    global_ = _read_file(
        memory, "global memory", memory.global_memory_path, caps.global_, section_aware_read, warnings, hints
    )
    notes = _read_file(
        memory, "notes", lambda: memory.notes_path(sid), caps.notes, proportional_read, warnings, hints
    )
    return _Files(checkpoint, project, global_, notes)


def _file_text(f: _FileInput) -> str:
    return f.read.text if f.read is not None else ""


def _truncation_reason(f: _FileInput, budget: int, hints: PointerTexts) -> str:
    assert f.read is not None and f.shown is not None
    skeleton = hints.skeleton_warning(f.read.total_tokens, budget, f.shown)
    if f.read.text.endswith(skeleton):
        return f"skeleton only: the file holds {f.read.total_tokens} tokens"
    return f"over cap: the file holds {f.read.total_tokens} tokens"


def _file_block(key: str, heading: str, f: _FileInput, cap: int, hints: PointerTexts) -> _Block:
    block = _Block(key, _heading(heading), cap, "tokens", path=f.path)
    if f.read is None:
        block.reason = f.reason
        return block
    if is_blank(f.read.text):
        block.reason = "empty"
        return block
    block.set_lines(push_section(heading, f.read.text, f.shown))
    if f.read.truncated:
        block.truncated = True
        block.reason = _truncation_reason(f, cap, hints)
    return block


# =============================================================================================
# behavior.md#section-actors Active actors (D1: this session's actors only)
# =============================================================================================
def actor_line(actor: Json) -> str:
    return texts.actor_ledger_line(
        _js_text(actor.get("actorID")),
        _js_text(actor.get("status")),
        _js_text(actor.get("description")),
        _js_text(actor.get("agent")),
    )


def greedy_lines(items: Sequence[str], budget: int, cost: Callable[[str], int] = est) -> list[str]:
    """Keep items in order while `budget − cost >= 0`; stop at the first that does not fit."""
    kept: list[str] = []
    for item in items:
        c = cost(item)
        if budget - c < 0:
            break
        kept.append(item)
        budget -= c
    return kept


def _actors_block(actors: Sequence[Json], cap: int) -> _Block:
    block = _Block(KEY_ACTORS, _heading(texts.HEADING_ACTORS), cap, "tokens")
    if not actors:
        block.reason = "no active actors"
        return block
    lines = greedy_lines([actor_line(a) for a in actors], cap)  # cost over the whole line, "- " included
    block.set_lines(push_section(texts.HEADING_ACTORS, "\n".join(lines)))
    if len(lines) < len(actors):
        block.truncated = True
        block.reason = f"over cap: {len(lines)} of {len(actors)} actors kept"
    return block


# =============================================================================================
# behavior.md#section-recent-user Recent user input (verbatim)
# =============================================================================================
def _recent_user_lines(entries: list[tuple[str, str]]) -> list[str]:
    if not entries:
        return []
    return push_section(texts.HEADING_RECENT_USER, "\n".join(e for _, e in entries))


def _recent_user_reason(recent: RecentUser, kept: int) -> tuple[bool, str | None]:
    reasons = []
    if kept < recent.eligible:
        reasons.append(f"over cap: {kept} of {recent.eligible} messages kept")
    if recent.cut_entries:
        reasons.append(f"{recent.cut_entries} message(s) head/tail-truncated")
    cut = bool(reasons)
    if recent.appended is not None:
        reasons.append(texts.user_ask_appended(recent.appended))
    return cut, "; ".join(reasons) or None


def _recent_user_block(recent: RecentUser, cap: int) -> _Block:
    block = _Block(KEY_RECENT_USER, _heading(texts.HEADING_RECENT_USER), cap, "tokens")
    block.entries = list(recent.entries)
    if recent.disabled:
        block.reason = "disabled (recent_user = 0)"
        return block
    if not recent.entries:
        block.reason = "empty" if recent.eligible == 0 else f"over cap: 0 of {recent.eligible} messages kept"
        block.truncated = recent.eligible > 0
        return block
    block.set_lines(_recent_user_lines(block.entries))
    block.truncated, block.reason = _recent_user_reason(recent, len(recent.entries))
    return block


# =============================================================================================
# behavior.md#section-memory-keys Memory keys index (not built with pushSection)
# =============================================================================================
def _list_memory_keys(inputs: RenderInputs, warnings: list[str]) -> list[str]:
    if inputs.memory_keys is not None:
        return list(inputs.memory_keys)  # the host's order (behavior.md#section-memory-keys)
    try:
        return inputs.memory.memory_keys(inputs.session_id, inputs.project_id)
    except UnsafeName as exc:
        warnings.append(f"memory keys: {exc}")
        return []


def _memory_keys_block(keys: list[str], cap: int) -> _Block:
    block = _Block(KEY_MEMORY_KEYS, _heading(texts.HEADING_MEMORY_KEYS), cap, "tokens")
    if not keys:
        block.reason = "no memory files"
        return block
    kept = greedy_lines(keys, cap)  # cost without the "- " prefix
    block.set_lines([_heading(texts.HEADING_MEMORY_KEYS), *("- " + k for k in kept), ""])
    if len(kept) < len(keys):
        block.truncated = True
        block.reason = f"over cap: {len(kept)} of {len(keys)} keys kept"
    return block


# =============================================================================================
# behavior.md#section-activity Recent activity
# =============================================================================================
def _activity_block(tail: Sequence[Message] | None) -> _Block:
    block = _Block(KEY_ACTIVITY, _heading(texts.HEADING_ACTIVITY), ACTIVITY_MAX_LINES, "lines")
    if tail is None:
        block.reason = "no D/W given"
        return block
    d = build_digest(tail)
    if not d.text:
        block.reason = "empty tail" if not tail else "nothing to digest"
        return block
    block.set_lines(["", d.text])  # so two empty lines come before the heading
    if d.dropped_lines:
        block.truncated = True
        block.reason = f"over cap: {d.kept_lines} of {d.kept_lines + d.dropped_lines} lines kept"
    return block


# =============================================================================================
# behavior.md#reminders Closing sentence and reminder
# =============================================================================================
def reminder_for(
    info: LastMessageInfo | None,
    *,
    has_task: bool = True,
    pointers: PointerTexts = REFERENCE_TEXTS,
    session_dir: str = "",
) -> str | None:
    """None for no info or `{user}`; otherwise the reminder matching the last message's shape.
    D17: the stop reminder, which sends the model to a task's progress.md, only when the session
    holds a task (and, with D18's pointers, when a tool can open that file)."""
    if info is None or info.kind == "user":
        return None
    if info.kind == "tool":
        return texts.TOOL_REMINDER if info.step_live else texts.TOOL_REMINDER_DIGESTED
    if info.finish == "tool-calls":
        return texts.AUTONOMOUS_LOOP_REMINDER
    return pointers.stop_reminder(session_dir) if has_task else None


def _foot_lines(has_activity: bool, reminder: str | None) -> list[str]:
    closing = texts.CLOSING_WITH_ACTIVITY if has_activity else texts.CLOSING_WITHOUT_ACTIVITY
    lines = ["", closing]
    if reminder is not None:
        lines += ["", reminder]
    return lines


# =============================================================================================
# Assembly and the total cap (D7)
# =============================================================================================
@dataclass
class _Layout:
    head: list[str]
    blocks: list[_Block]
    foot: list[str]
    fixed16: int = 0  # Σ len16 of head and foot lines

    def __post_init__(self) -> None:
        self.fixed16 = sum(len16(line) for line in self.head + self.foot)

    def block(self, key: str) -> _Block:
        return next(b for b in self.blocks if b.key == key)

    def tokens(self) -> int:
        """est of the joined text, from cached lengths: Σ len16 + one "\\n" between lines."""
        n_lines = len(self.head) + len(self.foot) + sum(len(b.lines) for b in self.blocks)
        n16 = self.fixed16 + sum(b.length16 for b in self.blocks) + max(0, n_lines - 1)
        return (n16 + 2) // 4 if n16 > 0 else 0

    def text(self) -> str:
        return "\n".join([*self.head, *(line for b in self.blocks for line in b.lines), *self.foot])


def _shed_section(layout: _Layout, key: str) -> str | None:
    block = layout.block(key)
    if not block.lines:
        return None
    block.set_lines([])
    block.shed, block.truncated = True, False
    block.reason = "shed by total cap"
    return key


def _shed_oldest_entry(layout: _Layout, keep: str | None) -> str | None:
    block = layout.block(KEY_RECENT_USER)
    if not block.entries or not block.lines or block.entries[0][0] == keep:
        return None  # D13: the newest user ask is never shed
    mid, _ = block.entries.pop(0)
    block.set_lines(_recent_user_lines(block.entries))
    block.shed = True
    return f"{KEY_RECENT_USER}:{mid}"


def _apply_total_cap(layout: _Layout, total: int, keep: str | None) -> list[str]:
    """D7: remove units in the fixed order, re-joining after each, until est ≤ total. The entry
    of message `keep` (the newest user ask, D13) is never removed."""
    shed: list[str] = []
    for key in SHED_ORDER:
        if layout.tokens() <= total:
            return shed
        unit = _shed_section(layout, key)
        if unit is not None:
            shed.append(unit)
    recent = layout.block(KEY_RECENT_USER)
    entries_before = len(recent.entries or [])
    while layout.tokens() > total:
        unit = _shed_oldest_entry(layout, keep)
        if unit is None:
            break
        shed.append(unit)
    if recent.shed:
        _report_shed_entries(recent, entries_before)
    return shed


def _report_shed_entries(block: _Block, entries_before: int) -> None:
    kept = len(block.entries or [])
    if kept == 0:
        block.truncated, block.reason = False, "shed by total cap"
    else:
        block.truncated = True
        block.reason = f"shed by total cap: {kept} of {entries_before} entries kept"


# =============================================================================================
# render
# =============================================================================================
def _is_main(agent_id: str | None) -> bool:
    return agent_id is None or agent_id == MAIN_AGENT


def _nothing_to_render(inputs: RenderInputs, files: _Files, recent: RecentUser) -> bool:
    """behavior.md#early-bail early bail, on unshed inputs: notes, memory keys and activity do not count."""
    return (
        not inputs.tasks
        and is_blank(_file_text(files.checkpoint))
        and is_blank(_file_text(files.project))
        and is_blank(_file_text(files.global_))
        and not inputs.actors
        and not recent.entries
    )


def _sections(inputs: RenderInputs, files: _Files, recent: RecentUser, warnings: list[str]) -> list[_Block]:
    caps, hints = inputs.caps, inputs.pointers
    return [
        _tasks_block(inputs.tasks, caps.tasks_ledger, hints.ledger_note()),
        _file_block(KEY_CHECKPOINT, texts.HEADING_CHECKPOINT, files.checkpoint, caps.checkpoint, hints),
        _actors_block(inputs.actors, caps.actor_ledger),
        _recent_user_block(recent, caps.recent_user),
        _file_block(KEY_PROJECT_MEMORY, texts.HEADING_PROJECT_MEMORY, files.project, caps.memory, hints),
        _file_block(KEY_GLOBAL_MEMORY, texts.HEADING_GLOBAL_MEMORY, files.global_, caps.global_, hints),
        _file_block(KEY_NOTES, texts.HEADING_NOTES, files.notes, caps.notes, hints),
        _memory_keys_block(_list_memory_keys(inputs, warnings), caps.memory_titles),
        _activity_block(inputs.tail),
    ]


def _bailed_reports(blocks: list[_Block]) -> list[SectionReport]:
    return [
        replace(
            b.report(),
            present=False,
            tokens=0,
            truncated=False,
            reason="early bail" + (f" ({b.reason})" if b.reason else ""),
        )
        for b in blocks
    ]


def _empty(
    reason: str,
    *,
    bailed: bool,
    caps: PushCaps,
    warnings: list[str] | None = None,
    sections: list[SectionReport] | None = None,
) -> RenderResult:
    return RenderResult(
        "", False, sections or [], 0, caps.total, False, warnings or [], bailed, empty_reason=reason
    )


def render(inputs: RenderInputs) -> RenderResult:
    """behavior.md#render: the rebuild text and its report. Empty text for a non-main agent or the early bail.
    """
    if not _is_main(inputs.agent_id):
        return _empty(
            f"agent gate: {inputs.agent_id!r} is not the main agent", bailed=False, caps=inputs.caps
        )
    warnings: list[str] = []
    files = _read_files(inputs, warnings)
    hints = inputs.pointers
    recent = recent_user_entries(
        inputs.recent_candidates, inputs.caps, inputs.newest_user_ask, hints.elision_marker
    )
    blocks = _sections(inputs, files, recent, warnings)
    if _nothing_to_render(inputs, files, recent):
        return _empty(
            "early bail: no tasks, checkpoint, project or global memory, actors or user input",
            bailed=True,
            caps=inputs.caps,
            warnings=warnings,
            sections=_bailed_reports(blocks),
        )
    has_activity = bool(blocks[-1].lines)
    session_dir = _session_dir(inputs)
    reminder = reminder_for(
        inputs.last_message_info, has_task=bool(inputs.tasks), pointers=hints, session_dir=session_dir
    )
    layout = _Layout([hints.preamble(), ""], blocks, _foot_lines(has_activity, reminder))
    total = inputs.caps.total
    ask = inputs.newest_user_ask.id if inputs.newest_user_ask is not None else None
    shed = _apply_total_cap(layout, total, ask) if total is not None else []
    text = layout.text()
    tokens = est(text)
    return RenderResult(
        text=text,
        has_activity=has_activity,
        sections=[b.report() for b in blocks],
        total_tokens=tokens,
        total_cap=total,
        over_cap=total is not None and tokens > total,
        warnings=warnings,
        bailed=False,
        shed_units=shed,
        content=_content(layout, recent),
        tools_named=_tools_named(layout, recent, hints, reminder, session_dir),
    )


def _session_dir(inputs: RenderInputs) -> str:
    """The session memory directory as the texts show it (relative to the root, D22, or absolute)."""
    try:
        memory = inputs.memory
        return inputs.pointers.memory_path(memory.session_dir(inputs.session_id), memory.relative)
    except UnsafeName:
        return ""


FILE_KEYS = (KEY_CHECKPOINT, KEY_PROJECT_MEMORY, KEY_GLOBAL_MEMORY, KEY_NOTES)


def _tools_named(
    layout: _Layout, recent: RecentUser, hints: PointerTexts, reminder: str | None, session_dir: str
) -> tuple[str, ...]:
    """The tools the rendered text names, from what it holds after any shedding: the preamble, the
    elision marker of a kept entry, the ledger's cut note, a cut file's hint, the stop reminder."""
    names = list(hints.names("preamble"))
    recent_block = layout.block(KEY_RECENT_USER)
    if recent_block.lines and any(mid in recent.truncated_ids for mid, _ in recent_block.entries or []):
        names += hints.names("elision")
    if layout.block(KEY_TASKS).truncated:
        names += hints.names("ledger")
    if any(layout.block(k).lines and layout.block(k).truncated for k in FILE_KEYS):
        names += hints.names("file-hint")
    if reminder is not None and reminder not in (texts.TOOL_REMINDER, texts.AUTONOMOUS_LOOP_REMINDER):
        names += hints.names("stop", session_dir)
    return tuple(dict.fromkeys(names))


def _content(layout: _Layout, recent: RecentUser) -> RenderedContent:
    entries = layout.block(KEY_RECENT_USER).entries or []
    activity = layout.block(KEY_ACTIVITY).lines
    return RenderedContent(
        user_entry_ids=tuple(mid for mid, _ in entries),
        truncated_user_ids=recent.truncated_ids,
        user_ask_appended=recent.appended,
        user_ask_unfit=recent.unfit,
        listed_task_ids=layout.block(KEY_TASKS).listed,
        digest_lines=tuple(activity[-1].split("\n")) if activity else (),
    )
