"""request/build in every output format over stdio: before and after a rebuild, the writer's
fork too, with the rules checker and the SDK types on what comes back."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from mimo_sidecar.core import texts
from mimo_sidecar.core.formats import FORMATS
from mimo_sidecar.core.formats.rules import check
from tests.unit.split_sessions import ODD_CALL_ID, claude_code, codex
from tests.unit.test_live_step import LIVE, LIVE2, OLD, SHAPES
from tests.unit.test_live_step import PREFIX as LOOP_PREFIX
from tests.unit.test_sdk_types import PREFIX, validate

from .test_rebuild import call, write_memory

pytestmark = pytest.mark.asyncio(loop_scope="module")


def stored(make: Any, sid: str) -> list[dict[str, Any]]:
    out = []
    for m in make():
        data = copy.deepcopy(m.to_json())
        data["info"]["sessionID"] = sid
        out.append(data)
    return out


def assert_valid(fmt: str, res: dict[str, Any], *, open_end: bool = False) -> None:
    assert res["format"] == fmt
    assert len(res["sources"]) == len(res["sourceGroups"]) == len(res["messages"])
    assert all(group[0] == first for group, first in zip(res["sourceGroups"], res["sources"], strict=True))
    prefix = res["prefix"].get("request")
    assert check(fmt, res["messages"], prefix=prefix, overrides=res["overrides"], open_end=open_end) == []
    if fmt != "ai-sdk":
        validate(fmt, res["messages"], prefix, res["overrides"])


async def test_every_format_before_and_after_a_rebuild(client: LanguageClient) -> None:
    sid = "fmt-claude"
    write_memory(client.memory_root, sid)  # type: ignore[attr-defined]
    await call(
        client,
        "session/open",
        {"sessionId": sid, "messages": stored(claude_code, sid), "requestPrefix": PREFIX},
    )
    hashes = set()
    for fmt in FORMATS:
        res = await call(client, "request/build", {"sessionId": sid, "format": fmt, "memoryReminder": False})
        assert_valid(fmt, res)
        hashes.add(res["prefix"]["hash"])
        if fmt == "anthropic":
            assert ODD_CALL_ID in res["callIdMap"].values()
            assert res["prefix"]["request"]["system"][0] == {
                "type": "text",
                "text": "You are a coding agent.",
            }
            assert any(w.startswith("result-synthesized") for w in res["warnings"])
    assert len(hashes) == len(FORMATS)  # each over its own format's prefix bytes

    computed = await call(client, "rebuild/compute", {"sessionId": sid, "preview": False})
    watermark = computed["watermark"]["messageId"]
    await call(client, "checkpoint/writerStarted", {"sessionId": sid, "watermark": watermark})
    for fmt in FORMATS:  # the writer's fork: the view up to W, which the host completes with its ask
        fork = await call(client, "request/build", {"sessionId": sid, "purpose": "writer", "format": fmt})
        assert_valid(fmt, fork, open_end=True)
    await call(client, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "success"})
    # This small session gains nothing from a rebuild: the inflation guard would answer no-gain.
    await call(client, "sidecar/configure", {"config": {"checkpoint": {"inflation_guard": False}}})
    try:
        inserted = await call(client, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    finally:
        await call(client, "sidecar/configure", {"config": {}})
    assert inserted["outcome"] == "rebuilt"
    for fmt in FORMATS:
        res = await call(
            client,
            "request/build",
            {"sessionId": sid, "format": fmt, "target": {"thinking": True}, "cache": {"ttl": "1h"}},
        )
        assert_valid(fmt, res)
        text = str(res["messages"])
        assert "Summary of previous conversation from checkpoint files:" in text
        if fmt == "anthropic":
            marks = str(res).count("'cache_control'")
            assert 2 <= marks <= 4
        elif fmt != "ai-sdk":
            assert any(w.startswith("cache-ignored") for w in res["warnings"])


async def test_codex_session_in_responses_keeps_reasoning_and_custom_calls(client: LanguageClient) -> None:
    sid = "fmt-codex"
    await call(client, "session/open", {"sessionId": sid, "messages": stored(codex, sid)})
    res = await call(
        client, "request/build", {"sessionId": sid, "format": "openai-responses", "memoryReminder": False}
    )
    assert_valid("openai-responses", res)
    kinds = [i["type"] for i in res["messages"]]
    assert (
        kinds.count("reasoning") == 2 and "custom_tool_call" in kinds and "custom_tool_call_output" in kinds
    )
    assert all(len(i["call_id"]) <= 64 for i in res["messages"] if "call_id" in i)


async def _open_loop(client: LanguageClient, sid: str, messages: list[dict[str, Any]]) -> None:
    write_memory(client.memory_root, sid)  # type: ignore[attr-defined]
    params = {"sessionId": sid, "messages": messages, "requestPrefix": LOOP_PREFIX}
    await call(client, "session/open", {**params, "toolNameMap": {"shell": "bash"}})
    await call(client, "checkpoint/writerStarted", {"sessionId": sid, "watermark": "m02"})
    await call(client, "checkpoint/writerFinished", {"sessionId": sid, "outcome": "success"})


def _sent(res: dict[str, Any]) -> str:
    return json.dumps(res["messages"], ensure_ascii=False)


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_mid_loop_rebuild_keeps_the_newest_step_in_every_format(client: LanguageClient, shape: str):
    """D19 over stdio: the automatic rebuild digests the step before the newest one; the next request,
    in every format, holds the boundary, then the newest step's calls and their results, paired."""
    make, before, reminder = SHAPES[shape]
    sid = f"live-{shape}"
    await _open_loop(client, sid, stored(make, sid))
    inserted = await call(client, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert inserted["outcome"] == "rebuilt" and inserted["digestUpTo"] == before
    texts_sent = [p["text"] for p in inserted["message"]["parts"] if p["type"] == "text"]
    assert texts_sent[-1].endswith(reminder)
    for fmt in FORMATS:
        res = await call(client, "request/build", {"sessionId": sid, "format": fmt, "memoryReminder": False})
        assert_valid(fmt, res)
        assert LIVE in _sent(res) and LIVE2 in _sent(res) and OLD not in _sent(res), fmt


async def test_a_rebuild_between_a_call_and_its_result_loses_nothing(client: LanguageClient):
    """D20 over stdio: the step's last call is synced before its result; the insert leaves the step
    live (nothing digested as interrupted); the result, synced after, is in the next request."""
    make = SHAPES["anthropic"][0]
    sid = "live-pending"
    messages = stored(make, sid)
    late = messages.pop()  # u3's carrier is not synced yet
    await _open_loop(client, sid, messages)
    inserted = await call(client, "rebuild/insert", {"sessionId": sid, "reason": "auto"})
    assert inserted["outcome"] == "rebuilt" and inserted["digestUpTo"] == "m04c"
    boundary = "\n".join(p["text"] for p in inserted["message"]["parts"] if p["type"] == "text")
    assert texts.DIGEST_INTERRUPTED_SUFFIX not in boundary
    late["info"]["time"]["created"] = late["info"]["time"]["created"] + 60_000
    await call(client, "session/sync", {"sessionId": sid, "upsertMessages": [late]})
    for fmt in FORMATS:
        res = await call(client, "request/build", {"sessionId": sid, "format": fmt, "memoryReminder": False})
        assert_valid(fmt, res)
        assert LIVE2 in _sent(res), fmt
        assert not [w for w in res["warnings"] if w.startswith("result-synthesized")], fmt


async def test_bad_format_params_get_a_clear_error(client: LanguageClient) -> None:
    sid = "fmt-bad"
    await call(client, "session/open", {"sessionId": sid, "messages": stored(codex, sid)})
    for params, field in (
        ({"format": "cohere"}, "format"),
        ({"cache": {"ttl": "2h"}}, "cache.ttl"),
        ({"target": {"thinking": "yes"}}, "target.thinking"),
        ({"target": {"modelId": ""}}, "target.modelId"),
    ):
        with pytest.raises(JsonRpcException) as err:
            await call(client, "request/build", {"sessionId": sid, **params})
        assert err.value.code == -32602 and field in err.value.message
