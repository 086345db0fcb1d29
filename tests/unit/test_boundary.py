"""The boundary and its companions (behavior.md#boundary): classify, index, actors, message, microcompaction.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.core import texts
from mimo_sidecar.core.checkpoint.template import checkpoint_topic
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.rebuild.boundary import (
    COMPACTABLE,
    CompactMark,
    LastMessageInfo,
    build_boundary,
    classify,
    microcompact,
    plan_microcompaction,
    render_actors,
    render_index,
)
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.message import Message, part_tokens
from tests.unit.builders import (
    assistant,
    custom_tool_call,
    custom_tool_call_output,
    function,
    function_call,
    function_call_output,
    msg,
    text,
    tool,
    tool_message,
    tool_result,
    tool_use,
    user,
)

SID = "ses_1"
T0 = 1700000000000


@pytest.fixture
def mem(tmp_path: Path) -> MemoryRoot:
    return MemoryRoot(str(tmp_path / "memory"))


def write(path: str, content: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(content)


def fixed_minter() -> IdMinter:
    return IdMinter(random_bytes=lambda n: bytes(n))


# =================================================================================================
# behavior.md#classify classify
# =================================================================================================
@pytest.mark.parametrize(
    ("msgs", "expected"),
    [
        ([assistant("a", finish="tool-calls")], LastMessageInfo("assistant", "tool-calls")),
        ([msg("a", "assistant")], LastMessageInfo("assistant", "stop")),  # no finish
        ([assistant("a", finish="length")], LastMessageInfo("assistant", "stop")),
        ([assistant("a", finish="")], LastMessageInfo("assistant", "stop")),
        ([user("u1"), assistant("a"), user("u2")], LastMessageInfo("user")),
        ([], None),
        (
            [assistant("a", function("c1", "bash"), finish="tool-calls"), tool_message("t", "c1")],
            LastMessageInfo("tool"),
        ),
        (
            [assistant("a", tool_use("c1", "read"), finish="tool-calls"), user("k", tool_result("c1"))],
            LastMessageInfo("tool"),
        ),
        (
            [user("k", function_call_output("c1"), text("and then"))],
            LastMessageInfo("tool"),
        ),  # carrier, not pure
    ],
)
def test_classify(msgs, expected) -> None:
    assert classify(msgs) == expected


# =================================================================================================
# behavior.md#checkpoint-index index
# =================================================================================================
def test_index_without_checkpoint(mem: MemoryRoot) -> None:
    assert render_index(mem, SID) == texts.NO_CHECKPOINT_INDEX


def test_index_five_lines(mem: MemoryRoot) -> None:
    write(mem.checkpoint_path(SID), "# Checkpoint\nTopic:  Port the lexer  \nmore")
    assert render_index(mem, SID) == "\n".join(
        [
            "## Checkpoint",
            "",
            texts.index_directory_line(mem.session_dir(SID) + os.sep),
            "",
            texts.index_topic_line("Port the lexer"),
        ]
    )
    assert texts.index_directory_line(mem.session_dir(SID) + os.sep).endswith(
        os.path.join("memory", "sessions", SID) + os.sep
    )


def test_index_unknown_topic(mem: MemoryRoot) -> None:
    write(mem.checkpoint_path(SID), "no topic here")
    assert render_index(mem, SID).endswith(texts.index_topic_line(texts.UNKNOWN_TOPIC))


@pytest.mark.parametrize(
    ("content", "topic"),
    [
        ("Topic: a", "a"),
        ("Topic:\n\n   next line\nafter", "next line"),  # \s* crosses line breaks
        ("Topic: crlf\r\nnext", "crlf"),  # `.` stops at \r and `$` matches before it
        ("Topic: left\u2028right", "left"),  # U+2028 is a line terminator in JavaScript
        ("x\u2029Topic: after ps", "after ps"),  # `^` after U+2029
        ("x\rTopic: after cr", "after cr"),  # `^` after a lone \r
        ("Topic:\ufeff\u00a0nbsp", "nbsp"),  # JS \s includes U+FEFF and U+00A0
        ("Topic:\x1cfs", "\x1cfs"),  # \x1c is not JS whitespace (Python's \s would eat it)
        ("Topic: first\nTopic: second", "first"),
        ("  Topic: indented", None),  # `^` must be followed by "Topic:"
        ("MyTopic: no", None),
        ("Topic:", None),
        ("Topic:   ", None),  # a whitespace-only capture trims to "": treated as no topic
        ("topic: lowercase", None),
    ],
)
def test_checkpoint_topic(content: str, topic: str | None) -> None:
    assert checkpoint_topic(content) == topic


# =================================================================================================
# behavior.md#actors-block actors block
# =================================================================================================
def test_actors_block_empty() -> None:
    assert render_actors([], T0) == ""


def test_actors_block_lines_and_idle_format() -> None:
    actors: list[dict[str, Any]] = [
        {
            "actorID": "A1",
            "status": "running",
            "description": "scan",
            "agent": "explore",
            "lastTurnTime": T0 - 59_999,
        },
        {
            "actorID": "A2",
            "status": "pending",
            "description": "fix",
            "agent": "build",
            "lastTurnTime": T0 - 60_000,
        },
        {"actorID": "A3", "status": "running", "description": "new", "agent": "build"},  # never ran
    ]
    assert render_actors(actors, T0) == "\n".join(
        [
            "## Active Actors",
            "",
            texts.actors_count_line(3),
            "",
            *texts.actor_block_lines("A1", "running", "59s", "scan", "explore"),
            *texts.actor_block_lines("A2", "pending", "1m", "fix", "build"),
            *texts.actor_block_lines("A3", "running", "0s", "new", "build"),
        ]
    )


# =================================================================================================
# behavior.md#boundary-message boundary message
# =================================================================================================
def _boundary(**kw):
    args: dict[str, Any] = dict(
        session_id=SID,
        watermark="msg_W",
        digest_up_to="msg_D",
        has_activity=True,
        rendered_text="REBUILD",
        index_text="INDEX",
        actors_text="ACTORS",
        agent="build",
        model={"providerID": "p", "modelID": "m"},
        boundary_created_at=T0,
        now_ms=T0 + 5000,
        minter=fixed_minter(),
        message_id=None,
    )
    args.update(kw)
    return build_boundary(**args)


def test_boundary_message_exact() -> None:
    b = _boundary()
    mid = b["info"]["id"]
    n = (T0 + 5000) * 4096 + 1  # the first ID of that millisecond; zero random bytes → "0" × 9
    assert mid == "msg_g" + format(n, "016x") + "0" * 9
    assert b["info"] == {
        "id": mid,
        "sessionID": SID,
        "role": "user",
        "time": {"created": T0 + 1},
        "agent": "build",
        "model": {"providerID": "p", "modelID": "m"},
        "agentID": "main",
    }
    part_ids = [p["id"] for p in b["parts"]]
    assert all(pid.startswith("prt_g") for pid in part_ids) and part_ids == sorted(part_ids)
    assert len(set(part_ids)) == 4 and mid < part_ids[0].replace("prt", "msg")
    stripped = [{k: v for k, v in p.items() if k not in ("id",)} for p in b["parts"]]
    common = {"sessionID": SID, "messageID": mid}
    assert stripped == [
        {
            **common,
            "type": "checkpoint",
            "checkpointDir": "",
            "checkpointNumber": 0,
            "coveredUpTo": "msg_W",
            "digestUpTo": "msg_D",
        },
        {**common, "type": "text", "synthetic": True, "text": "INDEX"},
        {**common, "type": "text", "synthetic": True, "text": "REBUILD"},
        {**common, "type": "text", "synthetic": True, "text": "ACTORS"},
    ]


@pytest.mark.parametrize(("digest_up_to", "has_activity"), [(None, True), ("msg_D", False), (None, False)])
def test_digest_up_to_only_with_d_and_activity(digest_up_to, has_activity) -> None:
    cp = _boundary(digest_up_to=digest_up_to, has_activity=has_activity)["parts"][0]
    assert "digestUpTo" not in cp and cp["coveredUpTo"] == "msg_W"


def test_boundary_optional_parts_and_fallback_time() -> None:
    b = _boundary(
        index_text="", actors_text="", boundary_created_at=None, message_id="msg_host", agent=None, model=None
    )
    assert [p.get("text") for p in b["parts"]] == [None, "REBUILD"]
    assert b["info"]["id"] == "msg_host" and all(p["messageID"] == "msg_host" for p in b["parts"])
    assert b["info"]["time"]["created"] == T0 + 5000 + 1
    assert "agent" not in b["info"] and "model" not in b["info"]


def test_boundary_refuses_empty_text() -> None:
    with pytest.raises(ValueError):
        _boundary(rendered_text="")


def test_boundary_becomes_a_checkpoint_boundary_message() -> None:
    b = _boundary()
    m = Message(b["info"], b["parts"])
    assert m.is_checkpoint_boundary() and m.agent_id == "main"


# =================================================================================================
# behavior.md#microcompaction microcompaction
# =================================================================================================
def _example_session() -> list[Message]:
    names = [
        (0, "read"),
        (15, "read"),
        (16, "bash"),
        (17, "edit"),
        (18, "actor"),
        (19, "task"),
        (20, "todowrite"),
    ]
    return [
        assistant(f"a{dt}", tool(f"c{dt}", name, {"path": "x"}, output="out"), created=T0 + dt)
        for dt, name in names
    ]


def _compacted(m: Message) -> object:
    return m.parts[0]["state"].get("time", {}).get("compacted")


def test_microcompaction_example() -> None:
    msgs = _example_session()
    originals = [m.parts[0] for m in msgs]
    changed: list[tuple[str, int]] = []
    marks = microcompact(msgs, T0 + 10, "msg_B", T0 + 999, on_change=lambda m, i: changed.append((m.id, i)))
    assert [_compacted(m) for m in msgs] == [None, T0 + 999, T0 + 999, T0 + 999, None, None, None]
    assert marks == [CompactMark(f"a{dt}", f"c{dt}", None, T0 + 999) for dt in (15, 16, 17)]
    assert changed == [("a15", 0), ("a16", 0), ("a17", 0)]
    assert "compacted" not in originals[1]["state"]["time"]  # the host's dict was copied, not mutated
    assert msgs[1].parts[0] is not originals[1]


def test_microcompaction_refreshes_the_estimate() -> None:
    msgs = _example_session()
    before = msgs[1].tokens
    microcompact(msgs, T0 + 10, None, T0 + 999, on_change=lambda m, i: m.refresh_part(i))
    assert msgs[1].tokens == part_tokens(msgs[1].parts[0]) > before


def test_unknown_watermark_compacts_nothing() -> None:
    msgs = _example_session()
    assert microcompact(msgs, None, "msg_B", T0 + 999) == []
    assert all(_compacted(m) is None for m in msgs)


def test_microcompaction_is_strict_and_skips_states_boundary_and_compacted() -> None:
    msgs = [
        assistant("same_ms", tool("c1", "read"), created=T0 + 10),  # not strictly later
        assistant("err", tool("c2", "read", status="error"), created=T0 + 11),
        assistant("pend", tool("c3", "read", status="pending"), created=T0 + 12),
        assistant("run", tool("c4", "read", status="running"), created=T0 + 13),
        assistant("done", tool("c5", "read", compacted=T0 + 1), created=T0 + 14),
        assistant("msg_B", tool("c6", "read"), created=T0 + 15),  # the boundary itself
        assistant("sub", tool("c7", "grep"), created=T0 + 16, agent_id="explore-1"),  # all slices
        assistant("case", tool("c8", "Read"), created=T0 + 17),  # case-sensitive
    ]
    marks = microcompact(msgs, T0 + 10, "msg_B", T0 + 999)
    assert [m.message_id for m in marks] == ["sub"]
    assert msgs[4].parts[0]["state"]["time"]["compacted"] == T0 + 1


def test_tool_name_map() -> None:
    msgs = [assistant("a", tool("c1", "Read"), tool("c2", "Task"), created=T0 + 20)]
    marks = microcompact(msgs, T0, None, T0 + 1, tool_name_map={"Read": "read", "Task": "task"})
    assert [(m.message_id, m.call_id, m.part_id) for m in marks] == [("a", "c1", None)]
    assert msgs[0].parts[0]["state"]["time"]["compacted"] == T0 + 1
    assert "compacted" not in msgs[0].parts[1]["state"]["time"]


def test_a_mark_names_its_call_in_every_shape_even_without_part_ids() -> None:
    """Two results in one carrier, neither with an `id`: the call ID tells which was marked."""
    anthropic = [
        assistant("a1", tool_use("t1", "read"), tool_use("t2", "bash"), tool_use("t3", "task"), created=T0),
        user("k1", tool_result("t1"), tool_result("t2"), tool_result("t3"), created=T0 + 2),
    ]
    responses = [
        assistant("a2", function_call("f1", "grep"), custom_tool_call("f2", "apply_patch"), created=T0 + 3),
        msg("k2", "tool", [function_call_output("f1"), custom_tool_call_output("f2")], created=T0 + 4),
    ]
    chat = [
        assistant("a3", function("h1", "glob"), created=T0 + 5),
        tool_message("k3", "h1", "paths", created=T0 + 6),
    ]
    inline = [assistant("a4", tool("i1", "edit"), tool("i2", "write"), created=T0 + 7)]
    marks = microcompact([*anthropic, *responses, *chat, *inline], T0, None, T0 + 9)
    assert sorted((m.message_id, m.call_id, m.part_id) for m in marks) == [
        ("a4", "i1", None),
        ("a4", "i2", None),
        ("k1", "t1", None),
        ("k1", "t2", None),
        ("k2", "f1", None),
        ("k2", "f2", None),
        ("k3", "h1", None),
    ]


def test_an_inline_tool_part_without_a_call_id_is_not_a_call_and_is_not_marked() -> None:
    nameless = {k: v for k, v in tool("c1", "read").items() if k != "callID"}
    msgs = [assistant("a", nameless, tool("c2", "read"), created=T0 + 20)]
    assert [m.call_id for m in microcompact(msgs, T0, None, T0 + 1)] == ["c2"]
    assert "compacted" not in msgs[0].parts[0]["state"]["time"]


def test_results_left_only_for_want_of_a_mapped_name_are_counted_by_name() -> None:
    msgs = [
        assistant("early", tool("c0", "Read"), created=T0),  # at the threshold: not after it
        assistant(
            "a1",
            tool("c1", "Read"),
            tool("c2", "Read"),
            tool("c3", "Read", status="error"),  # an error is never cleared, whatever its name
            tool("c4", "Read", status="running"),
            tool("c5", "TodoWrite"),  # mapped onto a kept tool: a decision, not an omission
            tool("c6", "task"),  # one of MiMo's kept tools
            tool("c7", "Bash"),  # mapped: cleared
            created=T0 + 1,
        ),
        assistant("a2", tool_use("u1", "mcp__db__query"), tool_use("u2", "mcp__db__query"), created=T0 + 2),
        user("k2", tool_result("u1"), tool_result("u2", is_error=True), created=T0 + 3),
        assistant("a3", function("h1", "Notes"), created=T0 + 4),
        msg("k3", "tool", [], tool_call_id="h1", created=T0 + 5),  # no text part: it cannot be marked
    ]
    plan = plan_microcompaction(msgs, T0, None, tool_name_map={"TodoWrite": "todowrite", "Bash": "bash"})
    assert [m.call_id for m in plan.marks] == ["c7"]
    assert plan.unmapped == {"Read": 2, "mcp__db__query": 1}
    assert plan_microcompaction(msgs, None, None).unmapped == {}  # no threshold: nothing is looked at


def test_compactable_names() -> None:
    assert COMPACTABLE == {
        "read",
        "view_image",
        "bash",
        "grep",
        "glob",
        "webfetch",
        "websearch",
        "edit",
        "write",
        "multiedit",
        "apply_patch",
        "codesearch",
    }


def test_split_anthropic_mark_on_result_part_and_carrier_time() -> None:
    issuer = assistant(
        "a1",
        tool_use("c1", "read", {"path": "x"}),
        tool_use("c2", "task"),
        created=T0 + 5,
        finish="tool-calls",
    )
    carrier = user(
        "k1",
        {**tool_result("c1", "body"), "id": "prt_r1"},
        tool_result("c2", "t"),
        text("next"),
        created=T0 + 15,
    )
    early = [
        assistant("a0", tool_use("c0", "read"), created=T0 + 1),
        user("k0", tool_result("c0"), created=T0 + 8),
    ]
    original = carrier.parts[0]
    marks = microcompact([*early, issuer, carrier], T0 + 10, None, T0 + 50)
    assert marks == [CompactMark("k1", "c1", "prt_r1", T0 + 50)]
    assert carrier.parts[0]["time"] == {"compacted": T0 + 50} and "time" not in original
    assert "time" not in carrier.parts[1] and "time" not in early[1].parts[0]


def test_split_openai_tool_message_marks_first_text_part() -> None:
    issuer = assistant("a1", function("c1", "bash", '{"command":"ls"}'), created=T0 + 12, finish="tool-calls")
    result = tool_message("t1", "c1", "listing", created=T0 + 13)
    failed = tool_message("t2", "c2", "boom", created=T0 + 14, is_error=True)
    issuer2 = assistant("a2", function("c2", "bash"), created=T0 + 13, finish="tool-calls")
    marks = microcompact([issuer, result, issuer2, failed], T0 + 10, None, T0 + 60)
    assert [(m.message_id, m.call_id) for m in marks] == [("t1", "c1")]
    assert result.parts[0]["time"]["compacted"] == T0 + 60
    assert "time" not in failed.parts[0]


def test_split_responses_output_part_and_pending_call() -> None:
    issuer = assistant("a1", function_call("c1", "grep"), function_call("c9", "grep"), created=T0 + 12)
    carrier = user("k1", function_call_output("c1", "hits"), created=T0 + 13)
    marks = microcompact([issuer, carrier], T0 + 10, None, T0 + 70)
    marked = [(m.message_id, m.call_id, m.part_id, m.compacted_at) for m in marks]
    assert marked == [("k1", "c1", None, T0 + 70)]
    assert carrier.parts[0]["time"] == {"compacted": T0 + 70}


def test_split_responses_custom_tool_call_output_is_marked() -> None:
    issuer = assistant("a1", custom_tool_call("c1", "apply_patch", "*** Begin Patch"), created=T0 + 12)
    carrier = msg("k1", "tool", [custom_tool_call_output("c1", "Done")], created=T0 + 13)
    marks = microcompact([issuer, carrier], T0 + 10, None, T0 + 70)
    marked = [(m.message_id, m.call_id, m.part_id, m.compacted_at) for m in marks]
    assert marked == [("k1", "c1", None, T0 + 70)]
    assert carrier.parts[0]["time"] == {"compacted": T0 + 70}


def test_microcompaction_is_idempotent() -> None:
    msgs = _example_session()
    microcompact(msgs, T0 + 10, None, T0 + 999)
    snapshot = copy.deepcopy([m.parts for m in msgs])
    assert microcompact(msgs, T0 + 10, None, T0 + 2000) == []
    assert [m.parts for m in msgs] == snapshot
