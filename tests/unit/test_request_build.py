"""Request assembly (behavior.md#request): view, collapse, conversion to AI SDK model messages, pairing,
reminder."""

from __future__ import annotations

import copy

import pytest

from mimo_sidecar.core import texts
from mimo_sidecar.core.request.assembly import BuiltRequest, build_messages, inline_output
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.ordering import id_ordering
from mimo_sidecar.core.session.session import Session, batch_from_messages
from tests.unit.builders import (
    assistant,
    checkpoint,
    compaction,
    function,
    function_call,
    function_call_output,
    msg,
    subtask,
    text,
    tool,
    tool_message,
    tool_result,
    tool_use,
    user,
)

REMINDER = "<system-reminder>\nmemory lives here\n</system-reminder>"
INTERRUPTED = {"type": "error-text", "value": texts.INTERRUPTED_TOOL_RESULT}


def build(messages, *, collapse_tail=False, reminder=None, **kw) -> BuiltRequest:
    return build_messages(
        messages, collapse_tail=collapse_tail, ordering=id_ordering(), reminder=reminder, **kw
    )


def txt(t: str) -> dict:
    return {"type": "text", "text": t}


def call(cid: str, name: str, input=None) -> dict:
    return {"type": "tool-call", "toolCallId": cid, "toolName": name, "input": {} if input is None else input}


def result(cid: str, name: str, output: dict) -> dict:
    return {"type": "tool-result", "toolCallId": cid, "toolName": name, "output": output}


def out_text(v: str) -> dict:
    return {"type": "text", "value": v}


def boundary(
    mid: str = "msg_cp", covered: str = "msg_01", digest: str | None = None, *, rebuild: str = "REBUILD"
) -> Message:
    return user(
        mid,
        checkpoint(covered, digest),
        text("## Checkpoint\n\nindex", synthetic=True),
        text(rebuild, synthetic=True),
        text("## Active Actors\n\nactors", synthetic=True),
    )


# =================================================================================================
# behavior.md#view view (through the session) and behavior.md#request-examples boundary example
# =================================================================================================
def test_view_example_starts_at_the_newest_boundary() -> None:
    session = Session("ses_1")
    session.apply(
        batch_from_messages(
            [
                {"info": {"id": "ancient", "role": "user", "time": {"created": 1}}, "parts": [text("old")]},
                {
                    "info": {"id": "compactionUser", "role": "user", "time": {"created": 2}},
                    "parts": [compaction()],
                },
                {
                    "info": {
                        "id": "summaryAssistant",
                        "role": "assistant",
                        "time": {"created": 3},
                        "summary": True,
                    },
                    "parts": [text("the summary")],
                },
            ]
        )
    )
    view = session.view()
    assert [m.id for m in view] == ["compactionUser", "summaryAssistant"]
    built = build_messages(view, collapse_tail=True, ordering=session.ordering(), reminder=None)
    assert built.messages == [
        {"role": "user", "content": [txt(texts.COMPACTION_LABEL)]},
        {"role": "assistant", "content": [txt("the summary")]},
    ]
    assert built.sources == ["compactionUser", "summaryAssistant"]


def test_boundary_example_is_one_user_turn() -> None:
    b = user(
        "msg_cp",
        checkpoint("msg_01"),
        text("## Checkpoint\n\ndir", synthetic=True),
        text("... prior turns summarized here ...", synthetic=True),
    )
    built = build([b])
    assert built.messages == [
        {
            "role": "user",
            "content": [
                txt(texts.CHECKPOINT_LABEL),
                txt("## Checkpoint\n\ndir"),
                txt("... prior turns summarized here ..."),
            ],
        }
    ]


def test_boundary_turn_block_order() -> None:
    built = build([boundary()])
    assert [b["text"] for b in built.messages[0]["content"]] == [
        texts.CHECKPOINT_LABEL,
        "## Checkpoint\n\nindex",
        "REBUILD",
        "## Active Actors\n\nactors",
    ]


