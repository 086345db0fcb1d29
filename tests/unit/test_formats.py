"""Requests in each provider's format (core/formats): normalisation, renderers, provider rules.

One test per case that makes a provider refuse a request built naively from a stored history
(calls left unanswered, orphan results, thinking lost in a tool loop, reasoning items, Gemini
signatures, images, call IDs, empty text, cache stability, system text); each builds the case in
every format and runs the rules checker on the output.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from mimo_sidecar.core import engine, texts
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.formats import FORMATS, Target
from mimo_sidecar.core.formats.cache import place_message_breakpoints
from mimo_sidecar.core.formats.call_ids import CallIdMap, anthropic, openai_chat, openai_responses
from mimo_sidecar.core.formats.rules import check
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.request.assembly import BuiltRequest, build_messages
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.ordering import id_ordering
from mimo_sidecar.core.session.session import Session
from tests.unit.builders import (
    assistant,
    checkpoint,
    file_part,
    function_call,
    function_call_output,
    image,
    reasoning_item,
    session_of,
    sync,
    text,
    thinking,
    tool,
    tool_result,
    tool_use,
    user,
)
from tests.unit.split_sessions import (
    CLAUDE,
    GPT,
    LONG_CALL_ID,
    ODD_CALL_ID,
    PNG,
    T0,
    claude_code,
    codex,
    inline_signed,
)

GEMINI = {"providerID": "google", "modelID": "gemini-3-pro"}


def build(msgs: list[Message], fmt: str = "ai-sdk", **kw: Any) -> BuiltRequest:
    kw.setdefault("reminder", None)
    return build_messages(msgs, collapse_tail=False, ordering=id_ordering(), fmt=fmt, **kw)


def valid_everywhere(msgs: list[Message], *, open_end: bool = False, **kw: Any) -> dict[str, BuiltRequest]:
    """Build in every format; assert the provider rules hold in each; return the builds."""
    out = {}
    for fmt in FORMATS:
        built = build(copy.deepcopy(msgs), fmt, **kw)
        target = kw.get("target")
        thinking = target.thinking if isinstance(target, Target) else None
        violations = check(
            fmt, built.messages, overrides=built.overrides, thinking=thinking, open_end=open_end
        )
        assert violations == [], (fmt, violations)
        out[fmt] = built
    return out


def roles(built: BuiltRequest) -> list[str]:
    return [m.get("role", m.get("type")) for m in built.messages]


# =================================================================================================
# Normalisation: one response = one message; results regrouped (the Claude Code 400s)
# =================================================================================================
def test_split_entries_of_one_response_are_merged_and_results_follow_them() -> None:
    built = valid_everywhere(claude_code())["ai-sdk"]
    assert roles(built) == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool"]
    assert built.source_groups[1] == ["m02", "m03", "m04", "m06"]
    assert built.source_groups[2] == ["m05", "m07"]
    assert [b["type"] for b in built.messages[1]["content"]] == [
        "reasoning",
        "text",
        "tool-call",
        "tool-call",
    ]
    assert [b["toolCallId"] for b in built.messages[2]["content"]] == ["toolu_01A", ODD_CALL_ID]
    first_output = built.messages[2]["content"][0]["output"]
    assert first_output == {
        "type": "content",
        "value": [
            {"type": "text", "text": "a body"},
            {"type": "media", "data": PNG, "mediaType": "image/png"},
        ],
    }
    assert built.messages[1]["content"][0] == {
        "type": "reasoning",
        "text": "Two files to read.",
        "providerOptions": {"anthropic": {"signature": "sig-1"}},
    }


def test_anthropic_output_of_a_claude_code_session() -> None:
    built = build(claude_code(), "anthropic")
    assert check("anthropic", built.messages) == []
    first, second, results = built.messages[0], built.messages[1], built.messages[2]
    assert first["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
    }
    assert second["content"][0] == {
        "type": "thinking",
        "thinking": "Two files to read.",
        "signature": "sig-1",
    }
    mapped = second["content"][3]["id"]
    assert mapped != ODD_CALL_ID and mapped.startswith("toolu_01_shell_run_")
    assert built.call_id_map == {
        mapped: ODD_CALL_ID,
        **{k: v for k, v in built.call_id_map.items() if k != mapped},
    }
    assert [b["tool_use_id"] for b in results["content"]] == ["toolu_01A", mapped]
    assert results["content"][0]["content"][1]["type"] == "image"  # the image stays in its result
    assert any(w.startswith("result-synthesized") and "toolu_03C" in w for w in built.warnings)


def test_carrier_text_follows_the_results_of_the_merged_step() -> None:
    msgs = claude_code()[:7]
    msgs[4].parts.append(text("[Request interrupted by user]"))  # user text inside the first carrier
    built = valid_everywhere(msgs)
    assert roles(built["ai-sdk"]) == ["user", "assistant", "tool", "user"]
    last = built["anthropic"].messages[-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text"]


# =================================================================================================
# The cases, one by one
# =================================================================================================
def test_pending_and_running_tools_at_the_tail() -> None:
    msgs = [
        user("u1", text("go")),
        assistant(
            "a1", tool("c1", "bash", status="running"), tool("c2", "read", status="pending"), finish=None
        ),
    ]
    for fmt, built in valid_everywhere(msgs).items():
        assert texts.INTERRUPTED_TOOL_RESULT in json.dumps(built.messages), fmt


def test_parallel_calls_with_one_result_missing() -> None:
    msgs = [
        user("u1", text("go")),
        assistant("a1", tool_use("c1", "read"), tool_use("c2", "read"), finish="tool-calls", **CLAUDE),
        user("k1", tool_result("c2", "two")),
        user("u2", text("and?")),
    ]
    built = valid_everywhere(msgs)
    results = built["ai-sdk"].messages[2]["content"]
    assert [r["toolCallId"] for r in results] == ["c1", "c2"]
    assert results[0]["output"]["type"] == "error-text"
    assert sum(w.startswith("result-synthesized") for w in built["ai-sdk"].warnings) == 1


def test_tail_starting_with_orphan_results_after_the_boundary() -> None:
    msgs = [
        user("b1", checkpoint("x0"), text("REBUILD", synthetic=True)),
        user("k1", tool_result("gone", "late result"), text("carry on")),
        assistant("a1", text("ok")),
        user("u2", text("next")),
    ]
    built = valid_everywhere(msgs)
    assert "late result" not in json.dumps(built["anthropic"].messages)
    assert any(w.startswith("orphan-result-dropped") and "gone" in w for w in built["anthropic"].warnings)


def test_cross_model_step_with_text_after_the_call_replayed_to_claude() -> None:
    msgs = [
        user("u1", text("go")),
        assistant("a1", function_call("c1", "shell", "{}"), text("running it"), finish="tool-calls", **GPT),
        user("k1", function_call_output("c1", "ok")),
        user("u2", text("next")),
    ]
    built = valid_everywhere(msgs)
    assert [b["type"] for b in built["anthropic"].messages[1]["content"]] == ["text", "tool_use"]
    assert built["ai-sdk"].messages[1]["content"][0]["type"] == "tool-call"  # ai-sdk keeps the stored order
    assert any(w.startswith("text-moved-before-calls") for w in built["anthropic"].warnings)


@pytest.mark.parametrize(
    ("case", "target", "thinking_kept", "disabled"),
    [
        ("valid signature", Target(thinking=True, given=True), True, False),
        ("foreign model", Target(model_id="claude-opus-4-8", thinking=True, given=True), False, True),
        ("thinking toggled off", Target(thinking=False, given=True), False, False),
        ("thinking unknown", None, True, False),
    ],
)
def test_anthropic_thinking_loop(
    case: str, target: Target | None, thinking_kept: bool, disabled: bool
) -> None:
    """Signatures kept byte for byte for their model; the two `anthropic/thinking-*` rules about
    the final assistant message."""
    msgs = claude_code()
    built = valid_everywhere(msgs, target=target)["anthropic"]
    blocks = [b for m in built.messages for b in m["content"]]
    kept = [b for b in blocks if b["type"] == "thinking"]
    assert bool(kept) == thinking_kept, case
    if thinking_kept:
        assert [b["signature"] for b in kept] == ["sig-1", "sig-2", "sig-3"]
    assert ("thinking" in built.overrides) == disabled
    if not thinking_kept and target is not None:
        assert any(w.startswith("reasoning-dropped") for w in built.warnings)


def test_stripped_signature_in_the_final_loop_disables_thinking() -> None:
    msgs = [
        user("u1", text("go")),
        assistant(
            "a1",
            {"type": "reasoning", "text": "lost signature"},
            tool_use("c1", "read"),
            finish="tool-calls",
            **CLAUDE,
        ),
        user("k1", tool_result("c1", "ok")),
    ]
    built = valid_everywhere(msgs, target=Target(thinking=True, given=True))["anthropic"]
    assert built.overrides == {"thinking": {"type": "disabled"}}
    assert any(w.startswith("thinking-disabled") for w in built.warnings)
    assert check("anthropic", built.messages, thinking=True) != []  # the override is what makes it valid


def test_openai_reasoning_items() -> None:
    msgs = codex()
    msgs[1].parts.insert(0, reasoning_item("id only", None, "rs_0"))  # id without encrypted content
    built = valid_everywhere(msgs)["openai-responses"]
    reasoning = [i for i in built.messages if i["type"] == "reasoning"]
    assert [r["encrypted_content"] for r in reasoning] == ["ENC-1", "ENC-2"]
    assert all("id" not in r for r in reasoning)  # as Codex sends them (store: false, behavior.md#d16)
    assert built.messages[built.messages.index(reasoning[0]) + 1]["type"] == "function_call"  # its position
    assert all("id" not in i for i in built.messages if i["type"] in ("function_call", "message"))
    assert any("no encrypted content" in w for w in built.warnings)


def test_gemini_unsigned_and_parallel_calls_and_leading_call() -> None:
    msgs = [
        assistant("a1", tool_use("c1", "read"), tool_use("c2", "grep"), finish="tool-calls", **GEMINI),
        user("k1", tool_result("c1", "one"), tool_result("c2", "two")),
    ]
    built = valid_everywhere(msgs)["gemini"]
    assert built.messages[0] == {"role": "user", "parts": [{"text": "[Earlier conversation omitted]"}]}
    calls = built.messages[1]["parts"]
    assert (
        calls[0]["thoughtSignature"] == "skip_thought_signature_validator"
        and "thoughtSignature" not in calls[1]
    )
    assert [p["functionResponse"]["name"] for p in built.messages[2]["parts"]] == ["read", "grep"]


def test_gemini_signature_replayed_to_its_model_only() -> None:
    sig = {"google": {"thoughtSignature": "GSIG"}}
    part = {**tool("c1", "read", output="x"), "metadata": sig}
    msgs = [
        user("u1", text("go")),
        assistant("a1", part, finish="tool-calls", **GEMINI),
        user("u2", text("more")),
    ]
    same = build(msgs, "gemini").messages[1]["parts"][0]
    other = build(msgs, "gemini", target=Target(model_id="gemini-3-flash", given=True)).messages[1]["parts"][
        0
    ]
    assert (
        same["thoughtSignature"] == "GSIG" and other["thoughtSignature"] == "skip_thought_signature_validator"
    )


def test_images_in_user_messages_and_tool_results() -> None:
    msgs = [
        user("u1", text("look"), image(PNG), file_part(f"data:image/png;base64,{PNG}", filename="s.png")),
        assistant("a1", tool_use("c1", "screenshot"), finish="tool-calls", **CLAUDE),
        user("k1", tool_result("c1", [{"type": "text", "text": "shot"}, image(PNG)])),
    ]
    built = valid_everywhere(msgs)
    assert built["anthropic"].messages[2]["content"][0]["content"][1]["type"] == "image"
    chat = built["openai-chat"].messages
    assert chat[-1]["role"] == "user" and chat[-1]["content"][1]["type"] == "image_url"  # moved after results
    assert any(w.startswith("media-moved") for w in built["openai-chat"].warnings)
    responses = built["openai-responses"].messages
    assert responses[-1]["output"][1]["type"] == "input_image"
    gemini = built["gemini"].messages
    assert gemini[0]["parts"][1] == {"inlineData": {"mimeType": "image/png", "data": PNG}}
    assert gemini[-1]["parts"][1]["inlineData"]["data"] == PNG  # moved: the target may be older than 3
    gemini3 = build(msgs, "gemini", target=Target(tool_result_media=True, given=True)).messages
    assert gemini3[-1]["parts"][0]["functionResponse"]["parts"][0]["inlineData"]["data"] == PNG


def test_image_over_5_mb_is_replaced_for_anthropic() -> None:
    big = "A" * (7 * 1024 * 1024)
    msgs = [user("u1", text("look"), image(big)), assistant("a1", text("ok"))]
    built = valid_everywhere(msgs, open_end=True)["anthropic"]
    assert (
        built.messages[0]["content"][1]["type"] == "text"
        and "over 5 MB" in built.messages[0]["content"][1]["text"]
    )
    assert any(w.startswith("media-replaced") for w in built.warnings)


def test_no_image_input_gets_a_placeholder() -> None:
    msgs = [user("u1", text("look"), image(PNG))]
    for fmt, built in valid_everywhere(msgs, target=Target(images=False, given=True)).items():
        assert PNG not in json.dumps(built.messages), fmt


@pytest.mark.parametrize(("make", "limit"), [(anthropic, None), (openai_chat, 40), (openai_responses, 64)])
def test_call_ids_too_long_or_with_odd_characters(make: Any, limit: int | None) -> None:
    ids: CallIdMap = make()
    for original in (LONG_CALL_ID, ODD_CALL_ID, "call_ok"):
        mapped = ids(original)
        assert mapped == make()(original)  # deterministic: the same in every request
        assert limit is None or len(mapped) <= limit
        if mapped != original:
            assert ids.mapped[mapped] == original
    assert ids("call_ok") == "call_ok"
    assert len({ids(LONG_CALL_ID), ids(LONG_CALL_ID[:-1] + "y")}) == 2  # distinct originals stay distinct


def test_long_ids_in_every_format() -> None:
    built = valid_everywhere(codex())
    chat_ids = [c["id"] for m in built["openai-chat"].messages for c in m.get("tool_calls", [])]
    assert all(len(i) <= 40 for i in chat_ids) and LONG_CALL_ID in built["openai-chat"].call_id_map.values()
    assert LONG_CALL_ID not in json.dumps(built["openai-responses"].messages)


def test_empty_text_and_reasoning_are_never_sent() -> None:
    msgs = [
        user("u1", text(""), text("real")),
        assistant(
            "a1",
            text(""),
            {"type": "reasoning", "text": ""},
            tool("c1", "read", output=""),
            finish="tool-calls",
        ),
        assistant("a2", text("")),
        user("u2", text("next")),
    ]
    built = valid_everywhere(msgs)
    assert built["ai-sdk"].sources == ["u1", "a1", "a1", "u2"]
    assert built["ai-sdk"].messages[1]["content"] == [
        {"type": "tool-call", "toolCallId": "c1", "toolName": "read", "input": {}}
    ]


def test_rebuilding_twice_gives_identical_bytes() -> None:
    for fmt in FORMATS:
        one = build(claude_code() + codex(), fmt)
        two = build(claude_code() + codex(), fmt)
        assert json.dumps(one.messages) == json.dumps(two.messages), fmt


def test_clearing_one_old_result_changes_bytes_only_from_that_block_on() -> None:
    def session(compacted: bool) -> list[Message]:
        return [
            user("u1", text("go")),
            assistant("a1", tool("c1", "read", output="old"), finish="tool-calls"),
            assistant(
                "a2",
                tool("c2", "read", output="body", compacted=5 if compacted else None),
                finish="tool-calls",
            ),
            assistant("a3", tool("c3", "read", output="new"), finish="tool-calls"),
            user("u2", text("next")),
        ]

    for fmt in FORMATS:
        before, after = build(session(False), fmt).messages, build(session(True), fmt).messages
        changed = [i for i, (x, y) in enumerate(zip(before, after, strict=True)) if x != y]
        assert len(changed) == 1 and texts.CLEARED_TOOL_RESULT in json.dumps(after[changed[0]]), fmt


def test_no_system_message_inside_the_history() -> None:
    msgs = [
        user("u1", text("go")),
        Message({"id": "s1", "role": "system"}, [text("mid-conversation system")]),
    ]
    for fmt, built in valid_everywhere(msgs).items():
        assert "mid-conversation system" not in json.dumps(built.messages), fmt


# =================================================================================================
# Formats: the other traps
# =================================================================================================
def test_codex_session_in_responses_chat_and_anthropic() -> None:
    built = valid_everywhere(codex())
    items = built["openai-responses"].messages
    kinds = [i["type"] for i in items]
    assert kinds[:6] == [
        "message",
        "reasoning",
        "function_call",
        "custom_tool_call",
        "function_call_output",
        "custom_tool_call_output",
    ]
    assert items[3]["input"].startswith("*** Begin Patch") and items[5]["output"] == "Success. Updated a.ts"
    chat = built["openai-chat"].messages
    assert chat[1]["tool_calls"][1] == {
        "id": "call_patch",
        "type": "custom",
        "custom": {"name": "apply_patch", "input": items[3]["input"]},
    }
    assert chat[1]["tool_calls"][0]["function"]["arguments"] == '{"command":["ls"]}'  # the stored string
    claude = built["anthropic"].messages[1]["content"]
    assert claude[-1]["input"] == {"input": items[3]["input"]}
    assert not any(b["type"] == "thinking" for b in claude)  # OpenAI reasoning never goes to Claude


def test_inline_signed_reasoning_replays_as_thinking() -> None:
    built = valid_everywhere(inline_signed(), target=Target(thinking=True, given=True))
    assert built["anthropic"].messages[1]["content"][0] == {
        "type": "thinking",
        "thinking": "thinking",
        "signature": "sig-inline",
    }
    assert built["anthropic"].overrides == {}


def test_provider_formats_default_to_the_newest_model_for_replay() -> None:
    msgs = claude_code()
    msgs[-1].info["modelID"] = "claude-opus-4-8"  # the host switched models for the last step
    built = build(msgs, "anthropic")
    signatures = [b["signature"] for m in built.messages for b in m["content"] if b["type"] == "thinking"]
    assert signatures == ["sig-3"]


def test_ai_sdk_filters_reasoning_only_with_a_target() -> None:
    msgs = claude_code()
    assert "sig-1" in json.dumps(build(msgs).messages)
    assert "sig-1" not in json.dumps(build(msgs, target=Target(model_id="other", given=True)).messages)


def test_reminder_joins_the_tool_result_message_for_anthropic() -> None:
    msgs = [
        user("u1", text("go")),
        assistant("a1", tool_use("c1", "read"), finish="tool-calls"),
        user("k1", tool_result("c1", "ok")),
    ]
    built = build(msgs, "anthropic", reminder="REMINDER")
    assert [b["type"] for b in built.messages[-1]["content"]] == ["tool_result", "text"]
    assert built.source_groups[-1] == ["k1"]


def test_duplicate_call_ids_keep_the_first() -> None:
    msgs = [
        user("u1", text("go")),
        assistant("a1", tool("dup", "read", output="first"), finish="tool-calls"),
        assistant("a2", tool("dup", "read", output="second"), finish="tool-calls"),
        user("u2", text("next")),
    ]
    built = valid_everywhere(msgs)["anthropic"]
    assert "second" not in json.dumps(built.messages)
    assert any(w.startswith("duplicate-call-dropped") for w in built.warnings)


def test_trailing_whitespace_of_a_final_assistant_text_is_trimmed_for_anthropic() -> None:
    msgs = [user("u1", text("go")), assistant("a1", text("partial answer  \n"))]
    built = build(msgs, "anthropic")
    assert built.messages[-1]["content"][-1]["text"] == "partial answer"
    assert check("anthropic", built.messages) == []


# =================================================================================================
# Anthropic prompt caching (docs/formats.md, "`cache`")
# =================================================================================================
def _flat(prefix: dict, messages: list[dict]) -> list[tuple[str, dict]]:
    """The cache's view of a request: tools → system → message blocks, in order."""
    out = [("tool", t) for t in prefix.get("tools", [])] + [("system", b) for b in prefix.get("system", [])]
    return out + [(m["role"], b) for m in messages for b in m["content"]]


