"""Which of the model's tools the rebuilt text points at (behavior.md#d18).

The reference's texts send the model to MiMo's tools: the preamble to Grep and Read, the elision
marker to the history tool, the memory reminder to `memory`, `read` and `task`, the ledger's cut
note to the task list, the budgeted reads' hints to Read, the actors line to `actor`. A session
that declares `toolPointers` says which tools its model really has: its own (`read`, `grep`, and
tools of MiMo's kinds, called with MiMo's arguments) and, with a prefix, the sidecar's model tools
(`core.model_tools`). Each pointer then names a tool that serves it, the host's own first, or is
left out when none does. Without the declaration every text is the reference's, byte for byte.

`PointerTexts` writes every such text, and says which tools each kind of text names, so that a
rebuild can record what its boundary names and a request can be checked against its tools.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from . import texts
from .words import MODEL_TOOL_NAMES

# The kinds of text that hold a pointer (behavior.md#d18).
TextKind = Literal["preamble", "elision", "ledger", "file-hint", "stop", "actors"]
# What the reference's texts name (MiMo's tools), per kind of text.
REFERENCE_NAMES: dict[TextKind, tuple[str, ...]] = {
    "preamble": ("grep", "read"),
    "elision": ("history",),
    "ledger": ("task",),
    "file-hint": ("read",),
    "stop": (),
    "actors": ("actor",),
}


@dataclass(frozen=True)
class ToolPointers:
    """The session's `toolPointers`: the model's tools by what they do (None: it has none).

    `read` reads a file by its absolute path and `grep` searches files, with the host's own
    arguments (the text names them in prose); `memory`, `task`, `history` and `actor` are tools of
    MiMo's kinds, called with MiMo's arguments. `sidecar_prefix` is set when the model has the
    sidecar's model tools, named with that prefix (`""` for none)."""

    read: str | None = None
    grep: str | None = None
    memory: str | None = None
    task: str | None = None
    history: str | None = None
    actor: str | None = None
    sidecar_prefix: str | None = None

    def sidecar(self, name: str) -> str | None:
        """The sidecar's tool `name` as the model knows it, or None when it does not have them."""
        return None if self.sidecar_prefix is None else self.sidecar_prefix + name


def sidecar_tool_names(prefix: str) -> tuple[str, ...]:
    return tuple(prefix + name for name in MODEL_TOOL_NAMES)


@dataclass(frozen=True)
class _Way:
    """A way to do one thing: its text, and the tool it names."""

    text: str
    tool: str


@dataclass(frozen=True)
class _Reader:
    """What reads a memory file: the host's own reader (named in prose: its arguments are the
    host's), or the sidecar's memory tool (called)."""

    tool: str
    host: bool

    def whole(self, path: str) -> str:
        """How to read `path` whole: the host's reader in prose, or the call."""
        if self.host:
            return texts.host_tool(self.tool)
        return texts.tool_call(self.tool, operation="read", path=path)

    def rest(self, path: str, offset: int) -> str:
        """The sentence that sends the model to the rest of the file, from `offset`."""
        if self.host:
            return texts.read_rest_with_host(self.tool, offset)
        call = texts.tool_call(self.tool, operation="read", path=path, offset=offset)
        return texts.read_rest_with_call(call)


