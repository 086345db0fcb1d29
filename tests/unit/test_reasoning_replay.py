"""Reasoning is never lost for want of an ID (behavior.md#d16).

Small synthetic cases of the traps real transcripts showed (never real-session content):

- a Codex rollout stores reasoning items without IDs (0.47 and 0.98): `openai-responses` sends them
  as Codex does, `{type, summary, content?, encrypted_content}`, and no item after them carries an
  `fc_`/`msg_` ID;
- OpenCode stores one GPT reasoning item with two summaries as two `reasoning` parts sharing one
  `metadata.openai.itemId`: they are one item with both summaries in order;
- every reasoning part a request draws from is sent, merged into its item, or reported with the rule
  that drops it (`tests/unit/reasoning_count.py`), in every format;
- the rules checker holds the real rule: an ID-less reasoning item with encrypted content is fine
  (`store: false`); an item ID the API would have to look up is a 400.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mimo_sidecar.core.formats import FORMATS, Target
from mimo_sidecar.core.formats.rules import check
from mimo_sidecar.core.session.message import Message
from tests.unit.builders import (
    assistant,
    function_call,
    function_call_output,
    msg,
    reasoning_item,
    text,
    thinking,
    tool_use,
    user,
)
from tests.unit.reasoning_count import unaccounted
from tests.unit.split_sessions import CLAUDE, GPT, T0
from tests.unit.test_format_traps import warned
from tests.unit.test_formats import build, valid_everywhere
from tests.unit.test_sdk_types import validate

Json = dict[str, Any]
OPENCODE_GPT = {"providerID": "openai", "modelID": "gpt-5.6-sol"}


def codex_turn(*reasoning: Json) -> list[Message]:
    """A user ask, a response (reasoning, a call), its output, a final response (reasoning, text)."""
    return [
        user("u1", text("fix the test"), created=T0),
        assistant(
            "a1",
            *reasoning[:1],
            function_call("call_1", "shell", '{"command":["ls"]}'),
            finish="tool-calls",
            created=T0 + 1,
            **GPT,
        ),
        msg("k1", "tool", [function_call_output("call_1", "a.ts")], created=T0 + 2),
        assistant("a2", *reasoning[1:], text("Fixed."), created=T0 + 3, **GPT),
        user("u2", text("thanks"), created=T0 + 4),
    ]


def opencode_turn(*parts: Json) -> list[Message]:
    """A user ask, one GPT response of these parts (as OpenCode stores it), the next ask."""
    return [
        user("u1", text("go"), created=T0),
        assistant("a1", *parts, created=T0 + 1, **OPENCODE_GPT),
        user("u2", text("next"), created=T0 + 2),
    ]


def opencode_part(summary: str, item_id: str, encrypted: str | None = None) -> Json:
    """A MiMo/OpenCode `reasoning` part of one Responses item (the AI SDK's provider metadata)."""
    openai: Json = {"itemId": item_id}
    if encrypted is not None:
        openai["reasoningEncryptedContent"] = encrypted
    return {"type": "reasoning", "text": summary, "metadata": {"openai": openai}}


# =================================================================================================
# Codex: reasoning items without IDs
# =================================================================================================
def test_codex_reasoning_without_ids_is_sent_the_way_codex_sends_it() -> None:
    msgs = codex_turn(
        reasoning_item("List the files.", "ENC-1", None),
        {**reasoning_item("Done.", "ENC-2", None), "content": [{"type": "reasoning_text", "text": "ok"}]},
    )
    built = valid_everywhere(msgs)["openai-responses"]
    items = built.messages
    assert [i["type"] for i in items] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "reasoning",
        "message",
        "message",
    ]
    assert items[1] == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "List the files."}],
        "encrypted_content": "ENC-1",
    }
    assert items[4] == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Done."}],
        "content": [{"type": "reasoning_text", "text": "ok"}],
        "encrypted_content": "ENC-2",
    }
    assert all("id" not in i for i in items)  # nothing the API would look up (store: false)
    assert warned(built, "reasoning-dropped") == []
    validate("openai-responses", items, None, {})  # the SDK types, with the one documented exception


