"""The rebuild over the wire: compute, insert with the writer wait, status, build."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from mimo_sidecar.core import texts
from tests.unit.builders import write_checkpoint

from .conftest import SHORT_WAITS, WAIT_MS

pytestmark = pytest.mark.asyncio(loop_scope="module")

T0 = 1_760_000_000_000
SID = "ses_rebuild"
CONFIG = SHORT_WAITS  # the config `rb` starts with (sidecar/configure restores it)


def _part(mid: str, n: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"prt_{mid}_{n}", "sessionID": SID, "messageID": mid, **body}


def _msg(mid: str, role: str, t: int, *parts: dict[str, Any], **info: Any) -> dict[str, Any]:
    return {
        "info": {"id": mid, "sessionID": SID, "role": role, "time": {"created": T0 + t}, **info},
        "parts": [_part(mid, i, p) for i, p in enumerate(parts)],
    }


def _tool(call: str, name: str, inp: dict[str, Any], output: str) -> dict[str, Any]:
    return {
        "type": "tool",
        "callID": call,
        "tool": name,
        "state": {
            "status": "completed",
            "input": inp,
            "output": output,
            "title": name,
            "metadata": {},
            "time": {"start": T0, "end": T0},
        },
    }


def history(sid: str = SID) -> list[dict[str, Any]]:
    usage = {"input": 185_000, "output": 1_500, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    msgs = [
        _msg(
            "m01", "user", 0, {"type": "text", "text": "Rewrite the lexer to stream tokens."}, agent="build"
        ),
        _msg(
            "m02", "assistant", 10, {"type": "text", "text": "Starting with the token type."}, finish="stop"
        ),
        _msg("m03", "user", 20, {"type": "text", "text": "Keep the public API stable."}),
        _msg(
            "m04",
            "assistant",
            30,
            _tool("c1", "read", {"filePath": "src/lexer.ts"}, "export function lex() {}\n" * 200),
            _tool("c2", "bash", {"command": "npm test"}, "42 passing"),
            _tool("c3", "task", {"op": "list"}, "T1 in_progress"),
            finish="tool-calls",
        ),
        # The step that crossed the trigger line: an automatic rebuild leaves it live (D19).
        _msg(
            "m05",
            "assistant",
            40,
            _tool("c4", "bash", {"command": "npm run lint"}, "0 problems"),
            finish="tool-calls",
            tokens=usage,
        ),
    ]
    for m in msgs:
        m["info"]["sessionID"] = sid
        for p in m["parts"]:
            p["sessionID"] = sid
    return msgs


def write_memory(root: Path, sid: str) -> None:
    checkpoint = write_checkpoint(
        root,
        sid,
        "# Session checkpoint\nTopic: streaming lexer\n\n## §1 Active intent\n_what the user wants_\n\n"
        "Stream tokens lazily from the lexer.\n",
    )
    (checkpoint.parent / "notes.md").write_text("lexer notes\n", encoding="utf-8")


MODEL = {"contextWindow": 200_000, "providerId": "anthropic", "modelId": "claude"}


async def call(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(method, params), 20)


async def open_session(
    client: LanguageClient, sid: str, *, watermark: str | None = "m02", **extra: Any
) -> None:
    write_memory(client.memory_root, sid)  # type: ignore[attr-defined]
    await call(
        client,
        "session/open",
        {
            "sessionId": sid,
            "projectId": "prj",
            "messages": history(sid),
            "tasks": [{"id": "T1", "status": "in_progress", "summary": "lexer", "created_at": T0}],
            **extra,
        },
    )
    if watermark:
        await call(client, "checkpoint/writerStarted", {"sessionId": sid, "watermark": watermark})
        await call(client, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "success"})


async def test_full_cycle_compute_insert_build(rb: LanguageClient):
    sid = "full"
    await open_session(rb, sid)
    before = await call(rb, "request/build", {"sessionId": sid})
    # m04, m05: the calls, then their results
    assert before["sources"] == ["m01", "m02", "m03", "m04", "m04", "m05", "m05"]
    assert [m["role"] for m in before["messages"]][-2:] == ["assistant", "tool"]

    computed = await call(rb, "rebuild/compute", {"sessionId": sid, "model": MODEL})
    trig = computed["trigger"]
    assert trig["usable"] == 180_000 and trig["count"] == 186_500 and trig["shouldRebuild"] is True
    assert trig["usageSource"] == "last-finished"
    assert computed["storedWatermark"] == "m02" and computed["preview"]["outcome"] == "rebuilt"
    keys = [s["key"] for s in computed["preview"]["report"]["sections"]]
    assert keys == [
        "tasks",
        "checkpoint",
        "actors",
        "recent_user",
        "project_memory",
        "global_memory",
        "notes",
        "memory_keys",
        "activity",
    ]

    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert res["outcome"] == "rebuilt" and res["watermark"] == "m02" and res["digestUpTo"] == "m04"
    parts = res["message"]["parts"]
    assert parts[0] == {**parts[0], "type": "checkpoint", "coveredUpTo": "m02", "digestUpTo": "m04"}
    assert res["message"]["info"]["time"]["created"] == T0 + 11
    marked = sorted((c["messageId"], c["callId"], c["partId"]) for c in res["compacted"])
    # read, bash; not task; not the live step m05 (D19)
    assert marked == [("m04", "c1", "prt_m04_0"), ("m04", "c2", "prt_m04_1")]
    got = await call(rb, "session/get", {"sessionId": sid})
    assert got["messageCount"] == 6 and got["revision"] == res["revision"]

    after = await call(rb, "request/build", {"sessionId": sid})
    first = after["messages"][0]
    assert first["role"] == "user" and first["content"][0]["text"] == texts.CHECKPOINT_LABEL
    assert first["content"][-1]["text"].endswith(texts.AUTONOMOUS_LOOP_REMINDER)  # "the tool results below"
    assert after["collapsedMessageIds"] == ["m04"] and after["sources"][1:] == ["m03", "m05", "m05"]
    live = after["messages"][-1]["content"]  # the step the reminder sends the model to, with its result
    assert live[0]["type"] == "tool-result" and live[0]["output"]["value"] == "0 problems"
    assert after["usagePending"] is True and after["reminderAdded"] is True

    again = await call(rb, "rebuild/compute", {"sessionId": sid, "model": MODEL})
    assert again["trigger"]["usageRecovered"] is True and again["trigger"]["shouldRebuild"] is False


async def test_the_preview_is_made_when_a_rebuild_is_due_unless_asked(rb: LanguageClient):
    """`preview` defaults to `when-due`: no dry run on a step below the line, one on a step that
    crosses it; `always`/`true` and `never`/`false` as asked; anything else names the field."""
    sid = "preview-modes"
    await open_session(rb, sid)
    below = {"input": 20_000, "output": 500, "cache": {"read": 0, "write": 0}}

    async def compute(**extra: Any) -> Any:
        return await call(rb, "rebuild/compute", {"sessionId": sid, "model": MODEL, **extra})

    cases = [
        ({"usage": below}, False, False),
        ({}, True, True),  # the history's own usage: over the line
        ({"usage": below, "preview": "always"}, False, True),
        ({"usage": below, "preview": True}, False, True),
        ({"preview": "never"}, True, False),
        ({"preview": False}, True, False),
        ({"preview": "when-due"}, True, True),
    ]
    for extra, due, made in cases:
        got = await compute(**extra)
        assert got["trigger"]["shouldRebuild"] is due, extra
        assert got["previewComputed"] is made and ("preview" in got) is made, extra
        assert bool(got["estimateAccuracy"]) is made, extra  # it goes with the preview
    with pytest.raises(JsonRpcException) as err:
        await compute(preview="sometimes")
    assert err.value.code == -32602 and "preview" in err.value.message


async def test_writer_finishing_mid_wait(rb: LanguageClient):
    sid = "midwait"
    await open_session(rb, sid)
    rb.status_events.clear()  # type: ignore[attr-defined]
    await call(rb, "checkpoint/writerStarted", {"sessionId": sid, "watermark": "m03"})
    insert = asyncio.ensure_future(call(rb, "rebuild/insert", {"sessionId": sid, "reason": "overflow"}))
    await asyncio.sleep(0.3)
    assert not insert.done()
    busy = [e for e in rb.status_events if e["sessionId"] == sid]  # type: ignore[attr-defined]
    assert busy == [{"sessionId": sid, "state": "busy", "message": "Preparing conversation context\u2026"}]
    await call(rb, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "success"})
    res = await insert
    assert res["outcome"] == "rebuilt" and res["wait"]["result"] == "success"
    # D21: the boundary follows the writer it waited for, whose checkpoint covers m03
    assert res["watermark"] == "m03" and res["message"]["parts"][0]["coveredUpTo"] == "m03"
    assert texts.watermark_followed_writer("m02", "m03") in res["warnings"]
    assert rb.status_events[-1] == {"sessionId": sid, "state": "idle", "message": ""}  # type: ignore[attr-defined]
    tokens = [t for t, reports in rb.progress_reports.items() if t.startswith("mimo-rebuild")]
    assert tokens and [r.kind for r in rb.progress_reports[tokens[-1]]] == ["begin", "end"]


async def test_writer_finishing_mid_wait_with_the_reference_setting_keeps_the_old_watermark(
    rb: LanguageClient,
):
    sid = "midwait-d4"
    reference = {"checkpoint": {**CONFIG["checkpoint"], "follow_writer_watermark": False}}
    await call(rb, "sidecar/configure", {"config": {**CONFIG, **reference}})
    try:
        await open_session(rb, sid)
        await call(rb, "checkpoint/writerStarted", {"sessionId": sid, "watermark": "m03"})
        insert = asyncio.ensure_future(call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"}))
        await asyncio.sleep(0.2)
        await call(rb, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "success"})
        res = await insert
    finally:
        await call(rb, "sidecar/configure", {"config": CONFIG})
    assert res["outcome"] == "rebuilt" and res["wait"]["result"] == "success"
    assert res["watermark"] == "m02" and res["message"]["parts"][0]["coveredUpTo"] == "m02"  # D4
    assert texts.watermark_kept_before_wait("m02", "m03") in res["warnings"]
    got = await call(rb, "session/get", {"sessionId": sid})
    assert got["watermark"] == "m03"  # stored all the same: the next rebuild uses it


async def test_a_step_waiting_for_its_result_with_d20_off_is_digested_as_interrupted(rb: LanguageClient):
    """`checkpoint.keep_pending_step: false` with D19 off too: MiMo's digest of a running call."""
    reference = {
        "checkpoint": {**CONFIG["checkpoint"], "keep_pending_step": False, "keep_newest_step": False}
    }
    for config, digested in ((CONFIG, "m04"), ({**CONFIG, **reference}, "m05")):
        sid = f"pending-{digested}"
        msgs = history(sid)
        msgs[-1]["parts"][0]["state"] = {"status": "running", "input": {"command": "npm run lint"}}
        del msgs[-1]["info"]["finish"]
        await call(rb, "sidecar/configure", {"config": config})
        try:
            await open_session(rb, sid, messages=msgs)
            res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
        finally:
            await call(rb, "sidecar/configure", {"config": CONFIG})
        assert res["outcome"] == "rebuilt" and res["digestUpTo"] == digested
        body = "\n".join(p["text"] for p in res["message"]["parts"] if p["type"] == "text")
        interrupted = '- bash(command="npm run lint") \u2192 interrupted' in body
        assert interrupted == (digested == "m05"), body
        assert res["message"]["parts"][0].get("interruptedCalls", []) == (["c4"] if interrupted else [])


