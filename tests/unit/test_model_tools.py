"""The sidecar's model tools over one session, in process (behavior.md#d18, #model-tools).

Every operation of history, memory and task; answers within their budget and paged to the end;
mistakes in the arguments answered as tool errors; RE2 searches; the memory root's confinement
(symlinks, `..`, absolute paths, other sessions); definitions valid for each provider SDK's tool
type. Over stdio: tests/e2e/test_model_tools.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import ToolParam
from google.genai import types as genai
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from openai.types.shared_params import FunctionDefinition
from pydantic import TypeAdapter, ValidationError

from mimo_sidecar.core.errors import DomainError, ErrorCode
from mimo_sidecar.core.estimate.jstext import est
from mimo_sidecar.core.formats import FORMATS, call_ids
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.model_tools import ToolAnswer, ToolContext, call_tool, tools_in_format
from mimo_sidecar.core.session.session import Session
from tests.unit.builders import assistant, checkpoint, session_of, text, tool, tool_result, tool_use, user

SID, OTHER, PID = "ses_tools", "ses_other", "prj"
SECRET = "OUTSIDE-SECRET-5c1d"
LONG_ASK = "ASK-HEAD " + "".join(f"middle sentence {n}. " for n in range(900)) + " ASK-TAIL"
CLEARED = "CLEARED-OUTPUT " + "line of a file\n" * 3000
ODD_ID = "call.odd|id"  # not a valid Anthropic tool_use ID: the anthropic format remaps it
CAP = 400  # a small answer cap, so that paging is exercised on small texts


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> MemoryRoot:
    base = tmp_path_factory.mktemp("model-tools")
    memory, outside = base / "memory", base / "outside"
    files = {
        f"sessions/{SID}/checkpoint.md": "# Checkpoint\nTopic: tools\n\n## §1\nneedle in the checkpoint\n",
        f"sessions/{SID}/notes.md": "first\n" + "notes body " * 400 + "\nneedle in the notes\n",
        f"sessions/{SID}/tasks/T1/progress.md": "# T1\nspec: do it\n" + "progress entry\n" * 200,
        f"sessions/{SID}/bin.md": "\0binary",
        f"sessions/{OTHER}/notes.md": "needle of another session\n",
        f"projects/{PID}/MEMORY.md": "# Project\nneedle in the project\n",
        "projects/elsewhere/MEMORY.md": "needle of another project\n",
        "global/MEMORY.md": "# Global\nneedle in global\n",
    }
    for key, content in files.items():
        (memory / key).parent.mkdir(parents=True, exist_ok=True)
        (memory / key).write_text(content)
    outside.mkdir()
    (outside / "secret.md").write_text(f"needle {SECRET}\n")
    os.symlink(outside / "secret.md", memory / "sessions" / SID / "leak.md")
    os.symlink(outside, memory / "sessions" / SID / "linked")
    os.symlink(memory / "sessions" / SID / "notes.md", memory / "sessions" / SID / "inside-link.md")
    (memory / "sessions" / SID / "tasks" / "T2").mkdir()
    os.symlink(outside / "secret.md", memory / "sessions" / SID / "tasks" / "T2" / "progress.md")
    return MemoryRoot(str(memory))


@pytest.fixture(scope="module")
def session() -> Session:
    messages = [
        user("u1", text(LONG_ASK), created=1_000),
        assistant(
            "a1",
            tool("c1", "read", {"filePath": "big.txt"}, output=CLEARED, compacted=5_000),
            finish="tool-calls",
            created=1_001,
        ),
        assistant("a2", tool_use(ODD_ID, "Grep", {"pattern": "needle"}), finish="tool-calls", created=1_002),
        user("r2", tool_result(ODD_ID, "needle found in a split result"), created=1_003),
        assistant(
            "a3",
            tool("c3", "mimo_history", {"operation": "search", "query": "needle"}, output="needle hit"),
            finish="tool-calls",
            created=1_004,
        ),
        assistant(
            "a4", tool("c4", "bash", {"command": "sleep"}, "running"), finish="tool-calls", created=1_005
        ),
        user(
            "b1",
            checkpoint("u1", "a4"),
            text("boundary text mentioning needle", synthetic=True),
            created=1_001,
        ),
        user("u2", text("Find the needle please"), created=1_006),
        assistant("s1", text("sub-agent work"), agent_id="explore", created=1_007),
    ]
    s = session_of(messages, SID, PID)
    s.tasks = [
        {"id": "T1", "status": "in_progress", "summary": "Top task", "created_at": 1},
        {"id": "T1.1", "parent_task_id": "T1", "status": "open", "summary": "Child", "created_at": 2},
        {
            "id": "T1.1.1",
            "parent_task_id": "T1.1",
            "status": "done",
            "summary": "Grandchild",
            "created_at": 3,
        },
        {"id": "T2", "status": "open", "summary": "Linked progress", "created_at": 4},
        {"id": "T0", "status": "done", "summary": "Old", "created_at": 0, "cleanup_after": 10},
    ]
    return s


def run(
    session: Session, root: MemoryRoot, name: str, cap: int = CAP, prefix: str = "", **arguments: Any
) -> ToolAnswer:
    ctx = ToolContext(session, root, now_ms=100_000, archive_days=7, prefix=prefix, answer_tokens=cap)
    return call_tool(ctx, prefix + name, arguments)


def read_all(
    session: Session, root: MemoryRoot, name: str, cap: int = CAP, **arguments: Any
) -> tuple[str, list[ToolAnswer]]:
    """Every page of a paged answer, from offset 0 to the end, and the pages' content joined: each
    answer less its trailer (the last line, when more follows) and its heading (memory read: one
    line; task get: down to the line naming its progress.md)."""
    answers, content, offset = [], "", 0
    while True:
        answer = run(session, root, name, cap, **arguments, offset=offset)
        assert not answer.is_error, answer.text
        answers.append(answer)
        body, nxt = answer.text, answer.structured["nextOffset"]
        if nxt is not None:
            body = body.rsplit("\n", 1)[0]
        if name == "memory":
            body = body.split("\n", 1)[1]
        elif name == "task":
            body = body.split("\nIts progress.md (", 1)[1].split("\n", 1)[1]
        content += body
        if nxt is None:
            return content, answers
        assert nxt > offset
        offset = nxt


# -- history --------------------------------------------------------------------------------------------
def test_around_shows_an_elided_user_message_in_full_within_each_budget(
    session: Session, root: MemoryRoot
) -> None:
    content, answers = read_all(
        session, root, "history", operation="around", messageID="u1", before=0, after=0
    )
    assert LONG_ASK in content and len(answers) > 3
    for answer in answers:
        assert est(answer.text) <= CAP + 40  # the page, plus its trailer line


def test_around_shows_neighbours_of_the_same_agent(session: Session, root: MemoryRoot) -> None:
    answer = run(session, root, "history", 100_000, operation="around", messageID="a2", before=2, after=1)
    # b1, the boundary, lists right after a1 (stamped in a1's millisecond, created later)
    assert "a1 · assistant" in answer.text and "b1 · user" in answer.text and "r2 · user" in answer.text
    assert "s1" not in answer.text and "u1 · user" not in answer.text
    assert answer.text.index("Message a2") < answer.text.index("before it")


def test_result_gives_a_cleared_output_in_full(session: Session, root: MemoryRoot) -> None:
    content, answers = read_all(session, root, "history", 1000, operation="result", callID="c1")
    assert CLEARED in content and "cleared from the model's requests" in content
    assert all(est(a.text) <= 1000 + 40 for a in answers)


def test_result_resolves_a_remapped_call_id_and_a_pending_call(session: Session, root: MemoryRoot) -> None:
    sent = call_ids.anthropic()(ODD_ID)
    assert sent != ODD_ID
    answer = run(session, root, "history", operation="result", callID=sent)
    assert "needle found in a split result" in answer.text and answer.structured["callID"] == ODD_ID
    assert "no result stored" in run(session, root, "history", operation="result", callID="c4").text


def test_search_finds_text_results_and_calls_but_not_boundaries_or_its_own_calls(
    session: Session, root: MemoryRoot
) -> None:
    answer = run(session, root, "history", 100_000, prefix="mimo_", operation="search", query="NEEDLE")
    lines = answer.text.split("\n")
    assert answer.structured["matches"] == 3, answer.text  # u2's text, r2's result, a2's call input
    assert [line.split(" · ")[0] for line in lines if line.startswith("- ")] == ["- u2", "- r2", "- a2"]
    assert "boundary text" not in answer.text and "needle hit" not in answer.text


def test_search_pages_by_match(session: Session, root: MemoryRoot) -> None:
    everything = run(session, root, "history", 100_000, operation="search", query="e")
    total = everything.structured["matches"]
    seen, offset = 0, 0
    while offset is not None:
        page = run(session, root, "history", 60, operation="search", query="e", offset=offset)
        seen += page.structured["shown"]
        offset = page.structured["nextOffset"]
    assert seen == total > 3


def test_regex_search_is_re2_and_bounded(session: Session, root: MemoryRoot) -> None:
    found = run(session, root, "history", operation="search", query=r"middle sentence 89\d\.", regex=True)
    assert found.structured["matches"] == 1 and not found.is_error
    long = session_of([user("x", text("a" * 200_000 + "c"))], "ses_regex", None)
    slow_for_backtracking = run(long, root, "history", operation="search", query="(a+)+b", regex=True)
    assert slow_for_backtracking.structured["matches"] == 0  # RE2: linear, no catastrophic backtracking
    bad = run(session, root, "history", operation="search", query="(?<=x)y", regex=True)
    assert bad.is_error and "RE2" in bad.text
    assert run(session, root, "history", operation="search", query="x" * 1001).is_error


def test_a_lone_surrogate_in_a_query_is_searched_for_not_an_internal_error(
    session: Session, root: MemoryRoot
) -> None:
    odd = session_of([user("x", text("before \ud800 after"))], "ses_surrogate", None)
    for regex in (False, True):
        found = run(odd, root, "history", operation="search", query="\ud800 after", regex=regex)
        assert not found.is_error and found.structured["matches"] == 1, found.text


# -- memory ---------------------------------------------------------------------------------------------
def test_memory_search_covers_the_session_project_and_global_scopes_only(
    session: Session, root: MemoryRoot
) -> None:
    answer = run(session, root, "memory", 100_000, operation="search", query="needle")
    keys = [line.split(":")[0][2:] for line in answer.text.split("\n")[1:]]
    assert sorted(keys) == [
        "global/MEMORY.md",
        f"projects/{PID}/MEMORY.md",
        f"sessions/{SID}/checkpoint.md",
        f"sessions/{SID}/notes.md",
    ]
    assert SECRET not in answer.text and "another" not in answer.text
    only = run(session, root, "memory", operation="search", query="needle", path=f"sessions/{SID}/notes.md")
    assert only.structured["matches"] == 1 and only.structured["files"] == 1


def test_memory_read_pages_a_file_from_an_offset(session: Session, root: MemoryRoot) -> None:
    notes = Path(root.notes_path(SID)).read_text()
    content, answers = read_all(session, root, "memory", operation="read", path=f"sessions/{SID}/notes.md")
    assert content == notes and len(answers) > 2
    key = f"sessions/{SID}/notes.md"
    partial = run(session, root, "memory", 100_000, operation="read", path=key, offset=6)
    assert partial.text.split("\n", 1)[1] == notes[6:]


def test_an_absolute_path_inside_the_root_is_refused_with_the_key_to_use(
    session: Session, root: MemoryRoot
) -> None:
    """behavior.md#d22: the tool takes root-relative paths only, and says which one was meant."""
    for arguments in (
        {"operation": "read", "path": root.notes_path(SID)},
        {"operation": "search", "query": "needle", "path": root.notes_path(SID)},
    ):
        refused = run(session, root, "memory", **arguments)
        assert refused.is_error
        assert refused.text == (
            f"{root.notes_path(SID)!r} is an absolute path: the memory tool takes paths relative to the "
            "memory root, as the File: lines and the Memory keys index show them. "
            f'Call again with path="sessions/{SID}/notes.md".'
        )


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (f"sessions/{SID}/leak.md", "symbolic link"),
        (f"sessions/{SID}/linked/secret.md", "symbolic link"),
        (f"sessions/{SID}/inside-link.md", "symbolic link"),
        (f"sessions/{SID}/../../outside/secret.md", '".."'),
        ("/etc/passwd", "under the memory root"),
        (f"sessions/{OTHER}/notes.md", "not a memory file of this session"),
        ("projects/elsewhere/MEMORY.md", "not a memory file of this session"),
        (f"sessions/{SID}/bin.md", "binary"),
        (f"sessions/{SID}/missing.md", "no such file"),
    ],
)
def test_memory_read_refuses_what_lies_outside_the_sessions_memory(
    session: Session, root: MemoryRoot, path: str, reason: str
) -> None:
    answer = run(session, root, "memory", operation="read", path=path)
    assert answer.is_error and reason in answer.text and SECRET not in answer.text


