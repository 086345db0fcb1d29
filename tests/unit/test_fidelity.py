"""The fidelity report (behavior.md#d13): open tasks, the newest tool error, cut and shed sections,
and the report in `engine.insert` and `engine.compute` results. The newest user ask (and D13) is
covered in test_recent_user_window.py."""

from __future__ import annotations

import pytest

from mimo_sidecar.core import engine, texts
from mimo_sidecar.core.config import PushCaps, RebuildConfig
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.rebuild.fidelity import (
    UnlistedTask,
    fidelity_report,
    newest_tool_error,
    tasks_fidelity,
    tool_error_fidelity,
)
from mimo_sidecar.core.rebuild.render import RenderInputs, render
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.session import Session
from tests.unit.builders import (
    assistant,
    checkpoint_memory,
    reasoning,
    session_of,
    text,
    tool,
    tool_result,
    tool_use,
    usage,
    user,
)

T0 = 1_700_000_000_000
SID = "ses_fid"


def _task(tid: str, status: str = "open", parent: str | None = None, summary: str = "s") -> dict:
    t = {"id": tid, "status": status, "summary": summary, "created_at": 0}
    if parent:
        t["parent_task_id"] = parent
    return t


def _render(tmp_path, **kw) -> tuple[RenderInputs, object]:
    kw.setdefault("caps", PushCaps())
    inputs = RenderInputs(
        session_id=SID, project_id=None, memory=MemoryRoot(str(tmp_path)), memory_keys=[], **kw
    )
    return inputs, render(inputs)


# -- open tasks ------------------------------------------------------------------------------------
def test_open_tasks_listed_and_why_the_others_are_not(tmp_path) -> None:
    tasks = [
        _task("T1"),
        _task("T1.1", "in_progress", parent="T1"),
        _task("T1.1.1", parent="T1.1"),  # a grandchild: never rendered
        _task("T2", "done"),  # ended: not open, not counted
        _task("T3.1", "blocked", parent="T3"),  # an orphan: its parent is archived
        _task("T4", summary="x" * 3000),  # its line is cut by the 2000-char cap ...
        _task("T5"),  # ... and everything after it
    ]
    _, result = _render(tmp_path, tasks=tasks)
    report = tasks_fidelity(tasks, result)
    assert report.open_held == 6 and report.open_listed == 3  # T1, T1.1, T4 (its ID and status fit)
    assert report.unlisted == (
        UnlistedTask("T1.1.1", texts.TASK_NESTED),
        UnlistedTask("T3.1", texts.TASK_PARENT_UNLISTED),
        UnlistedTask("T5", texts.TASK_CUT_BY_CAP),
    )


def test_a_child_cut_off_the_subtask_line_is_unlisted(tmp_path) -> None:
    kids = [_task(f"T1.{i}", parent="T1") for i in range(1, 400)]
    tasks = [_task("T1"), *kids]
    _, result = _render(tmp_path, tasks=tasks, caps=PushCaps(tasks_ledger=200))
    report = tasks_fidelity(tasks, result)
    ledger = result.text.split("# Tasks ledger\n", 1)[1]
    listed = [t["id"] for t in kids if "\U0001f535" + t["id"] + " /" in ledger]
    assert report.open_listed == 1 + len(listed) and 0 < len(listed) < 399
    assert {u.reason for u in report.unlisted} == {texts.TASK_CUT_BY_CAP}


# -- the newest tool error after W -----------------------------------------------------------------
def _loop() -> list[Message]:
    return [
        assistant(
            "a1",
            tool("c1", "bash", {"command": "make"}, "error", error="make: *** [all] Error 2"),
            created=T0,
        ),
        assistant("a2", tool("c2", "read", {"path": "x"}, output="ok"), created=T0 + 1),
        assistant(
            "a3", tool("c3", "bash", {"command": "make test"}, "error", error="1 failing"), created=T0 + 2
        ),
        assistant("a4", text("fixing"), created=T0 + 3),
    ]


def test_newest_tool_error_in_the_digest(tmp_path) -> None:
    after = _loop()
    _, result = _render(tmp_path, tail=after, tasks=[_task("T1")])
    found = tool_error_fidelity(after, result, after)
    assert found is not None and (found.message_id, found.call_id, found.tool) == ("a3", "c3", "bash")
    assert found.in_digest and found.reason is None
    assert '- bash(command="make test") \u2192 error: 1 failing' in result.text


def test_newest_tool_error_after_digest_up_to_stays_live(tmp_path) -> None:
    after = _loop()
    _, result = _render(tmp_path, tail=after[:2], tasks=[_task("T1")])  # D = a2
    found = tool_error_fidelity(after[:2], result, after)
    assert found is not None and not found.in_digest and found.reason == texts.ERROR_AFTER_DIGEST


