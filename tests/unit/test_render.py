"""Rendering the rebuild text (behavior.md#render): sections, layout, reminders, the total cap (D7), the
report."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mimo_sidecar.core import texts
from mimo_sidecar.core.config import PushCaps
from mimo_sidecar.core.estimate.jstext import est, len16
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.rebuild.boundary import LastMessageInfo
from mimo_sidecar.core.rebuild.recent_user import raw_user_text, recent_user_entries, truncate_user
from mimo_sidecar.core.rebuild.render import (
    RenderInputs,
    RenderResult,
    SectionReport,
    actor_line,
    greedy_lines,
    ledger_text,
    render,
    strip_h1,
    truncate_ledger,
)
from tests.fuzz import examples
from tests.unit.builders import assistant, checkpoint, text, tool, tool_result, user

SID = "ses_1"
PID = "proj_1"


# -- helpers ---------------------------------------------------------------------------------------
@pytest.fixture
def mem(tmp_path: Path) -> MemoryRoot:
    return MemoryRoot(str(tmp_path / "memory"))


def write(path: str, content: str | bytes) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def inputs(mem: MemoryRoot, **kw) -> RenderInputs:
    kw.setdefault("session_id", SID)
    kw.setdefault("project_id", None)
    kw.setdefault("caps", PushCaps())
    kw.setdefault("memory_keys", [])
    return RenderInputs(memory=mem, **kw)


def task(tid: str, status: str = "open", summary: str = "s", parent: str | None = None) -> dict:
    t = {"id": tid, "status": status, "summary": summary, "created_at": 0}
    if parent is not None:
        t["parent_task_id"] = parent
    return t


def actor(aid: str, description: str = "d", agent: str = "build", status: str = "running") -> dict:
    return {
        "actorID": aid,
        "sessionID": SID,
        "status": status,
        "background": True,
        "description": description,
        "agent": agent,
        "lastTurnTime": 0,
    }


def lines_of(result: RenderResult) -> list[str]:
    return result.text.split("\n")


def report(result: RenderResult, key: str) -> SectionReport:
    return next(s for s in result.sections if s.key == key)


T1 = [task("T1")]


# =================================================================================================
# behavior.md#agent-gate agent gate, behavior.md#early-bail early bail, behavior.md#render-examples simple
# examples
# =================================================================================================
def test_nothing_to_render_bails(mem: MemoryRoot) -> None:
    result = render(inputs(mem, caps=PushCaps(recent_user=0)))
    assert result.text == "" and result.bailed and not result.has_activity
    assert [s.key for s in result.sections] == [
        "tasks",
        "checkpoint",
        "actors",
        "recent_user",
        "project_memory",
        "global_memory",
        "notes",
        "memory_keys",
        "activity",
    ]
    assert not any(s.present for s in result.sections)
    assert report(result, "recent_user").reason == "early bail (disabled (recent_user = 0))"


def test_recent_user_zero_ignores_user_messages_and_bails(mem: MemoryRoot) -> None:
    result = render(inputs(mem, caps=PushCaps(recent_user=0), recent_candidates=[user("u1", text("hi"))]))
    assert result.text == "" and result.bailed


def test_notes_keys_and_activity_do_not_prevent_the_bail(mem: MemoryRoot) -> None:
    write(mem.notes_path(SID), "notes")
    tail = [assistant("a1", text("did things"))]
    result = render(inputs(mem, memory_keys=["x.md"], tail=tail))
    assert result.text == "" and result.bailed


def test_blank_checkpoint_does_not_prevent_the_bail(mem: MemoryRoot) -> None:
    write(mem.checkpoint_path(SID), " \n\t\ufeff\n")
    assert render(inputs(mem)).bailed


def test_only_global_memory(mem: MemoryRoot) -> None:
    path = write(mem.global_memory_path(), "# Global\n\nprefer tabs")
    result = render(inputs(mem))
    assert "# Global memory" in result.text and "prefer tabs" in result.text
    assert f"# Global memory\nFile: {path}\nprefer tabs\n" in result.text


def test_only_project_memory(mem: MemoryRoot) -> None:
    path = write(mem.project_memory_path(PID), "用 Bun 不用 npm")
    result = render(inputs(mem, project_id=PID))
    assert "# Project durable knowledge" in result.text and "用 Bun 不用 npm" in result.text
    assert "# Global memory" not in result.text
    assert report(result, "project_memory").path == path


def test_legacy_project_memory_is_migrated_before_reading(mem: MemoryRoot) -> None:
    legacy = write(os.path.join(mem.project_dir(PID), "memory.md"), "legacy fact")
    result = render(inputs(mem, project_id=PID))
    assert "legacy fact" in result.text
    assert not os.path.exists(legacy) and os.path.exists(mem.project_memory_path(PID))


def test_project_memory_skipped_without_project(mem: MemoryRoot) -> None:
    result = render(inputs(mem, tasks=T1))
    assert report(result, "project_memory").reason == "no project"


def test_agent_gate(mem: MemoryRoot) -> None:
    write(mem.global_memory_path(), "g")
    plain = render(inputs(mem))
    assert render(inputs(mem, agent_id="main")).text == plain.text != ""
    gated = render(inputs(mem, agent_id="explore-1"))
    assert gated.text == "" and not gated.bailed and "agent gate" in (gated.empty_reason or "")


def test_memory_keys_index_lists_task_progress(mem: MemoryRoot) -> None:
    write(mem.task_progress_path(SID, "T1"), "progress")
    result = render(inputs(mem, tasks=T1, memory_keys=None))
    assert "# Memory keys index" in result.text
    assert f"- sessions/{SID}/tasks/T1/progress.md" in lines_of(result)


# =================================================================================================
# behavior.md#strip-h1 stripH1 / pushSection
# =================================================================================================
H1_EXAMPLE = (
    "# Session checkpoint\n\n## §1 Active intent\n\nbody\n\n# Another root the writer may emit\n\n"
    "## nested under another root\n\n```\n# not a heading\n```"
)


def test_strip_h1_example() -> None:
    assert (
        strip_h1(H1_EXAMPLE)
        == "## §1 Active intent\n\nbody\n\n\n## nested under another root\n\n```\n# not a heading\n```"
    )


def test_checkpoint_section_h1_stripped(mem: MemoryRoot) -> None:
    path = write(mem.checkpoint_path(SID), H1_EXAMPLE)
    result = render(inputs(mem))
    assert result.text.count("# Session checkpoint") == 1
    assert f"# Session checkpoint\nFile: {path}\n## §1 Active intent" in result.text
    assert "# not a heading" in result.text and "## nested under another root" in result.text
    assert "# Another root" not in result.text


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("# \nkeep", "# \nkeep"),  # "# " alone is kept
        ("#\tx\nkeep", "#\tx\nkeep"),  # a tab is not the space
        ("# \r\nkeep", "keep"),  # "\r" is a character other than "#"
        ("## h2\n# h1", "## h2"),
        ("~~~\n# in tilde fence\n```\n# out", "~~~\n# in tilde fence\n```"),  # kinds are not matched
        ("````\n# inside\n````", "````\n# inside\n````"),
        ("  ```\n# indented fence is no fence", "```"),  # then JS-trimmed
    ],
)
def test_strip_h1_rules(body: str, expected: str) -> None:
    assert strip_h1(body) == expected


def test_file_section_with_only_h1_keeps_heading_and_file_line(mem: MemoryRoot) -> None:
    path = write(mem.global_memory_path(), "# Only a title")
    result = render(inputs(mem))
    assert f"# Global memory\nFile: {path}\n\n" in result.text


# =================================================================================================
# behavior.md#section-tasks Tasks ledger
# =================================================================================================
def test_ledger_lines_children_glyphs_and_unknown_status() -> None:
    tasks = [
        task("T1", "in_progress", "build it"),
        task("T1.1", "open", "a", parent="T1"),
        task("T1.1.1", "done", "grandchild", parent="T1.1"),
        task("T1.2", "weird", "b", parent="T1"),
        task("T1.3", "done", "c", parent="T1"),
        task("T2", "blocked", "alone"),
        task("T9.1", "open", "orphan", parent="T9"),
    ]
    assert ledger_text(tasks) == (
        "- T1 in_progress \u2014 build it\n"
        f"  {texts.SUBTASKS_LABEL}\U0001f535T1.1 / weirdT1.2 / \u2705T1.3\n"
        "- T2 blocked \u2014 alone"
    )


def test_ledger_ids_compare_as_javascript_map_keys() -> None:
    """Found by the wire property test: a task ID the host sent as an object crashed the render
    (an unhashable dict key), so every later rebuild/compute of the session failed with -32603."""
    tasks = [
        {"id": {"x": 1}, "status": "open", "summary": "object id"},
        {"id": "T2", "status": "open", "summary": "child of an object", "parent_task_id": {"x": 1}},
        {"id": 3, "status": "open", "summary": "number id"},
        {"id": "T3.1", "status": "done", "summary": "child", "parent_task_id": 3.0},
        {"id": "T4", "status": "open", "summary": "string id"},
        {"id": "T4.1", "status": "done", "summary": "not a child of 3", "parent_task_id": [3]},
    ]
    assert ledger_text(tasks) == (
        "- [object Object] open \u2014 object id\n"
        "- 3 open \u2014 number id\n"
        f"  {texts.SUBTASKS_LABEL}\u2705T3.1\n"
        "- T4 open \u2014 string id"
    )


def test_ledger_placeholder_without_tasks(mem: MemoryRoot) -> None:
    write(mem.global_memory_path(), "g")
    result = render(inputs(mem))
    assert f"# Tasks ledger\n{texts.NO_TASKS}\n" in result.text
    assert report(result, "tasks").reason == "no tasks" and report(result, "tasks").present


def test_ledger_truncation_at_default_cap() -> None:
    s = "- T1 open \u2014 " + "x" * 3000
    out, cut = truncate_ledger(s, 2000)
    assert cut and out == s[:1940] + "\n" + texts.LEDGER_TRUNCATED and len16(out) <= 2000


def test_ledger_not_truncated_at_exactly_the_cap() -> None:
    s = "y" * 2000
    assert truncate_ledger(s, 2000) == (s, False)


def test_ledger_truncation_below_60_counts_from_the_end() -> None:
    s = "z" * 70
    out, cut = truncate_ledger(s, 50)  # slice(0, -10)
    assert cut and out == "z" * 60 + "\n" + texts.LEDGER_TRUNCATED
    out, _ = truncate_ledger("z" * 30, 1)  # slice(0, -59) of 30 units is empty
    assert out == "\n" + texts.LEDGER_TRUNCATED


def test_ledger_truncation_drops_dangling_high_surrogate() -> None:
    prefix = "- T1 open \u2014 " + "a" * 27  # 39 units, so the emoji spans units 39-40
    s = prefix + "\U0001f600" + "b" * 100
    out, cut = truncate_ledger(s, 100)  # cut at 40 units: through the pair
    assert cut and out == prefix + "\n" + texts.LEDGER_TRUNCATED
    assert not any("\ud800" <= ch <= "\udfff" for ch in out)


def test_ledger_report_when_truncated(mem: MemoryRoot) -> None:
    result = render(inputs(mem, tasks=[task("T1", summary="x" * 300)], caps=PushCaps(tasks_ledger=100)))
    r = report(result, "tasks")
    assert r.truncated and r.cap == 100 and r.unit == "chars"
    assert r.reason == "over cap: ledger cut from 312 to 97 chars"
    body = "- T1 open \u2014 " + "x" * 28 + "\n" + texts.LEDGER_TRUNCATED
    assert f"# Tasks ledger\n{body}\n" in result.text
    assert r.tokens == est("# Tasks ledger\n" + body + "\n")


# =================================================================================================
# behavior.md#section-actors Active actors
# =================================================================================================
def test_actor_line_format() -> None:
    assert actor_line(actor("A1", 'say "hi"', "explore")) == texts.actor_ledger_line(
        "A1", "running", 'say "hi"', "explore"
    )


def test_actors_greedy_stop(mem: MemoryRoot) -> None:
    small, big = actor("A1", "x"), actor("A2", "y" * 400)
    later_small = actor("A3", "z")
    cap = est(actor_line(small)) + 5
    result = render(inputs(mem, actors=[small, big, later_small], caps=PushCaps(actor_ledger=cap)))
    assert f"# Active actors\n{actor_line(small)}\n\n" in result.text
    assert actor_line(later_small) not in result.text  # the stop drops later, smaller actors
    r = report(result, "actors")
    assert r.truncated and r.reason == "over cap: 1 of 3 actors kept"


def test_actors_exact_fit_is_kept(mem: MemoryRoot) -> None:
    a = actor("A1")
    result = render(inputs(mem, actors=[a], caps=PushCaps(actor_ledger=est(actor_line(a)))))
    assert actor_line(a) in result.text and not report(result, "actors").truncated


def test_actors_none_fits_gives_heading_and_empty_line(mem: MemoryRoot) -> None:
    result = render(inputs(mem, actors=[actor("A1", "y" * 100)], caps=PushCaps(actor_ledger=1)))
    assert result.text.endswith("# Active actors\n\n\n" + texts.CLOSING_WITHOUT_ACTIVITY)
    r = report(result, "actors")
    assert r.present and r.reason == "over cap: 0 of 1 actors kept"


def test_actors_prevent_the_bail(mem: MemoryRoot) -> None:
    assert render(inputs(mem, actors=[actor("A1")])).text != ""


# =================================================================================================
# behavior.md#section-recent-user Recent user input
# =================================================================================================
def test_raw_text_example() -> None:
    m = user(
        "u",
        text("a"),
        text(""),
        text("SYN", synthetic=True),
        {"type": "file", "mime": "image/png", "url": "x"},
        text("b"),
    )
    assert raw_user_text(m) == "a\nb"


def test_raw_text_keeps_ignored_parts() -> None:
    assert raw_user_text(user("u", text("seen", ignored=True), text("b"))) == "seen\nb"


def test_truncate_user_example() -> None:
    out = truncate_user("abcdefghijklmnopqrstuvwxyz0123456789", 5, "msg_X")
    assert out == "abcdefghijkl\n" + texts.user_elision_marker(5, "msg_X") + "\n6789"


def test_truncate_user_under_cap_is_unchanged() -> None:
    assert truncate_user("abcd", 1, "m") == "abcd"


def test_truncate_user_default_cap_sizes() -> None:
    t = "h" * 4800 + "m" * 5000 + "t" * 2400
    out = truncate_user(t, 2000, "m1")
    head, marker, tail = out.split("\n")
    assert head == "h" * 4800 and tail == "t" * 2400
    assert marker == texts.user_elision_marker(est(t) - 1200 - 600, "m1")


def test_truncate_user_slice_minus_zero_keeps_whole_tail() -> None:
    t = "q" * 40  # est 10 > cap 3; head floor(1.8)*4 = 4 units; k = floor(0.9)*4 = 0 → whole text
    out = truncate_user(t, 3, "m")
    assert out == "qqqq\n" + texts.user_elision_marker(10 - 1 - 10, "m") + "\n" + t


def test_truncate_user_repairs_surrogates() -> None:
    # cap 5: head = 12 units; put an emoji across units 11-12; tail = 4 units; emoji across the start.
    t = "a" * 11 + "\U0001f600" + "b" * 20 + "\U0001f601" + "c" * 3
    out = truncate_user(t, 5, "m")
    head, _, tail = out.split("\n")
    assert head == "a" * 11 and tail == "c" * 3


def _marker_messages(n: int) -> list:
    return [user(f"msg_{i:02d}", text(f"MARKER-MSG-{i:02d} " + "x " * 2500)) for i in range(n)]


def test_recent_user_twelve_of_twenty(mem: MemoryRoot) -> None:
    msgs = _marker_messages(20)
    assert est(raw_user_text(msgs[0])) == 1254
    result = render(inputs(mem, recent_candidates=msgs))
    for i in range(20):
        assert (f"MARKER-MSG-{i:02d} " in result.text) == (i >= 8)
    r = report(result, "recent_user")
    assert r.present and r.truncated and r.reason == "over cap: 12 of 20 messages kept"
    assert r.cap == 16000 and r.unit == "tokens"


def test_recent_user_stop_rule_drops_older_smaller_messages() -> None:
    msgs = [user("u0", text("tiny")), user("u1", text("x" * 400)), user("u2", text("y" * 40))]
    got = recent_user_entries(msgs, PushCaps(recent_user=50))
    assert [mid for mid, _ in got.entries] == ["u2"]


def test_recent_user_candidate_filter(mem: MemoryRoot) -> None:
    msgs = [
        user("u1", text("keep me")),
        user("b1", checkpoint("x"), text("OLD REBUILD TEXT", synthetic=False)),
        user("c1", {"type": "compaction", "auto": True}, text("compaction text")),
        user("t1", tool("c", "read"), text("tool text")),
        user("k1", tool_result("call_1"), text("carrier text")),  # split carrier
        assistant("a1", text("assistant words")),
        user("s1", text("only synthetic", synthetic=True)),
        user("w1", text(" \n\t")),
    ]
    result = render(inputs(mem, recent_candidates=msgs))
    assert "# Recent user input (verbatim)\nkeep me\n" in result.text
    for absent in (
        "OLD REBUILD",
        "compaction text",
        "tool text",
        "carrier text",
        "assistant words",
        "only synthetic",
    ):
        assert absent not in result.text


def test_recent_user_entries_joined_without_separator(mem: MemoryRoot) -> None:
    msgs = [user("u1", text("  first")), user("u2", text("second  "))]
    result = render(inputs(mem, recent_candidates=msgs))
    assert "# Recent user input (verbatim)\nfirst\nsecond\n\n" in result.text


# =================================================================================================
# behavior.md#section-memory-keys Memory keys index
# =================================================================================================
def test_memory_keys_budget_excludes_prefix_and_keeps_heading(mem: MemoryRoot) -> None:
    keys = ["a" * 8, "b" * 8, "c" * 4]  # costs 2, 2, 1
    result = render(inputs(mem, tasks=T1, memory_keys=keys, caps=PushCaps(memory_titles=4)))
    assert "# Memory keys index\n- aaaaaaaa\n- bbbbbbbb\n\n" in result.text
    r = report(result, "memory_keys")
    assert r.truncated and r.reason == "over cap: 2 of 3 keys kept"
    nothing = render(inputs(mem, tasks=T1, memory_keys=["x" * 40], caps=PushCaps(memory_titles=1)))
    assert "# Memory keys index\n\n" in nothing.text


def test_memory_keys_host_order_is_kept(mem: MemoryRoot) -> None:
    result = render(inputs(mem, tasks=T1, memory_keys=["z.md", "a.md"]))
    assert "# Memory keys index\n- z.md\n- a.md\n" in result.text


# =================================================================================================
# behavior.md#section-activity + behavior.md#reminders + behavior.md#layout layout and reminders
# =================================================================================================
def _full_setup(mem: MemoryRoot) -> dict:
    paths = {
        "cp": write(mem.checkpoint_path(SID), "# Title\ncp body"),
        "pm": write(mem.project_memory_path(PID), "pm body"),
        "gm": write(mem.global_memory_path(), "gm body"),
        "notes": write(mem.notes_path(SID), "notes body"),
    }
    return paths


def _full_inputs(mem: MemoryRoot, *, tail, info) -> RenderInputs:
    return inputs(
        mem,
        project_id=PID,
        tasks=[task("T1")],
        actors=[actor("A1")],
        recent_candidates=[user("u1", text("hello"))],
        memory_keys=["k.md"],
        tail=tail,
        last_message_info=info,
    )


def test_layout_with_everything(mem: MemoryRoot) -> None:
    p = _full_setup(mem)
    tail = [assistant("a1", text("done it"))]
    result = render(_full_inputs(mem, tail=tail, info=LastMessageInfo("assistant", "tool-calls")))
    assert result.has_activity
    assert lines_of(result) == [
        texts.PREAMBLE,
        "",
        "# Tasks ledger",
        "- T1 open \u2014 s",
        "",
        "# Session checkpoint",
        f"File: {p['cp']}",
        "cp body",
        "",
        "# Active actors",
        actor_line(actor("A1")),
        "",
        "# Recent user input (verbatim)",
        "hello",
        "",
        "# Project durable knowledge",
        f"File: {p['pm']}",
        "pm body",
        "",
        "# Global memory",
        f"File: {p['gm']}",
        "gm body",
        "",
        "# Session notes",
        f"File: {p['notes']}",
        "notes body",
        "",
        "# Memory keys index",
        "- k.md",
        "",
        "",
        "# Recent activity",
        "",
        "- assistant: done it",
        "",
        texts.CLOSING_WITH_ACTIVITY,
        "",
        *texts.AUTONOMOUS_LOOP_REMINDER.split("\n"),
    ]
    assert result.total_tokens == est(result.text)
    assert all(s.present for s in result.sections)


def test_layout_without_activity_and_reminder(mem: MemoryRoot) -> None:
    _full_setup(mem)
    result = render(_full_inputs(mem, tail=None, info=LastMessageInfo("user")))
    assert not result.has_activity
    assert result.text.endswith("# Memory keys index\n- k.md\n\n\n" + texts.CLOSING_WITHOUT_ACTIVITY)
    assert report(result, "activity").reason == "no D/W given"


def test_empty_activity_uses_the_plain_closing(mem: MemoryRoot) -> None:
    result = render(inputs(mem, tasks=T1, tail=[user("u9", text("live"))]))
    assert not result.has_activity and result.text.endswith("\n\n\n" + texts.CLOSING_WITHOUT_ACTIVITY)
    assert report(result, "activity").reason == "nothing to digest"


def test_interrupted_banner_layout(mem: MemoryRoot) -> None:
    tail = [assistant("a1", tool("c1", "bash", {"command": "ls"}, status="running"), finish="tool-calls")]
    result = render(inputs(mem, tasks=T1, tail=tail))
    assert (
        "\n\n\n# Recent activity\n\n" + texts.DIGEST_INTERRUPTED_BANNER + "\n\n"
        '- bash(command="ls") \u2192 interrupted\n\n' + texts.CLOSING_WITH_ACTIVITY
    ) in result.text


@pytest.mark.parametrize(
    ("info", "reminder"),
    [
        (None, None),
        (LastMessageInfo("user"), None),
        (LastMessageInfo("assistant", "tool-calls"), texts.AUTONOMOUS_LOOP_REMINDER),
        (LastMessageInfo("assistant", "stop"), texts.STOP_REMINDER),
        (LastMessageInfo("tool"), texts.TOOL_REMINDER_DIGESTED),
        (LastMessageInfo("tool", step_live=True), texts.TOOL_REMINDER),  # D19: the results are below
        (LastMessageInfo("assistant", "tool-calls", step_live=True), texts.AUTONOMOUS_LOOP_REMINDER),
    ],
)
def test_reminder_variants(mem: MemoryRoot, info, reminder) -> None:
    result = render(inputs(mem, tasks=T1, last_message_info=info))
    if reminder is None:
        assert result.text.endswith("\n\n" + texts.CLOSING_WITHOUT_ACTIVITY)
    else:
        assert result.text.endswith(texts.CLOSING_WITHOUT_ACTIVITY + "\n\n" + reminder)


def test_activity_over_200_lines_is_reported(mem: MemoryRoot) -> None:
    tail = [assistant("a1", *[tool(f"c{i}", "read", {"path": f"p-{i}"}) for i in range(205)])]
    result = render(inputs(mem, tasks=T1, tail=tail))
    r = report(result, "activity")
    assert r.present and r.truncated and r.reason == "over cap: 200 of 205 lines kept"
    assert r.cap == 200 and r.unit == "lines"


# =================================================================================================
# D7 total cap
# =================================================================================================
def test_total_cap_sheds_everything_in_order_and_flags(mem: MemoryRoot) -> None:
    _full_setup(mem)
    base = _full_inputs(mem, tail=[assistant("a1", text("done"))], info=LastMessageInfo("assistant", "stop"))
    many_users = [user("u1", text("one")), user("u2", text("two"))]
    capped = RenderInputs(**{**base.__dict__, "recent_candidates": many_users, "caps": PushCaps(total=1)})
    result = render(capped)
    assert result.shed_units == [
        "memory_keys",
        "global_memory",
        "notes",
        "project_memory",
        "actors",
        "recent_user:u1",
        "recent_user:u2",
    ]
    assert result.over_cap and result.total_cap == 1 and result.has_activity
    for kept in (
        "# Tasks ledger",
        "# Session checkpoint",
        "# Recent activity",
        texts.CLOSING_WITH_ACTIVITY,
        texts.STOP_REMINDER,
        texts.PREAMBLE,
    ):
        assert kept in result.text
    for gone in (
        "# Memory keys index",
        "# Global memory",
        "# Session notes",
        "# Project durable knowledge",
        "# Active actors",
        "# Recent user input",
    ):
        assert gone not in result.text
    for key in ("memory_keys", "global_memory", "notes", "project_memory", "actors", "recent_user"):
        r = report(result, key)
        assert r.shed and not r.present and r.reason == "shed by total cap" and r.tokens == 0


def test_total_cap_stops_as_soon_as_it_fits(mem: MemoryRoot) -> None:
    _full_setup(mem)
    base = _full_inputs(mem, tail=None, info=None)
    full = render(base)
    keys_tokens = report(full, "memory_keys").tokens
    only_keys = render(RenderInputs(**{**base.__dict__, "caps": PushCaps(total=full.total_tokens - 1)}))
    assert only_keys.shed_units == ["memory_keys"] and not only_keys.over_cap
    assert only_keys.total_tokens <= full.total_tokens - 1
    two = render(
        RenderInputs(**{**base.__dict__, "caps": PushCaps(total=full.total_tokens - keys_tokens - 2)})
    )
    assert two.shed_units == ["memory_keys", "global_memory"]
    assert report(two, "notes").present and not report(two, "notes").shed


def test_total_cap_sheds_oldest_user_entries_first(mem: MemoryRoot) -> None:
    msgs = [user(f"u{i}", text(f"E{i}" + "x" * 400)) for i in range(1, 4)]
    base = inputs(mem, tasks=T1, recent_candidates=msgs)
    full = render(base)
    result = render(RenderInputs(**{**base.__dict__, "caps": PushCaps(total=full.total_tokens - 50)}))
    assert result.shed_units == ["recent_user:u1"] and not result.over_cap
    assert "E1x" not in result.text and "E2x" in result.text and "E3x" in result.text
    r = report(result, "recent_user")
    assert r.present and r.shed and r.truncated and r.reason == "shed by total cap: 2 of 3 entries kept"


def test_total_cap_not_reached_changes_nothing(mem: MemoryRoot) -> None:
    base = inputs(mem, tasks=T1, memory_keys=["k.md"])
    full = render(base)
    same = render(RenderInputs(**{**base.__dict__, "caps": PushCaps(total=full.total_tokens)}))
    assert same.text == full.text and same.shed_units == [] and not same.over_cap


# =================================================================================================
# Section report and warnings
# =================================================================================================
def test_section_report_contents(mem: MemoryRoot) -> None:
    big_checkpoint = "# T\n## §1 A\n_i_\n" + "word " * 400 + "\n## §2 B\n_j_\nsmall\n"
    cp = write(mem.checkpoint_path(SID), big_checkpoint)
    skeleton_global = "\n".join(f"## heading number {i}\n_note {i}_" for i in range(40))
    gm = write(mem.global_memory_path(), skeleton_global)
    result = render(
        inputs(mem, tasks=T1, memory_keys=["a.md"], caps=PushCaps(checkpoint=120, global_=50, recent_user=0))
    )

    checkpoint_report = report(result, "checkpoint")
    assert checkpoint_report.path == cp and checkpoint_report.present and checkpoint_report.truncated
    assert checkpoint_report.reason == f"over cap: the file holds {est(big_checkpoint)} tokens"
    assert (
        checkpoint_report.cap == 120
        and checkpoint_report.unit == "tokens"
        and checkpoint_report.heading == "# Session checkpoint"
    )

    global_report = report(result, "global_memory")
    assert global_report.path == gm and global_report.truncated
    assert global_report.reason == f"skeleton only: the file holds {est(skeleton_global)} tokens"

    notes_report = report(result, "notes")
    assert (
        not notes_report.present
        and notes_report.reason == "file missing"
        and notes_report.path == mem.notes_path(SID)
    )
    assert report(result, "recent_user").reason == "disabled (recent_user = 0)"
    assert report(result, "actors").reason == "no active actors"
    assert report(result, "activity").reason == "no D/W given"

    keys_report = report(result, "memory_keys")
    assert keys_report.tokens == est("# Memory keys index\n- a.md\n") and not keys_report.truncated
    tasks_report = report(result, "tasks")
    assert tasks_report.tokens == est("# Tasks ledger\n- T1 open \u2014 s\n")


def test_section_report_tokens_match_the_text(mem: MemoryRoot) -> None:
    _full_setup(mem)
    result = render(_full_inputs(mem, tail=[assistant("a1", text("x"))], info=None))
    # Every present section's lines are in the text; their estimates add up to at most the whole.
    assert sum(s.tokens for s in result.sections) <= result.total_tokens
    assert report(result, "activity").tokens == est("# Recent activity\n\n- assistant: x")


def test_unreadable_files_are_warnings(mem: MemoryRoot) -> None:
    write(mem.global_memory_path(), b"abc\x00def")
    write(mem.checkpoint_path(SID), b"ok \xff text")
    result = render(inputs(mem, tasks=T1))
    assert any("binary" in w for w in result.warnings)
    assert any("invalid-utf8" in w for w in result.warnings)
    assert "ok \ufffd text" in result.text  # invalid UTF-8 is still used, with U+FFFD
    assert report(result, "global_memory").reason == "unreadable (binary)"


def test_missing_files_are_not_warnings(mem: MemoryRoot) -> None:
    assert render(inputs(mem, tasks=T1)).warnings == []


def test_unsafe_session_id_is_a_warning_not_a_crash(mem: MemoryRoot) -> None:
    result = render(inputs(mem, session_id="../evil", tasks=T1, memory_keys=None))
    assert result.text and any("unsafe" in w for w in result.warnings)


# =================================================================================================
# Properties
# =================================================================================================
_words = st.text(
    alphabet=st.characters(
        codec="utf-8", exclude_characters="\n", categories=["L", "M", "N", "P", "S", "Zs"]
    ),
    max_size=60,
)
_texts = st.text(alphabet=st.sampled_from("ab \n\t#`~\U0001f600中"), max_size=300)


@st.composite
def _render_inputs(draw):
    n_tasks = draw(st.integers(0, 6))
    tasks: list[dict] = []
    for i in range(n_tasks):
        parent = draw(st.sampled_from([None, *(t["id"] for t in tasks)])) if tasks else None
        tasks.append(task(f"T{i}", draw(st.sampled_from(["open", "done", "x"])), draw(_words), parent))
    actors = [actor(f"A{i}", draw(_words)) for i in range(draw(st.integers(0, 4)))]
    users = [user(f"u{i}", text(draw(_texts))) for i in range(draw(st.integers(0, 8)))]
    keys = draw(st.lists(_words.filter(bool), max_size=6))
    caps = PushCaps(
        tasks_ledger=draw(st.integers(1, 400)),
        actor_ledger=draw(st.integers(1, 60)),
        recent_user=draw(st.integers(0, 200)),
        recent_user_per_msg=draw(st.integers(1, 80)),
        memory_titles=draw(st.integers(1, 40)),
        total=draw(st.one_of(st.none(), st.integers(1, 400))),
    )
    return dict(tasks=tasks, actors=actors, recent_candidates=users, memory_keys=keys, caps=caps)


_EMPTY_ROOT = MemoryRoot(tempfile.mkdtemp(prefix="mimo-render-prop-"))


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
@given(_render_inputs())
def test_render_is_deterministic(kw) -> None:
    a = render(inputs(_EMPTY_ROOT, **kw))
    b = render(inputs(_EMPTY_ROOT, **kw))
    assert a == b
    assert a.total_tokens == est(a.text)
    assert a.over_cap == (a.total_cap is not None and a.total_tokens > a.total_cap)


@settings(max_examples=examples(200))
@given(st.lists(_texts, max_size=12), st.integers(0, 400), st.integers(1, 120))
def test_recent_user_total_within_cap(raws, cap, per_msg) -> None:
    msgs = [user(f"u{i}", text(r)) for i, r in enumerate(raws)]
    got = recent_user_entries(msgs, PushCaps(recent_user=cap, recent_user_per_msg=per_msg))
    assert sum(est(e) for _, e in got.entries) <= cap
    eligible = [m.id for m in msgs if raw_user_text(m).strip(" \n\t")]
    kept = [mid for mid, _ in got.entries]
    assert kept == eligible[len(eligible) - len(kept) :]  # a suffix: the newest messages


@settings(max_examples=examples(200))
@given(st.lists(_words, max_size=10), st.integers(0, 80))
def test_actor_lines_within_cap(descriptions, cap) -> None:
    lines = greedy_lines([actor_line(actor(f"A{i}", d)) for i, d in enumerate(descriptions)], cap)
    assert sum(est(line) for line in lines) <= cap


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_words.filter(bool), min_size=1, max_size=10), st.integers(1, 40))
def test_memory_keys_within_cap(keys, cap) -> None:
    result = render(inputs(_EMPTY_ROOT, tasks=T1, memory_keys=keys, caps=PushCaps(memory_titles=cap)))
    lines = lines_of(result)
    start = lines.index("# Memory keys index") + 1
    entries = lines[start : lines.index("", start)]
    assert sum(est(e[2:]) for e in entries) <= cap
    assert [e[2:] for e in entries] == keys[: len(entries)]


@settings(max_examples=examples(200))
@given(
    st.lists(st.tuples(_words, st.sampled_from(["open", "done", "in_progress", "??"])), max_size=12),
    st.integers(60, 500),
)
def test_ledger_within_cap(items, cap) -> None:
    tasks = [task(f"T{i}", status, summary) for i, (summary, status) in enumerate(items)]
    body, _ = truncate_ledger(ledger_text(tasks), cap)
    assert len16(body) <= cap