# =================================================================================================
# behavior.md#part-conversion user parts
# =================================================================================================
def test_user_parts() -> None:
    m = user(
        "u1",
        text("visible"),
        text("hidden", ignored=True),
        text("injected", synthetic=True),
        {"type": "file", "mime": "image/png", "url": "data:image/png;base64,AAAA", "filename": "a.png"},
        {"type": "file", "mime": "text/plain", "url": "https://x/y.txt"},
        subtask("rg x", agent="explore", description="find x"),
        {"type": "step-start"},
    )
    assert build([m]).messages == [
        {
            "role": "user",
            "content": [
                txt("visible"),
                txt("injected"),
                {
                    "type": "file",
                    "mediaType": "image/png",
                    "data": "data:image/png;base64,AAAA",
                    "filename": "a.png",
                },
                {"type": "file", "mediaType": "text/plain", "data": "https://x/y.txt"},
                txt(texts.subtask_request_text("explore", "find x")),
            ],
        }
    ]


def test_messages_without_parts_or_content_are_skipped() -> None:
    built = build([user("u0"), user("u1", text("x", ignored=True)), assistant("a0"), user("u2", text("y"))])
    assert built.sources == ["u2"]


# =================================================================================================
# behavior.md#part-conversion inline tool parts
# =================================================================================================
def test_inline_tool_call_and_results() -> None:
    a = assistant(
        "a1",
        {"type": "step-start"},
        text("let me look"),
        {"type": "reasoning", "text": "hmm", "metadata": {"anthropic": {"signature": "s"}}},
        tool("c1", "read", {"path": "x"}, output="file body"),
        tool("c2", "bash", {"command": "ls"}, status="running"),
        finish="tool-calls",
    )
    built = build([a])
    assert built.messages == [
        {
            "role": "assistant",
            "content": [
                txt("let me look"),
                {"type": "reasoning", "text": "hmm", "providerOptions": {"anthropic": {"signature": "s"}}},
                call("c1", "read", {"path": "x"}),
                call("c2", "bash", {"command": "ls"}),
            ],
        },
        {
            "role": "tool",
            "content": [
                result("c1", "read", out_text("file body")),
                result("c2", "bash", INTERRUPTED),
            ],
        },
    ]
    assert built.sources == ["a1", "a1"]


def test_inline_steps_become_separate_turns() -> None:
    a = assistant(
        "a1",
        {"type": "step-start"},
        tool("c1", "read", output="one"),
        {"type": "step-finish"},
        {"type": "step-start"},
        text("after the read"),
        tool("c2", "grep", output="two"),
    )
    built = build([a])
    assert [m["role"] for m in built.messages] == ["assistant", "tool", "assistant", "tool"]
    assert built.messages[2]["content"] == [txt("after the read"), call("c2", "grep")]


@pytest.mark.parametrize(
    ("state", "output"),
    [
        ({"status": "completed", "input": {}, "output": "o", "time": {"start": 0, "end": 1}}, out_text("o")),
        (
            {
                "status": "completed",
                "input": {},
                "output": "o",
                "time": {"start": 0, "end": 1, "compacted": 5},
                "attachments": [{"type": "file", "mime": "image/png", "url": "data:image/png;base64,QQ=="}],
            },
            out_text(texts.CLEARED_TOOL_RESULT),
        ),
        (
            {
                "status": "completed",
                "input": {},
                "output": "o",
                "time": {"start": 0, "end": 1},
                "attachments": [{"type": "file", "mime": "image/png", "url": "data:image/png;base64,QQ=="}],
            },
            {
                "type": "content",
                "value": [
                    {"type": "text", "text": "o"},
                    {"type": "media", "data": "QQ==", "mediaType": "image/png"},
                ],
            },
        ),
        (
            {
                "status": "error",
                "input": {},
                "error": "aborted",
                "metadata": {"interrupted": True, "output": "partial"},
            },
            out_text("partial"),
        ),
        (
            {"status": "error", "input": {}, "error": "aborted", "metadata": {"interrupted": True}},
            {"type": "error-text", "value": "aborted"},
        ),
        (
            {"status": "error", "input": {}, "error": "boom", "metadata": {"output": "partial"}},
            {"type": "error-text", "value": "boom"},
        ),
        ({"status": "pending", "input": {}, "raw": ""}, INTERRUPTED),
        ({"status": "running", "input": {}, "time": {"start": 0}}, INTERRUPTED),
    ],
)
def test_inline_output(state, output) -> None:
    assert inline_output(state) == output