def test_newest_tool_error_cut_by_the_line_cap(tmp_path) -> None:
    chatter = [assistant(f"t{i:03}", text(f"step {i}"), created=T0 + 10 + i) for i in range(200)]
    after = [*chatter, assistant("err", tool("c9", "bash", {}, "error", error="boom"), created=T0 + 500)]
    _, result = _render(tmp_path, tail=after, tasks=[_task("T1")])
    found = tool_error_fidelity(after, result, after)
    assert found is not None and not found.in_digest and found.reason == texts.ERROR_LINE_CAP


def test_split_error_whose_result_came_after_d(tmp_path) -> None:
    """The digest shows the call as interrupted (its result is after D): not the error line."""
    issuer = assistant("a1", tool_use("t1", "bash", {"command": "make"}), finish="tool-calls", created=T0)
    carrier = user("r1", tool_result("t1", "exit 2", is_error=True), created=T0 + 1)
    _, result = _render(tmp_path, tail=[issuer], tasks=[_task("T1")])
    found = tool_error_fidelity([issuer], result, [issuer, carrier])
    assert found is not None and found.call_id == "t1" and found.reason == texts.ERROR_AFTER_DIGEST


def test_no_tool_error_or_no_activity(tmp_path) -> None:
    clean = [assistant("a1", tool("c1", "read", {}, output="ok"), created=T0)]
    assert newest_tool_error(clean) is None
    _, result = _render(tmp_path, tail=clean)
    assert tool_error_fidelity(clean, result, clean) is None
    assert tool_error_fidelity(None, result, None) is None
    after = _loop()
    _, bare = _render(tmp_path, tasks=[_task("T1")])  # no D/W: no activity list
    found = tool_error_fidelity(None, bare, after)
    assert found is not None and found.reason == texts.ERROR_NO_ACTIVITY


# -- sections --------------------------------------------------------------------------------------
def test_cut_and_shed_sections(tmp_path) -> None:
    tasks = [_task(f"T{i}", summary="y" * 100) for i in range(40)]
    users = [user(f"u{i}", text(f"ask {i} " * 40), created=T0 + i) for i in range(5)]
    inputs, result = _render(tmp_path, tasks=tasks, recent_candidates=users, caps=PushCaps(total=900))
    report = fidelity_report(inputs, result, None)
    assert report.cut_sections == ("tasks",)
    assert report.shed_sections == ("recent_user",) and result.shed_units


# -- in engine results -----------------------------------------------------------------------------
@pytest.fixture
def memory(tmp_path) -> MemoryRoot:
    return checkpoint_memory(tmp_path, SID)


def _session() -> Session:
    msgs = [
        user("m01", text("fix the lexer"), created=T0),
        assistant("m02", reasoning("thinking hard " * 2000), text("looking"), created=T0 + 10),
        user("m03", text("and keep the API"), created=T0 + 20),
        assistant(
            "m04",
            tool("c1", "bash", {"command": "npm test"}, "error", error="3 failing"),
            finish="tool-calls",
            created=T0 + 30,
            tokens=usage(185_000),
        ),
    ]
    s = session_of(msgs, SID)
    s.tasks = [_task("T1", "in_progress")]
    s.watermark = "m02"
    return s


def test_insert_and_compute_carry_the_same_report(memory: MemoryRoot) -> None:
    s = _session()
    preview = engine.compute(s, memory, RebuildConfig(), now_ms=T0 + 100)
    res = engine.insert(
        s, memory, RebuildConfig(), watermark="m02", reason="auto", now_ms=T0 + 100, minter=IdMinter()
    )
    assert res.outcome == "rebuilt" and preview.preview_outcome == "rebuilt"
    assert res.fidelity == preview.fidelity
    report = res.fidelity
    assert report is not None
    assert (report.newest_user_ask.status, report.newest_user_ask.message_id) == ("verbatim", "m03")
    assert (report.tasks.open_held, report.tasks.open_listed) == (1, 1)
    # D19: the failed call is the newest step, which stays live after the boundary
    error = report.newest_tool_error
    assert error is not None and not error.in_digest and "live messages" in str(error.reason)
    assert report.cut_sections == () and report.shed_sections == ()

    reference = RebuildConfig(keep_newest_step=False)  # MiMo's: the step is digested with the tail
    digested = engine.compute(_session(), memory, reference, now_ms=T0 + 100).fidelity
    assert digested is not None and digested.newest_tool_error is not None
    assert digested.newest_tool_error.in_digest


def test_failed_render_still_reports(tmp_path) -> None:
    root = checkpoint_memory(tmp_path, SID, "  \n")  # exists, but blank
    s = session_of([assistant("a1", text("x"))], SID)
    s.watermark = "a1"
    config = RebuildConfig(push_caps=PushCaps(recent_user=0))
    res = engine.insert(s, root, config, watermark="a1", reason="auto", now_ms=T0, minter=IdMinter())
    assert res.outcome == "insert-failed" and res.fidelity is not None
    assert res.fidelity.newest_user_ask.status == "none" and res.sizes is None