class PointerTexts:
    """Every text that points at a tool, for one session's declaration (None: the reference's)."""

    def __init__(self, pointers: ToolPointers | None) -> None:
        self.pointers = pointers

    @property
    def reference(self) -> bool:
        return self.pointers is None

    @property
    def root_relative(self) -> bool:
        """Whether the texts show memory paths relative to the memory root (behavior.md#d22): when
        the model reads and searches memory only through the sidecar's memory tool, which takes
        such paths and no other. A host's own reader, grep or memory tool takes the absolute path,
        as the reference's texts show it."""
        p = self.pointers
        return (
            p is not None
            and p.read is None
            and p.grep is None
            and p.memory is None
            and p.sidecar("memory") is not None
        )

    def memory_path(self, path: str, relative: Callable[[str], str]) -> str:
        """A memory file's (or directory's) absolute `path` as the texts show it; `relative` is the
        memory root's `relative`."""
        return relative(path) if self.root_relative else path

    # -- ways to do things, the host's own tool first -------------------------------------------
    def _reader(self) -> _Reader | None:
        p = self.pointers
        if p is None:
            return None
        if p.read is not None:
            return _Reader(p.read, True)
        memory = p.sidecar("memory")
        return _Reader(memory, False) if memory is not None else None

    def _search_file(self) -> _Way | None:
        p = self.pointers
        if p is None:
            return None
        if p.grep is not None:
            return _Way(texts.search_file_with_host(p.grep), p.grep)
        memory = p.sidecar("memory")
        if memory is None:
            return None
        call = texts.tool_call(memory, operation="search", path="<that path>", query="<keyword>")
        return _Way(texts.search_file_with_call(call), memory)

    def _mimo_kind(self, kind: Literal["memory", "task", "history"]) -> str | None:
        """The host's tool of one of MiMo's kinds, else the sidecar's of that kind, else None."""
        p = self.pointers
        if p is None:
            return None
        own = {"memory": p.memory, "task": p.task, "history": p.history}[kind]
        return own if own is not None else p.sidecar(kind)

    def _task_progress(self, session_dir: str) -> _Way | None:
        p = self.pointers
        if p is None:
            return None
        if p.read is not None:
            pattern = os.path.join(session_dir, "tasks", "<task ID>", "progress.md")
            return _Way(texts.progress_with_host_reader(p.read, pattern), p.read)
        task = p.sidecar("task")
        if task is not None:
            return _Way(texts.tool_call(task, operation="get", id="<task ID>"), task)
        return None

    def _ledger_call(self) -> _Way | None:
        task = self._mimo_kind("task")
        if task is None:
            return None
        note = texts.pointer_ledger_note(texts.tool_call(task, operation="list"))
        return _Way(note, task) if note != texts.LEDGER_TRUNCATED_BARE else None

    def _search_memory(self, memory_root: str) -> _Way | None:
        memory = self._mimo_kind("memory")
        if memory is not None:
            return _Way(texts.tool_call(memory, operation="search", query="<keyword>"), memory)
        grep = self.pointers.grep if self.pointers is not None else None
        return _Way(texts.search_memory_with_host_grep(grep, memory_root), grep) if grep else None

    def _read_notes(self, session_dir: str) -> _Way | None:
        reader = self._reader()
        path = os.path.join(session_dir, "notes.md")
        if reader is None:
            return None
        text = texts.read_with_host(reader.tool, path) if reader.host else reader.whole(path)
        return _Way(text, reader.tool)

    def _list_tasks(self) -> _Way | None:
        task = self._mimo_kind("task")
        return _Way(texts.tool_call(task, operation="list"), task) if task else None

    def _actor_status(self, has_actor_tool: bool) -> _Way | None:
        p = self.pointers
        actor = p.actor if p is not None and p.actor is not None else ("actor" if has_actor_tool else None)
        return _Way(texts.tool_call(actor, operation="status", id="<actorID>"), actor) if actor else None

    # -- the texts -------------------------------------------------------------------------------
    def preamble(self) -> str:
        if self.pointers is None:
            return texts.PREAMBLE
        search = self._search_file()
        return texts.pointer_preamble(search.text if search else None, self._reader() is not None)

    def elision_marker(self, elided_tokens: int, message_id: str) -> str:
        if self.pointers is None:
            return texts.user_elision_marker(elided_tokens, message_id)
        history = self._mimo_kind("history")
        fetch = texts.tool_call(history, operation="around", messageID=message_id) if history else None
        return texts.pointer_elision_marker(elided_tokens, message_id, fetch)

    def ledger_note(self) -> str:
        if self.pointers is None:
            return texts.LEDGER_TRUNCATED
        way = self._ledger_call()
        return way.text if way is not None else texts.LEDGER_TRUNCATED_BARE

    def proportional_hint(self, budget: int, path: str, total_tokens: int, offset: int) -> str:
        if self.pointers is None:
            return texts.proportional_hint(budget, path, total_tokens, offset)
        reader = self._reader()
        rest = reader.rest(path, offset) if reader else ""
        return texts.pointer_proportional_hint(budget, path, total_tokens, rest)

    def skeleton_warning(self, total_tokens: int, budget: int, path: str) -> str:
        if self.pointers is None:
            return texts.skeleton_warning(total_tokens, budget, path)
        reader = self._reader()
        if reader is None:
            return texts.pointer_skeleton_warning(total_tokens, budget, None)
        read_whole = (
            texts.skeleton_read_with_host(reader.tool, path)
            if reader.host
            else texts.skeleton_read_with_call(reader.whole(path))
        )
        return texts.pointer_skeleton_warning(total_tokens, budget, read_whole)

    def section_aware_hint(self, budget: int, path: str, total_tokens: int) -> str:
        if self.pointers is None:
            return texts.section_aware_hint(budget, path, total_tokens)
        reader = self._reader()
        how = reader.whole(path) if reader else None
        return texts.pointer_section_aware_hint(budget, path, total_tokens, how)

    def stop_reminder(self, session_dir: str) -> str | None:
        """None when no tool can open a task's progress.md."""
        if self.pointers is None:
            return texts.STOP_REMINDER
        way = self._task_progress(session_dir)
        return texts.pointer_stop_reminder(way.text) if way is not None else None

    def actors_count_line(self, n: int) -> str:
        if self.pointers is None:
            return texts.actors_count_line(n)
        return texts.pointer_actors_count_line(n, self.pointers.actor)

    def memory_reminder(
        self, session_dir: str, memory_root: str, *, shell_style: bool, has_actor_tool: bool
    ) -> tuple[str, tuple[str, ...]] | None:
        """The per-turn memory reminder and the tools it names; None when no tool serves any of
        its usages (the reminder would promise a look-up the model cannot make). In the
        reference's wording the usages are MiMo's, in the agent's invocation style."""
        if self.pointers is None:
            reference: tuple[str, ...] = ("memory", "task") if shell_style else ("memory", "read", "task")
            text = texts.memory_reminder(session_dir, shell_style=shell_style, has_actor_tool=has_actor_tool)
            return text, reference + (("actor",) if has_actor_tool else ())
        ways = [
            self._search_memory(memory_root),
            self._read_notes(session_dir),
            self._list_tasks(),
            self._actor_status(has_actor_tool),
        ]
        usages = [w for w in ways if w is not None]
        if not usages:
            return None
        names = tuple(dict.fromkeys(w.tool for w in usages))
        text = texts.pointer_memory_reminder(session_dir, [w.text for w in usages], self.root_relative)
        return text, names

    # -- what each kind of text names ---------------------------------------------------------------
    def names(self, kind: TextKind, session_dir: str = "") -> tuple[str, ...]:
        """The tools a text of `kind` names (as this session's texts write it)."""
        if self.pointers is None:
            return REFERENCE_NAMES[kind]
        if kind == "preamble":
            return _tool_of(self._search_file())
        if kind == "elision":
            return _some(self._mimo_kind("history"))
        if kind == "ledger":
            return _tool_of(self._ledger_call())
        if kind == "file-hint":
            reader = self._reader()
            return (reader.tool,) if reader is not None else ()
        if kind == "stop":
            return _tool_of(self._task_progress(session_dir))
        return _some(self.pointers.actor)


REFERENCE_TEXTS = PointerTexts(None)  # the reference's wording (no `toolPointers`)


def _tool_of(way: _Way | None) -> tuple[str, ...]:
    return (way.tool,) if way is not None else ()


def _some(name: str | None) -> tuple[str, ...]:
    return (name,) if name else ()


def missing_tools(named: Sequence[str], held: set[str]) -> list[str]:
    """The names of `named` that `held` lacks, compared without case (the reference writes its
    tools as verbs, "Grep that path"), each once, in order."""
    lowered = {h.lower() for h in held}
    out: list[str] = []
    for name in named:
        if name.lower() not in lowered and name not in out:
            out.append(name)
    return out