def test_compacted_call_keeps_name_and_input() -> None:
    a = assistant("a1", tool("c1", "read", {"path": "big.ts"}, output="huge", compacted=123))
    built = build([a])
    assert built.messages[0]["content"] == [call("c1", "read", {"path": "big.ts"})]
    assert built.messages[1]["content"] == [result("c1", "read", out_text(texts.CLEARED_TOOL_RESULT))]


@pytest.mark.parametrize(
    ("error", "parts", "kept"),
    [
        ({"name": "APIError", "data": {}}, [text("partial")], False),
        ({"name": "MessageAbortedError"}, [text("partial")], True),
        ({"name": "AbortError"}, [tool("c1", "read")], True),
        (
            {"name": "MessageAbortedError"},
            [{"type": "step-start"}, {"type": "reasoning", "text": "r"}],
            False,
        ),
        ("a plain string error", [text("x")], False),
    ],
)
def test_errored_assistant_messages(error, parts, kept) -> None:
    built = build([user("u1", text("go")), assistant("a1", *parts, error=error)])
    assert ("a1" in built.sources) == kept


# =================================================================================================
# behavior.md#skill-catalog skill catalog (D2)
# =================================================================================================
def test_flagged_skill_catalog_parts_are_dropped_outside_the_boundary() -> None:
    m = user(
        "u1",
        text("Skills available:\n- x", synthetic=True, metadata={"skillCatalog": True}),
        text("also flagged", synthetic=True, skillCatalog=True),
        text("the question"),
    )
    assert build([m]).messages == [{"role": "user", "content": [txt("the question")]}]


def test_skill_catalog_flag_name_is_configurable() -> None:
    m = user("u1", text("catalog", metadata={"kind": True}), text("q"))
    assert build([m], skill_catalog_flag="kind").messages[0]["content"] == [txt("q")]
    assert build([m]).messages[0]["content"] == [txt("catalog"), txt("q")]


def test_rebuild_text_quoting_the_skill_catalog_phrase_is_still_sent() -> None:
    phrase = "The following skills are available in this session:"
    b = boundary(rebuild=f"# Recent user input (verbatim)\nwhy does it say '{phrase}'?")
    later = user("u2", text(f"quote: {phrase}", synthetic=True))  # no flag: no substring filtering
    built = build([b, later])
    assert phrase in built.messages[0]["content"][2]["text"]
    assert built.messages[1]["content"] == [txt(f"quote: {phrase}")]
    assert built.warnings == []


def test_flag_on_a_boundary_part_is_ignored_and_reported() -> None:
    b = boundary()
    b.parts[2] = {**b.parts[2], "metadata": {"skillCatalog": True}}
    built = build([b])
    assert "REBUILD" in [blk["text"] for blk in built.messages[0]["content"]]
    assert any("D2" in w for w in built.warnings)


# =================================================================================================
# Split shapes (D8) and behavior.md#request-validity pairing
# =================================================================================================
def test_anthropic_carrier_splits_into_tool_and_user_messages() -> None:
    a = assistant("a1", text("reading"), tool_use("c1", "read", {"path": "x"}), finish="tool-calls")
    k = user("k1", tool_result("c1", [{"type": "text", "text": "body"}]), text("next question"))
    built = build([user("u0", text("start")), a, k])
    assert built.messages == [
        {"role": "user", "content": [txt("start")]},
        {"role": "assistant", "content": [txt("reading"), call("c1", "read", {"path": "x"})]},
        {"role": "tool", "content": [result("c1", "read", out_text("body"))]},
        {"role": "user", "content": [txt("next question")]},
    ]
    assert built.sources == ["u0", "a1", "k1", "k1"]


