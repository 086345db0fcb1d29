"""The checkpoint writer kit and the cold start over stdio: session/open createCheckpoint,
checkpoint/prepare → the stand-in model → checkpoint/commit → rebuild/insert, the commit refusals
(nothing changes on disk), and an insert that waits for the first writer (status, progress,
cancellation, failure, timeout)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from mimo_sidecar.core import texts
from mimo_sidecar.core.checkpoint.template import CHECKPOINT_TEMPLATE, SECTIONS
from mimo_sidecar.core.checkpoint.writer_brief import INSTRUCTIONS_LEAD
from mimo_sidecar.core.formats import FORMATS
from mimo_sidecar.testing.standin_writer import standin_checkpoint
from tests.unit.split_sessions import claude_code, codex
from tests.unit.test_memory_writes import snapshot

from .conftest import SHORT_WAITS, WAIT_MS
from .test_formats import assert_valid, stored
from .test_rebuild import call, history

pytestmark = pytest.mark.asyncio(loop_scope="module")

PREPARING = {"state": "busy", "message": texts.PREPARING_STATUS}


async def refused(client: LanguageClient, method: str, params: dict[str, Any]) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as err:
        await call(client, method, params)
    return err.value


def root_of(client: LanguageClient) -> Path:
    return client.memory_root  # type: ignore[no-any-return, attr-defined]


def checkpoint_file(client: LanguageClient, sid: str) -> Path:
    return root_of(client) / "sessions" / sid / "checkpoint.md"


async def open_session(client: LanguageClient, sid: str, **extra: Any) -> dict[str, Any]:
    params = {"sessionId": sid, "projectId": "prj", "messages": history(sid), **extra}
    return await call(client, "session/open", params)  # type: ignore[no-any-return]


def statuses(client: LanguageClient, sid: str) -> list[dict[str, Any]]:
    events = client.status_events  # type: ignore[attr-defined]
    return [{"state": e["state"], "message": e["message"]} for e in events if e["sessionId"] == sid]


def standin_reply(prepared: dict[str, Any]) -> str:
    """The deterministic stand-in for the model, on the prepared request (AI SDK messages)."""
    return standin_checkpoint(
        prepared["messages"],
        prepared.get("current"),
        sources=prepared["sources"],
        since=prepared.get("storedWatermark"),
    )


def boundary_text(inserted: dict[str, Any]) -> str:
    return "\n".join(p["text"] for p in inserted["message"]["parts"] if p["type"] == "text")


async def until_busy(client: LanguageClient, sid: str) -> None:
    for _ in range(200):
        if PREPARING in statuses(client, sid):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{sid}: no busy status: {statuses(client, sid)}")


# -- the whole loop ----------------------------------------------------------------------------------
async def test_template_prepare_standin_commit_insert(rb: LanguageClient) -> None:
    sid = "kit-loop"
    opened = await open_session(rb, sid, createCheckpoint=True)
    assert opened["checkpointCreated"] is True
    assert checkpoint_file(rb, sid).read_text(encoding="utf-8") == CHECKPOINT_TEMPLATE

    prepared = await call(rb, "checkpoint/prepare", {"sessionId": sid})
    assert prepared["started"] is True and prepared["current"] == CHECKPOINT_TEMPLATE
    assert prepared["checkpointPath"] == str(checkpoint_file(rb, sid))
    assert "storedWatermark" not in prepared and prepared["warnings"] == []
    assert prepared["messages"][-1]["content"][-1] == {"type": "text", "text": prepared["instructions"]}
    got = await call(rb, "session/get", {"sessionId": sid})
    assert got["writer"]["inFlight"] is True and got["writer"]["endMessageId"] == prepared["watermark"]

    reply = standin_reply(prepared)
    committed = await call(
        rb, "checkpoint/commit", {"sessionId": sid, "content": reply, "watermark": prepared["watermark"]}
    )
    assert committed["watermark"] == prepared["watermark"] and committed["writer"]["inFlight"] is False
    assert committed["created"] is False and committed["bytesWritten"] == len(reply.encode("utf-8"))
    assert checkpoint_file(rb, sid).read_text(encoding="utf-8") == reply
    assert os.listdir(checkpoint_file(rb, sid).parent) == ["checkpoint.md"]

    inserted = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert inserted["outcome"] == "rebuilt" and inserted["watermark"] == prepared["watermark"]
    text = boundary_text(inserted)
    assert "Topic: Rewrite the lexer to stream tokens." in text  # the committed checkpoint's topic
    for section in SECTIONS:
        assert section.heading in text
    assert "- Latest ask: \u201cRewrite the lexer to stream tokens.\u201d" in text  # a filled body

    again = await call(rb, "checkpoint/prepare", {"sessionId": sid})  # the next writer updates it
    assert again["storedWatermark"] == prepared["watermark"] and again["current"] == reply
    assert "<current-checkpoint>\n" + reply in again["instructions"]


async def test_the_prepared_request_is_valid_in_every_format(rb: LanguageClient) -> None:
    for sid, make in (("kit-claude", claude_code), ("kit-codex", codex)):
        await call(rb, "session/open", {"sessionId": sid, "messages": stored(make, sid)})
        for fmt in FORMATS:
            prepared = await call(rb, "checkpoint/prepare", {"sessionId": sid, "format": fmt})
            assert_valid(fmt, prepared)
            texts_in = [s for s in _strings(prepared["messages"][-1]) if s.startswith(INSTRUCTIONS_LEAD)]
            assert texts_in == [prepared["instructions"]], fmt
            plain = await call(
                rb,
                "request/build",
                {"sessionId": sid, "format": fmt, "purpose": "writer", "upTo": prepared["watermark"]},
            )
            # Everything before the instructions' message is the writer request, unchanged.
            assert prepared["messages"][:-1] == plain["messages"][: len(prepared["messages"]) - 1]
        await call(rb, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "cancelled"})


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [s for item in items for s in _strings(item)]


# -- commit refusals ---------------------------------------------------------------------------------
async def test_every_refused_commit_changes_nothing_on_disk(rb: LanguageClient) -> None:
    sid = "kit-refusals"
    await open_session(rb, sid, createCheckpoint=True)
    prepared = await call(rb, "checkpoint/prepare", {"sessionId": sid})
    cases: list[tuple[dict[str, Any], int, str, str | None]] = [
        ({"content": "# x\u0000y\n"}, 1008, "content", "nul"),
        ({"content": "# x \ud800 y\n"}, 1008, "content", "surrogate"),
        ({"content": "   \n"}, 1008, "content", "blank"),
        ({"content": ["not", "text"]}, -32602, "content", None),
        ({"content": "# ok\n", "watermark": "m02"}, 1006, "watermark", None),
    ]
    root = root_of(rb)
    before = snapshot(root)
    for extra, code, field, reason in cases:
        err = await refused(rb, "checkpoint/commit", {"sessionId": sid, **extra})
        assert err.code == code, (extra, err)
        assert f"checkpoint/commit: {'invalid params: ' if code == -32602 else ''}{field}" in err.message
        if reason is not None:
            assert err.data["reason"] == reason and err.data["field"] == field
        assert snapshot(root) == before, extra

    await call(
        rb,
        "sidecar/configure",
        {"config": {**SHORT_WAITS, "checkpoint": {**SHORT_WAITS["checkpoint"], "commit_max_bytes": 100}}},
    )
    try:
        err = await refused(rb, "checkpoint/commit", {"sessionId": sid, "content": "# " + "x" * 200})
        assert err.code == 1008 and err.data["reason"] == "too-large"
        assert err.data["bytes"] == 202 and err.data["limit"] == 100
        await call(rb, "sidecar/configure", {"config": {**SHORT_WAITS, "memory": {"disable_write": True}}})
        err = await refused(rb, "checkpoint/commit", {"sessionId": sid, "content": "# ok\n"})
        assert err.code == 1009 and err.data["reason"] == "memory-write-off"
    finally:
        await call(rb, "sidecar/configure", {"config": SHORT_WAITS})
    assert snapshot(root) == before
    got = await call(rb, "session/get", {"sessionId": sid})
    assert got["writer"]["inFlight"] is True and "watermark" not in got  # the writer is untouched

    await call(rb, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "failure", "retryable": True})
    err = await refused(rb, "checkpoint/commit", {"sessionId": sid, "content": "# ok\n"})
    assert err.code == 1006 and err.data["field"] == "sessionId"
    assert snapshot(root) == before
    assert prepared["watermark"]


async def test_a_checkpoint_linked_out_of_the_root_is_neither_read_nor_written(
    rb: LanguageClient, tmp_path: Path
) -> None:
    sid = "kit-escape"
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\nTopic: not for the model\n", encoding="utf-8")
    checkpoint_file(rb, sid).parent.mkdir(parents=True)
    checkpoint_file(rb, sid).symlink_to(secret)
    await open_session(rb, sid)
    prepared = await call(rb, "checkpoint/prepare", {"sessionId": sid})
    assert "current" not in prepared and "not for the model" not in str(prepared["messages"])
    assert "outside-root" in prepared["warnings"][-1]
    before = snapshot(tmp_path), snapshot(root_of(rb))
    err = await refused(rb, "checkpoint/commit", {"sessionId": sid, "content": "# new\nTopic: t\n"})
    assert err.code == 1009 and err.data["reason"] == "outside-root"
    assert (snapshot(tmp_path), snapshot(root_of(rb))) == before


# -- the template on open ----------------------------------------------------------------------------
async def test_open_never_replaces_an_existing_checkpoint(rb: LanguageClient) -> None:
    sid = "kit-existing"
    checkpoint_file(rb, sid).parent.mkdir(parents=True)
    checkpoint_file(rb, sid).write_text("# mine\nTopic: keep\n", encoding="utf-8")
    opened = await open_session(rb, sid, createCheckpoint=True)
    assert opened["checkpointCreated"] is False
    assert checkpoint_file(rb, sid).read_text(encoding="utf-8") == "# mine\nTopic: keep\n"
    plain = await open_session(rb, "kit-plain")
    assert "checkpointCreated" not in plain and not checkpoint_file(rb, "kit-plain").exists()


# -- cold start --------------------------------------------------------------------------------------
@pytest.mark.parametrize("with_template", [False, True])
async def test_cold_start_waits_for_the_first_writer_then_rebuilds(
    rb: LanguageClient, with_template: bool
) -> None:
    sid = f"kit-cold-{with_template}"
    await open_session(rb, sid, createCheckpoint=with_template)
    assert checkpoint_file(rb, sid).exists() is with_template  # no-checkpoint, or no-watermark
    prepared = await call(rb, "checkpoint/prepare", {"sessionId": sid})
    rb.progress_reports.clear()
    insert = asyncio.ensure_future(call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"}))
    await until_busy(rb, sid)
    assert not insert.done()
    await call(rb, "checkpoint/commit", {"sessionId": sid, "content": standin_reply(prepared)})
    res = await insert
    assert res["outcome"] == "rebuilt" and res["wait"]["result"] == "success"
    assert res["wait"]["boundMs"] == WAIT_MS  # the cold-start (no-watermark) bound
    assert res["watermark"] == prepared["watermark"]  # the one the first writer stored
    assert "Topic: Rewrite the lexer to stream tokens." in boundary_text(res)
    assert statuses(rb, sid) == [PREPARING, {"state": "idle", "message": ""}]
    tokens = [t for t in rb.progress_reports if str(t).startswith("mimo-rebuild")]
    assert len(tokens) == 1
    reports = rb.progress_reports[tokens[0]]
    assert [r.kind for r in reports] == ["begin", "end"]
    assert reports[0].message == texts.PREPARING_STATUS  # type: ignore[union-attr]


async def test_cancelling_a_cold_start_wait_changes_nothing(rb: LanguageClient) -> None:
    sid = "kit-cold-cancel"
    await open_session(rb, sid, createCheckpoint=True)
    prepared = await call(rb, "checkpoint/prepare", {"sessionId": sid})
    before_info = await call(rb, "session/get", {"sessionId": sid})
    before_disk = snapshot(root_of(rb))
    fut = rb.protocol.send_request("rebuild/insert", {"sessionId": sid, "reason": "auto"}, msg_id="kit-cx")
    await until_busy(rb, sid)
    rb.protocol.notify("$/cancelRequest", types.CancelParams(id="kit-cx"))
    with pytest.raises(JsonRpcException) as err:
        await asyncio.wait_for(asyncio.wrap_future(fut), 5)
    assert err.value.code == -32800
    assert await call(rb, "session/get", {"sessionId": sid}) == before_info  # writer still in flight
    assert snapshot(root_of(rb)) == before_disk
    assert statuses(rb, sid)[-1] == {"state": "idle", "message": ""}
    await call(rb, "checkpoint/commit", {"sessionId": sid, "content": standin_reply(prepared)})
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert res["outcome"] == "rebuilt" and "wait" not in res


async def test_a_cold_start_writer_that_fails_or_times_out_is_writer_failed(rb: LanguageClient) -> None:
    sid = "kit-cold-fail"
    await open_session(rb, sid, createCheckpoint=True)
    await call(rb, "checkpoint/prepare", {"sessionId": sid})
    insert = asyncio.ensure_future(call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"}))
    await until_busy(rb, sid)
    await call(rb, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "failure", "retryable": True})
    res = await insert
    assert res["outcome"] == "writer-failed" and res["wait"]["result"] == "failure" and "message" not in res
    got = await call(rb, "session/get", {"sessionId": sid})
    assert got["revision"] == 1 and "watermark" not in got

    await call(rb, "checkpoint/prepare", {"sessionId": sid})  # a writer that never answers
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert res["outcome"] == "writer-failed" and res["wait"]["result"] == "timeout"
    assert res["wait"]["waitedMs"] >= WAIT_MS - 50
    got = await call(rb, "session/get", {"sessionId": sid})
    assert got["writer"]["inFlight"] is True and got["revision"] == 1  # a timeout leaves the writer


async def test_with_nothing_in_flight_the_gates_answer_at_once(rb: LanguageClient) -> None:
    sid = "kit-gates"
    await open_session(rb, sid)
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert res["outcome"] == "no-checkpoint" and "wait" not in res
    await call(rb, "session/close", {"sessionId": sid})
    await open_session(rb, sid, createCheckpoint=True)
    res = await call(rb, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert res["outcome"] == "no-watermark" and "wait" not in res
    assert statuses(rb, sid) == []  # nothing waited, nothing shown
