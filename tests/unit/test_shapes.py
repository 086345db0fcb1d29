"""core.session.shapes: tool uses/results in the inline and split host shapes, logical calls
(behavior.md#logical-calls, D8)."""

from __future__ import annotations

import pytest

from mimo_sidecar.core.session.shapes import (
    MESSAGE_LEVEL_RESULT,
    ToolResult,
    ToolUse,
    is_carrier,
    is_pure_carrier,
    logical_calls,
    parse_arguments,
    provider_id,
    tool_results,
    tool_uses,
)
from tests.unit.builders import (
    assistant,
    custom_tool_call,
    custom_tool_call_output,
    function,
    function_call,
    function_call_output,
    image,
    input_image,
    msg,
    text,
    tool,
    tool_message,
    tool_result,
    tool_use,
    user,
)


# -- inline ----------------------------------------------------------------------------------------
def test_inline_part_is_a_use_and_a_result_on_the_same_message():
    a = assistant("a1", text("hi"), tool("c1", "read", {"path": "x"}, output="BODY"))
    assert tool_uses(a) == [ToolUse("c1", "read", {"path": "x"}, 1)]
    [result] = tool_results(a)
    assert (result.call_id, result.part_index, result.content, result.is_error) == ("c1", 1, "BODY", False)
    assert result.state is a.parts[1]["state"]
    assert not is_carrier(a)


def test_inline_error_and_interrupted():
    a = assistant("a1", tool("c1", "bash", {}, "error", error="aborted", interrupted=True))
    [result] = tool_results(a)
    assert result.is_error and result.interrupted and result.content == "aborted"


def test_inline_logical_call_state_is_the_part_state():
    a = assistant("a1", tool("c1", "bash", {"command": "ls"}, "running"))
    call = logical_calls([a])["c1"]
    assert call.issuer is a and call.carrier is a and call.inline
    assert call.state() is a.parts[0]["state"]


def test_inline_result_does_not_complete_a_use_on_another_message():
    first = assistant("a1", tool("dup", "read", {}, "pending"))
    second = assistant("a2", tool("dup", "read", {}, "completed", output="x"))
    call = logical_calls([first, second])["dup"]
    assert call.issuer is first and call.carrier is first
    assert call.state()["status"] == "pending"


# -- Anthropic -------------------------------------------------------------------------------------
def test_anthropic_use_and_result():
    a = assistant("a1", text("let me look"), tool_use("tu1", "read", {"path": "p"}), finish="tool-calls")
    u = user(
        "u1",
        tool_result(
            "tu1", [{"type": "text", "text": "line1"}, {"type": "image"}, {"type": "text", "text": "line2"}]
        ),
    )
    assert tool_uses(a) == [ToolUse("tu1", "read", {"path": "p"}, 1)]
    assert tool_results(a) == []
    assert tool_results(u) == [ToolResult("tu1", 0, "line1\nline2", False, False)]
    assert is_carrier(u) and is_pure_carrier(u)
    call = logical_calls([a, u])["tu1"]
    assert call.issuer is a and call.carrier is u
    assert call.state() == {"status": "completed", "input": {"path": "p"}, "output": "line1\nline2"}


def test_anthropic_error_result_and_interrupted_flag():
    a = assistant("a1", tool_use("e1", "bash", {}), tool_use("e2", "bash", {}), tool_use("e3", "bash", {}))
    u = user(
        "u1",
        tool_result("e1", "boom", is_error=True),
        tool_result("e2", "stopped", is_error=True, interrupted=True),
        tool_result("e3", "half", interrupted=True),
    )
    calls = logical_calls([a, u])
    assert calls["e1"].state() == {"status": "error", "input": {}, "error": "boom"}
    assert calls["e2"].state() == {
        "status": "error",
        "input": {},
        "error": "stopped",
        "metadata": {"interrupted": True},
    }
    # An interruption without an error flag is still an error (MiMo records aborts that way).
    assert calls["e3"].state()["status"] == "error"


def test_mixed_anthropic_carrier_is_not_pure():
    u = user("u1", tool_result("t"), text("and also do this"))
    assert is_carrier(u) and not is_pure_carrier(u)


def test_plain_user_message_is_not_a_carrier():
    u = user("u1", text("hello"))
    assert not is_carrier(u) and not is_pure_carrier(u)


def test_result_parts_on_an_assistant_message_are_ignored():
    a = assistant("a1", tool_result("x"))
    assert tool_results(a) == [] and not is_carrier(a)


def test_uses_on_a_user_message_are_ignored():
    assert tool_uses(user("u1", tool_use("x", "read"))) == []


# -- OpenAI Chat -----------------------------------------------------------------------------------
def test_openai_chat_function_and_tool_message():
    a = assistant("a1", function("call_1", "grep", '{"pattern": "x", "n": 2}'), finish="tool-calls")
    t = msg("t1", "tool", [text("out1"), text("out2")], tool_call_id="call_1")
    assert tool_uses(a) == [ToolUse("call_1", "grep", {"pattern": "x", "n": 2}, 0)]
    assert tool_results(t) == [ToolResult("call_1", MESSAGE_LEVEL_RESULT, "out1\nout2", False, False)]
    assert is_carrier(t) and is_pure_carrier(t)
    assert logical_calls([a, t])["call_1"].state()["output"] == "out1\nout2"