def test_openai_chat_shape() -> None:
    """The results of one step form one tool message, whatever the number of tool-role messages."""
    a = assistant(
        "a1", function("c1", "bash", '{"command":"ls"}'), function("c2", "bash", "{}"), finish="tool-calls"
    )
    built = build([a, tool_message("t1", "c1", "listing"), tool_message("t2", "c2", "denied", is_error=True)])
    assert built.messages == [
        {"role": "assistant", "content": [call("c1", "bash", {"command": "ls"}), call("c2", "bash")]},
        {
            "role": "tool",
            "content": [
                result("c1", "bash", out_text("listing")),
                result("c2", "bash", {"type": "error-text", "value": "denied"}),
            ],
        },
    ]
    assert built.sources == ["a1", "t1"] and built.source_groups == [["a1"], ["t1", "t2"]]


def test_openai_responses_shape_with_compaction_and_interruption() -> None:
    a = assistant(
        "a1", function_call("c1", "grep", '{"q":"x"}'), function_call("c2", "read"), finish="tool-calls"
    )
    out1 = {**function_call_output("c1", "hits"), "time": {"compacted": 9}}
    out2 = {**function_call_output("c2", "cut off"), "interrupted": True}
    built = build([a, user("k1", out1, out2)])
    assert built.messages[1] == {
        "role": "tool",
        "content": [
            result("c1", "grep", out_text(texts.CLEARED_TOOL_RESULT)),
            result("c2", "read", {"type": "error-text", "value": "cut off"}),
        ],
    }


def test_compacted_openai_tool_message() -> None:
    a = assistant("a1", function("c1", "read"), finish="tool-calls")
    t = tool_message("t1", "c1", "long output")
    t.parts[0] = {**t.parts[0], "time": {"compacted": 7}}
    assert build([a, t]).messages[1]["content"] == [result("c1", "read", out_text(texts.CLEARED_TOOL_RESULT))]


def test_missing_result_is_synthesized_right_after_the_call() -> None:
    a = assistant("a1", tool_use("c1", "read"), tool_use("c2", "bash"), finish="tool-calls")
    k = user("k1", tool_result("c2", "ok"))
    built = build([a, k, user("u2", text("then"))])
    assert built.messages[1] == {
        "role": "tool",
        "content": [
            result("c1", "read", INTERRUPTED),
            result("c2", "bash", out_text("ok")),
        ],
    }
    assert any("c1" in w for w in built.warnings)


def test_call_without_any_carrier_gets_its_own_tool_message() -> None:
    a = assistant("a1", function_call("c1", "bash"), finish="tool-calls")
    built = build([user("u1", text("go")), a, user("u2", text("hello?"))])
    assert [m["role"] for m in built.messages] == ["user", "assistant", "tool", "user"]
    assert built.messages[2]["content"] == [result("c1", "bash", INTERRUPTED)]
    assert built.sources[2] == "a1"


def test_orphan_and_duplicate_results_are_dropped() -> None:
    a = assistant("a1", tool_use("c1", "read"), finish="tool-calls")
    k = user(
        "k1", tool_result("c1", "first"), tool_result("c1", "second"), tool_result("c9", "orphan"), text("q")
    )
    pure_orphan = tool_message("t9", "c8", "nobody called me")
    built = build([pure_orphan, a, k])
    assert built.messages == [
        {"role": "assistant", "content": [call("c1", "read")]},
        {"role": "tool", "content": [result("c1", "read", out_text("first"))]},
        {"role": "user", "content": [txt("q")]},
    ]
    assert built.sources == ["a1", "k1", "k1"]