def test_a_stored_reasoning_id_is_not_sent_either() -> None:
    """An `rs_` ID names an item no `store: false` request can find: Codex, and the AI SDK since its
    `store: false` fix, send the encrypted content without it (behavior.md#d16)."""
    built = valid_everywhere(codex_turn(reasoning_item("Look.", "ENC-1", "rs_1")))["openai-responses"]
    reasoning = [i for i in built.messages if i["type"] == "reasoning"]
    assert reasoning == [
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Look."}],
            "encrypted_content": "ENC-1",
        }
    ]


def test_reasoning_without_encrypted_content_is_dropped_and_reported_with_the_rule() -> None:
    built = valid_everywhere(codex_turn(reasoning_item("Look.", None, "rs_1")))["openai-responses"]
    assert not [i for i in built.messages if i["type"] == "reasoning"]
    assert warned(built, "reasoning-dropped") == [
        "reasoning-dropped: 1 × reasoning not replayed to openai-responses: no encrypted content (a "
        "stateless request carries the reasoning in it) (in a1)"
    ]


# =================================================================================================
# OpenCode: one item stored as several reasoning parts
# =================================================================================================
def test_reasoning_parts_sharing_an_item_id_are_one_item_with_every_summary() -> None:
    """The minimal case: one assistant message, two reasoning parts of one item, then a text part."""
    msgs = opencode_turn(
        opencode_part("First summary.", "rs_A", "ENC-A1"),
        opencode_part("Second summary.", "rs_A", "ENC-A"),
        text("Because of the cache."),
    )
    builds = valid_everywhere(msgs)
    responses = builds["openai-responses"]
    assert responses.messages[1:3] == [
        {
            "type": "reasoning",
            "summary": [
                {"type": "summary_text", "text": "First summary."},
                {"type": "summary_text", "text": "Second summary."},
            ],
            "encrypted_content": "ENC-A",  # the item's last part holds the final encrypted content
        },
        {"type": "message", "role": "assistant", "content": "Because of the cache."},
    ]
    assert warned(responses, "reasoning-dropped") == []
    assert warned(responses, "reasoning-merged") == [
        "reasoning-merged: 1 × reasoning parts sent in the item of an earlier part with the same item ID "
        "(in a1)"
    ]
    # The AI SDK merges the parts of one item itself: `ai-sdk` keeps them as stored.
    ai_sdk = [b for b in builds["ai-sdk"].messages[1]["content"] if b["type"] == "reasoning"]
    assert [b["text"] for b in ai_sdk] == ["First summary.", "Second summary."]


def test_parts_of_different_items_stay_apart_and_each_needs_its_following_item() -> None:
    msgs = opencode_turn(
        opencode_part("Item A.", "rs_A", "ENC-A"), opencode_part("Item B.", "rs_B", "ENC-B"), text("Done.")
    )
    built = valid_everywhere(msgs)["openai-responses"]
    reasoning = [i for i in built.messages if i["type"] == "reasoning"]
    assert [r["encrypted_content"] for r in reasoning] == ["ENC-B"]  # A is followed by B, not its own item
    assert warned(built, "reasoning-dropped") == [
        "reasoning-dropped: 1 × reasoning not replayed to openai-responses: no item of its own follows it "
        "(the API requires one) (in a1)"
    ]


def test_an_opencode_item_with_only_its_item_id_is_dropped_once_for_all_its_parts() -> None:
    """Real OpenCode exports keep `{openai: {itemId}}` without the encrypted content."""
    msgs = opencode_turn(opencode_part("One.", "rs_A"), opencode_part("Two.", "rs_A"), text("ok"))
    built = valid_everywhere(msgs)["openai-responses"]
    assert not [i for i in built.messages if i["type"] == "reasoning"]
    assert len(warned(built, "reasoning-merged")) == 1
    assert [w.split(": ", 2)[2] for w in warned(built, "reasoning-dropped")] == [
        "no encrypted content (a stateless request carries the reasoning in it) (in a1)"
    ]


