"""Claude Code JSONL: the active branch of the uuid DAG, split responses, harness text, subagents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.core.request.assembly import BuiltRequest, build_messages
from mimo_sidecar.importers import TranscriptError, detect_format, import_transcript, newest_user_ask
from mimo_sidecar.importers.claude_code import INHERITED_RECORD
from tests.real_sessions import SUBAGENT_MARK, imported, subagent_session_files
from tests.unit.importers.transcripts import (
    SIGNATURE,
    ClaudeLog,
    by_id,
    image,
    messages,
    open_in_core,
    text,
    thinking,
    tool_result,
    tool_use,
    usage,
)


def run(tmp_path: Path, log: ClaudeLog, name: str = "session.jsonl"):
    result = import_transcript(log.write(tmp_path / name))
    open_in_core(result.params)
    assert result.report.consistent, result.report.as_dict()
    return result


def test_a_plain_turn_keeps_ids_model_usage_and_time(tmp_path: Path) -> None:
    log = ClaudeLog()
    ask = log.user("Add a retry to the fetch helper")
    reply = log.assistant(
        [text("Done: three attempts, backing off.")], mid="msg_01", usage=usage(12, 30, 400, 50)
    )
    result = run(tmp_path, log)
    user, assistant = result.params["messages"]
    assert result.params["sessionId"] == log.session_id
    assert user["info"]["id"] == ask and user["info"]["role"] == "user"
    assert user["parts"] == [{"id": f"{ask}.0", "type": "text", "text": "Add a retry to the fetch helper"}]
    info = assistant["info"]
    assert info["id"] == reply
    assert info["providerMessageID"] == "msg_01"
    assert (info["providerID"], info["modelID"]) == ("anthropic", "claude-test-1")
    assert info["finish"] == "stop"  # no stop_reason written: inferred from the content
    assert info["tokens"] == {"input": 12, "output": 30, "reasoning": 0, "cache": {"read": 400, "write": 50}}
    assert info["sessionID"] == log.session_id
    assert info["time"]["created"] == user["info"]["time"]["created"] + 1000
    assert result.report.adjusted["stop reason inferred from the response's content"] == 1


def test_one_response_written_as_several_entries_stays_several_messages_sharing_the_provider_id(
    tmp_path: Path,
) -> None:
    log = ClaudeLog()
    log.user("Read the two config files")
    first = log.assistant([thinking("Two reads, in parallel.")], mid="msg_02", usage=usage(5, 1))
    second = log.assistant([text("Reading both.")], mid="msg_02", usage=usage(5, 9))
    third = log.assistant([tool_use("toolu_a")], mid="msg_02", usage=usage(5, 40))
    log.user([tool_result("toolu_a")])
    result = run(tmp_path, log)
    entries = [by_id(result.params)[u] for u in (first, second, third)]
    assert {e["info"]["providerMessageID"] for e in entries} == {"msg_02"}
    assert [("finish" in e["info"], "tokens" in e["info"]) for e in entries] == [(False, False)] * 2 + [
        (True, True)
    ]
    assert entries[2]["info"]["finish"] == "tool-calls"
    assert entries[2]["info"]["tokens"]["output"] == 40  # the fullest of the repeated usages
    block = entries[0]["parts"][0]
    assert (block["thinking"], block["signature"]) == ("Two reads, in parallel.", SIGNATURE)
    assert entries[2]["parts"][0]["id"] == "toolu_a"  # a tool_use's id is its part ID


def test_parallel_results_on_sibling_branches_are_kept_in_file_order(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Check both modules")
    call_a = log.assistant([tool_use("toolu_a")], mid="msg_03")
    log.progress("toolu_a")
    call_b = log.assistant([tool_use("toolu_b")], mid="msg_03")  # child of the progress record
    result_a = log.user([tool_result("toolu_a", "a is fine")], parent=call_a)  # sibling of the branch
    result_b = log.user([tool_result("toolu_b", "b is fine")], parent=call_b)
    log.assistant([text("Both modules are fine.")], mid="msg_04", parent=result_b)
    result = run(tmp_path, log)
    ids = [m["info"]["id"] for m in result.params["messages"]]
    assert ids[1:5] == [call_a, call_b, result_a, result_b]
    assert result.report.adjusted["sibling-branch entry kept (parallel tool result or response entry)"] == 1


def test_a_result_written_between_two_entries_of_one_response_keeps_its_place(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Run the linters")
    call_a = log.assistant([tool_use("toolu_a", "Bash", command="ruff")], mid="msg_05")
    result_a = log.user([tool_result("toolu_a")])
    call_b = log.assistant([tool_use("toolu_b", "Bash", command="mypy")], mid="msg_05")
    result_b = log.user([tool_result("toolu_b")])
    result = run(tmp_path, log)
    assert [m["info"]["id"] for m in result.params["messages"][1:]] == [call_a, result_a, call_b, result_b]
    found = by_id(result.params)
    assert "finish" not in found[call_a]["info"] and found[call_b]["info"]["finish"] == "tool-calls"


def built(params: dict[str, Any], fmt: str = "anthropic") -> BuiltRequest:
    session = open_in_core(params)
    return build_messages(
        session.view(), collapse_tail=False, ordering=session.ordering(), reminder=None, fmt=fmt
    )


def test_a_result_written_before_its_call_comes_after_it(tmp_path: Path) -> None:
    """Claude Code 2.1.x: the tool_result record is written before the assistant record holding the
    tool_use; its parentUuid points forward. Graph order puts it after its parent, and the request
    carries the real result, not a synthesized "interrupted" one."""
    log = ClaudeLog()
    ask = log.user("Read the config")
    result_id = log.user([tool_result("toolu_f", "port = 8080")], parent="a1")
    call = log.assistant([tool_use("toolu_f")], mid="msg_f1", uuid="a1", parent=ask)
    log.records[1]["timestamp"], log.records[2]["timestamp"] = (
        log.records[2]["timestamp"],
        log.records[1]["timestamp"],
    )  # stamped in the order they happened
    reply = log.assistant([text("The port is 8080.")], mid="msg_f2", parent=result_id)
    result = run(tmp_path, log)
    assert [m["info"]["id"] for m in result.params["messages"]] == [ask, call, result_id, reply]
    assert result.report.adjusted["record placed after its parent, written later"] == 1
    assert "timestamp raised to keep creation order" not in result.report.adjusted
    request = built(result.params)
    assert not [w for w in request.warnings if w.startswith(("result-synthesized", "orphan-result"))]
    carrier = request.messages[2]
    assert carrier["role"] == "user"
    assert carrier["content"][0]["tool_use_id"] == "toolu_f"
    assert carrier["content"][0]["content"] == "port = 8080"
    assert not carrier["content"][0].get("is_error")


def test_a_record_waiting_for_a_later_parent_brings_its_own_children_along(tmp_path: Path) -> None:
    """Several records between the early result and its call (other calls of the same response, each
    answered) keep their order; the early result and an attachment hanging off it follow the call."""
    log = ClaudeLog()
    ask = log.user("Look at both files")
    first = log.assistant([tool_use("toolu_1")], mid="msg_g1")
    early = log.user([tool_result("toolu_2", "second file")], parent="a2")
    note = log.bookkeeping("attachment", parent=early, attachment={"type": "hook_success"})
    first_result = log.user([tool_result("toolu_1", "first file")], parent=first)
    second = log.assistant([tool_use("toolu_2")], mid="msg_g1", uuid="a2", parent=first_result)
    reply = log.assistant([text("Both read.")], mid="msg_g2", parent=note)
    result = run(tmp_path, log)
    ids = [m["info"]["id"] for m in result.params["messages"]]
    assert ids == [ask, first, first_result, second, early, reply]
    assert result.report.not_imported == {"attachment record": 1}
    request = built(result.params, "openai-chat")
    outputs = {m["tool_call_id"]: m["content"] for m in request.messages if m["role"] == "tool"}
    assert outputs == {"toolu_1": "first file", "toolu_2": "second file"}


def test_records_caught_in_a_parent_cycle_are_still_read(tmp_path: Path) -> None:
    log = ClaudeLog()
    ask = log.user("Start", parent="u-0002")  # a damaged file: each names the other as parent
    reply = log.assistant([text("Started.")], mid="msg_h1", parent=ask)
    result = run(tmp_path, log)
    assert [m["info"]["id"] for m in result.params["messages"]] == [ask, reply]


def test_a_rewind_imports_the_branch_of_the_newest_leaf(tmp_path: Path) -> None:
    log = ClaudeLog()
    ask = log.user("Rename the module")
    log.assistant([text("Renamed to utils.")], mid="msg_06")
    log.user("No, call it helpers", parent=ask)  # the user rewound and rewrote the ask... (abandoned)
    retry = log.user("Rename the module to helpers", parent=ask)
    log.assistant([text("Renamed to helpers.")], mid="msg_07")
    result = run(tmp_path, log)
    assert [m["info"]["id"] for m in result.params["messages"]][:2] == [ask, retry]
    assert len(result.params["messages"]) == 3
    assert result.report.not_imported["assistant entry off the active branch"] == 1
    assert result.report.not_imported["user entry off the active branch"] == 1


def test_compaction_becomes_a_boundary_with_the_older_history_behind_it(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Start the migration")
    before = log.assistant([text("Migration started.")], mid="msg_08")
    boundary = log.system(
        "compact_boundary",
        parent=None,
        logicalParentUuid=before,
        compactMetadata={"trigger": "auto", "preTokens": 9},
    )
    summary = log.user(
        "This session is being continued from a previous conversation. Summary: a migration was started.",
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )
    log.user("Now finish it")
    log.assistant([text("Finished.")], mid="msg_09")
    result = run(tmp_path, log)
    found = by_id(result.params)
    assert found[boundary]["parts"] == [{"id": f"{boundary}.0", "type": "compaction", "auto": True}]
    assert found[summary]["parts"][0]["synthetic"] is True
    session = open_in_core(result.params)
    assert [m.id for m in session.view()][:2] == [boundary, summary]  # the model's view starts there
    assert len(session.slice()) == 6  # the history before the boundary is kept
    assert newest_user_ask(result.params)[1] == "Now finish it"


def test_a_compaction_whose_logical_parent_was_never_written_still_keeps_the_older_history(
    tmp_path: Path,
) -> None:
    log = ClaudeLog()
    first = log.user("Start the migration")
    log.assistant([text("Migration started.")], mid="msg_08")
    boundary = log.system("compact_boundary", parent=None, logicalParentUuid="never-written")
    log.user("Continue", isCompactSummary=True)
    result = run(tmp_path, log)
    assert [m["info"]["id"] for m in result.params["messages"]][0] == first
    assert boundary in by_id(result.params)
    assert result.report.adjusted["dangling parent link bridged"] == 1


def test_a_1_0_compaction_without_a_logical_parent_keeps_the_history_before_it(tmp_path: Path) -> None:
    """Claude Code 1.0.x: the boundary names no pre-compaction leaf. The history before it is
    imported behind it, as a 2.x boundary's `logicalParentUuid` bridges it."""
    log = ClaudeLog()
    first = log.user("Start the migration")
    log.assistant([text("Migration started.")], mid="msg_10a")
    boundary = log.system("compact_boundary", parent=None, compactMetadata={"trigger": "manual"})
    summary = log.user("This session is being continued from a previous conversation.", isCompactSummary=True)
    log.user("Now finish it")
    log.assistant([text("Finished.")], mid="msg_10b")
    result = run(tmp_path, log)
    ids = [m["info"]["id"] for m in result.params["messages"]]
    assert ids[:4] == [first, ids[1], boundary, summary] and len(ids) == 6
    assert result.report.adjusted["compaction without a logical parent bridged to the history before it"] == 1
    assert not any("off the active branch" in reason for reason in result.report.not_imported)
    session = open_in_core(result.params)
    assert [m.id for m in session.view()][:2] == [boundary, summary]
    assert newest_user_ask(result.params) == (ids[4], "Now finish it")