async def test_writer_that_never_finishes_times_out(rb: LanguageClient):
    sid = "timeout"
    await open_session(rb, sid)
    await call(rb, "checkpoint/writerStarted", {"sessionId": sid, "watermark": "m03"})
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert res["outcome"] == "rebuilt" and res["wait"]["result"] == "timeout"
    assert res["wait"]["waitedMs"] >= WAIT_MS - 50 and res["wait"]["boundMs"] == WAIT_MS
    got = await call(rb, "session/get", {"sessionId": sid})
    assert got["writer"]["inFlight"] is True  # a timeout is not a failure: the writer stays registered


async def test_cancel_mid_wait_changes_nothing_and_others_are_served(rb: LanguageClient):
    sid, other = "cancelled", "bystander"
    await open_session(rb, sid)
    await open_session(rb, other)
    await call(rb, "checkpoint/writerStarted", {"sessionId": sid, "watermark": "m03"})
    before = await call(rb, "session/get", {"sessionId": sid})
    fut = rb.protocol.send_request("rebuild/insert", {"sessionId": sid, "reason": "auto"}, msg_id="cx-1")
    await asyncio.sleep(0.2)
    # Another session is answered at once while this one waits.
    loop = asyncio.get_running_loop()
    t = loop.time()
    served = await call(rb, "rebuild/compute", {"sessionId": other, "model": MODEL})
    assert served["trigger"]["shouldRebuild"] is True and loop.time() - t < 1.0
    rb.protocol.notify("$/cancelRequest", types.CancelParams(id="cx-1"))
    with pytest.raises(JsonRpcException) as err:
        await asyncio.wait_for(asyncio.wrap_future(fut), 5)
    assert err.value.code == -32800
    after = await call(rb, "session/get", {"sessionId": sid})
    assert after["revision"] == before["revision"] and after["messageCount"] == before["messageCount"]
    built = await call(rb, "request/build", {"sessionId": sid})
    assert built["collapsedMessageIds"] == [] and "[Old tool result content cleared]" not in str(
        built["messages"]
    )