def _strip(block: dict) -> dict:
    return {k: v for k, v in block.items() if k != "cache_control"}


def _cached_session() -> Session:
    prefix = {
        "system": ["You are a coding agent."],
        "tools": [{"name": "read", "input_schema": {"type": "object"}}],
    }
    return session_of(claude_code()[:9], "ses_cache", "p", request_prefix=prefix)


def _build_cached(session: Session) -> tuple[dict, list[dict]]:
    res = engine.build(
        session,
        MemoryRoot("/nonexistent"),
        RebuildConfig(),
        memory_reminder=False,
        now_ms=0,
        fmt="anthropic",
        cache_ttl="1h",
    )
    return res.prefix.request or {}, res.request.messages


def test_cache_breakpoints_at_most_four_and_bytes_before_each_stable_across_turns() -> None:
    session = _cached_session()
    prefix_n, messages_n = _build_cached(session)
    flat_n = _flat(prefix_n, messages_n)
    marks_n = [i for i, (_, b) in enumerate(flat_n) if "cache_control" in b]
    assert 2 <= len(marks_n) <= 4
    assert all(flat_n[i][1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"} for i in marks_n)
    assert flat_n[marks_n[0]][0] == "system" and marks_n[-1] == len(flat_n) - 1

    sync(
        session,
        [
            assistant(
                "m20",
                thinking("t", "sig-9"),
                tool_use("toolu_20", "read", {"path": "b"}),
                created=T0 + 100,
                providerMessageID="msg_9",
                **CLAUDE,
            ),
            user("m21", tool_result("toolu_20", "b body"), created=T0 + 101),
            user("m22", text("and now?"), created=T0 + 102),
        ],
    )
    prefix_n1, messages_n1 = _build_cached(session)
    flat_n1 = _flat(prefix_n1, messages_n1)
    assert len([b for _, b in flat_n1 if "cache_control" in b]) <= 4
    for mark in marks_n:  # everything up to each breakpoint of turn n is byte-identical at turn n+1
        before = [(r, _strip(b)) for r, b in flat_n[: mark + 1]]
        after = [(r, _strip(b)) for r, b in flat_n1[: mark + 1]]
        assert json.dumps(before) == json.dumps(after)
    assert prefix_n1 == prefix_n


def test_cache_breakpoint_on_the_boundary_and_a_rolling_one_for_a_fan_out() -> None:
    fan_out = [{"type": "tool_use", "id": f"t{i}", "name": "read", "input": {}} for i in range(30)]
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "boundary"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": "s"}, *fan_out]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}"} for i in range(30)]},
    ]
    assert place_message_breakpoints(messages, 0, "5m") == 3
    assert "cache_control" in messages[0]["content"][0] and "cache_control" in messages[2]["content"][-1]
    rolling = [i for i, b in enumerate(messages[2]["content"][:-1]) if "cache_control" in b]
    assert rolling == [14]  # 15 blocks before the last one
    assert "cache_control" not in messages[1]["content"][0]  # never on thinking
    assert check("anthropic", messages) == []


def test_cache_is_ignored_with_a_warning_outside_anthropic() -> None:
    built = build(claude_code(), "openai-chat", cache_ttl="5m")
    assert "cache_control" not in json.dumps(built.messages)
    assert any(w.startswith("cache-ignored") for w in built.warnings)


def test_reminder_of_an_empty_user_message_never_splits_a_call_from_its_results() -> None:
    """A late result is regrouped after its call; the reminder of an empty user message stored
    before that result goes after the results (found by the property test)."""
    msgs = [
        assistant("a1", function_call("late", "read"), function_call("c2", "read"), finish="tool-calls"),
        user("k1", function_call_output("c2", "two")),
        user("u1", text("")),
        user("k2", function_call_output("late", "one")),
    ]
    for fmt in FORMATS:
        built = build(msgs, fmt, reminder="REMINDER")
        assert check(fmt, built.messages) == [], fmt
        assert "REMINDER" in json.dumps(built.messages[-1]), fmt
