"""Traps the real transcripts of shared/real-sessions showed in request building.

Each test is a small synthetic case of one trap (never real-session content): built in every format,
checked with the provider-rules checker, and asserting what is sent and what is reported.
"""

from __future__ import annotations

import json
from typing import Any

from mimo_sidecar.core import engine, texts
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.formats import FORMATS, Target
from mimo_sidecar.core.formats.rules import check
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.shapes import ToolUse, tool_uses
from tests.unit.builders import (
    assistant,
    checkpoint_memory,
    custom_tool_call,
    custom_tool_call_output,
    function_call,
    function_call_output,
    msg,
    session_of,
    text,
    thinking,
    tool_result,
    tool_use,
    usage,
    user,
)
from tests.unit.split_sessions import CLAUDE, GPT, T0
from tests.unit.test_formats import build, valid_everywhere
from tests.unit.test_sdk_types import validate


def warned(built: Any, code: str) -> list[str]:
    return [w for w in built.warnings if w.startswith(code + ":")]


# =================================================================================================
# Whitespace-only text blocks (Claude Code stores the "\n\n" blocks the model emitted)
# =================================================================================================
def claude_response_with_blank_text() -> list[Any]:
    """One response stored as four entries: "\\n\\n", signed thinking, text, a call; then its result."""

    def entry(mid: str, t: int, part: dict[str, Any], finish: Any = None) -> Any:
        return assistant(mid, part, finish=finish, created=T0 + t, providerMessageID="msg_A", **CLAUDE)

    return [
        user("u1", text("Fix the build."), created=T0),
        entry("a1", 1, text("\n\n")),
        entry("a2", 2, thinking("Read the log first.", "sig-A")),
        entry("a3", 3, text("Reading the log.")),
        entry("a4", 4, tool_use("toolu_A", "read", {"path": "build.log"}), finish="tool-calls"),
        user(
            "k1",
            tool_result("toolu_A", [{"type": "text", "text": " \n"}, {"type": "text", "text": "ok"}]),
            created=T0 + 5,
        ),
    ]


def test_whitespace_only_text_is_never_sent_and_is_counted() -> None:
    msgs = claude_response_with_blank_text()
    builds = valid_everywhere(msgs, target=Target(thinking=True, given=True))
    anthropic = builds["anthropic"]
    final = anthropic.messages[1]["content"]
    # The thinking block now opens the final assistant message: thinking stays on (rule
    # `anthropic/thinking-not-first`).
    assert [b["type"] for b in final] == ["thinking", "text", "tool_use"]
    assert anthropic.overrides == {}
    assert anthropic.messages[2]["content"][0]["content"] == [{"type": "text", "text": "ok"}]
    for fmt, built in builds.items():
        assert '"\\n\\n"' not in json.dumps(built.messages), fmt
        # Result content sent as blocks loses its blank block too; as one string it keeps it.
        where = "a1, k1" if fmt in ("anthropic", "openai-responses") else "a1"
        assert warned(built, "blank-text-dropped") == [
            f"blank-text-dropped: {where.count(',') + 1} × whitespace-only text blocks not sent (in {where})"
        ]


def test_the_checker_rejects_whitespace_only_anthropic_text() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "\n\n"}, {"type": "text", "text": "ok"}]},
        {"role": "user", "content": "  "},
    ]
    rules = [(v.rule, v.index) for v in check("anthropic", messages)]
    assert rules == [("anthropic/empty", 1), ("anthropic/empty", 2)]


def test_a_blank_user_message_is_left_out() -> None:
    msgs = [user("u1", text("go")), assistant("a1", text("ok")), user("u2", text(" \t\n"))]
    for fmt in FORMATS:
        built = build(msgs, fmt)
        assert built.source_groups[-1] == ["a1"], fmt
        assert warned(built, "blank-text-dropped"), fmt


# =================================================================================================
# The memory reminder moves every step: never a cache breakpoint
# =================================================================================================
def canonical_blocks(messages: list[dict[str, Any]]) -> list[str]:
    """Each message block as the cache sees it (role and bytes, without its cache_control)."""
    return [
        json.dumps([m["role"], {k: v for k, v in b.items() if k != "cache_control"}], sort_keys=True)
        for m in messages
        for b in m["content"]
    ]


def breakpoints(messages: list[dict[str, Any]]) -> list[int]:
    return [i for i, b in enumerate(b for m in messages for b in m["content"]) if "cache_control" in b]