async def test_empty_render_is_insert_failed(rb: LanguageClient):
    sid = "empty"
    root: Path = rb.memory_root  # type: ignore[attr-defined]
    await call(
        rb,
        "sidecar/configure",
        {"config": {**CONFIG, "checkpoint": {**CONFIG["checkpoint"], "push_caps": {"recent_user": 0}}}},
    )
    try:
        msgs = history(sid)[3:]  # only the assistant tool turn: no user text at all
        await call(rb, "session/open", {"sessionId": sid, "messages": msgs})
        (root / "sessions" / sid).mkdir(parents=True)
        (root / "sessions" / sid / "checkpoint.md").write_text("  \n", encoding="utf-8")
        await call(rb, "checkpoint/writerStarted", {"sessionId": sid, "watermark": "m04"})
        await call(rb, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "success"})
        before = await call(rb, "session/get", {"sessionId": sid})
        res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
        assert res["outcome"] == "insert-failed" and "message" not in res and res["compacted"] == []
        assert res["detail"]
        after = await call(rb, "session/get", {"sessionId": sid})
        assert after["revision"] == before["revision"] and after["messageCount"] == len(msgs)
    finally:
        await call(rb, "sidecar/configure", {"config": CONFIG})


async def test_gates_and_one_time_notice(rb: LanguageClient):
    sid = "gates"
    await open_session(rb, sid, watermark=None)
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert res["outcome"] == "no-watermark"
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto", "agentId": "explore-1"})
    assert res["outcome"] == "not-main-agent"
    await call(rb, "sidecar/configure", {"config": {**CONFIG, "memory": {"disable_write": True}}})
    try:
        first = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
        second = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
        assert first["outcome"] == second["outcome"] == "memory-write-off"
        assert first["notice"]["kind"] == "memory-write-off" and "notice" not in second
    finally:
        await call(rb, "sidecar/configure", {"config": CONFIG})


