"""Format detection, and the one error bad input gets: `TranscriptError`, naming the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mimo_sidecar.importers import TranscriptError, detect_format, import_transcript
from tests.fuzz import examples
from tests.unit.importers.transcripts import (
    GEMINI_TOKENS,
    AiderHistory,
    ClaudeLog,
    CodexRollout,
    cline_message,
    gemini_call,
    gemini_chat,
    gemini_metadata,
    gemini_reply,
    gemini_user,
    open_in_core,
    opencode_export,
    stream_event,
    text,
    thinking,
    tool_result,
    tool_use,
    usage,
)


def claude_bytes() -> bytes:
    log = ClaudeLog()
    log.user("Speed up the importer")
    log.assistant([thinking("Profile first."), text("Profiling.")], mid="msg_1")
    call = log.assistant(
        [tool_use("toolu_1", "Bash", command="profile")], mid="msg_1", usage=usage(9, 20, 5, 1)
    )
    log.user([tool_result("toolu_1", [text("hot loop in parse")])], parent=call)
    log.progress("toolu_1")
    log.system("compact_boundary", parent=None, logicalParentUuid=call, compactMetadata={"trigger": "manual"})
    log.user("Summary of the work so far.", isCompactSummary=True)
    log.queue("enqueue", "keep the API")
    log.queue("remove")
    log.user("<system-reminder>x</system-reminder>", isMeta=True)
    log.assistant([text("Done.")], mid="msg_2", stop_reason="end_turn")
    return "".join(json.dumps(r) + "\n" for r in log.records).encode()


def codex_bytes() -> bytes:
    rollout = CodexRollout()
    rollout.meta()
    rollout.turn_context()
    rollout.user("<environment_context>cwd</environment_context>", echo=False)
    rollout.user("Add a flag")
    rollout.reasoning()
    rollout.say("Adding it.")
    rollout.call("call_1")
    rollout.output("call_1")
    rollout.item(
        {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"}
    )
    rollout.item({"type": "custom_tool_call_output", "call_id": "call_2", "output": "ok"})
    rollout.usage()
    rollout._line("compacted", {"message": "summary"})
    rollout.user("Again")
    rollout.event({"type": "thread_rolled_back", "num_turns": 1})
    return "".join(json.dumps(r) + "\n" for r in rollout.records).encode()


def cline_bytes() -> bytes:
    history = [
        cline_message(
            "user",
            [text("<task>\nShip it\n</task>"), text("<environment_details>x</environment_details>")],
            1,
        ),
        cline_message(
            "assistant", [text("On it."), tool_use("toolu_1", "execute_command", command="make")], 2
        ),
        cline_message(
            "user",
            [text("[execute_command for 'make'] Result:\nok"), text("<feedback>\nthanks\n</feedback>")],
            3,
        ),
    ]
    return json.dumps(history, indent=1).encode()


def opencode_bytes() -> bytes:
    return json.dumps(opencode_export(), indent=2).encode()


def gemini_recording_bytes() -> bytes:
    records = [
        gemini_metadata(),
        gemini_user("u1", "Count the files"),
        gemini_reply("g1", "Counting.", 1, toolCalls=[gemini_call("c1", "glob", pattern="*")]),
        gemini_reply(
            "g1", "Counting.", 1, toolCalls=[gemini_call("c1", "glob", pattern="*")], tokens=GEMINI_TOKENS
        ),
        {"$set": {"lastUpdated": "x"}},
        gemini_user("u2", "and delete them", 2),
        {"$rewindTo": "u2"},
        gemini_reply("g2", [{"text": "Three.", "thoughtSignature": "s"}], 3, model="gemini-2.5-pro"),
    ]
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def gemini_chat_bytes() -> bytes:
    messages = [
        gemini_user("u1", [{"text": "Why?"}, {"inlineData": {"mimeType": "image/png", "data": "iVBO"}}]),
        gemini_reply(
            "g1",
            "",
            1,
            thoughts=[{"subject": "S", "description": "d"}],
            toolCalls=[gemini_call("c1", "read_file", file_path="a")],
        ),
        gemini_reply("g2", "Because.", 2, tokens=GEMINI_TOKENS),
    ]
    return json.dumps(gemini_chat(messages), indent=2).encode()


def gemini_stream_bytes() -> bytes:
    events = [
        stream_event("init", session_id="r1", model="gemini-2.5-pro"),
        stream_event("message", 1, role="user", content="Read a"),
        stream_event("message", 2, role="assistant", content="Read", delta=True),
        stream_event("message", 3, role="assistant", content="ing.", delta=True),
        stream_event("tool_use", 4, tool_name="read_file", tool_id="t1", parameters={"file_path": "a"}),
        stream_event("tool_result", 5, tool_id="t1", status="success", output="alpha"),
        stream_event("message", 6, role="assistant", content="Done.", delta=True),
        stream_event("result", 7, status="success", stats={"total_tokens": 10}),
    ]
    return "".join(json.dumps(e) + "\n" for e in events).encode()


def gemini_checkpoint_bytes() -> bytes:
    history = [
        {"role": "user", "parts": [{"text": "Run it"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "glob", "args": {"pattern": "x"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "glob", "response": {"output": "ok"}}}]},
        {"role": "model", "parts": [{"text": "Ran."}]},
    ]
    return json.dumps({"history": history}).encode()


def aider_bytes() -> bytes:
    history = (
        AiderHistory()
        .start()
        .user("Rename f")
        .reply("a.py\n```\n<<<<<<< SEARCH\ndef f():\n=======\ndef g():\n>>>>>>> REPLACE\n```")
        .tool("Tokens: 1.2k sent, 80 received.", "Applied edit to a.py")
        .user("/run pytest")
        .tool("Add 0.1k tokens of command output to the chat? (Y)es/(N)o [Yes]: y")
        .tool("Added 3 lines of output to the chat.")
    )
    return history.text.encode()


FIXTURES = {
    "claude-code": claude_bytes,
    "codex": codex_bytes,
    "cline": cline_bytes,
    "opencode": opencode_bytes,
    "gemini": gemini_recording_bytes,
    "gemini-chat": gemini_chat_bytes,
    "gemini-stream": gemini_stream_bytes,
    "gemini-checkpoint": gemini_checkpoint_bytes,
    "aider": aider_bytes,
}
NAMES = {
    "claude-code": "s.jsonl",
    "codex": "rollout.jsonl",
    "cline": "api_conversation_history.json",
    "opencode": "x.json",
    "gemini": "session-1.jsonl",
    "gemini-chat": "session-1.json",
    "gemini-stream": "transcript.jsonl",
    "gemini-checkpoint": "checkpoint-tag.json",
    "aider": ".aider.chat.history.md",
}
JSONL_FIXTURES = ("claude-code", "codex", "gemini", "gemini-stream")


def format_of(fixture: str) -> str:
    return "gemini" if fixture.startswith("gemini") else fixture  # the four forms of one format


@pytest.mark.parametrize("fmt", FIXTURES)
def test_each_format_is_detected_from_the_content(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "transcript.data"  # no telling name
    path.write_bytes(FIXTURES[fmt]())
    assert detect_format(path) == format_of(fmt)
    result = import_transcript(path)
    open_in_core(result.params)
    assert result.report.format == format_of(fmt) and result.report.consistent


def test_directories_are_detected_or_refused(tmp_path: Path) -> None:
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "api_conversation_history.json").write_bytes(cline_bytes())
    assert detect_format(tmp_path / "task") == "cline"
    assert import_transcript(tmp_path / "task").report.messages == 4  # the feedback is split off
    (tmp_path / "empty").mkdir()
    with pytest.raises(TranscriptError, match="no session found in this directory"):
        import_transcript(tmp_path / "empty")
    (tmp_path / "store" / "session").mkdir(parents=True)
    (tmp_path / "store" / "message").mkdir()
    with pytest.raises(TranscriptError, match="no session found in this OpenCode storage"):
        import_transcript(tmp_path / "store")


@pytest.mark.parametrize(
    ("content", "message", "line"),
    [
        (b"", "empty file", None),
        (b"  \n\n", "empty file", None),
        (b'{"type": "user", "uuid": "a", "sessionId": "s"}\n{"type": "assis', "truncated last line", 2),
        (b'{"type": "user", "uuid": "a", "sessionId": "s"}\n[1, 2]\n', "must be a JSON object", 2),
        (b'{"type": "user", "uuid": "a", "sessionId": "s", "x": "\xff"}\n', "invalid UTF-8", 1),
        (b'{"hello": "world"}\n', "no importer reads this file: it is a JSON object with keys hello", None),
        (b"not json at all\n", "no importer reads this file: it is text that is not JSON", None),
        (b'[{"role": "user", "content": "hi"},', "not valid JSON", 1),
        (b'{\n  "info": {"id": "ses_1"},\n  "messages": [\n', "not valid JSON", 4),
    ],
)
def test_bad_files_name_the_file_and_line(
    tmp_path: Path, content: bytes, message: str, line: int | None
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(TranscriptError) as err:
        import_transcript(path)
    assert message in str(err.value)
    assert err.value.line == line
    assert str(err.value).startswith(f"{path}:{line}:" if line else f"{path}:")
    assert "\n" not in str(err.value)


def test_a_missing_file_and_an_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="no such file"):
        import_transcript(tmp_path / "nope.jsonl")
    (tmp_path / "a.jsonl").write_bytes(claude_bytes())
    with pytest.raises(TranscriptError, match="unknown format 'roo'"):
        import_transcript(tmp_path / "a.jsonl", "roo")


def test_bad_lines_can_be_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(claude_bytes() + b'{"type": "assistant", "mess')
    with pytest.raises(TranscriptError, match="truncated last line"):
        import_transcript(path)
    result = import_transcript(path, tolerate_bad_lines=True)
    assert result.report.not_imported["unreadable line (skipped on request)"] == 1
    assert result.report.consistent


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"type": "user", "uuid": "u1", "sessionId": "s", "message": "hi"}, "without a message object"),
        ({"type": "user", "uuid": "u1", "sessionId": "s", "message": {"content": 3}}, "string or a list"),
        (
            {"type": "user", "uuid": "u1", "sessionId": "s", "message": {"content": [{"text": "x"}]}},
            "with a type",
        ),
        (
            {
                "type": "assistant",
                "uuid": "u1",
                "sessionId": "s",
                "message": {"content": [{"type": "tool_use"}]},
            },
            "tool_use without an id",
        ),
        (
            {
                "type": "user",
                "uuid": "u1",
                "sessionId": "s",
                "message": {"content": [{"type": "text", "id": ""}]},
            },
            "id must be a non-empty string",
        ),
    ],
)
def test_records_of_the_wrong_shape_name_their_line(tmp_path: Path, record: dict, message: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        json.dumps({"type": "summary", "summary": "t", "leafUuid": "u1"}) + "\n" + json.dumps(record) + "\n"
    )
    with pytest.raises(TranscriptError) as err:
        import_transcript(path, "claude-code")
    assert message in str(err.value) and err.value.line == 2


# -- the property: mangled input gives a TranscriptError or params the sidecar accepts --------------
def _mangle(data: bytes, how: str, position: float, payload: bytes) -> bytes:
    at = int(position * len(data))
    if how == "truncate":
        return data[:at]
    if how == "overwrite":
        return data[:at] + payload + data[at + len(payload) :]
    if how == "insert":
        return data[:at] + payload + data[at:]
    if how == "delete":
        return data[:at] + data[at + 1 + len(payload) * 7 :]
    lines = data.split(b"\n")  # "shuffle": swap two lines
    i, j = at % len(lines), (at * 7 + len(payload)) % len(lines)
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


JSON_NOISE = st.sampled_from(
    [
        b"{",
        b"}",
        b"[",
        b"]",
        b'"',
        b",",
        b":",
        b"null",
        b"0",
        b"-1",
        b"1e999",
        b"\xff",
        b"\xc3",
        b"\n",
        b"\\u0000",
        b'"type"',
        b'"id"',
        b'""',
        b"{}",
        b"[]",
        b"true",
        b'"user"',
        b'"assistant"',
        b'"tool_use"',
        b"\xe2\x80\xa8",
    ]
)


@settings(
    max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    fmt=st.sampled_from(sorted(FIXTURES)),
    how=st.sampled_from(["truncate", "overwrite", "insert", "delete", "shuffle"]),
    position=st.floats(0, 1),
    payload=st.one_of(JSON_NOISE, st.binary(min_size=1, max_size=6)),
    tolerate=st.booleans(),
)
def test_mangled_input_never_raises_anything_but_transcript_error(
    tmp_path: Path, fmt: str, how: str, position: float, payload: bytes, tolerate: bool
) -> None:
    path = tmp_path / NAMES[fmt]
    path.write_bytes(_mangle(FIXTURES[fmt](), how, position, payload))
    try:
        forced = format_of(fmt) if position < 0.5 else None
        result = import_transcript(path, forced, tolerate_bad_lines=tolerate)
    except TranscriptError as err:
        assert str(err).startswith(str(path)) and "\n" not in str(err)
        return
    open_in_core(result.params)
    assert result.report.consistent, result.report.as_dict()


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from(["user", "assistant", "tool_use", "tool_result", "text", "compaction", "message", ""]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["type", "id", "role", "content", "text"]), inner, max_size=3)
    ),
    max_leaves=6,
)


def _slots(value: object) -> list[tuple[object, object]]:
    """(container, key) of every value inside `value`, depth first."""
    found: list[tuple[object, object]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((value, key))
            found.extend(_slots(item))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.append((value, index))
            found.extend(_slots(item))
    return found


def _replace_somewhere(fmt: str, where: float, replacement: object, drop: bool) -> bytes:
    data = FIXTURES[fmt]()
    jsonl = fmt in JSONL_FIXTURES
    docs = [json.loads(line) for line in data.splitlines() if line.strip()] if jsonl else [json.loads(data)]
    slots = _slots(docs)
    container, key = slots[int(where * (len(slots) - 1))]
    if drop and isinstance(container, dict):
        del container[key]
    else:
        container[key] = replacement  # type: ignore[index]
    if jsonl:
        return "".join(json.dumps(d) + "\n" for d in docs).encode()
    return json.dumps(docs[0]).encode()


@settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    fmt=st.sampled_from(sorted(set(FIXTURES) - {"aider"})),  # JSON values to replace: not in Markdown
    where=st.floats(0, 1),
    replacement=JSON_VALUES,
    drop=st.booleans(),
)
def test_values_of_the_wrong_type_anywhere_never_raise_anything_but_transcript_error(
    tmp_path: Path, fmt: str, where: float, replacement: object, drop: bool
) -> None:
    path = tmp_path / NAMES[fmt]
    path.write_bytes(_replace_somewhere(fmt, where, replacement, drop))
    try:
        result = import_transcript(path, format_of(fmt))
    except TranscriptError as err:
        assert str(err).startswith(str(path)) and "\n" not in str(err)
        return
    open_in_core(result.params)
    assert result.report.consistent, result.report.as_dict()
