"""Gemini CLI: the saved chat, the JSONL recording and its control lines, `/chat save` checkpoints and
headless stream-json, on small hand-written files (docs/importers.md, "Gemini CLI")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mimo_sidecar.importers import TranscriptError, detect_format, import_transcript, newest_user_ask
from tests.real_sessions import absent_reason, real_sessions_root
from tests.unit.importers.transcripts import (
    GEMINI_TOKENS,
    T0,
    by_id,
    gemini_call,
    gemini_chat,
    gemini_metadata,
    gemini_reply,
    gemini_user,
    open_in_core,
    stream_event,
    write_jsonl,
)


def _tools(params: dict) -> list[dict]:
    return [p for m in params["messages"] for p in m["parts"] if p["type"] == "tool"]


def _chat(tmp_path: Path, messages: list[dict]) -> Path:
    path = tmp_path / "session-2026-01-30T06-08-gem1.json"
    path.write_text(json.dumps(gemini_chat(messages), indent=2))
    return path


def test_a_saved_chat_keeps_calls_results_status_thoughts_tokens_and_model(tmp_path: Path) -> None:
    thoughts = [{"subject": "Reading", "description": "the config first.", "timestamp": "x"}]
    path = _chat(
        tmp_path,
        [
            gemini_user("u1", "Fix the build"),
            gemini_reply(
                "g1",
                "",
                1,
                toolCalls=[
                    gemini_call("read_file-1", "read_file", output="[build]\nflags = -O2", file_path="b.cfg"),
                    gemini_call("run-2", "run_shell_command", "error", "exit 2", command="make"),
                    gemini_call("run-3", "run_shell_command", "executing", None, command="make -j"),
                ],
                thoughts=thoughts,
                tokens=GEMINI_TOKENS,
                model="gemini-2.5-pro",
            ),
            {"id": "i1", "timestamp": "x", "type": "info", "content": "Request cancelled."},
            gemini_reply("g2", "Fixed: the flag was wrong.", 2, model="gemini-2.5-pro"),
        ],
    )
    assert detect_format(path) == "gemini"
    result = import_transcript(path)
    params = result.params
    open_in_core(params)
    assert params["sessionId"] == "gem-1" and params["projectId"] == "abc123"
    assert [m["info"]["id"] for m in params["messages"]] == ["u1", "g1", "g2"]
    g1 = by_id(params)["g1"]
    assert g1["info"]["modelID"] == "gemini-2.5-pro" and g1["info"]["providerID"] == "google"
    assert g1["info"]["finish"] == "tool-calls"
    # Gemini's prompt count includes the cached tokens; the thoughts are counted apart
    assert g1["info"]["tokens"] == {
        "input": 200, "output": 40, "reasoning": 15, "cache": {"read": 1000, "write": 0}, "total": 1255
    }  # fmt: skip
    assert g1["parts"][0] == {"id": "g1.0", "type": "reasoning", "text": "**Reading** the config first."}
    read, failed, running = _tools(params)
    assert read["callID"] == "read_file-1" and read["tool"] == "read_file"
    assert read["state"]["status"] == "completed" and read["state"]["output"] == "[build]\nflags = -O2"
    assert read["state"]["input"] == {"file_path": "b.cfg"} and read["state"]["title"] == "Read_File"
    assert failed["state"] == {
        "status": "error", "input": {"command": "make"}, "error": "exit 2", "metadata": {},
        "title": "Run_Shell_Command", "time": {"start": T0},
    }  # fmt: skip
    assert running["state"]["status"] == "running"  # no result recorded: the request says interrupted
    assert "description" not in json.dumps(params)  # the tool's declared description: the UI's
    assert result.report.not_imported == {
        "info, error or warning record (shown to the user, not sent to the model)": 1
    }
    assert newest_user_ask(params) == ("u1", "Fix the build")
    assert params["toolNameMap"]["run_shell_command"] == "bash"


def test_slash_commands_are_not_sent_and_harness_context_is_synthetic(tmp_path: Path) -> None:
    path = _chat(
        tmp_path,
        [
            gemini_user("u0", [{"text": "<session_context>\ncwd: /repo\n</session_context>"}]),
            gemini_user("u1", "/memory show"),
            gemini_user(
                "u2",
                [
                    {"text": "Explain "},
                    {"text": "this file"},
                    {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
                ],
            ),
            gemini_reply(
                "g1", [{"text": "It is a parser.", "thoughtSignature": "sig=="}, {"executableCode": {}}]
            ),
        ],
    )
    result = import_transcript(path)
    params = result.params
    assert [m["info"]["id"] for m in params["messages"]] == ["u0", "u2", "g1"]
    assert by_id(params)["u0"]["parts"][0]["synthetic"] is True
    assert by_id(params)["u2"]["parts"][2] == {
        "id": "u2.2",
        "type": "file",
        "mime": "image/png",
        "url": "data:image/png;base64,iVBO",
    }
    assert by_id(params)["g1"]["parts"] == [
        {
            "id": "g1.0",
            "type": "text",
            "text": "It is a parser.",
            "metadata": {"google": {"thoughtSignature": "sig=="}},
        }
    ]
    assert result.report.not_imported == {"slash command (not sent to the model)": 1}
    assert (
        result.report.adjusted[
            "content part left out (a executableCode part has no equivalent in the data model)"
        ]
        == 1
    )
    assert newest_user_ask(params) == ("u2", "Explain \nthis file")  # parts joined by the core rule


def _recording(tmp_path: Path, records: list[dict]) -> Path:
    return write_jsonl(tmp_path / "session-2026-01-30T06-08-gem1.jsonl", [gemini_metadata(), *records])


def test_a_recording_replays_rewrites_rewinds_and_checkpoints(tmp_path: Path) -> None:
    calls_added = gemini_reply("g1", "Looking.", 1, toolCalls=[gemini_call("c1", "glob", pattern="*.py")])
    path = _recording(
        tmp_path,
        [
            gemini_user("u1", "List the files"),
            gemini_reply("g1", "Looking.", 1),
            calls_added,  # the same ID again, with its calls: the last write wins, in place
            {"$set": {"lastUpdated": "later"}},
            gemini_user("u2", "Now delete them", 2),
            gemini_reply("g2", "Deleting.", 3),
            {"$rewindTo": "u2"},  # the user rewound: u2 and everything after it are gone
            gemini_user("u3", "Only count them", 4),
            gemini_reply("g3", "Three files.", 5),
        ],
    )
    assert detect_format(path) == "gemini"
    result = import_transcript(path)
    assert [m["info"]["id"] for m in result.params["messages"]] == ["u1", "g1", "u3", "g3"]
    assert [t["callID"] for t in _tools(result.params)] == ["c1"]
    assert result.report.not_imported == {
        "session metadata (its IDs kept)": 1,
        "earlier write of a message written again (the last write kept)": 1,
        "metadata update ($set)": 1,
        "message removed by a later $rewindTo": 2,
        "rewind marker ($rewindTo)": 1,
    }
    assert result.report.consistent


def test_set_messages_replaces_the_whole_list_and_later_lines_apply_on_top(tmp_path: Path) -> None:
    path = _recording(
        tmp_path,
        [
            gemini_user("u1", "First ask"),
            gemini_reply("g1", "First answer", 1),
            {
                "$set": {
                    "messages": [
                        gemini_user("s1", "<state_snapshot>summary</state_snapshot>"),
                        gemini_reply("s2", "Got it.", 2),
                    ]
                }
            },
            gemini_user("u2", "Go on", 3),
        ],
    )
    result = import_transcript(path)
    params = result.params
    assert [m["info"]["id"] for m in params["messages"]] == ["s1", "s2", "u2"]
    assert by_id(params)["s1"]["parts"][0]["synthetic"] is True  # the compression summary
    assert result.report.not_imported["message replaced by a later $set.messages"] == 2
    assert result.report.consistent and result.report.records_imported == 2  # the $set line and u2


def test_a_rewind_to_an_unknown_message_removes_everything_as_gemini_cli_does(tmp_path: Path) -> None:
    path = _recording(tmp_path, [gemini_user("u1", "a"), {"$rewindTo": "nope"}, gemini_user("u2", "b", 1)])
    result = import_transcript(path)
    assert [m["info"]["id"] for m in result.params["messages"]] == ["u2"]
    assert (
        result.report.adjusted[
            "$rewindTo an unknown message: everything before it removed, as Gemini CLI does"
        ]
        == 1
    )


def test_calls_without_ids_get_stable_ids_and_content_calls_are_not_doubled(tmp_path: Path) -> None:
    in_content = {"functionCall": {"name": "read_file", "args": {"file_path": "a"}}}
    records = [
        gemini_user("u1", "Read a and b"),
        gemini_reply(
            "g1",
            [{"text": "Reading."}, in_content],
            1,
            toolCalls=[
                gemini_call(None, "read_file", file_path="a"),
                gemini_call(None, "read_file", file_path="b"),
            ],
        ),
    ]
    first = import_transcript(_recording(tmp_path, records)).params
    again = import_transcript(_recording(tmp_path, records)).params
    ids = [t["callID"] for t in _tools(first)]
    assert ids == ["g1.call0", "g1.call1"] == [t["callID"] for t in _tools(again)]
    assert [t["state"]["input"] for t in _tools(first)] == [{"file_path": "a"}, {"file_path": "b"}]
    assert by_id(first)["g1"]["parts"][0]["type"] == "text"  # content order kept: text, then the calls


def test_a_truncated_last_line_is_named_and_can_be_skipped(tmp_path: Path) -> None:
    path = _recording(tmp_path, [gemini_user("u1", "Hi")])
    path.write_text(path.read_text() + '{"id": "g1", "type": "gem')
    with pytest.raises(TranscriptError, match="truncated last line") as err:
        import_transcript(path)
    assert err.value.line == 3
    result = import_transcript(path, tolerate_bad_lines=True)
    assert result.report.not_imported["unreadable line (skipped on request)"] == 1


@pytest.mark.parametrize("wrapped", [True, False])
def test_a_chat_save_checkpoint_pairs_responses_with_their_calls(tmp_path: Path, wrapped: bool) -> None:
    history = [
        {
            "role": "user",
            "parts": [{"text": "This is the Gemini CLI. We are setting up the context for our chat."}],
        },
        {"role": "model", "parts": [{"text": "Got it. Thanks for the context!"}]},
        {"role": "user", "parts": [{"text": "Run the tests"}]},
        {
            "role": "model",
            "parts": [{"functionCall": {"name": "run_shell_command", "args": {"command": "pytest"}}}],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "run_shell_command", "response": {"output": "3 passed"}}}
            ],
        },
        {"role": "model", "parts": [{"text": "All green."}]},
    ]
    path = tmp_path / "checkpoint-mytag.json"
    path.write_text(json.dumps({"history": history, "authType": "oauth"} if wrapped else history))
    assert detect_format(path) == "gemini"
    result = import_transcript(path)
    params = result.params
    open_in_core(params)
    assert params["sessionId"] == "gemini-checkpoint-mytag"
    assert [m["info"]["role"] for m in params["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "assistant",
    ]
    (call,) = _tools(params)
    assert call["callID"] == "gemini-checkpoint-mytag.3.call0"
    assert call["state"]["status"] == "completed" and call["state"]["output"] == "3 passed"
    assert params["messages"][0]["parts"][0]["synthetic"] is True
    assert newest_user_ask(params) == ("gemini-checkpoint-mytag.2", "Run the tests")
    assert result.report.consistent


def _stream(tmp_path: Path, events: list[dict]) -> Path:
    return write_jsonl(tmp_path / "transcript.jsonl", events)


def _run(session_id: str, ask: str, at: int = 0) -> list[dict]:
    return [
        stream_event("init", at, session_id=session_id, model="gemini-3-pro-preview"),
        stream_event("message", at + 1, role="user", content=ask),
        stream_event("message", at + 2, role="assistant", content="Let me ", delta=True),
        stream_event("message", at + 3, role="assistant", content="look.", delta=True),
        stream_event(
            "tool_use", at + 4, tool_name="read_file", tool_id="read_file-1", parameters={"file_path": "a"}
        ),
        stream_event("tool_result", at + 5, tool_id="read_file-1", status="success", output="alpha"),
        stream_event(
            "tool_use", at + 6, tool_name="run_shell_command", tool_id="sh-2", parameters={"command": "x"}
        ),
        stream_event(
            "tool_result", at + 7, tool_id="sh-2", status="error", error={"type": "exit", "message": "exit 1"}
        ),
        stream_event("message", at + 8, role="assistant", content="Done", delta=True),
        stream_event("message", at + 9, role="assistant", content=".", delta=True),
        stream_event(
            "result", at + 10, status="success", stats={"total_tokens": 2_000_000, "input_tokens": 1_990_000}
        ),
    ]


def test_stream_json_joins_deltas_and_splits_responses_at_results(tmp_path: Path) -> None:
    path = _stream(tmp_path, _run("run-1", "Read a"))
    assert detect_format(path) == "gemini"
    result = import_transcript(path)
    params = result.params
    open_in_core(params)
    roles = [(m["info"]["role"], [p["type"] for p in m["parts"]]) for m in params["messages"]]
    assert roles == [
        ("user", ["text"]),
        ("assistant", ["text", "tool"]),
        ("assistant", ["tool"]),
        ("assistant", ["text"]),
    ]
    first, second, last = params["messages"][1:]
    assert first["parts"][0]["text"] == "Let me look." and last["parts"][0]["text"] == "Done."
    assert first["info"]["modelID"] == "gemini-3-pro-preview"
    assert first["parts"][1]["state"]["output"] == "alpha"
    assert (
        second["parts"][0]["state"]["status"] == "error" and second["parts"][0]["state"]["error"] == "exit 1"
    )
    assert all("tokens" not in m["info"] for m in params["messages"])  # the run's totals are no step's usage
    assert result.report.not_imported["run statistics (the run's totals, not one step's usage)"] == 1
    assert result.report.consistent


def test_a_stream_of_several_runs_imports_the_newest_or_the_one_named(tmp_path: Path) -> None:
    wrapper_line = {"type": "message", "role": "user", "content": "Read", "ts": "2026-01-30T06:18:04"}
    path = _stream(
        tmp_path, [wrapper_line, *_run("run-1", "Read a"), wrapper_line, *_run("run-2", "Read b", 100)]
    )
    newest = import_transcript(path)
    assert newest.params["sessionId"] == "run-2" and newest_user_ask(newest.params)[1] == "Read b"  # type: ignore[index]
    assert newest.report.not_imported["event of another run in this file (--session picks it)"] == 11
    assert (
        newest.report.not_imported["line outside a run, between init and result (not written by Gemini CLI)"]
        == 2
    )
    older = import_transcript(path, session="run-1")
    assert older.params["sessionId"] == "run-1" and older.report.consistent
    with pytest.raises(
        TranscriptError, match=r"no run with session_id 'run-9' in this file \(runs: run-1, run-2\)"
    ):
        import_transcript(path, session="run-9")


def test_an_interrupted_run_leaves_its_last_call_without_a_result(tmp_path: Path) -> None:
    events = _run("run-1", "Read a")[:5]  # cut right after the first tool_use
    params = import_transcript(_stream(tmp_path, events)).params
    assert _tools(params)[0]["state"]["status"] == "running"


# -- the real Gemini CLI files: two different sessions of one eval harness, one in each form ------------
# The saved chat (session 7befeae5…, the DashStack design, project 85611489…) and the stream-json
# file (two later runs, sessions 6727b31e… and 65b8f8e4…, another design and project) are not two
# records of one run: they share the harness's prompt template and the model, nothing else.
def _source_calls_chat(path: Path) -> list[tuple[str, str]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return [(c["name"], c["status"]) for m in document["messages"] for c in m.get("toolCalls", [])]


def _source_calls_stream(path: Path, session_id: str) -> list[tuple[str, str]]:
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    start = next(i for i, e in enumerate(events) if e.get("session_id") == session_id)
    run = events[
        start : next((i for i, e in enumerate(events) if e["type"] == "result" and i > start), len(events))
    ]
    results = {e["tool_id"]: e["status"] for e in run if e["type"] == "tool_result"}
    return [(e["tool_name"], results.get(e["tool_id"], "running")) for e in run if e["type"] == "tool_use"]


STATUS = {"success": "completed", "error": "error", "running": "running"}


def _project_root(ask: str) -> str:
    return next(line for line in ask.splitlines() if line.startswith("Project root: "))


def test_the_chat_file_and_the_stream_json_each_import_their_own_session() -> None:
    """Each file imports as its own session: different session IDs and projects, one harness prompt
    template and one model, and in each every call with the name and outcome its own source gives
    it, in order, after a single ask."""
    root = real_sessions_root()
    if root is None:
        pytest.skip(absent_reason())
    chat_path = root / "gemini" / "figma-eval-chat-session.json"
    stream_path = root / "gemini" / "figma-eval-stream.jsonl"
    chat, stream = import_transcript(chat_path).params, import_transcript(stream_path).params
    assert chat["sessionId"] == json.loads(chat_path.read_text(encoding="utf-8"))["sessionId"]
    inits = [
        json.loads(line) for line in stream_path.read_text(encoding="utf-8").splitlines() if '"init"' in line
    ]
    assert (
        stream["sessionId"] == [e for e in inits if e["type"] == "init"][-1]["session_id"]
    )  # the newest run
    assert chat["sessionId"] != stream["sessionId"]
    asks = [newest_user_ask(p) for p in (chat, stream)]
    assert all(a is not None for a in asks)
    texts_ = [a[1] for a in asks if a is not None]
    assert len({t.split(".")[0] for t in texts_}) == 1  # the harness's prompt template opens both
    assert _project_root(texts_[0]) != _project_root(texts_[1])  # ...for different projects
    models = {
        m["info"].get("modelID")
        for p in (chat, stream)
        for m in p["messages"]
        if m["info"]["role"] == "assistant"
    }
    assert len(models) == 1
    for params, source in (
        (chat, _source_calls_chat(chat_path)),
        (stream, _source_calls_stream(stream_path, stream["sessionId"])),
    ):
        imported = [(t["tool"], t["state"]["status"]) for t in _tools(params)]
        assert imported == [(name, STATUS[status]) for name, status in source]
        assert imported[0] == ("activate_skill", "error")  # both start by asking for the missing skill
        assert all(
            m["info"]["role"] == "assistant" for m in params["messages"][1:]
        )  # one ask, then the agent