async def test_cold_start_waits_for_first_writer(rb: LanguageClient):
    sid = "cold"
    await open_session(rb, sid, watermark=None)
    started = await call(rb, "checkpoint/writerStarted", {"sessionId": sid})  # sidecar computes W
    assert started["state"] == "in-flight" and started["watermark"] == "m01"
    insert = asyncio.ensure_future(call(rb, "rebuild/insert", {"sessionId": sid, "reason": "manual"}))
    await asyncio.sleep(0.2)
    await call(rb, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "success"})
    res = await insert
    assert res["outcome"] == "rebuilt" and res["watermark"] == "m01" and res["statusText"]
    events = [e for e in rb.status_events if e["sessionId"] == sid]  # type: ignore[attr-defined]
    assert events[0]["message"] == texts.MANUAL_REBUILD_STATUS and events[-1]["state"] == "idle"
    assert any(e["message"] == texts.PREPARING_STATUS for e in events)


async def test_split_shape_build_pairs_every_call(rb: LanguageClient):
    sid = "split"
    msgs = [
        _msg("u1", "user", 0, {"type": "text", "text": "list the files"}),
        _msg(
            "a1",
            "assistant",
            10,
            {"type": "tool_use", "id": "toolu_1", "name": "glob", "input": {"p": "*"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"p": "a"}},
            finish="tool-calls",
        ),
        _msg("u2", "user", 20, {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a\nb"}),
        _msg("u3", "user", 30, {"type": "tool_result", "tool_use_id": "toolu_404", "content": "orphan"}),
    ]
    await call(rb, "session/open", {"sessionId": sid, "messages": copy.deepcopy(msgs)})
    built = await call(rb, "request/build", {"sessionId": sid, "memoryReminder": False})
    calls = [
        c["toolCallId"]
        for m in built["messages"]
        if m["role"] == "assistant"
        for c in m["content"]
        if c["type"] == "tool-call"
    ]
    results = [c["toolCallId"] for m in built["messages"] if m["role"] == "tool" for c in m["content"]]
    assert sorted(calls) == sorted(results) == ["toolu_1", "toolu_2"]  # orphan dropped, missing synthesized
    computed = await call(rb, "rebuild/compute", {"sessionId": sid, "preview": False})
    assert computed["watermark"]["messageId"] in {"u1", "a1", "u2", "u3"}
    assert "preview" not in computed


async def test_explicit_usage_and_bad_params(rb: LanguageClient):
    sid = "usage"
    await open_session(rb, sid)
    usage = {"input": 100_000, "output": 5_000, "reasoning": 9_999, "cache": {"read": 80_000, "write": 0}}
    got = await call(
        rb, "rebuild/compute", {"sessionId": sid, "usage": usage, "model": MODEL, "preview": False}
    )
    assert (
        got["trigger"]["count"] == 185_000 and got["trigger"]["usageSource"] == "request"
    )  # reasoning never counts
    total = {"total": 50_000, "input": 190_000, "output": 0}
    got = await call(
        rb, "rebuild/compute", {"sessionId": sid, "usage": total, "model": MODEL, "preview": False}
    )
    assert got["trigger"]["count"] == 50_000 and got["trigger"]["overflow"] is False
    with pytest.raises(JsonRpcException) as err:
        await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "sometimes"})
    assert err.value.code == -32602 and "reason" in err.value.message
    with pytest.raises(JsonRpcException) as err:
        await call(rb, "rebuild/compute", {"sessionId": sid, "usage": {"input": -1}})
    assert err.value.code == -32602 and "usage.input" in err.value.message
    with pytest.raises(JsonRpcException) as err:
        await call(rb, "request/build", {"sessionId": "nope"})
    assert err.value.code == 1001