def test_memory_search_on_a_refused_path_is_refused(session: Session, root: MemoryRoot) -> None:
    answer = run(session, root, "memory", operation="search", query="needle", path=f"sessions/{SID}/leak.md")
    assert answer.is_error and SECRET not in answer.text


# -- task -------------------------------------------------------------------------------------------------
def test_task_list_shows_every_level_and_counts_the_archived(session: Session, root: MemoryRoot) -> None:
    answer = run(session, root, "task", operation="list")
    assert answer.text.split("\n") == [
        "4 task(s) (1 archived task(s) not shown):",
        "- T1 [in_progress] Top task · has progress.md",
        "  - T1.1 [open] Child",
        "    - T1.1.1 [done] Grandchild",
        "- T2 [open] Linked progress",  # its progress.md is a link out of the root
    ]


def test_task_get_pages_its_progress(session: Session, root: MemoryRoot) -> None:
    progress = Path(root.task_progress_path(SID, "T1")).read_text()
    content, _ = read_all(session, root, "task", operation="get", id="T1")
    assert content == progress
    linked = run(session, root, "task", operation="get", id="T2")
    assert not linked.is_error and "symbolic link" in linked.text and SECRET not in linked.text
    unknown = run(session, root, "task", operation="get", id="T9")
    assert unknown.is_error and "T1, T1.1, T1.1.1, T2" in unknown.text