# =================================================================================================
# Every reasoning part: sent, merged, or reported with its rule, in every format
# =================================================================================================
def mixed_session() -> list[Message]:
    """Reasoning of every kind a renderer may refuse: signed Claude thinking, Codex and OpenCode
    items (with and without encrypted content), unsigned and empty reasoning, an errored step."""
    return [
        user("u1", text("go"), created=T0),
        assistant(
            "a1",
            thinking("Plan.", "sig-1"),
            tool_use("toolu_1", "read"),
            finish="tool-calls",
            created=T0 + 1,
            **CLAUDE,
        ),
        user("k1", {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}, created=T0 + 2),
        assistant(
            "a2",
            reasoning_item("Look.", "ENC-1", None),
            function_call("call_1", "shell"),
            finish="tool-calls",
            created=T0 + 3,
            **GPT,
        ),
        msg("k2", "tool", [function_call_output("call_1", "ok")], created=T0 + 4),
        assistant(
            "a3",
            opencode_part("One.", "rs_A", "E"),
            opencode_part("Two.", "rs_A", "E"),
            {"type": "reasoning", "text": "unsigned"},
            {"type": "reasoning", "text": ""},
            text("Done."),
            created=T0 + 5,
            **OPENCODE_GPT,
        ),
        assistant(
            "a4",
            {"type": "reasoning", "text": "was thinking"},
            text("partial"),
            error={"name": "APIError", "data": {"message": "overloaded"}},
            created=T0 + 6,
            **OPENCODE_GPT,
        ),
        user("u2", text("next"), created=T0 + 7),
    ]


@pytest.mark.parametrize(
    "target",
    [
        None,
        Target(thinking=True, given=True),
        Target(thinking=False, given=True),
        Target(model_id="other", given=True),
    ],
    ids=["default", "thinking-on", "thinking-off", "other-model"],
)
def test_every_reasoning_part_is_sent_merged_or_reported(target: Target | None) -> None:
    msgs = mixed_session()
    for fmt in FORMATS:
        built = build(copy.deepcopy(msgs), fmt, target=target)
        assert unaccounted(fmt, msgs, built) == 0, (fmt, built.warnings)
        thinking_on = target.thinking if target is not None else None
        assert check(fmt, built.messages, overrides=built.overrides, thinking=thinking_on) == [], fmt


def test_an_errored_step_and_an_empty_part_are_reported_not_silently_lost() -> None:
    built = build(mixed_session(), "ai-sdk")
    assert warned(built, "errored-step-dropped") == [
        "errored-step-dropped: 1 × assistant messages that ended in an error not sent, with their content "
        "(only an aborted one with content is, as in OpenCode) (in a4)"
    ]
    assert (
        "reasoning-dropped: 1 × empty reasoning parts not sent (no text and no replay token: nothing "
        "to replay) (in a3)"
    ) in built.warnings


# =================================================================================================
# The rules checker: the real Responses rule
# =================================================================================================
CALL = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
ASK = {"type": "message", "role": "user", "content": "go"}


def rules(items: list[Json]) -> list[str]:
    return [v.rule for v in check("openai-responses", items)]


def test_an_id_less_reasoning_item_with_encrypted_content_is_valid() -> None:
    assert rules([ASK, {"type": "reasoning", "summary": [], "encrypted_content": "E"}, CALL, OUTPUT]) == []


def test_reasoning_the_api_would_have_to_look_up_is_refused() -> None:
    # An ID without encrypted content: `store: false` stored nothing to find.
    assert rules([ASK, {"type": "reasoning", "id": "rs_1", "summary": []}, CALL, OUTPUT]) == [
        "openai-responses/reasoning"
    ]
    # An fc_ ID whose reasoning item is sent without its ID: the API cannot pair them.
    no_id = {"type": "reasoning", "summary": [], "encrypted_content": "E"}
    unpaired = rules([ASK, no_id, {**CALL, "id": "fc_1"}, OUTPUT])
    assert unpaired == ["openai-responses/item-id-without-reasoning"]
    with_id = {**no_id, "id": "rs_1"}
    assert rules([ASK, with_id, {**CALL, "id": "fc_1"}, OUTPUT]) == []
    message = {"type": "message", "role": "assistant", "content": "hi", "id": "msg_1"}
    assert rules([ASK, no_id, message]) == ["openai-responses/item-id-without-reasoning"]


def test_two_items_with_one_id_are_refused() -> None:
    """What sending each part of one item as its own item would give: "Duplicate item found"."""
    part = {"type": "reasoning", "id": "rs_A", "summary": [], "encrypted_content": "E"}
    assert "openai-responses/duplicate-id" in rules([ASK, part, {**CALL, "id": "fc_1"}, part, OUTPUT])