def test_a_compaction_summary_without_a_boundary_gets_one(tmp_path: Path) -> None:
    """A summary that starts the chain (no boundary record), or one chained to the `/compact`
    command's output (a manual compaction whose boundary sits off the chain): the model's view
    restarted at the summary, so a boundary is added before it."""
    log = ClaudeLog()
    first = log.user("Start the migration")
    log.assistant([text("Migration started.")], mid="msg_11a")
    summary = log.user("Summary: a migration was started.", parent=None, isCompactSummary=True)
    log.user("Now finish it")
    log.assistant([text("Finished.")], mid="msg_11b")
    result = run(tmp_path, log)
    ids = [m["info"]["id"] for m in result.params["messages"]]
    added = f"{summary}#compaction"
    assert ids[:4] == [first, ids[1], added, summary]
    assert by_id(result.params)[added]["parts"] == [{"id": f"{added}.0", "type": "compaction"}]
    assert (
        result.report.adjusted["compaction summary without a boundary record: boundary added before it"] == 1
    )
    assert [m.id for m in open_in_core(result.params).view()][:2] == [added, summary]

    chained = ClaudeLog()
    chained.user("Start the migration")
    chained.assistant([text("Migration started.")], mid="msg_11c")
    chained.user("<command-name>/compact</command-name>")
    chained.user("<local-command-stdout>Compacted</local-command-stdout>")
    summary = chained.user("Summary: a migration was started.", isCompactSummary=True)
    chained.assistant([text("Continuing.")], mid="msg_11d")
    result = run(tmp_path, chained, "chained.jsonl")
    view = [m.id for m in open_in_core(result.params).view()]
    assert view[:2] == [f"{summary}#compaction", summary] and len(result.params["messages"]) == 7