# -- arguments, names --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("history", {}, "operation must be one of around, search, result"),
        ("history", {"operation": "expand"}, 'got "expand"'),
        ("history", {"operation": "around"}, "needs messageID"),
        ("history", {"operation": "around", "message_id": "u1"}, "does not take message_id"),
        ("history", {"operation": "around", "messageID": 7}, "messageID must be a non-empty string"),
        ("history", {"operation": "around", "messageID": "u1", "before": 21}, "before is at most 20"),
        ("history", {"operation": "around", "messageID": "u1", "offset": -1}, "an integer of 0 or more"),
        ("history", {"operation": "around", "messageID": "nope"}, "no stored message has the ID 'nope'"),
        ("history", {"operation": "search", "query": ""}, "non-empty string"),
        ("history", {"operation": "search", "query": "x", "regex": "yes"}, "true or false"),
        ("history", {"operation": "result", "callID": "c9"}, "no stored tool call"),
        ("history", {"operation": "around", "messageID": "u1", "offset": 10**9}, "past the end"),
        ("memory", {"operation": "read"}, "needs path"),
        ("memory", {"operation": "search", "query": "needle", "offset": 99}, "past the last match"),
        ("task", {"operation": "get"}, "needs id"),
        ("task", {"operation": "list", "id": "T1"}, "does not take id"),
    ],
)
def test_bad_arguments_are_answered_as_tool_errors(
    session: Session, root: MemoryRoot, name: str, arguments: dict[str, Any], says: str
) -> None:
    answer = run(session, root, name, **arguments)
    assert answer.is_error and says in answer.text, answer.text