async def test_writer_request_is_the_view_up_to_its_watermark(rb: LanguageClient):
    sid = "writer-fork"
    await open_session(rb, sid)
    explicit = await call(rb, "request/build", {"sessionId": sid, "purpose": "writer", "upTo": "m01"})
    assert explicit["sources"] == ["m01"]
    await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "manual"})  # a boundary + collapse exist
    await call(rb, "checkpoint/writerStarted", {"sessionId": sid, "watermark": "m03"})
    fork = await call(rb, "request/build", {"sessionId": sid, "purpose": "writer"})
    # The view from the boundary up to and including W, uncollapsed, with no reminder.
    assert list(dict.fromkeys(fork["sources"]))[1:] == ["m03"]
    assert fork["messages"][0]["content"][0]["text"] == texts.CHECKPOINT_LABEL
    assert fork["collapsedMessageIds"] == [] and fork["reminderAdded"] is False
    with pytest.raises(JsonRpcException) as err:  # before the boundary: not in the view any more
        await call(rb, "request/build", {"sessionId": sid, "purpose": "writer", "upTo": "m01"})
    assert err.value.code == 1003
    assert err.value.data == {"name": "MessageNotFound", "field": "upTo", "messageId": "m01"}
    assert err.value.message == "request/build: upTo: message 'm01' is not in the main view"
    # A writer in flight whose watermark is behind the boundary: no input of these requests named it.
    await call(rb, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "failure"})
    await call(rb, "checkpoint/writerStarted", {"sessionId": sid, "watermark": "m01"})
    for method, params in (
        ("request/build", {"sessionId": sid, "purpose": "writer"}),
        ("checkpoint/prepare", {"sessionId": sid}),
    ):
        with pytest.raises(JsonRpcException) as err:
            await call(rb, method, params)
        assert err.value.code == 1003 and err.value.data == {"name": "MessageNotFound", "messageId": "m01"}
        assert err.value.message == f"{method}: {texts.writer_end_not_in_main_view('m01')}"
    with pytest.raises(JsonRpcException) as err:
        await call(rb, "checkpoint/prepare", {"sessionId": sid, "watermark": "m01"})
    assert err.value.data["field"] == "watermark"
    assert err.value.message == "checkpoint/prepare: watermark: message 'm01' is not in the main view"


