"""Over shared/real-sessions (read in place, skipped when absent): after a rebuild, every pointer
of the boundary's text resolves through the sidecar's model tools, or is named in `warnings`
(behavior.md#d18).

Each imported session is opened with the prefix its host declares (`host_loop.host_prefix`) and a
memory root holding a checkpoint, notes over their cap and a task's progress; then rebuilt twice
over: once declaring the sidecar's tools (`toolPointers.sidecarTools`), where every call the text
writes is made with `call_tool` and answers without error (an elision marker's call returns the
whole user message), and once with the reference's wording, where every tool the boundary names
is in the request's tools or in the insert's `named-tool-missing` warning.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.formats.prefix import declared_tool_names
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.model_tools import ToolContext, call_tool
from mimo_sidecar.core.rebuild.boundary import tools_named_by
from mimo_sidecar.core.rebuild.recent_user import raw_user_text
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.session import Session
from mimo_sidecar.core.tool_pointers import ToolPointers, missing_tools
from tests.real_sessions import imported, real_session_files
from tests.unit.host_loop import host_prefix, rebuild_as_host
from tests.unit.importers.transcripts import open_in_core
from tests.unit.pointer_calls import resolved_calls
from tests.unit.test_real_session_requests import CHECKPOINT, NOW

PREFIX = "mimo_"
NOTES = "".join(f"- note {n}: the build uses make; keep the parser pure\n" for n in range(600))
TASKS = [{"id": "T1", "status": "in_progress", "summary": "Carry on the imported work", "created_at": 1}]
ELIDED = re.compile(r"elided from message (\S+); fetch the full text with")


def prepared(path: Path, tmp: Path, pointers: ToolPointers | None) -> tuple[Session, MemoryRoot]:
    params = imported(path).params  # a fresh copy: the rebuild marks the session's parts
    params["requestPrefix"] = host_prefix(params)
    session = open_in_core(params)
    session.tasks = list(TASKS)
    session.tool_pointers = pointers
    sdir = tmp / "sessions" / session.session_id
    (sdir / "tasks" / "T1").mkdir(parents=True)
    (sdir / "checkpoint.md").write_text(CHECKPOINT)
    (sdir / "notes.md").write_text(NOTES)
    (sdir / "tasks" / "T1" / "progress.md").write_text("# T1\nSpecification: carry on.\n")
    return session, MemoryRoot(str(tmp))


def rebuilt(session: Session, memory: MemoryRoot) -> tuple[engine.InsertResult, str]:
    result = rebuild_as_host(session, memory, NOW)
    assert result.outcome == "rebuilt", result.detail
    assert result.message is not None
    return result, "\n".join(p["text"] for p in result.message["parts"] if p.get("type") == "text")


@pytest.mark.parametrize("path", real_session_files())
def test_every_pointer_of_a_real_boundary_resolves_or_is_reported(path: Path, tmp_path: Path) -> None:
    session, memory = prepared(path, tmp_path / "sidecar", ToolPointers(sidecar_prefix=PREFIX))
    result, body = rebuilt(session, memory)
    calls = resolved_calls(body, PREFIX, keyword="build", task_id="T1")
    reads = [a for n, a in calls if n == PREFIX + "memory" and a["operation"] == "read"]
    assert reads and all("offset" in a for a in reads)  # the notes' hint: read on from the cut
    ctx = ToolContext(session, memory, now_ms=NOW, archive_days=7, prefix=PREFIX)
    for name, arguments in calls:
        answer = call_tool(ctx, name, arguments)
        assert not answer.is_error, (name, arguments, answer.text)
    for message_id in ELIDED.findall(body):  # the elided middle comes back whole
        answer = call_tool(
            ctx, PREFIX + "history", {"operation": "around", "messageID": message_id, "after": 0}
        )
        asked = session.get(message_id)
        assert asked is not None and not answer.is_error
        assert answer.structured["nextOffset"] is not None or raw_user_text(asked) in answer.text

    reference, memory = prepared(path, tmp_path / "reference", None)
    result, body = rebuilt(reference, memory)
    assert result.message is not None
    named = tools_named_by(Message(result.message["info"], result.message["parts"])) or ()
    assert "grep" in named and "read" in named  # the reference's preamble
    held = declared_tool_names((reference.request_prefix or {}).get("tools") or [])
    unheld = missing_tools(named, held)
    warned = " ".join(w for w in result.warnings if w.startswith("named-tool-missing"))
    assert all(f"`{name}`" in warned for name in unheld) and (warned == "") == (not unheld)