def test_integral_floats_are_integers(session: Session, root: MemoryRoot) -> None:
    assert not run(session, root, "history", operation="around", messageID="u2", before=1.0).is_error


def test_names_carry_the_prefix(session: Session, root: MemoryRoot) -> None:
    assert not run(session, root, "task", prefix="mimo_", operation="list").is_error
    ctx = ToolContext(session, root, now_ms=1, archive_days=7, prefix="mimo_")
    for wrong in ("task", "mimo_tasks", "other_task"):
        with pytest.raises(DomainError) as err:
            call_tool(ctx, wrong, {"operation": "list"})
        assert err.value.code is ErrorCode.UNKNOWN_TOOL and err.value.field == ("name",)


# -- definitions --------------------------------------------------------------------------------------------
def declared_keys(typed_dict: Any) -> set[str]:
    return set(typed_dict.__required_keys__ | typed_dict.__optional_keys__)


def assert_valid_tools(fmt: str, tools: list[Any], names: list[str]) -> None:
    """`tools` (as `tools/list` answers them) pass the provider SDK's tool type of `fmt`, use only the
    keys it declares, and are named `names`."""
    if fmt == "gemini":
        (tool,) = tools
        declared = genai.Tool.model_validate(tool).function_declarations or []
        assert [d.name for d in declared] == names
        return
    assert [t.get("name") or t["function"]["name"] for t in tools] == names
    for definition in tools:
        if fmt == "anthropic":
            TypeAdapter(ToolParam).validate_python(definition)
            assert set(definition) <= declared_keys(ToolParam)
        elif fmt == "openai-chat":
            TypeAdapter(ChatCompletionToolParam).validate_python(definition)
            assert set(definition["function"]) <= declared_keys(FunctionDefinition)
        elif fmt == "openai-responses":
            TypeAdapter(FunctionToolParam).validate_python(definition)
            assert set(definition) <= declared_keys(FunctionToolParam)
        else:  # ai-sdk: MCP's Tool and the AI SDK's tool() take {name, description, inputSchema}
            assert set(definition) == {"name", "description", "inputSchema"}
        schema = (
            definition.get("input_schema")
            or definition.get("parameters")
            or definition.get("inputSchema")
            or definition["function"]["parameters"]
        )
        assert schema["type"] == "object" and schema["required"] == ["operation"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_definitions_validate_against_each_sdks_tool_type(fmt: str) -> None:
    names = ["mimo_history", "mimo_memory", "mimo_task"]
    assert_valid_tools(fmt, tools_in_format(fmt, "mimo_"), names)  # type: ignore[arg-type]


def test_the_validation_can_fail() -> None:
    bad_name = {"name": 3, "description": "d"}
    for adapter, definition in (
        (TypeAdapter(ToolParam), {**bad_name, "input_schema": {"type": "object"}}),
        (TypeAdapter(ChatCompletionToolParam), {"type": "function", "function": bad_name}),
        (TypeAdapter(FunctionToolParam), {"type": "function", **bad_name, "parameters": {}, "strict": False}),
    ):
        with pytest.raises(ValidationError):
            adapter.validate_python(definition)
    with pytest.raises(ValidationError):
        genai.Tool.model_validate({"functionDeclarations": [{"name": "x", "inputSchema": {}}]})