def test_result_before_its_call_is_dropped_and_the_call_synthesized() -> None:
    k = user("k1", tool_result("c1", "early"))
    a = assistant("a1", tool_use("c1", "read"), finish="tool-calls")
    built = build([k, a])
    assert built.messages == [
        {"role": "assistant", "content": [call("c1", "read")]},
        {"role": "tool", "content": [result("c1", "read", INTERRUPTED)]},
    ]


def test_collapse_removes_issuer_and_its_results_in_split_shapes() -> None:
    b = boundary("msg_cp", "msg_01", "msg_03")
    a = assistant("msg_02", tool_use("c1", "read"), finish="tool-calls")
    k = user("msg_03", tool_result("c1", "body"), text("user words"))
    live = assistant("msg_04", text("answer"))
    built = build([b, a, k, live], collapse_tail=True)
    assert built.sources == ["msg_cp", "msg_03", "msg_04"]
    assert built.messages[1] == {"role": "user", "content": [txt("user words")]}
    assert built.collapsed_ids == ["msg_02"]


# =================================================================================================
# behavior.md#request-collapse collapse in the request, behavior.md#collapse-examples
# =================================================================================================
def test_collapse_example() -> None:
    a2 = assistant("msg_02", text("digested"))
    b = boundary("msg_cp", "msg_01", "msg_02")
    a3 = assistant("msg_03", text("live"))
    assert build([a2, b, a3], collapse_tail=True).sources == ["msg_cp", "msg_03"]
    assert build([a2, b, a3], collapse_tail=False).sources == ["msg_02", "msg_cp", "msg_03"]


def test_collapse_keeps_user_messages() -> None:
    msgs = [
        assistant("msg_02", text("x")),
        boundary("msg_cp", "msg_01", "msg_03"),
        user("msg_03", text("typed")),
        assistant("msg_04", text("y")),
    ]
    built = build(msgs, collapse_tail=True)
    assert built.sources == ["msg_cp", "msg_03", "msg_04"] and built.collapsed_ids == ["msg_02"]


def test_legacy_boundary_without_digest_up_to_collapses_nothing() -> None:
    msgs = [assistant("msg_02", text("x")), boundary("msg_cp", "msg_01", None)]
    assert build(msgs, collapse_tail=True).sources == ["msg_02", "msg_cp"]


# =================================================================================================
# behavior.md#memory-reminder reminder
# =================================================================================================
def test_reminder_goes_to_the_newest_user_message_and_is_not_stored() -> None:
    u1, u2 = user("u1", text("first")), user("u2", text("second"))
    a = assistant("a1", text("reply"))
    stored = copy.deepcopy([u1.parts, u2.parts])
    built = build([u1, u2, a], reminder=REMINDER)
    assert built.messages[1] == {"role": "user", "content": [txt("second"), txt(REMINDER)]}
    assert built.messages[2] == {"role": "assistant", "content": [txt("reply")]}
    assert [u1.parts, u2.parts] == stored


def test_reminder_skips_openai_tool_messages() -> None:
    a = assistant("a1", function("c1", "bash"), finish="tool-calls")
    built = build([user("u1", text("go")), a, tool_message("t1", "c1", "out")], reminder=REMINDER)
    assert built.messages[0]["content"] == [txt("go"), txt(REMINDER)]
    assert all(b["type"] == "tool-result" for b in built.messages[2]["content"])


def test_reminder_after_the_results_of_a_pure_anthropic_carrier() -> None:
    a = assistant("a1", tool_use("c1", "read"), finish="tool-calls")
    built = build([user("u1", text("go")), a, user("k1", tool_result("c1", "ok"))], reminder=REMINDER)
    assert [m["role"] for m in built.messages] == ["user", "assistant", "tool", "user"]
    assert built.messages[3] == {"role": "user", "content": [txt(REMINDER)]}
    assert built.sources[3] == "k1"
    assert built.messages[0]["content"] == [txt("go")]