def test_harness_text_is_synthetic_and_the_genuine_ask_stays_plain(tmp_path: Path) -> None:
    log = ClaudeLog()
    ask = log.user("Make the build green again")
    log.user("<command-name>/model</command-name>\n<command-message>model</command-message>")
    log.user("<local-command-stdout>Set model to test</local-command-stdout>")
    log.user("Caveat: bodies of skills follow", isMeta=True)
    log.user([text("<system-reminder>\nThe todo list is empty.\n</system-reminder>")])
    log.user([text("[Request interrupted by user]")])
    log.user("<task-notification>\n<task-id>b1</task-id>\n</task-notification>")
    result = run(tmp_path, log)
    user_parts = [m["parts"] for m in messages(result.params) if m["info"]["id"] != ask]
    assert all(p[0]["synthetic"] is True for p in user_parts)
    assert "synthetic" not in by_id(result.params)[ask]["parts"][0]
    assert newest_user_ask(result.params) == (ask, "Make the build green again")
    assert result.report.newest_user_ask == ask


def test_api_error_entries_are_not_imported(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Summarise the diff")
    log.assistant(
        [text("API Error: 529 overloaded")],
        mid="err_1",
        model="<synthetic>",
        isApiErrorMessage=True,
        usage={},
    )
    log.assistant([text("The diff renames two helpers.")], mid="msg_10")
    result = run(tmp_path, log)
    assert [m["info"]["role"] for m in result.params["messages"]] == ["user", "assistant"]
    assert result.report.not_imported["API error entry (shown in the UI, not sent to the model)"] == 1


def test_images_in_user_content_and_in_tool_results_are_kept(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user([text("What is wrong in this screenshot?"), image("AAAA")])
    log.assistant([tool_use("toolu_s", "Screenshot")], mid="msg_11")
    log.user([tool_result("toolu_s", [text("captured"), image("BBBB")])])
    result = run(tmp_path, log)
    ask, _, carrier = result.params["messages"]
    assert ask["parts"][1]["source"]["data"] == "AAAA"
    assert carrier["parts"][0]["content"][1] == image("BBBB")


def test_an_interrupted_call_stays_without_a_result(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Deploy it")
    call = log.assistant([tool_use("toolu_d", "Bash", command="deploy")], mid="msg_12")
    result = run(tmp_path, log)
    last = result.params["messages"][-1]
    assert last["info"]["id"] == call and last["info"]["finish"] == "tool-calls"
    assert all(p["type"] != "tool_result" for m in result.params["messages"] for p in m["parts"])


def test_recorded_stop_reasons_are_mapped(tmp_path: Path) -> None:
    log = ClaudeLog()
    reasons = {
        "end_turn": "stop",
        "tool_use": "tool-calls",
        "max_tokens": "length",
        "pause_turn": "pause_turn",
    }
    ids = {}
    for i, reason in enumerate(reasons):
        log.user(f"ask {i}")
        ids[reason] = log.assistant([text(f"answer {i}")], mid=f"msg_s{i}", stop_reason=reason)
    result = run(tmp_path, log)
    found = by_id(result.params)
    assert {reason: found[mid]["info"]["finish"] for reason, mid in ids.items()} == reasons
    assert "stop reason inferred from the response's content" not in result.report.adjusted


def test_missing_usage_leaves_tokens_out(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Hello")
    reply = log.assistant([text("Hi.")], mid="msg_13", usage={"service_tier": "standard"})
    result = run(tmp_path, log)
    assert "tokens" not in by_id(result.params)[reply]["info"]
    assert result.report.adjusted["no usage recorded (tokens left out)"] == 1


def test_user_text_next_to_tool_results_becomes_its_own_user_message(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Edit the readme")
    log.assistant([tool_use("toolu_e", "Edit")], mid="msg_14")
    turn = log.user([tool_result("toolu_e", "rejected", is_error=True), text("Use British spelling")])
    log.assistant([tool_use("toolu_f", "Edit")], mid="msg_15")
    quiet = log.user([tool_result("toolu_f"), text("<system-reminder>lint ran</system-reminder>")])
    result = run(tmp_path, log)
    found = by_id(result.params)
    assert [p["type"] for p in found[turn]["parts"]] == ["tool_result"]
    assert found[turn + "#text"]["parts"][0]["text"] == "Use British spelling"
    assert newest_user_ask(result.params) == (turn + "#text", "Use British spelling")
    # Harness text alone next to results stays on the carrier: no message of its own.
    assert [p["type"] for p in found[quiet]["parts"]] == ["tool_result", "text"]
    assert quiet + "#text" not in found


def test_input_queued_while_the_agent_worked_is_placed_before_the_next_response(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Fix the flaky test")
    call = log.assistant([tool_use("toolu_q", "Bash", command="pytest")], mid="msg_16")
    log.queue("enqueue", "also update the changelog")
    log.queue("remove")
    carrier = log.user([tool_result("toolu_q")])
    log.queue("enqueue", "and push when done")  # delivered as a normal user entry below
    log.queue("dequeue")
    reply = log.assistant([text("Fixed; updating the changelog.")], mid="msg_17")
    pushed = log.user("and push when done")
    result = run(tmp_path, log)
    ids = [m["info"]["id"] for m in result.params["messages"]]
    queued = f"{log.session_id}.queued.L3"  # named after the enqueue line
    assert ids == [ids[0], call, carrier, queued, reply, pushed]
    assert by_id(result.params)[queued]["parts"][0]["text"] == "also update the changelog"
    assert result.report.not_imported["queued input (delivered as a user entry)"] == 1


def test_subagent_files_become_slices_in_both_layouts(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Explore the repository")
    log.assistant([tool_use("toolu_t", "Task", prompt="map the modules")], mid="msg_18")
    log.user([tool_result("toolu_t", "three modules")])
    main_file = log.write(tmp_path / "sess.jsonl")
    nested = ClaudeLog(log.session_id, agent="a1b2c3")
    nested.user("Map the modules", parent=None)
    nested.assistant([text("Three modules.")], mid="msg_sub1")
    (tmp_path / "sess" / "subagents").mkdir(parents=True)
    nested.write(tmp_path / "sess" / "subagents" / "agent-a1b2c3.jsonl")
    flat = ClaudeLog(log.session_id, agent="d4e5f6")
    flat.user("Summarise", parent=None)
    flat.assistant([text("Summary.")], mid="msg_sub2")
    flat.write(tmp_path / "sess__subagents__agent-d4e5f6.jsonl")
    result = import_transcript(main_file)
    open_in_core(result.params)
    assert result.report.slices == {"main": 3, "a1b2c3": 2, "d4e5f6": 2}
    assert [m["parts"][0]["text"] for m in messages(result.params, "a1b2c3")] == [
        "Map the modules",
        "Three modules.",
    ]
    assert messages(result.params, "d4e5f6")[1]["info"]["finish"] == "stop"


def test_a_subagent_file_given_on_its_own_is_a_session_of_its_own(tmp_path: Path) -> None:
    """Its sidechain entries are the main slice (in a main session file they would be skipped as
    inline sidechain entries), under an ID of its own: its records carry the parent session's."""
    log = ClaudeLog("0b5e5510-0000-4000-8000-00000000000a", agent="d4e5f6")
    ask = log.user("Map the modules", parent=None)
    log.progress("searching")
    call = log.assistant([tool_use("toolu_s", "Grep", pattern="def ")], mid="msg_sub3")
    carrier = log.user([tool_result("toolu_s", "three modules")])
    reply = log.assistant([text("Three modules.")], mid="msg_sub4")
    result = run(tmp_path, log, f"{log.session_id}__subagents__agent-d4e5f6.jsonl")
    assert result.params["sessionId"] == f"{log.session_id}__subagents__agent-d4e5f6"
    assert [m["info"]["id"] for m in result.params["messages"]] == [ask, call, carrier, reply]
    assert all("agentID" not in m["info"] for m in result.params["messages"])
    assert result.report.slices == {"main": 4}
    assert result.report.not_imported == {"progress record": 1}
    assert newest_user_ask(result.params) == (ask, "Map the modules")
    nested = tmp_path / "sess" / "subagents"
    nested.mkdir(parents=True)
    assert run(nested, log, "agent-d4e5f6.jsonl").params == result.params  # the other layout


@pytest.mark.parametrize("path", subagent_session_files())
def test_a_real_subagent_file_on_its_own_is_its_slice_of_the_session(path: Path) -> None:
    """The messages are those the session's import puts in the subagent's slice, as the main slice
    (no `agentID`) of a session named after the file. A subagent that starts from a copy of the
    conversation (a 2.1.97 side question) holds the copied records first: on its own they are its
    history; in the session they are the main slice's messages, imported there once."""
    result = import_transcript(path)
    open_in_core(result.params)
    assert result.report.consistent, result.report.as_dict()
    session_file = path.with_name(path.name.split(SUBAGENT_MARK)[0] + ".jsonl")
    whole = imported(session_file, shared=True).params
    agent = path.name.removesuffix(".jsonl").rsplit("agent-", 1)[-1]
    assert result.params["sessionId"] == f"{whole['sessionId']}{SUBAGENT_MARK}agent-{agent}"
    own = [without_session_keys(m) for m in result.params["messages"]]
    main = {m["info"]["id"]: m for m in whole["messages"] if "agentID" not in m["info"]}
    copied = [m for m in own if m["info"]["id"] in main]
    in_session = [without_session_keys(m) for m in whole["messages"] if m["info"].get("agentID") == agent]
    assert own[: len(copied)] == copied  # the copy comes first, then the subagent's own records
    assert own[len(copied) :] == in_session and in_session
    assert [m["parts"] for m in copied] == [main[m["info"]["id"]]["parts"] for m in copied]
    report = imported(session_file, shared=True).report
    assert report.not_imported.get(INHERITED_RECORD, 0) >= len(copied)
    assert all("agentID" not in m["info"] for m in result.params["messages"])
    assert newest_user_ask(result.params) is not None


def without_session_keys(message: dict[str, Any]) -> dict[str, Any]:
    """A message without the keys that name its session and slice."""
    drop = ("sessionID", "agentID")
    return {
        "info": {k: v for k, v in message["info"].items() if k not in drop},
        "parts": [{k: v for k, v in p.items() if k not in drop} for p in message["parts"]],
    }


def test_a_repeated_uuid_keeps_the_first_record(tmp_path: Path) -> None:
    log = ClaudeLog()
    ask = log.user("Keep me")
    copy = dict(log.records[0], sessionId="another-session")  # a resumed session copies its prefix
    log.raw(copy)
    log.assistant([text("Kept.")], mid="msg_19", parent=ask)
    result = run(tmp_path, log)
    assert len(result.params["messages"]) == 2
    assert result.report.not_imported == {"record repeating an earlier uuid (a resumed session's copy)": 1}


def test_output_is_stable_from_run_to_run(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user([text("a"), image()])
    log.assistant([thinking("t"), text("b"), tool_use("toolu_z")], mid="msg_20")
    path = log.write(tmp_path / "s.jsonl")
    assert import_transcript(path).params == import_transcript(path).params


def test_timestamps_written_out_of_order_are_raised(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("One")
    log.assistant([tool_use("toolu_o")], mid="msg_21")
    log.user([tool_result("toolu_o")])
    log.records[-1]["timestamp"] = log.records[0]["timestamp"]  # written late, stamped early
    result = run(tmp_path, log)
    created = [m["info"]["time"]["created"] for m in result.params["messages"]]
    assert created == sorted(created)
    assert result.report.adjusted["timestamp raised to keep creation order"] == 1


def test_bookkeeping_records_are_counted(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.raw({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}})
    log.user("Go")
    log.progress("none")
    log.system("turn_duration", durationMs=5)
    log.raw({"type": "summary", "summary": "A title", "leafUuid": log.last})
    result = run(tmp_path, log)
    assert result.report.not_imported == {
        "file-history-snapshot record": 1,
        "progress record": 1,
        "system record (turn_duration)": 1,
        "summary record": 1,
    }


# -- records saved as one JSON array (hook scripts' logs/chat.json) ---------------------------------
def array_log() -> ClaudeLog:
    log = ClaudeLog()
    log.raw({"type": "summary", "summary": "A title", "leafUuid": "u-0004"})
    ask = log.user("Fix the workflow")
    call = log.assistant([tool_use("toolu_w", "Bash", command="gh workflow list")], mid="msg_w1")
    log.user([tool_result("toolu_w", "ci.yml")], parent=call)
    log.assistant([text("One workflow: ci.yml.")], mid="msg_w2")
    log.queue("enqueue", "and the release one")
    log.queue("remove")
    log.assistant([text("No release workflow exists.")], mid="msg_w3")
    assert ask
    return log


@pytest.mark.parametrize("indent", [None, 2])
def test_a_json_array_of_records_is_read_like_the_jsonl(tmp_path: Path, indent: int | None) -> None:
    log = array_log()
    jsonl = run(tmp_path, log)
    array = tmp_path / "chat.json"
    array.write_text(json.dumps(log.records, indent=indent), encoding="utf-8")
    assert detect_format(array) == "claude-code"  # not Cline's array of messages
    for fmt in (None, "claude-code"):
        result = import_transcript(array, fmt)
        assert result.report.consistent and result.report.records_read == len(log.records)
        # the queued input is named by its array index, as a line names it in JSONL
        same = json.dumps(jsonl.params).replace(".queued.L6", ".queued.E5")
        assert json.dumps(result.params) == same
        assert result.report.not_imported == jsonl.report.not_imported


def test_a_truncated_json_array_of_records_gets_the_claude_code_readers_error(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(array_log().records, indent=2)[:-40], encoding="utf-8")
    assert detect_format(path) == "claude-code"
    with pytest.raises(TranscriptError, match=r"not valid JSON: .* \(the file looks truncated\)") as err:
        import_transcript(path)
    assert err.value.line is not None and str(err.value).startswith(f"{path}:{err.value.line}: ")


def test_errors_in_a_json_array_name_the_element(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    records: list[Any] = array_log().records
    broken = [*records[:2], "not a record", *records[2:]]
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(TranscriptError) as err:
        import_transcript(path)
    assert str(err.value) == f"{path}: [2]: a record must be a JSON object"
    skipped = import_transcript(path, tolerate_bad_lines=True)
    assert skipped.report.consistent
    assert skipped.report.not_imported["array element that is not an object (skipped on request)"] == 1
    no_message = [*records[:3], {**records[3], "message": None}]
    path.write_text(json.dumps(no_message), encoding="utf-8")
    with pytest.raises(TranscriptError) as err:
        import_transcript(path)
    assert str(err.value) == f"{path}: [3]: user record without a message object"
    bad_block = [*records[:3], {**records[3], "message": {"role": "user", "content": [7]}}]
    path.write_text(json.dumps(bad_block), encoding="utf-8")
    with pytest.raises(
        TranscriptError, match=r"^.*chat\.json: \[3\]: content\[0\] must be an object with a type$"
    ):
        import_transcript(path)


def test_a_cline_history_is_still_clines(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_text(
        json.dumps([{"role": "user", "content": [text("<task>\nGo\n</task>")]}]), encoding="utf-8"
    )
    assert detect_format(path) == "cline"
    path.write_text('[{"role": "user", "content": [{"type": "text", "text": "<task>', encoding="utf-8")
    assert detect_format(path) == "cline"  # truncated: Cline's reader names the place