def test_breakpoints_skip_the_reminder_so_the_next_step_reads_them() -> None:
    """In an Anthropic-shaped tool loop the reminder goes to the newest carrier, so it leaves last
    step's carrier: a breakpoint on it would be an entry no later request repeats."""
    msgs = [
        user("b1", text("boundary text"), created=T0),
        assistant("a1", tool_use("toolu_1", "read"), finish="tool-calls", created=T0 + 1, **CLAUDE),
        user("k1", tool_result("toolu_1", "one"), created=T0 + 2),
    ]
    step = [
        assistant("a2", tool_use("toolu_2", "read"), finish="tool-calls", created=T0 + 3, **CLAUDE),
        user("k2", tool_result("toolu_2", "two"), created=T0 + 4),
    ]
    turn_n = build(msgs, "anthropic", reminder="REMINDER", cache_ttl="5m").messages
    turn_n1 = build(msgs + step, "anthropic", reminder="REMINDER", cache_ttl="5m").messages
    assert turn_n[-1]["content"][-1] == {"type": "text", "text": "REMINDER"}  # no breakpoint on it
    assert turn_n1[-1]["content"][-1] == {"type": "text", "text": "REMINDER"}
    before, after = canonical_blocks(turn_n), canonical_blocks(turn_n1)
    marks = breakpoints(turn_n)
    assert marks and breakpoints(turn_n1)
    for mark in marks:  # every entry turn n writes is a prefix turn n+1 repeats: a cache hit
        assert before[: mark + 1] == after[: mark + 1]
    assert check("anthropic", turn_n1) == []


# =================================================================================================
# Codex developer messages (imported as user messages with info.providerRole)
# =================================================================================================
def test_a_developer_message_goes_back_to_responses_as_developer_and_elsewhere_as_user() -> None:
    msgs = [
        user("u1", text("Add a flag."), created=T0),
        assistant(
            "a1", function_call("call_1", "shell", '{"cmd":"ls"}'), finish="tool-calls", created=T0 + 1
        ),
        msg("k1", "tool", [function_call_output("call_1", "a b")], created=T0 + 2),
        user(
            "d1",
            text("<turn_aborted>stopped</turn_aborted>", synthetic=True),
            providerRole="developer",
            created=T0 + 3,
        ),
        user("u2", text("Go on."), created=T0 + 4),
    ]
    builds = valid_everywhere(msgs)
    responses = builds["openai-responses"].messages
    assert [(i["type"], i.get("role")) for i in responses] == [
        ("message", "user"),
        ("function_call", None),
        ("function_call_output", None),
        ("message", "developer"),
        ("message", "user"),
    ]
    assert responses[3]["content"] == [{"type": "input_text", "text": "<turn_aborted>stopped</turn_aborted>"}]
    for fmt in ("openai-chat", "ai-sdk"):
        assert builds[fmt].messages[-2] == {
            "role": "user",
            "content": [{"type": "text", "text": "<turn_aborted>stopped</turn_aborted>"}],
        }


def test_responses_takes_developer_messages_anywhere_and_system_only_at_the_head() -> None:
    def message(role: str) -> dict[str, Any]:
        return {"type": "message", "role": role, "content": [{"type": "input_text", "text": role}]}

    assert check("openai-responses", [message("user"), message("developer"), message("user")]) == []
    (violation,) = check("openai-responses", [message("user"), message("system")])
    assert (violation.rule, violation.index) == ("openai-responses/system-position", 1)


# =================================================================================================
# Codex compaction carrying encrypted_content
# =================================================================================================
def codex_compacted() -> list[Any]:
    return [
        user(
            "c1",
            {"type": "compaction", "encrypted_content": "gAAAA-ENC"},
            text("retained ask", synthetic=True),
            created=T0,
        ),
        user("u1", text("Next step?"), created=T0 + 1),
        assistant("a1", text("Running the tests."), finish="stop", created=T0 + 2, **GPT),
    ]


def test_an_encrypted_compaction_is_replayed_to_responses_and_reported_elsewhere() -> None:
    builds = valid_everywhere(codex_compacted(), open_end=True)
    responses = builds["openai-responses"]
    assert responses.messages[:2] == [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": texts.COMPACTION_LABEL}],
        },
        {"type": "compaction", "encrypted_content": "gAAAA-ENC"},
    ]
    assert responses.messages[2]["content"] == [{"type": "input_text", "text": "retained ask"}]
    assert responses.source_groups[:3] == [["c1"], ["c1"], ["c1"]]
    assert not warned(responses, "compaction-dropped")
    validate("openai-responses", responses.messages, None, {})  # the SDK's input item types
    for fmt in ("ai-sdk", "anthropic", "openai-chat", "gemini"):
        built = builds[fmt]
        assert "gAAAA-ENC" not in json.dumps(built.messages), fmt
        assert texts.COMPACTION_LABEL in json.dumps(built.messages), fmt
        assert warned(built, "compaction-dropped") == [
            "compaction-dropped: 1 × encrypted compaction summaries not sent "
            "(only the Responses API reads them; the label is) (in c1)"
        ], fmt