def test_reminder_on_the_text_of_a_mixed_anthropic_carrier() -> None:
    a = assistant("a1", tool_use("c1", "read"), finish="tool-calls")
    built = build([a, user("k1", tool_result("c1", "ok"), text("and?"))], reminder=REMINDER)
    assert built.messages[-1] == {"role": "user", "content": [txt("and?"), txt(REMINDER)]}


def test_reminder_on_the_boundary_when_it_is_the_newest_user_turn() -> None:
    built = build([boundary(), assistant("a1", text("ok"))], reminder=REMINDER)
    assert built.messages[0]["content"][-1] == txt(REMINDER)
    assert built.messages[0]["content"][-2] == txt("## Active Actors\n\nactors")


def test_reminder_without_any_user_message_is_a_warning() -> None:
    built = build([assistant("a1", text("x"))], reminder=REMINDER)
    assert REMINDER not in str(built.messages) and built.warnings


# =================================================================================================
# Estimate and the first request after a rebuild (behavior.md#first-request-after-rebuild)
# =================================================================================================
def test_estimated_tokens_are_the_stored_estimates_of_kept_messages() -> None:
    a2 = assistant("msg_02", text("digested " * 50))
    b = boundary("msg_cp", "msg_01", "msg_02")
    a3 = assistant("msg_03", text("live"))
    empty = user("msg_04")
    built = build([a2, b, a3, empty], collapse_tail=True)
    assert built.estimated_tokens == b.tokens + a3.tokens


def test_first_request_after_rebuild() -> None:
    b = boundary("msg_cp", "msg_01", "msg_03")
    u2 = user("msg_02", text("please fix the lexer"))  # after W: sent verbatim, never collapsed
    a3 = assistant("msg_03", tool("c1", "read", {"path": "lexer.ts"}, output="src"), finish="tool-calls")
    a5 = assistant(
        "msg_05", tool("c2", "read", {"path": "lexer.ts"}, output="src", compacted=1), text("fixed")
    )
    built = build([b, u2, a3, a5], collapse_tail=True, reminder=REMINDER)
    assert built.sources == ["msg_cp", "msg_02", "msg_05", "msg_05"]
    assert [blk["text"] for blk in built.messages[0]["content"]] == [
        texts.CHECKPOINT_LABEL,
        "## Checkpoint\n\nindex",
        "REBUILD",
        "## Active Actors\n\nactors",
    ]
    assert built.messages[1]["content"] == [txt("please fix the lexer"), txt(REMINDER)]
    assert built.messages[2]["content"] == [call("c2", "read", {"path": "lexer.ts"}), txt("fixed")]
    assert built.messages[3]["content"] == [result("c2", "read", out_text(texts.CLEARED_TOOL_RESULT))]
    assert built.collapsed_ids == ["msg_03"]


def test_unknown_roles_are_ignored() -> None:
    assert build([msg("s1", "system", [text("x")])]).messages == []


def test_reminder_makes_a_turn_of_a_newest_user_message_with_nothing_sendable() -> None:
    msgs = [
        user("u1", text("first")),
        assistant("a1", text("reply")),
        user("u2", text("typed", ignored=True)),
    ]
    built = build(msgs, reminder=REMINDER)
    assert built.messages[-1] == {"role": "user", "content": [txt(REMINDER)]}
    assert built.sources == ["u1", "a1", "u2"]
    assert built.messages[0]["content"] == [txt("first")]


def test_reminder_for_an_empty_newest_user_message_keeps_its_position() -> None:
    msgs = [user("u1", text("first")), user("u2"), assistant("a1", text("reply"))]
    built = build(msgs, reminder=REMINDER)
    assert built.sources == ["u1", "u2", "a1"]
    assert built.messages[1] == {"role": "user", "content": [txt(REMINDER)]}