def test_openai_chat_tool_message_flags():
    a = assistant("a1", function("c", "bash"))
    t = tool_message("t1", "c", "killed", is_error=True, interrupted=True)
    state = logical_calls([a, t])["c"].state()
    assert state == {"status": "error", "input": {}, "error": "killed", "metadata": {"interrupted": True}}


def test_tool_role_message_without_call_id_is_a_carrier_with_no_result():
    t = msg("t1", "tool", [text("x")])
    assert is_carrier(t) and tool_results(t) == [] and not is_pure_carrier(t)


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        ("  ", {}),
        ("{not json", "{not json"),
        ("[1,2]", [1, 2]),
        (None, {}),
        ({"already": "object"}, {"already": "object"}),
    ],
)
def test_parse_arguments(raw, parsed):
    assert parse_arguments(raw) == parsed


# -- OpenAI Responses ------------------------------------------------------------------------------
def test_openai_responses_call_and_output_on_user_or_tool_role():
    a = assistant("a1", function_call("fc1", "read", '{"path": "a"}'), function_call("fc2", "read", "{}"))
    u = user("u1", function_call_output("fc1", "A"))
    t = msg("t1", "tool", [function_call_output("fc2", "B", is_error=True)])
    calls = logical_calls([a, u, t])
    assert calls["fc1"].carrier is u and calls["fc1"].state()["output"] == "A"
    assert calls["fc2"].carrier is t and calls["fc2"].state() == {
        "status": "error",
        "input": {},
        "error": "B",
    }
    assert is_pure_carrier(u) and is_pure_carrier(t)


def test_function_call_output_list_output():
    u = user(
        "u1",
        function_call_output("x", [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]),
    )
    assert tool_results(u)[0].content == "a\nb"


# -- logical calls ---------------------------------------------------------------------------------
def test_pending_without_result():
    a = assistant("a1", tool_use("p1", "bash", {"command": "sleep 1"}), finish="tool-calls")
    call = logical_calls([a])["p1"]
    assert call.carrier is None and call.result is None
    assert call.state() == {"status": "pending", "input": {"command": "sleep 1"}}


def test_first_result_wins_and_orphans_are_left_out():
    a = assistant("a1", tool_use("x", "read"))
    u1 = user("u1", tool_result("x", "first"), tool_result("orphan", "?"))
    u2 = user("u2", tool_result("x", "second"))
    calls = logical_calls([a, u1, u2])
    assert set(calls) == {"x"}
    assert calls["x"].carrier is u1 and calls["x"].state()["output"] == "first"


def test_calls_are_listed_in_issuing_order():
    a1 = assistant("a1", tool_use("b", "read"), tool_use("a", "read"))
    a2 = assistant("a2", tool("c", "read"))
    u = user("u", tool_result("a"), tool_result("b"))
    assert list(logical_calls([a1, u, a2])) == ["b", "a", "c"]


def test_parts_without_call_ids_are_skipped():
    a = assistant(
        "a1", {"type": "tool_use", "name": "read", "input": {}}, {"type": "tool", "tool": "x", "state": {}}
    )
    u = user("u1", {"type": "tool_result", "content": "x"})
    assert tool_uses(a) == [] and tool_results(a) == [] and tool_results(u) == []
    assert not is_carrier(u)


def test_provider_id():
    assert provider_id(assistant("a1")) == "a1"
    assert provider_id(assistant("a1", providerMessageID="resp_9")) == "resp_9"
    assert provider_id(assistant("a1", providerMessageID="")) == "a1"


# -- Responses freeform tools (custom_tool_call, behavior.md#shapes) ---------------------------------
def test_custom_tool_call_is_a_use_with_its_string_input():
    patch = "*** Begin Patch\n*** Update File: a.ts\n@@\n-x\n+y\n*** End Patch"
    a = assistant("a1", custom_tool_call("call_p", "apply_patch", patch), finish="tool-calls")
    assert tool_uses(a) == [ToolUse("call_p", "apply_patch", patch, 0)]


def test_custom_tool_call_output_is_a_result_and_its_message_a_carrier():
    k = user("k1", custom_tool_call_output("call_p", "Success. Updated a.ts"))
    assert tool_results(k) == [ToolResult("call_p", 0, "Success. Updated a.ts", False, False)]
    assert is_carrier(k) and is_pure_carrier(k)


def test_custom_calls_join_into_logical_calls():
    a = assistant("a1", custom_tool_call("call_p", "apply_patch", "P"), finish="tool-calls")
    k = msg("k1", "tool", [custom_tool_call_output("call_p", [{"type": "input_text", "text": "done"}])])
    call = logical_calls([a, k])["call_p"]
    assert call.carrier is k and call.state() == {"status": "completed", "input": "P", "output": "done"}


def test_image_bearing_results_are_results_with_their_text():
    k = user(
        "k1",
        tool_result("toolu_1", [{"type": "text", "text": "shot"}, image()]),
        function_call_output("call_2", [input_image(), {"type": "input_text", "text": "page"}]),
    )
    assert [(r.call_id, r.content) for r in tool_results(k)] == [("toolu_1", "shot"), ("call_2", "page")]
