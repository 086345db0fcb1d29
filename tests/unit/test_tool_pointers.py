"""The rebuilt text names only the tools the model has (behavior.md#d18), and the stop reminder
needs a task (behavior.md#d17).

Without `toolPointers` every text is the reference's, byte for byte; with them each pointer names
a declared tool of the host, else the sidecar's, or is left out; what a boundary names is recorded
on its checkpoint part and checked against the request's tools at insert and build.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from mimo_sidecar.core import engine, texts
from mimo_sidecar.core.config import PushCaps, RebuildConfig
from mimo_sidecar.core.estimate.jstext import len16
from mimo_sidecar.core.formats import FORMATS
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.rebuild.boundary import LastMessageInfo, tools_named_by
from mimo_sidecar.core.rebuild.render import RenderInputs, RenderResult, render
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.session import Session
from mimo_sidecar.core.tool_pointers import REFERENCE_TEXTS, PointerTexts, ToolPointers
from tests.unit.builders import assistant, session_of, text, tool, user

SID = "ses_ptr"
# The reference's preamble, as the specification quotes it (verbatim).
VERBATIM_PREAMBLE = (
    "The sections below are auto-loaded session context already in this message. File-backed "
    "sections list their path on a `File:` line \u2014 Grep that path for specific facts; do not Read "
    "the whole file again."
)
# What the reference's texts call MiMo's tools by; none may appear once toolPointers are declared.
REFERENCE_POINTERS = {  # phrase -> the MiMo tool it names (a declared tool of that name may appear)
    "Grep that path": "Grep",
    "do not Read": "Read",
    "history tool": "history",
    "run the task list tool": "task",
    "Read the rest of the file from character offset": "Read",
    "Read that file for the full content": "Read",
    "memory(operation": "memory",
    "task(operation": "task",
    'read(path="': "read",
    "the `actor` tool": "actor",
}
CAPS = PushCaps(tasks_ledger=120, recent_user_per_msg=60, notes=40, checkpoint=60)
DECLARATIONS = {
    "sidecar": ToolPointers(sidecar_prefix="mimo_"),
    "sidecar unprefixed": ToolPointers(sidecar_prefix=""),
    "host read and grep": ToolPointers(read="Read", grep="Grep"),
    "host of MiMo's kinds": ToolPointers(
        read="View", memory="Recall", task="Todo", history="Past", actor="Crew"
    ),
    "none": ToolPointers(),
}


def memory_root(tmp: Path) -> MemoryRoot:
    sdir = tmp / "sessions" / SID
    (sdir / "tasks" / "T1").mkdir(parents=True)
    sections = "".join(f"## §{n} Part\n_note_\n{'word ' * 60}\n\n" for n in range(12))
    (sdir / "checkpoint.md").write_text("# Session checkpoint\nTopic: t\n\n" + sections)
    (sdir / "notes.md").write_text("".join(f"note line {n} {'z' * 40}\n" for n in range(40)))
    (sdir / "tasks" / "T1" / "progress.md").write_text("# T1\nspec\n")
    return MemoryRoot(str(tmp))


def full_session(pointers: ToolPointers | None, *, tasks: bool = True, last_stop: bool = True) -> Session:
    """A session whose boundary holds every pointer: a long user ask (elided), a ledger over its cap,
    notes and a checkpoint over theirs, a task, an actor, a last step that stopped."""
    messages: list[Message] = [
        user("u1", text("HEAD " + "middle words " * 400 + " TAIL"), created=1000),
        assistant(
            "a1", tool("c1", "read", {"filePath": "x"}, output="o" * 4000), finish="tool-calls", created=1001
        ),
        assistant("a2", text("done"), finish="stop" if last_stop else "tool-calls", created=1002),
    ]
    session = session_of(messages, SID, None)
    session.tool_pointers = pointers
    if tasks:
        session.tasks = [
            {"id": f"T{n}", "status": "open", "summary": f"task number {n} " * 3, "created_at": n}
            for n in range(1, 8)
        ]
    session.actors = [
        {
            "actorID": "act1",
            "sessionID": SID,
            "status": "running",
            "background": True,
            "description": "d",
            "agent": "a",
        }
    ]
    return session


def insert(session: Session, memory: MemoryRoot) -> engine.InsertResult:
    session.watermark = "u1"
    config = RebuildConfig(push_caps=CAPS, inflation_guard=False)
    return engine.insert(
        session, memory, config, watermark="u1", reason="auto", now_ms=10_000, minter=IdMinter()
    )


def boundary_texts(result: engine.InsertResult) -> str:
    """The rebuild text first (it starts with the preamble), then the index and actors block."""
    assert result.message is not None
    parts = [p["text"] for p in result.message["parts"] if p.get("type") == "text"]
    return "\n".join(sorted(parts, key=lambda t: not t.startswith("The sections below")))


# -- the reference's wording ------------------------------------------------------------------------
def test_without_tool_pointers_every_text_is_the_references(tmp_path: Path) -> None:
    ref = REFERENCE_TEXTS
    assert ref.preamble() == texts.PREAMBLE == VERBATIM_PREAMBLE
    assert ref.elision_marker(5, "m") == texts.user_elision_marker(5, "m")
    assert ref.ledger_note() == texts.LEDGER_TRUNCATED
    assert ref.proportional_hint(10, "/p", 99, 7) == texts.proportional_hint(10, "/p", 99, 7)
    assert ref.skeleton_warning(99, 10, "/p") == texts.skeleton_warning(99, 10, "/p")
    assert ref.section_aware_hint(10, "/p", 99) == texts.section_aware_hint(10, "/p", 99)
    assert ref.stop_reminder("/s") == texts.STOP_REMINDER
    assert ref.actors_count_line(2) == texts.actors_count_line(2)
    made = ref.memory_reminder("/s", "/", shell_style=False, has_actor_tool=True)
    assert made == (
        texts.memory_reminder("/s", shell_style=False, has_actor_tool=True),
        ("memory", "read", "task", "actor"),
    )
    result = insert(full_session(None), memory_root(tmp_path))
    body = boundary_texts(result)
    assert body.count(VERBATIM_PREAMBLE) == 1 and texts.STOP_REMINDER in body
    assert "history tool, operation=around, messageID=u1" in body and texts.LEDGER_TRUNCATED in body
    # What the reference's texts name: recorded on the boundary, MiMo's names.
    assert result.message is not None
    assert tools_named_by(Message(result.message["info"], result.message["parts"])) == (
        "grep",
        "read",
        "history",
        "task",
        "actor",
    )


# -- declared tools -----------------------------------------------------------------------------------
@pytest.mark.parametrize("label", list(DECLARATIONS))
def test_with_tool_pointers_the_text_names_only_declared_tools(label: str, tmp_path: Path) -> None:
    pointers = DECLARATIONS[label]
    result = insert(full_session(pointers), memory_root(tmp_path))
    body = boundary_texts(result)
    declared = {
        n
        for n in (
            pointers.read,
            pointers.grep,
            pointers.memory,
            pointers.task,
            pointers.history,
            pointers.actor,
        )
        if n
    }
    if pointers.sidecar_prefix is not None:
        declared |= {pointers.sidecar_prefix + n for n in ("history", "memory", "task")}
    for phrase, tool_name in REFERENCE_POINTERS.items():
        if tool_name not in declared:  # a phrase of the reference, not part of a longer tool name
            assert re.search(r"(?<![\w`])" + re.escape(phrase), body) is None, phrase
    assert result.message is not None
    named = tools_named_by(Message(result.message["info"], result.message["parts"])) or ()
    assert set(named) <= declared
    for name in declared:  # a declared tool appears in the text exactly when it is recorded as named
        written = re.search(rf"(`{re.escape(name)}`|\b{re.escape(name)}\()", body) is not None
        assert written == (name in named), name
    if label == "none":
        assert named == () and "(operation=" not in body and "the `" not in body


def test_sidecar_pointers_name_every_kind_of_text(tmp_path: Path) -> None:
    body = boundary_texts(insert(full_session(ToolPointers(sidecar_prefix="mimo_")), memory_root(tmp_path)))
    assert 'mimo_memory(operation="search", path="<that path>", query="<keyword>")' in body.split("\n", 1)[0]
    assert 'fetch the full text with mimo_history(operation="around", messageID="u1")' in body
    assert '\u2026 ledger truncated; mimo_task(operation="list") lists all' in body
    notes = f"sessions/{SID}/notes.md"  # relative to the memory root, as the memory tool takes it (D22)
    assert re.search(rf'mimo_memory\(operation="read", path="{re.escape(notes)}", offset=\d+\)', body)
    assert f"\nFile: {notes}\n" in body and f"\nFile: sessions/{SID}/checkpoint.md\n" in body
    assert f"Session memory directory (relative to the memory root): sessions/{SID}/" in body
    assert str(tmp_path) not in body  # no absolute path anywhere
    assert 'mimo_task(operation="get", id="<task ID>")' in body  # the stop reminder
    assert "2 background" not in body and "1 background actor(s) registered." in body  # no actor tool


def test_a_ledger_note_never_passes_its_59_units() -> None:
    """`… ledger truncated; T(operation="list") lists all` is 48 units plus the name: it names a
    task tool of up to 11 characters, and falls back to the bare note beyond."""
    for length in (1, 5, 11, 12, 30, 48):
        note = PointerTexts(ToolPointers(task="t" * length)).ledger_note()
        assert len16(note) <= 59
        assert note == (
            texts.LEDGER_TRUNCATED_BARE
            if length > 11
            else f'{texts.LEDGER_TRUNCATED_BARE}; {"t" * length}(operation="list") lists all'
        )
    session = full_session(ToolPointers(task="t" * 30))
    assert PointerTexts(session.tool_pointers).names("ledger") == ()


# -- D17 ------------------------------------------------------------------------------------------------
def render_stop(tmp_path: Path, tasks: list[dict], pointers: ToolPointers | None = None) -> RenderResult:
    mem = MemoryRoot(str(tmp_path))
    return render(
        RenderInputs(
            session_id=SID,
            project_id=None,
            memory=mem,
            caps=PushCaps(),
            tasks=tasks,
            recent_candidates=[user("u", text("please fix it"))],
            last_message_info=LastMessageInfo("assistant", "stop"),
            memory_keys=[],
            pointers=PointerTexts(pointers),
        )
    )


def test_d17_the_stop_reminder_needs_a_task(tmp_path: Path) -> None:
    without = render_stop(tmp_path, [])
    assert without.text.endswith(texts.CLOSING_WITHOUT_ACTIVITY) and "progress.md" not in without.text
    with_task = render_stop(tmp_path, [{"id": "T1", "status": "open", "summary": "s", "created_at": 0}])
    assert with_task.text.endswith(texts.CLOSING_WITHOUT_ACTIVITY + "\n\n" + texts.STOP_REMINDER)


def test_d17_without_a_tool_to_open_progress_the_stop_reminder_is_left_out(tmp_path: Path) -> None:
    task = [{"id": "T1", "status": "open", "summary": "s", "created_at": 0}]
    assert render_stop(tmp_path, task, ToolPointers(grep="Grep")).text.endswith(
        texts.CLOSING_WITHOUT_ACTIVITY
    )
    host = render_stop(tmp_path, task, ToolPointers(read="Read")).text
    assert "with the `Read` tool" in host and os.path.join(str(tmp_path), "sessions", SID, "tasks") in host


# -- the memory reminder ---------------------------------------------------------------------------------
def test_the_memory_reminder_names_declared_tools_or_is_not_added(tmp_path: Path) -> None:
    memory = memory_root(tmp_path)
    session = full_session(ToolPointers())
    built = engine.build(session, memory, RebuildConfig(), now_ms=10_000)
    assert not built.reminder_added
    session.tool_pointers = ToolPointers(grep="Grep", read="Read")
    built = engine.build(session, memory, RebuildConfig(), now_ms=10_000)
    last = next(m for m in built.request.messages if m["role"] == "user")["content"][-1]["text"]
    assert built.reminder_added and "the `Grep` tool on" in last and "the `Read` tool on" in last
    assert "memory(operation" not in last and "task(operation" not in last
    assert built.tools_named == ("Grep", "Read")


# -- the check against the request's tools ---------------------------------------------------------------
def test_insert_and_build_report_a_named_tool_the_request_lacks_in_every_format(tmp_path: Path) -> None:
    memory = memory_root(tmp_path)
    session = full_session(None)
    session.request_prefix = {
        "system": ["s"],
        "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
    }
    result = insert(session, memory)
    missing = [w for w in result.warnings if w.startswith("named-tool-missing: the boundary names")]
    assert missing and "`grep`, `history`, `task`, `actor`" in missing[0]
    for fmt in FORMATS:
        built = engine.build(session, memory, RebuildConfig(), now_ms=10_000, fmt=fmt)
        warned = [w for w in built.request.warnings if w.startswith("named-tool-missing")]
        assert any("the boundary names `grep`" in w for w in warned), fmt
        assert any("the memory reminder names `memory`, `task`" in w for w in warned), fmt
        assert built.tools_held == frozenset({"Read"})


def test_no_warning_when_the_request_holds_what_the_text_names(tmp_path: Path) -> None:
    memory = memory_root(tmp_path)
    session = full_session(ToolPointers(sidecar_prefix="mimo_"))
    session.request_prefix = {"system": ["s"], "tools": []}
    result = insert(session, memory)
    assert not [w for w in result.warnings if "named-tool-missing" in w]
    for fmt in FORMATS:
        built = engine.build(session, memory, RebuildConfig(), now_ms=10_000, fmt=fmt, sidecar_tools="mimo_")
        assert not [w for w in built.request.warnings if "named-tool-missing" in w], fmt
        assert {"mimo_history", "mimo_memory", "mimo_task"} <= (built.tools_held or set())


def test_unknown_tools_are_not_checked(tmp_path: Path) -> None:
    session = full_session(None)  # no requestPrefix: nothing is known of the request's tools
    result = insert(session, memory_root(tmp_path))
    assert not [w for w in result.warnings if "named-tool-missing" in w]
    built = engine.build(session, memory_root(tmp_path / "again"), RebuildConfig(), now_ms=10_000)
    assert built.tools_held is None and built.tools_named


def test_the_prefix_hash_covers_the_sidecar_tools(tmp_path: Path) -> None:
    memory = memory_root(tmp_path)
    session = full_session(None)
    session.request_prefix = {"system": ["s"], "tools": []}
    for fmt in FORMATS:
        plain = engine.build(session, memory, RebuildConfig(), now_ms=1, fmt=fmt).prefix
        with_tools = engine.build(
            session, memory, RebuildConfig(), now_ms=1, fmt=fmt, sidecar_tools="x_"
        ).prefix
        again = engine.build(session, memory, RebuildConfig(), now_ms=2, fmt=fmt, sidecar_tools="x_").prefix
        other = engine.build(session, memory, RebuildConfig(), now_ms=1, fmt=fmt, sidecar_tools="y_").prefix
        assert plain.hash != with_tools.hash == again.hash != other.hash, fmt
        assert [t["name"] for t in with_tools.tools] == ["x_history", "x_memory", "x_task"]
