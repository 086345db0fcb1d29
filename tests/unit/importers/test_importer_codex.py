"""Codex rollouts: responses and carriers, usage, injected context, compaction, rollback."""

from __future__ import annotations

from pathlib import Path

from mimo_sidecar.importers import import_transcript, newest_user_ask
from tests.unit.importers.transcripts import CodexRollout, by_id, open_in_core, write_jsonl


def run(tmp_path: Path, rollout: CodexRollout):
    result = import_transcript(rollout.write(tmp_path / "rollout-2025-10-09T08-53-20-demo.jsonl"))
    open_in_core(result.params)
    assert result.report.consistent, result.report.as_dict()
    return result


def started(rollout: CodexRollout) -> CodexRollout:
    rollout.meta()
    rollout.developer("<permissions instructions>\nWorkspace writes only.\n</permissions instructions>")
    rollout.user("<environment_context>\n  <cwd>/work/demo</cwd>\n</environment_context>", echo=False)
    rollout.turn_context()
    return rollout


def test_a_turn_becomes_user_assistant_and_a_tool_carrier(tmp_path: Path) -> None:
    rollout = started(CodexRollout())
    rollout.user("List the sources")
    rollout.reasoning(rs_id="rs_1")
    rollout.say("Listing them.", item_id="msg_1", phase="commentary")
    rollout.call("call_1")
    rollout.output("call_1", "a.py\nb.py")
    rollout.usage(inp=1200, cached=200, out=80, reasoning=30)
    result = run(tmp_path, rollout)
    params = result.params
    assert params["sessionId"] == rollout.session_id
    assert params["requestPrefix"] == {"system": ["You are a careful coding agent."]}
    roles = [m["info"]["role"] for m in params["messages"]]
    assert roles == ["user", "user", "user", "assistant", "tool"]
    assistant, carrier = params["messages"][3:]
    assert [p["type"] for p in assistant["parts"]] == ["reasoning", "text", "function_call"]
    assert assistant["parts"][0]["id"] == "rs_1" and assistant["parts"][0]["encrypted_content"]
    # A MiMo text part: a sidecar part ID; the provider's item ID and phase in metadata.openai.
    assert assistant["parts"][1] == {
        "id": f"{assistant['info']['id']}.1",
        "type": "text",
        "text": "Listing them.",
        "metadata": {"openai": {"itemId": "msg_1", "phase": "commentary"}},
    }
    # Responses items keep the provider's `id` (rs_1 above) and never get a made-up one.
    assert "id" not in assistant["parts"][2] and "id" not in carrier["parts"][0]
    info = assistant["info"]
    assert (info["providerID"], info["modelID"], info["finish"]) == ("openai", "gpt-test-codex", "tool-calls")
    assert info["tokens"] == {
        "input": 1000,
        "output": 80,
        "reasoning": 30,
        "cache": {"read": 200, "write": 0},
        "total": 1280,
    }
    assert info["limit"] == {"context": 272000}
    assert carrier["parts"][0]["call_id"] == "call_1" and carrier["parts"][0]["output"] == "a.py\nb.py"
    assert result.report.not_imported["event_msg user_message (UI copy of a response item)"] == 1
    assert result.report.not_imported["event_msg agent_message (UI copy of a response item)"] == 1


def test_injected_context_and_developer_messages_are_synthetic(tmp_path: Path) -> None:
    rollout = started(CodexRollout())
    rollout.user(
        "# AGENTS.md instructions for /work/demo\n\n<INSTRUCTIONS>be brief</INSTRUCTIONS>", echo=False
    )
    rollout.user("<user_instructions>prefer tabs</user_instructions>", echo=False)
    rollout.user("Rename the config module")
    rollout.developer("<collaboration_mode>Default</collaboration_mode>")
    result = run(tmp_path, rollout)
    users = [m for m in result.params["messages"] if m["info"]["role"] == "user"]
    genuine = [m for m in users if not all(p.get("synthetic") for p in m["parts"])]
    assert [m["parts"][0]["text"] for m in genuine] == ["Rename the config module"]
    developer = [m for m in users if m["info"].get("providerRole") == "developer"]
    assert len(developer) == 2 and all(p["synthetic"] for m in developer for p in m["parts"])
    assert newest_user_ask(result.params)[1] == "Rename the config module"


def test_tag_like_user_items_no_typed_message_matches_are_injected(tmp_path: Path) -> None:
    rollout = started(CodexRollout())
    rollout.user("Fix the parser")
    rollout.user("<new_harness_notice>reindexed</new_harness_notice>", echo=False)
    result = run(tmp_path, rollout)
    assert newest_user_ask(result.params)[1] == "Fix the parser"


def test_custom_tool_calls_and_their_outputs_are_kept_as_parts(tmp_path: Path) -> None:
    rollout = started(CodexRollout())
    rollout.user("Apply the patch")
    patch = "*** Begin Patch\n*** Update File: a.py\n-x\n+y\n*** End Patch"
    rollout.item(
        {
            "type": "custom_tool_call",
            "call_id": "call_p",
            "name": "apply_patch",
            "input": patch,
            "status": "completed",
        }
    )
    rollout.item({"type": "custom_tool_call_output", "call_id": "call_p", "output": "Success. Updated a.py"})
    rollout.usage()
    result = run(tmp_path, rollout)
    assistant, carrier = result.params["messages"][-2:]
    assert assistant["parts"][0]["input"] == patch and assistant["info"]["finish"] == "tool-calls"
    assert carrier["info"]["role"] == "tool"
    assert carrier["parts"][0]["type"] == "custom_tool_call_output"


