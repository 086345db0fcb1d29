"""The model tools over stdio, on a session after two rebuilds (behavior.md#d18, protocol.md "Model
tools"). One sidecar for the module.

A session declares the sidecar's tools (`toolPointers.sidecarTools`, prefix `mimo_`); it holds a
long user ask (elided in Recent user input), steps whose read results the first rebuild clears and
whose messages its boundary collapses, and a memory root with links out of it. After two rebuilds:
`tools/list` in every format passes the SDK tool types; `tools/call` of every operation answers
within its budget and gives back the elided ask, a collapsed step and a cleared result in full;
every call the boundary's text writes resolves; bad arguments are tool errors, not RPC errors;
nothing outside the memory root is read. A second session with the reference's wording and tools
that lack what its text names is reported in every format.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.client import RpcError, SidecarClient
from mimo_sidecar.core.estimate.jstext import est
from mimo_sidecar.core.formats import FORMATS
from tests.unit.pointer_calls import resolved_calls
from tests.unit.test_model_tools import assert_valid_tools
from tests.unit.test_sdk_types import validate

pytestmark = pytest.mark.e2e
Json = dict[str, Any]
SID, PLAIN, PREFIX = "ses_e2e_tools", "ses_e2e_plain", "mimo_"
NAMES = [PREFIX + n for n in ("history", "memory", "task")]
SECRET = "E2E-OUTSIDE-SECRET-91b"
ASK = (
    "Please FIX-HEAD the importer. "
    + "".join(f"Detail {n}: keep row {n} intact. " for n in range(700))
    + "FIX-TAIL"
)
STEPS = 30
BUDGET = 4000 + 60  # an answer's content cap, plus its heading and trailer lines
PREFIX_TOOLS = [{"name": "bash", "description": "Run a command", "input_schema": {"type": "object"}}]


def output(phase: int, k: int) -> str:
    return f"OUTPUT-{phase}-{k} " + "".join(f"row {phase}.{k}.{n} = value\n" for n in range(300))


def message(mid: str, role: str, created: int, parts: list[Json], **info: Any) -> Json:
    return {
        "info": {"id": mid, "sessionID": SID, "role": role, "time": {"created": created}, **info},
        "parts": [
            {"id": f"{mid}-p{i}", "messageID": mid, "sessionID": SID, **p} for i, p in enumerate(parts)
        ],
    }


def phase_messages(phase: int, ask: str, start: int) -> list[Json]:
    """A user ask, then STEPS steps that each read a large file, then a stop."""
    out = [message(f"u{phase}", "user", start, [{"type": "text", "text": ask}], agent="build")]
    for k in range(STEPS):
        part = {
            "type": "tool",
            "callID": f"call-{phase}-{k}",
            "tool": "read",
            "state": {
                "status": "completed",
                "input": {"filePath": f"data/{phase}-{k}.csv"},
                "output": output(phase, k),
                "title": "read",
                "metadata": {},
                "time": {"start": start + k, "end": start + k},
            },
        }
        out.append(
            message(f"a{phase}-{k:02d}", "assistant", start + 10 * (k + 1), [part], finish="tool-calls")
        )
    out.append(
        message(
            f"a{phase}-end",
            "assistant",
            start + 1000,
            [{"type": "text", "text": f"phase {phase} done"}],
            finish="stop",
        )
    )
    return out


def write(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")


@dataclass
class Story:
    client: SidecarClient
    root: Path
    inserted: list[Json] = field(default_factory=list)
    collapsed: list[str] = field(default_factory=list)  # stored messages the first rebuild collapsed

    def call(self, name: str, **arguments: Any) -> Json:
        result: Json = self.client.request(
            "tools/call", {"sessionId": SID, "name": name, "arguments": arguments}
        )
        return result

    def text(self, answer: Json) -> str:
        (block,) = answer["content"]
        assert block["type"] == "text"
        return str(block["text"])

    def read_all(self, name: str, **arguments: Any) -> str:
        """Every page of a paged answer, each within the budget; their content joined."""
        content, offset = "", 0
        while True:
            answer = self.call(name, **arguments, offset=offset)
            assert not answer["isError"], self.text(answer)
            text = self.text(answer)
            assert est(text) <= BUDGET
            nxt = answer["structuredContent"]["nextOffset"]
            content += text.rsplit("\n", 1)[0] if nxt is not None else text
            if nxt is None:
                return content
            offset = nxt


def rebuild(client: SidecarClient, sid: str) -> Json:
    client.request("checkpoint/writerStarted", {"sessionId": sid})
    client.request("checkpoint/writerFinished", {"sessionId": sid, "outcome": "success"})
    inserted: Json = client.request("rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert inserted["outcome"] == "rebuilt", inserted.get("detail")
    return inserted


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Story]:
    base = tmp_path_factory.mktemp("e2e-tools")
    root, outside = base / "memory", base / "outside"
    sdir = root / "sessions" / SID
    write(
        sdir / "checkpoint.md",
        "# Session checkpoint\nTopic: the importer\n\n## §1 Intent\n\nFix the importer.\n",
    )
    write(sdir / "notes.md", "".join(f"- note {n}: rows are keyed by date\n" for n in range(900)))
    write(
        sdir / "tasks" / "T1" / "progress.md", "# T1\nSpecification: rows intact.\n\n## Progress\n- parsed\n"
    )
    write(root / "global" / "MEMORY.md", "# Global\n- Prefer small commits.\n")
    write(outside / "secret.md", f"# Secret\n{SECRET} rows\n")
    os.symlink(outside / "secret.md", sdir / "leak.md")
    os.symlink(outside, sdir / "linked")
    write(root / "sessions" / PLAIN / "checkpoint.md", "# Session checkpoint\nTopic: plain\n\n## §1\n\nx\n")
    with SidecarClient.spawn(stderr=subprocess.DEVNULL) as client:
        client.initialize(str(root))
        client.request(
            "session/open",
            {
                "sessionId": SID,
                "messages": phase_messages(1, ASK, 1_000_000),
                "tasks": [
                    {"id": "T1", "status": "in_progress", "summary": "Fix the importer", "created_at": 1}
                ],
                "requestPrefix": {"system": ["You are a coding agent."], "tools": PREFIX_TOOLS},
                "toolPointers": {"sidecarTools": {"prefix": PREFIX}},
            },
        )
        s = Story(client, root)
        s.inserted.append(rebuild(client, SID))
        s.collapsed = client.request("request/build", {"sessionId": SID})["collapsedMessageIds"]
        client.request(
            "session/sync",
            {"sessionId": SID, "upsertMessages": phase_messages(2, "Now the exporter, please.", 2_000_000)},
        )
        s.inserted.append(rebuild(client, SID))
        yield s


def boundary_text(inserted: Json) -> str:
    return "\n".join(p["text"] for p in inserted["message"]["parts"] if p.get("type") == "text")


# -- tools/list ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_tools_list_in_every_format_passes_the_sdk_tool_types(story: Story, fmt: str) -> None:
    listed = story.client.request("tools/list", {"sessionId": SID, "format": fmt})
    assert listed["prefix"] == PREFIX and listed["format"] == fmt  # the session's declared prefix
    assert_valid_tools(fmt, listed["tools"], NAMES)
    bare = story.client.request("tools/list", {"format": fmt, "prefix": ""})
    assert_valid_tools(fmt, bare["tools"], ["history", "memory", "task"])


# -- what the rebuilds took out of view comes back ----------------------------------------------------------
def test_the_elided_user_ask_comes_back_in_full(story: Story) -> None:
    body = boundary_text(story.inserted[1])
    fetch = f'{PREFIX}history(operation="around", messageID="u1")'
    assert f"elided from message u1; fetch the full text with {fetch}" in body
    assert ASK in story.read_all(PREFIX + "history", operation="around", messageID="u1", before=0, after=0)


def test_a_collapsed_step_comes_back_in_full(story: Story) -> None:
    steps = [mid for mid in story.collapsed if mid.startswith("a1-")]
    assert len(steps) >= 3  # the first boundary digested them; the second is after them
    k = int(steps[1].rsplit("-", 1)[1])
    content = story.read_all(PREFIX + "history", operation="around", messageID=steps[1], before=0, after=0)
    assert output(1, k) in content


def test_a_cleared_result_comes_back_in_full(story: Story) -> None:
    cleared = [m["callId"] for m in story.inserted[0]["compacted"]]
    assert cleared
    k = int(cleared[0].rsplit("-", 1)[1])
    content = story.read_all(PREFIX + "history", operation="result", callID=cleared[0])
    assert output(1, k) in content and "cleared from the model's requests" in content


def test_every_operation_answers_within_its_budget(story: Story) -> None:
    calls = [
        ("history", {"operation": "around", "messageID": "u2"}),
        ("history", {"operation": "search", "query": "row 1.3.7 ="}),
        ("history", {"operation": "search", "query": r"OUTPUT-2-\d+", "regex": True}),
        ("history", {"operation": "result", "callID": "call-2-5"}),
        ("memory", {"operation": "search", "query": "keyed by DATE"}),
        ("memory", {"operation": "read", "path": f"sessions/{SID}/notes.md"}),
        ("task", {"operation": "list"}),
        ("task", {"operation": "get", "id": "T1"}),
    ]
    for name, arguments in calls:
        answer = story.call(PREFIX + name, **arguments)
        text = story.text(answer)
        assert not answer["isError"] and est(text) <= BUDGET, (name, arguments, text[:300])
    search = story.call(PREFIX + "history", operation="search", query=r"OUTPUT-2-\d+", regex=True)
    assert search["structuredContent"]["matches"] == STEPS
    memory = story.call(PREFIX + "memory", operation="search", query="keyed by DATE")
    assert memory["structuredContent"]["matches"] == 900 and memory["structuredContent"]["nextOffset"] == 50


def test_every_call_the_boundary_writes_resolves(story: Story) -> None:
    body = boundary_text(story.inserted[1])
    calls = resolved_calls(body, PREFIX, keyword="importer", task_id="T1")
    assert {name for name, _ in calls} == set(NAMES)
    for name, arguments in calls:
        answer = story.call(name, **arguments)
        assert not answer["isError"], (name, arguments, story.text(answer))
    assert story.inserted[1]["message"]["parts"][0]["toolsNamed"] == [
        PREFIX + n for n in ("memory", "history", "task")
    ]
    assert not [w for w in story.inserted[1]["warnings"] if w.startswith("named-tool-missing")]


# -- mistakes --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"operation": "expand", "messageID": "u1"},
        {"operation": "around", "messageId": "u1"},
        {"operation": "around", "messageID": "no-such-message"},
        {"operation": "search", "query": "(", "regex": True},
        {"operation": "result", "callID": 17},
    ],
)
def test_bad_arguments_are_tool_errors_not_rpc_errors(story: Story, arguments: Json) -> None:
    answer = story.call(PREFIX + "history", **arguments)
    assert answer["isError"] is True and story.text(answer).endswith(".")


def test_host_mistakes_are_rpc_errors(story: Story) -> None:
    cases = [
        (
            {"sessionId": SID, "name": "history", "arguments": {"operation": "search", "query": "x"}},
            1011,
            "name",
        ),
        (
            {"sessionId": "nope", "name": PREFIX + "task", "arguments": {"operation": "list"}},
            1001,
            "sessionId",
        ),
        ({"sessionId": SID, "name": PREFIX + "task", "arguments": "list"}, -32602, "arguments"),
        ({"sessionId": SID, "arguments": {}}, -32602, "name"),
        ({"sessionId": SID, "name": PREFIX + "task", "prefix": "9bad"}, -32602, "prefix"),
    ]
    for params, code, fld in cases:
        with pytest.raises(RpcError) as err:
            story.client.request("tools/call", params)
        assert err.value.code == code, params
        where = err.value.data.get("field") or err.value.data["errors"][0]["field"]
        assert where == fld
        if code == 1011:  # the error's name, and the tool name the host sent
            assert (err.value.data["name"], err.value.data["tool"]) == ("UnknownTool", "history")


# -- confinement ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        f"sessions/{SID}/leak.md",
        f"sessions/{SID}/linked/secret.md",
        f"sessions/{SID}/../../../outside/secret.md",
        "../outside/secret.md",
        "OUTSIDE",  # replaced by the absolute path of the secret
    ],
)
def test_nothing_outside_the_memory_root_is_read(story: Story, path: str) -> None:
    if path == "OUTSIDE":
        path = str(story.root.parent / "outside" / "secret.md")
    for arguments in (
        {"operation": "read", "path": path},
        {"operation": "search", "query": "rows", "path": path},
    ):
        answer = story.call(PREFIX + "memory", **arguments)
        assert answer["isError"] is True and SECRET not in story.text(answer)
    everything = story.call(PREFIX + "memory", operation="search", query=SECRET)
    assert everything["structuredContent"]["matches"] == 0


# -- the request ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_request_with_the_sidecar_tools_is_valid_in_every_format(story: Story, fmt: str) -> None:
    built = story.client.request("request/build", {"sessionId": SID, "format": fmt, "sidecarTools": {}})
    tools = built["prefix"]["tools"]
    assert [t["name"] for t in tools] == ["bash", *NAMES]
    assert not [w for w in built["warnings"] if w.startswith("named-tool-missing")]
    if fmt != "ai-sdk":  # ai-sdk: checked against the `ai` package's schema by the Node tests
        validate(fmt, built["messages"], built["prefix"]["request"], built["overrides"])
    again = story.client.request(
        "request/build", {"sessionId": SID, "format": fmt, "sidecarTools": {"prefix": PREFIX}}
    )
    assert again["prefix"]["hash"] == built["prefix"]["hash"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_text_naming_tools_the_request_lacks_is_reported_in_every_format(story: Story, fmt: str) -> None:
    client = story.client
    if fmt == FORMATS[0]:
        plain = [{**m, "info": {**m["info"], "sessionID": PLAIN}} for m in phase_messages(1, ASK, 1_000_000)]
        client.request(
            "session/open", {"sessionId": PLAIN, "messages": plain, "requestPrefix": {"tools": PREFIX_TOOLS}}
        )
        inserted = rebuild(client, PLAIN)
        warned = [w for w in inserted["warnings"] if w.startswith("named-tool-missing")]
        assert warned and "`grep`, `read`, `history`" in warned[0]
    built = client.request("request/build", {"sessionId": PLAIN, "format": fmt})
    warned = [w for w in built["warnings"] if w.startswith("named-tool-missing: the boundary names")]
    assert warned and "`grep`, `read`, `history`" in warned[0]


def test_the_writers_request_keeps_the_main_loops_prefix_with_the_sidecar_tools(story: Story) -> None:
    params = {"sessionId": SID, "format": "anthropic", "sidecarTools": {}}
    main = story.client.request("request/build", params)
    writer = story.client.request("request/build", {**params, "purpose": "writer"})
    prepared = story.client.request("checkpoint/prepare", params)
    assert main["prefix"]["hash"] == writer["prefix"]["hash"] == prepared["prefix"]["hash"]
    without = story.client.request("request/build", {"sessionId": SID, "format": "anthropic"})
    assert without["prefix"]["hash"] != main["prefix"]["hash"]


# -- numeric task IDs -------------------------------------------------------------------------------------
def test_numeric_task_ids_are_kept_as_their_decimal_strings(story: Story) -> None:
    """A host that numbers its tasks (`{"id": 3}`) opens and syncs them; the ledger, the task tool
    and the progress folder all name the task "3", and the model may call with `id: 3` too."""
    sid = "ses_e2e_numeric_tasks"
    write(story.root / "sessions" / sid / "tasks" / "3" / "progress.md", "# 3\nPROGRESS-OF-THREE\n")
    tasks = [
        {"id": 3, "status": "in_progress", "summary": "Parent task", "created_at": 1},
        {"id": 4, "parent_task_id": 3, "status": "open", "summary": "Child task", "created_at": 2},
    ]
    client = story.client
    client.request("session/open", {"sessionId": sid, "messages": [], "tasks": tasks[:1]})
    client.request("session/sync", {"sessionId": sid, "tasks": tasks})

    def task(**arguments: Any) -> str:
        answer = client.request("tools/call", {"sessionId": sid, "name": "task", "arguments": arguments})
        assert not answer["isError"], story.text(answer)
        return story.text(answer)

    listed = task(operation="list")
    assert "- 3 [in_progress] Parent task" in listed and "  - 4 [open] Child task" in listed
    for given in (3, "3", 3.0):
        got = task(operation="get", id=given)
        assert got.startswith("Task 3 [in_progress]: Parent task") and "PROGRESS-OF-THREE" in got
    assert "subtask of 3" in task(operation="get", id=4)
    refused = client.request(
        "tools/call", {"sessionId": sid, "name": "task", "arguments": {"operation": "get", "id": 3.5}}
    )
    assert refused["isError"] and "a non-empty string or an integer" in story.text(refused)
    with pytest.raises(RpcError) as err:
        client.request("session/sync", {"sessionId": sid, "tasks": [{"id": True, "status": "open"}]})
    assert err.value.code == -32602 and "tasks.0.id" in str(err.value.data)
    client.request("session/close", {"sessionId": sid})


# -- memory paths relative to the root (behavior.md#d22) ------------------------------------------------
def test_the_paths_the_boundary_prints_read_through_the_memory_tool(story: Story) -> None:
    """Every `File:` line's path, copied as printed, reads that file through `tools/call`; no text
    the model gets shows the memory root; an absolute path is refused with the key to use."""
    body = boundary_text(story.inserted[1])
    shown = re.findall(r"^File: (.+)$", body, re.MULTILINE)
    assert f"sessions/{SID}/checkpoint.md" in shown and f"sessions/{SID}/notes.md" in shown
    for path in shown:
        answer = story.call(PREFIX + "memory", operation="read", path=path)
        assert not answer["isError"], story.text(answer)
        heading, first_page = story.text(answer).split("\n", 1)
        assert heading.startswith(f"File {path}, characters 0\u2013")
        assert (story.root / path).read_text(encoding="utf-8").startswith(first_page.rsplit("\n[", 1)[0])
    assert str(story.root) not in body
    built = story.client.request("request/build", {"sessionId": SID, "format": "anthropic"})
    assert str(story.root) not in json.dumps(built)  # the per-turn reminder too
    assert f"Session memory lives in sessions/{SID} (paths relative to the memory root)" in json.dumps(built)
    prepared = story.client.request("checkpoint/prepare", {"sessionId": SID, "format": "anthropic"})
    assert f"sessions/{SID}/checkpoint.md (relative to the memory root)" in json.dumps(prepared)
    assert str(story.root) not in json.dumps(prepared["messages"])
    story.client.request("checkpoint/writerFinished", {"sessionId": SID, "outcome": "failure"})
    absolute = str(story.root / shown[0])
    refused = story.call(PREFIX + "memory", operation="read", path=absolute)
    assert refused["isError"] and story.text(refused).endswith(f'Call again with path="{shown[0]}".')