def tool_outputs(built: dict[str, Any]) -> dict[str, Any]:
    """Each tool's result output in an `ai-sdk` request, by tool name."""
    return {
        c["toolName"]: c["output"]["value"]
        for m in built["messages"]
        if m["role"] == "tool"
        for c in m["content"]
    }


async def test_compacted_results_after_digest_show_the_placeholder(rb: LanguageClient):
    sid = "placeholder"
    await open_session(rb, sid)
    # A host digestUpTo before the tool turns: m04 and m05 stay live (not collapsed) but their
    # results are compacted, as MiMo's microcompaction does (the host chose what to keep).
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto", "digestUpTo": "m03"})
    assert res["outcome"] == "rebuilt" and len(res["compacted"]) == 3
    built = await call(rb, "request/build", {"sessionId": sid})
    assert "m04" in built["sources"] and built["collapsedMessageIds"] == []
    assert tool_outputs(built) == {
        "read": texts.CLEARED_TOOL_RESULT,
        "bash": texts.CLEARED_TOOL_RESULT,
        "task": "T1 in_progress",
    }
    calls = [
        c
        for m in built["messages"]
        if m["role"] == "assistant"
        for c in m["content"]
        if c["type"] == "tool-call"
    ]
    assert {c["toolName"]: c["input"] for c in calls}["read"] == {
        "filePath": "src/lexer.ts"
    }  # the call is kept