def test_a_response_cut_by_an_early_tool_output_shares_its_provider_id(tmp_path: Path) -> None:
    rollout = started(CodexRollout())
    rollout.user("Run both checks")
    rollout.call("call_a")
    rollout.output("call_a")
    rollout.call("call_b")  # same response: its token_count comes after
    rollout.output("call_b")
    rollout.usage(out=55)
    result = run(tmp_path, rollout)
    first, _, second, _ = result.params["messages"][-4:]
    assert first["info"]["providerMessageID"] == second["info"]["providerMessageID"]
    assert "finish" not in first["info"] and "tokens" not in first["info"]
    assert second["info"]["finish"] == "tool-calls" and second["info"]["tokens"]["output"] == 55


def test_compacted_with_a_replacement_history_starts_a_new_view(tmp_path: Path) -> None:
    rollout = started(CodexRollout())
    rollout.user("Port the CLI to click")
    rollout.say("Ported.")
    rollout.usage()
    line = len(rollout.records) + 1
    rollout._line(
        "compacted",
        {
            "message": "",
            "replacement_history": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "Port the CLI to click"}],
                },
                {"type": "compaction", "encrypted_content": "opaque-summary"},
            ],
        },
    )
    rollout.user("Now add tests")
    result = run(tmp_path, rollout)
    boundary = by_id(result.params)[f"{rollout.session_id}.L{line}"]
    assert boundary["parts"][0] == {
        "id": f"{boundary['info']['id']}.0",
        "type": "compaction",
        "encrypted_content": "opaque-summary",
    }
    copy = by_id(result.params)[f"{rollout.session_id}.L{line}.0"]
    assert copy["parts"][0]["synthetic"] is True  # a copy of an earlier ask, not a new one
    session = open_in_core(result.params)
    assert [m.id for m in session.view()][0] == boundary["info"]["id"]
    assert newest_user_ask(result.params)[1] == "Now add tests"


def test_compacted_with_a_summary_only_reinjects_recent_user_messages(tmp_path: Path) -> None:
    rollout = started(CodexRollout())
    rollout.user("Port the CLI to click")
    rollout.say("Ported.")
    rollout.usage()
    rollout._line("compacted", {"message": "Summary: the CLI now uses click."})
    result = run(tmp_path, rollout)
    boundary = result.params["messages"][-1]
    assert [(p["type"], p.get("text"), p.get("synthetic")) for p in boundary["parts"]] == [
        ("compaction", None, None),
        ("text", "Port the CLI to click", True),
        ("text", "Summary: the CLI now uses click.", True),
    ]


def test_thread_rolled_back_drops_the_last_user_turns(tmp_path: Path) -> None:
    rollout = started(CodexRollout())
    rollout.user("Keep this turn")
    rollout.say("Kept.")
    rollout.usage()
    rollout.user("Undo this turn")
    rollout.say("Will be undone.")
    rollout.usage()
    rollout.event({"type": "thread_rolled_back", "num_turns": 1})
    result = run(tmp_path, rollout)
    texts = [p.get("text") for m in result.params["messages"] for p in m["parts"]]
    assert "Undo this turn" not in texts and "Keep this turn" in texts
    assert result.report.not_imported["rolled back by thread_rolled_back"] == 3  # user item, answer, usage


def test_an_aborted_call_has_no_output_and_a_step_without_usage_has_no_tokens(tmp_path: Path) -> None:
    rollout = started(CodexRollout())
    rollout.user("Start the server")
    rollout.call("call_s", arguments='{"command":["serve"]}')
    rollout.event({"type": "turn_aborted", "reason": "interrupted"})
    result = run(tmp_path, rollout)
    last = result.params["messages"][-1]
    assert last["info"]["role"] == "assistant" and "tokens" not in last["info"]
    assert not any(p["type"] == "function_call_output" for m in result.params["messages"] for p in m["parts"])


def test_harness_metadata_moves_off_the_parts(tmp_path: Path) -> None:
    rollout = started(CodexRollout())
    rollout.user("Go")
    rollout.item(
        {
            "type": "function_call",
            "name": "wait",
            "arguments": "{}",
            "call_id": "c1",
            "internal_chat_message_metadata_passthrough": {"turn_id": "turn-7"},
        }
    )
    result = run(tmp_path, rollout)
    last = result.params["messages"][-1]
    assert last["info"]["turnID"] == "turn-7"
    assert "internal_chat_message_metadata_passthrough" not in last["parts"][0]


def test_images_in_user_items_and_tool_outputs_are_kept(tmp_path: Path) -> None:
    rollout = started(CodexRollout())
    picture = {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}
    rollout.item(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Why?"}, picture]}
    )
    rollout.event({"type": "user_message", "message": "Why?"})
    rollout.call("call_v", name="view_image")
    rollout.output("call_v", [{"type": "input_text", "text": "shown"}, picture])
    result = run(tmp_path, rollout)
    ask = [m for m in result.params["messages"] if m["info"]["role"] == "user"][-1]
    assert ask["parts"][1] == picture  # as written: a content part has no ID of its own
    assert result.params["messages"][-1]["parts"][0]["output"][1] == picture


def test_the_bare_2025_format_is_read(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "rollout-old.jsonl",
        [
            {
                "id": "0199-old",
                "timestamp": "2025-08-01T10:00:00.000Z",
                "instructions": "Be terse.",
                "git": {},
            },
            {"record_type": "state"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]},
        ],
    )
    result = import_transcript(path)
    assert result.report.format == "codex"
    assert result.params["sessionId"] == "0199-old"
    assert result.params["requestPrefix"] == {"system": ["Be terse."]}
    assert [m["info"]["role"] for m in result.params["messages"]] == ["user", "assistant"]
    assert result.report.consistent