# =================================================================================================
# Codex items outside the contract vocabulary: local_shell_call, web_search_call
# =================================================================================================
def test_a_local_shell_call_is_a_call_and_a_web_search_is_reported() -> None:
    action = {"type": "exec", "command": ["ls", "-a"], "timeout_ms": 1000}
    msgs = [
        user("u1", text("What is here?"), created=T0),
        assistant(
            "a1",
            {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search"}},
            {"type": "local_shell_call", "call_id": "call_sh", "status": "completed", "action": action},
            finish="tool-calls",
            created=T0 + 1,
            **GPT,
        ),
        msg("k1", "tool", [function_call_output("call_sh", ". .. a.ts")], created=T0 + 2),
    ]
    builds = valid_everywhere(msgs)
    assert builds["anthropic"].messages[1]["content"] == [
        {"type": "tool_use", "id": "call_sh", "name": "local_shell", "input": action}
    ]
    assert builds["openai-responses"].messages[1:] == [
        {
            "type": "function_call",
            "call_id": "call_sh",
            "name": "local_shell",
            "arguments": '{"type":"exec","command":["ls","-a"],"timeout_ms":1000}',
        },
        {"type": "function_call_output", "call_id": "call_sh", "output": ". .. a.ts"},
    ]
    for fmt, built in builds.items():
        assert "ws_1" not in json.dumps(built.messages), fmt
        assert warned(built, "provider-executed-dropped") == [
            "provider-executed-dropped: 1 × server tool items not replayed (web_search_call) (in a1)"
        ], fmt
        assert not warned(built, "orphan-result-dropped") and not warned(built, "result-synthesized"), fmt


def test_shapes_read_a_local_shell_call_as_a_tool_use() -> None:
    action = {"type": "exec", "command": ["pwd"]}
    issuing = assistant("a1", {"type": "local_shell_call", "call_id": "call_sh", "action": action})
    assert tool_uses(issuing) == [ToolUse("call_sh", "local_shell", action, 0)]


# =================================================================================================
# Codex carriers: tool role, no tool_call_id, several outputs
# =================================================================================================
def test_a_tool_role_carrier_without_tool_call_id_answers_every_call_it_holds() -> None:
    msgs = [
        user("u1", text("Patch and test."), created=T0),
        assistant(
            "a1",
            custom_tool_call("call_p", "apply_patch", "*** Begin Patch\n*** End Patch"),
            function_call("call_t", "shell", '{"command":["make","test"]}'),
            finish="tool-calls",
            created=T0 + 1,
            **GPT,
        ),
        msg(
            "k1",
            "tool",
            [
                custom_tool_call_output("call_p", "Done!"),
                function_call_output("call_t", [{"type": "input_text", "text": "2 passed"}]),
            ],
            created=T0 + 2,
        ),
        user("u2", text("Thanks."), created=T0 + 3),
    ]
    builds = valid_everywhere(msgs)
    for fmt, built in builds.items():
        assert not [w for w in built.warnings if "result" in w.split(":")[0]], (fmt, built.warnings)
    assert [i["type"] for i in builds["openai-responses"].messages[1:5]] == [
        "custom_tool_call",
        "function_call",
        "custom_tool_call_output",
        "function_call_output",
    ]
    assert builds["openai-chat"].messages[2:4] == [
        {"role": "tool", "tool_call_id": "call_p", "content": "Done!"},
        {"role": "tool", "tool_call_id": "call_t", "content": "2 passed"},
    ]
    assert builds["anthropic"].messages[2]["content"][:2] == [
        {"type": "tool_result", "tool_use_id": "call_p", "content": "Done!"},
        {"type": "tool_result", "tool_use_id": "call_t", "content": [{"type": "text", "text": "2 passed"}]},
    ]


# =================================================================================================
# Imported transcripts carry no tool definitions
# =================================================================================================
def test_a_history_with_calls_but_no_tools_is_reported_for_anthropic() -> None:
    msgs = claude_response_with_blank_text()
    bare = session_of(msgs, "ses_tools", request_prefix={"system": ["Be brief."]})
    res = engine.build(bare, MemoryRoot("/nonexistent"), RebuildConfig(), now_ms=0, fmt="anthropic")
    assert warned(res.request, "tools-missing")
    (violation,) = check("anthropic", res.request.messages, prefix=res.prefix.request)
    assert violation.rule == "anthropic/tools-required"
    assert check("anthropic", res.request.messages) == []  # no prefix given: not checked

    tools = {"system": ["Be brief."], "tools": [{"name": "read", "input_schema": {"type": "object"}}]}
    declared = session_of(msgs, "ses_tools", request_prefix=tools)
    res = engine.build(declared, MemoryRoot("/nonexistent"), RebuildConfig(), now_ms=0, fmt="anthropic")
    assert not warned(res.request, "tools-missing")
    assert check("anthropic", res.request.messages, prefix=res.prefix.request) == []
    for fmt in ("openai-chat", "openai-responses", "gemini"):  # the other APIs take such a history
        res = engine.build(bare, MemoryRoot("/nonexistent"), RebuildConfig(), now_ms=0, fmt=fmt)
        assert not warned(res.request, "tools-missing"), fmt


# =================================================================================================
# The default target comes from storage: stable when a rebuild collapses the assistant messages
# =================================================================================================
def test_the_prefix_keeps_its_bytes_when_a_rebuild_collapses_every_assistant_message(tmp_path: Any) -> None:
    msgs = [
        user("u1", text("Rename the flag."), created=T0),
        assistant(  # an older model: the writer's fork ends here, and still goes to the newest model
            "a1",
            text("Renamed."),
            finish="stop",
            created=T0 + 1,
            tokens=usage(9_000, 50),
            providerID="openai",
            modelID="gpt-4.1",
        ),
        user("u2", text("Thanks, now the docs."), created=T0 + 2),
        assistant("a2", text("Docs updated."), finish="stop", created=T0 + 3, tokens=usage(9_500, 50), **GPT),
    ]
    session = session_of(msgs, "ses_chat", request_prefix={"system": ["Be brief."]})
    memory = checkpoint_memory(tmp_path, "ses_chat")
    before = {fmt: engine.build(session, memory, RebuildConfig(), now_ms=0, fmt=fmt) for fmt in FORMATS}
    assert before["openai-chat"].prefix.request == {
        "messages": [{"role": "developer", "content": "Be brief."}]
    }
    writer = engine.build_for_writer(session, "a1", fmt="openai-chat")  # an older fork: same prefix
    assert writer.prefix.hash == before["openai-chat"].prefix.hash

    session.watermark = "a2"
    res = engine.insert(
        session,
        memory,
        RebuildConfig(inflation_guard=False),
        watermark="a2",
        reason="manual",
        now_ms=T0 + 10,
        minter=IdMinter(),
    )
    assert res.outcome == "rebuilt"
    for fmt in FORMATS:
        after = engine.build(session, memory, RebuildConfig(), now_ms=0, fmt=fmt)
        assert all(m.get("role") not in ("assistant", "model") for m in after.request.messages), fmt
        assert after.prefix.hash == before[fmt].prefix.hash, fmt
        assert after.request.target == before[fmt].request.target, fmt


# =================================================================================================
# AI SDK providerOptions map each provider to an object
# =================================================================================================
def test_reasoning_metadata_that_is_not_provider_objects_stays_out_of_provider_options() -> None:
    msgs = [
        user("u1", text("go"), created=T0),
        assistant(
            "a1",
            {"type": "reasoning", "text": "r1", "metadata": {"redacted": "reasoning-metadata:prt_1"}},
            {"type": "reasoning", "text": "r2", "metadata": {"openai": {"itemId": "rs_2"}, "note": 3}},
            {"type": "reasoning", "text": "r3", "metadata": {}},
            text("done"),
            created=T0 + 1,
            **GPT,
        ),
    ]
    built = build(msgs, "ai-sdk")
    assert built.messages[1]["content"][:3] == [
        {"type": "reasoning", "text": "r1"},
        {"type": "reasoning", "text": "r2", "providerOptions": {"openai": {"itemId": "rs_2"}}},
        {"type": "reasoning", "text": "r3", "providerOptions": {}},  # as stored: a valid shape
    ]
    assert warned(built, "provider-options-dropped") == [
        "provider-options-dropped: 2 × reasoning metadata entries that are not provider objects (in a1, …)"
    ]


def test_a_result_item_no_format_carries_is_reported() -> None:
    """Claude Code's tool search answers with `tool_reference` blocks inside the result."""
    content = [{"type": "text", "text": "found 1 tool"}, {"type": "tool_reference", "tool_name": "grep"}]
    msgs = [
        user("u1", text("Find a search tool."), created=T0),
        assistant("a1", tool_use("toolu_S", "ToolSearch", {"query": "grep"}), finish="tool-calls", **CLAUDE),
        user("k1", tool_result("toolu_S", content), created=T0 + 2),
    ]
    for fmt, built in valid_everywhere(msgs).items():
        assert "tool_reference" not in json.dumps(built.messages), fmt
        assert warned(built, "part-not-sent") == [
            "part-not-sent: 1 × tool-result item of type 'tool_reference' (in k1)"
        ], fmt