def _claude_code_history(sid: str) -> list[dict[str, Any]]:
    """A split-shape (Anthropic) session with Claude Code's tool names, whose results have no part
    `id` (Anthropic `tool_result` blocks carry none)."""
    usage = {"input": 185_000, "output": 1_500, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    calls = [
        ("toolu_r", "Read", {"file_path": "src/lexer.ts"}, "export function lex() {}\n" * 400),
        ("toolu_b", "Bash", {"command": "npm test"}, "ok 1 lexer streams\n" * 400),
        ("toolu_q", "mcp__db__query", {"sql": "select 1"}, "1"),
        ("toolu_t", "TodoWrite", {"todos": []}, "Todos updated"),
    ]
    msgs = [
        _msg("m01", "user", 0, {"type": "text", "text": "Rewrite the lexer to stream tokens."}),
        _msg("m02", "assistant", 10, {"type": "text", "text": "Starting."}, finish="stop"),
        _msg("m03", "user", 20, {"type": "text", "text": "Keep the public API stable."}),
        _msg(
            "m04",
            "assistant",
            30,
            *({"type": "tool_use", "id": c, "name": n, "input": i} for c, n, i, _ in calls),
            finish="tool-calls",
            tokens=usage,
        ),
        {
            "info": {"id": "m05", "role": "user", "time": {"created": T0 + 40}},
            "parts": [{"type": "tool_result", "tool_use_id": c, "content": out} for c, _, _, out in calls],
        },
    ]
    for m in msgs:
        m["info"]["sessionID"] = sid
    return msgs


CLAUDE_CODE_MAP = {"Read": "read", "Bash": "bash", "TodoWrite": "todowrite"}


async def _open_claude_code(client: LanguageClient, sid: str, **extra: Any) -> None:
    write_memory(client.memory_root, sid)  # type: ignore[attr-defined]
    await call(client, "session/open", {"sessionId": sid, "messages": _claude_code_history(sid), **extra})
    await call(client, "checkpoint/writerStarted", {"sessionId": sid, "watermark": "m02"})
    await call(client, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "success"})


async def test_the_session_tool_name_map_clears_results_marked_by_call_id(rb: LanguageClient):
    sid = "names"
    await _open_claude_code(rb, sid, toolNameMap=CLAUDE_CODE_MAP)
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto", "digestUpTo": "m03"})
    assert res["outcome"] == "rebuilt"
    # No result part has an `id`: the call ID is what says which result of m05 was marked.
    assert sorted((c["messageId"], c["callId"]) for c in res["compacted"]) == [
        ("m05", "toolu_b"),
        ("m05", "toolu_r"),
    ]
    assert all("partId" not in c for c in res["compacted"])
    assert [w for w in res["warnings"] if "toolNameMap" in w] == [
        texts.unmapped_tool_results({"mcp__db__query": 1})  # TodoWrite is mapped onto a kept tool
    ]
    built = await call(rb, "request/build", {"sessionId": sid})
    assert tool_outputs(built) == {
        "Read": texts.CLEARED_TOOL_RESULT,
        "Bash": texts.CLEARED_TOOL_RESULT,
        "mcp__db__query": "1",
        "TodoWrite": "Todos updated",
    }


async def test_sync_replaces_the_tool_name_map_and_an_insert_map_wins(rb: LanguageClient):
    cleared = "names-cleared"
    await _open_claude_code(rb, cleared, toolNameMap=CLAUDE_CODE_MAP)
    await call(rb, "session/sync", {"sessionId": cleared, "toolNameMap": {}})
    res = await call(rb, "rebuild/insert", {"sessionId": cleared, "reason": "auto", "digestUpTo": "m03"})
    assert res["compacted"] == []  # whatever the outcome: nothing mapped, nothing cleared
    unmapped = {"Read": 1, "Bash": 1, "mcp__db__query": 1, "TodoWrite": 1}
    assert texts.unmapped_tool_results(unmapped) in res["warnings"]

    own = "names-own"
    await _open_claude_code(rb, own, toolNameMap=CLAUDE_CODE_MAP)
    res = await call(
        rb,
        "rebuild/insert",
        {
            "sessionId": own,
            "reason": "auto",
            "digestUpTo": "m03",  # the step stays live, and is microcompacted as the host asks
            "toolNameMap": {"Bash": "Bash", "mcp__db__query": "question"},
        },
    )
    assert res["outcome"] == "rebuilt" and [c["callId"] for c in res["compacted"]] == ["toolu_r"]
    assert not [w for w in res["warnings"] if "toolNameMap" in w]  # every name is mapped now

    with pytest.raises(JsonRpcException) as err:
        await call(rb, "session/sync", {"sessionId": own, "toolNameMap": {"Grep": 1}})
    assert err.value.code == -32602 and "toolNameMap.Grep" in err.value.message
