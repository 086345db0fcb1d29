"""Sessions over a real process (pytest-lsp, one initialized server for the module)."""

from __future__ import annotations

from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from mimo_sidecar.core.session.message import part_tokens

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def mid(n: int) -> str:
    return f"msg_g{n:016x}AbCdEfGhJ"


def message(
    message_id: str, role: str = "user", created: int = 1000, parts: list | None = None, **info: Any
) -> dict:
    return {
        "info": {"id": message_id, "sessionID": "s", "role": role, "time": {"created": created}, **info},
        "parts": parts if parts is not None else [text(message_id, f"{message_id}-p1", "hello")],
    }


def text(message_id: str, part_id: str, value: str, **extra: Any) -> dict:
    return {"id": part_id, "sessionID": "s", "messageID": message_id, "type": "text", "text": value, **extra}


async def rpc(client: LanguageClient, method: str, params: Any) -> Any:
    return await client.protocol.send_request_async(method, params)


async def rpc_error(client: LanguageClient, method: str, params: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as exc:
        await rpc(client, method, params)
    return exc.value


async def get(client: LanguageClient, sid: str) -> dict:
    return await rpc(client, "session/get", {"sessionId": sid})


def estimate(*messages: dict) -> int:
    return sum(part_tokens(p) for m in messages for p in m["parts"])


async def test_open_and_get(client: LanguageClient) -> None:
    history = [message(mid(1)), message(mid(2), "assistant", 2000, finish="stop")]
    opened = await rpc(
        client, "session/open", {"sessionId": "open-1", "projectId": "prj", "messages": history}
    )
    assert opened == {"sessionId": "open-1", "revision": 1}
    info = await get(client, "open-1")
    assert info == {
        "sessionId": "open-1",
        "projectId": "prj",
        "revision": 1,
        "messageCount": 2,
        "writer": {"inFlight": False, "settlements": 0},
        "estimatedTokens": estimate(*history),
        "idMode": True,
    }
    err = await rpc_error(client, "session/open", {"sessionId": "open-1"})
    assert err.code == 1004 and err.data["name"] == "SessionAlreadyOpen"


async def test_sync_bumps_the_revision(client: LanguageClient) -> None:
    await rpc(client, "session/open", {"sessionId": "sync-1", "messages": [message(mid(1))]})
    result = await rpc(
        client,
        "session/sync",
        {"sessionId": "sync-1", "baseRevision": 1, "upsertMessages": [message(mid(2), "assistant", 2000)]},
    )
    assert result == {"revision": 2}
    assert (await get(client, "sync-1"))["messageCount"] == 2
    result = await rpc(
        client, "session/sync", {"sessionId": "sync-1", "removeMessages": [mid(1)], "tasks": []}
    )
    assert result == {"revision": 3}
    assert (await get(client, "sync-1"))["messageCount"] == 1


async def test_streaming_part_updates(client: LanguageClient) -> None:
    first = message(mid(1))
    await rpc(client, "session/open", {"sessionId": "stream", "messages": [first]})
    await rpc(
        client,
        "session/sync",
        {"sessionId": "stream", "upsertMessages": [message(mid(2), "assistant", 2000, parts=[])]},
    )
    words = "The build fails because the config is missing a key".split()
    for i in range(1, len(words) + 1):
        part = text(mid(2), "a-1", " ".join(words[:i]))
        await rpc(
            client,
            "session/sync",
            {"sessionId": "stream", "upsertParts": [{"messageId": mid(2), "part": part}]},
        )
    # a bare part carrying messageID is accepted too
    tool = {
        "id": "a-2",
        "messageID": mid(2),
        "type": "tool",
        "callID": "c1",
        "tool": "read",
        "state": {"status": "running", "input": {"filePath": "x"}, "time": {"start": 1}},
    }
    await rpc(client, "session/sync", {"sessionId": "stream", "upsertParts": [tool]})
    info = await get(client, "stream")
    final = message(mid(2), "assistant", 2000, parts=[text(mid(2), "a-1", " ".join(words)), tool])
    assert info["revision"] == 2 + len(words) + 1
    assert info["estimatedTokens"] == estimate(first, final)


async def test_conflict_changes_nothing(client: LanguageClient) -> None:
    await rpc(client, "session/open", {"sessionId": "conflict", "messages": [message(mid(1))]})
    before = await get(client, "conflict")
    err = await rpc_error(
        client, "session/sync", {"sessionId": "conflict", "baseRevision": 0, "removeMessages": [mid(1)]}
    )
    assert err.code == 1002
    assert err.data == {"name": "RevisionConflict", "field": "baseRevision", "expected": 0, "actual": 1}
    assert "baseRevision" in err.message
    assert await get(client, "conflict") == before


async def test_atomic_batch_rejection(client: LanguageClient) -> None:
    await rpc(client, "session/open", {"sessionId": "atomic", "messages": [message(mid(1))]})
    before = await get(client, "atomic")
    # domain rejection: the second part names an unknown message
    err = await rpc_error(
        client,
        "session/sync",
        {
            "sessionId": "atomic",
            "upsertMessages": [message(mid(2), "assistant", 2000)],
            "upsertParts": [
                {"messageId": mid(1), "part": text(mid(1), "p-new", "x" * 400)},
                {"messageId": "msg_nowhere", "part": text("msg_nowhere", "p", "y")},
            ],
        },
    )
    assert err.code == 1003 and err.data["field"] == "upsertParts.1.messageId"
    assert err.message == "session/sync: upsertParts.1.messageId: no message 'msg_nowhere'"
    assert await get(client, "atomic") == before
    # schema rejection: the second message has no role
    err = await rpc_error(
        client,
        "session/sync",
        {"sessionId": "atomic", "upsertMessages": [message(mid(3)), {"info": {"id": mid(4)}, "parts": []}]},
    )
    assert err.code == -32602
    assert "upsertMessages.1.info.role: Field required" in err.message
    assert await get(client, "atomic") == before
    # duplicate IDs in one batch: 1005
    err = await rpc_error(
        client, "session/sync", {"sessionId": "atomic", "upsertMessages": [message(mid(5)), message(mid(5))]}
    )
    assert err.code == 1005 and err.data["field"] == "upsertMessages.1.info.id"
    assert await get(client, "atomic") == before


async def test_close_then_get_is_1001(client: LanguageClient) -> None:
    await rpc(client, "session/open", {"sessionId": "closing"})
    assert await rpc(client, "session/close", {"sessionId": "closing"}) == {"closed": True}
    err = await rpc_error(client, "session/get", {"sessionId": "closing"})
    assert err.code == 1001
    assert err.data == {"name": "SessionNotFound", "field": "sessionId", "sessionId": "closing"}
    assert (await rpc_error(client, "session/close", {"sessionId": "closing"})).code == 1001


async def test_invalid_params_name_the_field(client: LanguageClient) -> None:
    await rpc(client, "session/open", {"sessionId": "invalid"})
    err = await rpc_error(
        client,
        "session/sync",
        {"sessionId": "invalid", "upsertParts": [{"messageId": "m", "part": {"type": "text", "text": "x"}}]},
    )
    assert err.code == -32602
    assert err.message == "session/sync: invalid params: upsertParts.0.part.id: Field required"
    err = await rpc_error(client, "session/get", {"sessionID": "invalid"})
    assert err.code == -32602
    fields = {e["field"]: e["message"] for e in err.data["errors"]}
    assert fields == {"sessionId": "Field required", "sessionID": "Extra inputs are not permitted"}
    err = await rpc_error(client, "session/sync", {"sessionId": "invalid", "baseRevision": "1"})
    assert "baseRevision: Input should be a valid integer" in err.message
    err = await rpc_error(
        client,
        "session/sync",
        {"sessionId": "invalid", "upsertParts": [{"part": {"id": "p", "type": "text", "text": "x"}}]},
    )
    assert "upsertParts.0: messageId is required when part.messageID is absent" in err.message


NOPE_PART = {"id": "p", "type": "text", "text": "x", "messageID": "msg_nope"}


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"messageId": "msg_nope", "part": NOPE_PART}, "messageId"),
        ({"part": NOPE_PART}, "part.messageID"),
        (NOPE_PART, "messageID"),  # a bare part
    ],
)
async def test_an_unknown_message_is_named_where_the_host_named_it(
    client: LanguageClient, item: dict[str, Any], field: str
) -> None:
    """The message and `data.field` name one path: the key the host sent the message ID in."""
    await rpc(client, "session/open", {"sessionId": f"where-{field}"})
    err = await rpc_error(client, "session/sync", {"sessionId": f"where-{field}", "upsertParts": [item]})
    assert err.code == 1003 and err.data["field"] == f"upsertParts.0.{field}"
    assert err.message == f"session/sync: upsertParts.0.{field}: no message 'msg_nope'"


async def test_a_bare_part_is_checked_at_its_own_paths(client: LanguageClient) -> None:
    await rpc(client, "session/open", {"sessionId": "bare"})
    err = await rpc_error(
        client,
        "session/sync",
        {"sessionId": "bare", "upsertParts": [{"type": "text", "text": "x", "messageID": "m"}]},
    )
    assert err.code == -32602
    assert err.message == "session/sync: invalid params: upsertParts.0.id: Field required"
    assert [e["field"] for e in err.data["errors"]] == ["upsertParts.0.id"]


FRACTION = "Input should be a valid integer, got a number with a fractional part"
TOO_LARGE = "Input should be less than or equal to 9007199254740991"


@pytest.mark.parametrize(
    ("name", "time", "field", "says"),
    [
        ("text", {"created": "x"}, "time.created", "Input should be a valid integer"),
        ("bool", {"created": True}, "time.created", "Input should be a valid integer"),
        ("negative", {"created": -5}, "time.created", "Input should be greater than or equal to 0"),
        ("fraction", {"created": 1.5}, "time.created", FRACTION),
        ("huge", {"created": 2**53}, "time.created", TOO_LARGE),
        ("not-an-object", "soon", "time", "Input should be a valid dictionary"),
    ],
)
async def test_a_bad_time_created_is_refused_by_the_schema(
    client: LanguageClient, name: str, time: Any, field: str, says: str
) -> None:
    """docs/data-model.md "Messages": `time.created` is a non-negative integer of milliseconds; anything else
    fails the params' schema (-32602, the field named), in session/open and session/sync alike."""
    bad = {"info": {"id": mid(9), "role": "user", "time": time}, "parts": []}
    sid = f"bad-time-{name}"
    err = await rpc_error(client, "session/open", {"sessionId": sid, "messages": [message(mid(1)), bad]})
    assert err.code == -32602
    assert err.message == f"session/open: invalid params: messages.1.info.{field}: {says}"
    assert [(e["field"], e["message"]) for e in err.data["errors"]] == [(f"messages.1.info.{field}", says)]
    assert (await rpc_error(client, "session/get", {"sessionId": sid})).code == 1001  # nothing kept
    await rpc(client, "session/open", {"sessionId": sid, "messages": [message(mid(1))]})
    before = await get(client, sid)
    err = await rpc_error(client, "session/sync", {"sessionId": sid, "upsertMessages": [bad]})
    assert err.code == -32602 and f"upsertMessages.0.info.{field}: {says}" in err.message
    assert await get(client, sid) == before


async def test_every_time_the_rule_allows_opens(client: LanguageClient) -> None:
    history = [
        {"info": {"id": mid(1), "role": "user", "time": {"created": 0}}, "parts": []},
        {"info": {"id": mid(2), "role": "user", "time": {"created": 1_767_225_600_000.0}}, "parts": []},
        {"info": {"id": mid(3), "role": "user", "time": {"created": 2**53 - 1, "done": "x"}}, "parts": []},
        {"info": {"id": mid(4), "role": "user", "time": {"created": None}}, "parts": []},
        {"info": {"id": mid(5), "role": "user", "time": {}}, "parts": []},
        {"info": {"id": mid(6), "role": "user", "time": None}, "parts": []},
        {"info": {"id": mid(7), "role": "user"}, "parts": []},
    ]
    assert await rpc(client, "session/open", {"sessionId": "good-times", "messages": history}) == {
        "sessionId": "good-times",
        "revision": 1,
    }
    assert (await get(client, "good-times"))["messageCount"] == 7


async def test_nested_jsonrpc_object_is_plain_data(client: LanguageClient) -> None:
    mcp = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "search", "arguments": {"q": "x"}},
    }
    tool = {
        "id": "t1",
        "type": "tool",
        "callID": "c1",
        "tool": "mcp_search",
        "state": {
            "status": "completed",
            "input": {"request": mcp},
            "output": '{"jsonrpc":"2.0","id":7,"result":{}}',
            "title": "",
            "metadata": {"raw": {"jsonrpc": "2.0", "id": 7, "result": {"ok": True}}},
            "time": {"start": 1, "end": 2},
        },
    }
    history = [message(mid(1)), message(mid(2), "assistant", 2000, parts=[tool])]
    assert await rpc(client, "session/open", {"sessionId": "nested", "messages": history}) == {
        "sessionId": "nested",
        "revision": 1,
    }
    assert (await get(client, "nested"))["estimatedTokens"] == estimate(*history)


async def test_host_shapes_are_kept_and_counted(client: LanguageClient) -> None:
    history = [
        message("u1", parts=[text("u1", "u1a", "读取配置文件 👍 and fix it")]),
        message(
            "a1",
            "assistant",
            2000,
            finish="tool-calls",
            providerMessageID="resp_1",
            parts=[{"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"filePath": "a.ts"}}],
        ),
        message(
            "u2",
            created=3000,
            parts=[{"type": "tool_result", "tool_use_id": "toolu_01", "content": "ok", "is_error": False}],
        ),
        message(
            "a2",
            "assistant",
            4000,
            finish="tool-calls",
            parts=[
                {
                    "type": "function",
                    "id": "call_abc",
                    "function": {"name": "read", "arguments": '{"filePath":"b.ts"}'},
                }
            ],
        ),
        message(
            "t1", "tool", 5000, tool_call_id="call_abc", parts=[{"type": "text", "text": "contents of b"}]
        ),
        message(
            "a3",
            "assistant",
            6000,
            finish="tool-calls",
            parts=[
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_x",
                    "name": "read",
                    "arguments": "{}",
                }
            ],
        ),
        message(
            "t2",
            "tool",
            7000,
            parts=[{"type": "function_call_output", "call_id": "call_x", "output": "done"}],
        ),
    ]
    await rpc(client, "session/open", {"sessionId": "shapes", "messages": history})
    info = await get(client, "shapes")
    assert info["messageCount"] == 7
    assert info["idMode"] is False  # host-native IDs: sequence mode
    assert info["estimatedTokens"] == estimate(*history)


async def test_writer_registry(client: LanguageClient) -> None:
    history = [message(mid(n), "user" if n % 2 else "assistant", 1000 * n) for n in range(1, 6)]
    await rpc(client, "session/open", {"sessionId": "writer", "messages": history})
    err = await rpc_error(client, "checkpoint/writerFinished", {"sessionId": "writer", "outcome": "success"})
    assert err.code == 1006
    await rpc(client, "session/open", {"sessionId": "writer-empty"})
    err = await rpc_error(client, "checkpoint/writerStarted", {"sessionId": "writer-empty"})
    assert err.code == 1007  # an empty view has no watermark to compute (behavior.md#watermark-lifecycle)
    err = await rpc_error(
        client, "checkpoint/writerStarted", {"sessionId": "writer", "watermark": "msg_unknown"}
    )
    assert err.code == 1003 and err.data["field"] == "watermark"

    assert await rpc(client, "checkpoint/writerStarted", {"sessionId": "writer", "watermark": mid(2)}) == {
        "state": "in-flight",
        "watermark": mid(2),
    }
    assert await rpc(client, "checkpoint/writerStarted", {"sessionId": "writer", "watermark": mid(4)}) == {
        "state": "queued",
        "watermark": mid(4),
    }
    finished = await rpc(
        client, "checkpoint/writerFinished", {"sessionId": "writer", "outcome": "failure", "retryable": True}
    )
    assert finished == {
        "promoted": mid(4),
        "writer": {
            "inFlight": True,
            "endMessageId": mid(4),
            "settlements": 1,
            "lastOutcome": "failure",
            "lastRetryable": True,
        },
    }
    finished = await rpc(client, "checkpoint/writerFinished", {"sessionId": "writer", "outcome": "success"})
    assert finished["watermark"] == mid(4) and "promoted" not in finished
    info = await get(client, "writer")
    assert info["watermark"] == mid(4)
    assert info["writer"] == {"inFlight": False, "settlements": 2, "lastOutcome": "success"}
    err = await rpc_error(client, "checkpoint/writerFinished", {"sessionId": "writer", "outcome": "done"})
    assert (
        err.code == -32602 and "outcome: Input should be 'success', 'failure' or 'cancelled'" in err.message
    )


async def test_session_created_from_another_inherits_its_context(client: LanguageClient) -> None:
    history = [message(mid(n), "user" if n % 2 else "assistant", 1000 * n) for n in range(1, 5)]
    await rpc(client, "session/open", {"sessionId": "fork-parent", "messages": history})
    err = await rpc_error(client, "session/open", {"sessionId": "fork-x", "parent": {"sessionId": "nope"}})
    assert err.code == 1001 and "parent.sessionId" in err.message
    own = [message(mid(20), "user", 50_000)]
    await rpc(
        client,
        "session/open",
        {
            "sessionId": "fork-child",
            "messages": own,
            "parent": {"sessionId": "fork-parent", "watermark": mid(2)},
        },
    )
    info = await get(client, "fork-child")
    assert info["parentId"] == "fork-parent" and info["messageCount"] == 1
    # A watermark inside the inherited context is accepted for the child's writer
    # (behavior.md#inherited-context, behavior.md#watermark-lifecycle).
    started = await rpc(client, "checkpoint/writerStarted", {"sessionId": "fork-child", "watermark": mid(1)})
    assert started == {"state": "in-flight", "watermark": mid(1)}
    built = await rpc(client, "request/build", {"sessionId": "fork-child", "memoryReminder": False})
    assert built["sources"] == [mid(1), mid(2), mid(20)]  # the parent's view up to mid(2), then its own


async def test_sync_replaces_keeps_and_removes_the_tool_pointers(client: LanguageClient) -> None:
    """`toolPointers` in session/sync: absent keeps the declaration, present replaces it, `null` removes
    it (here seen through the prefix tools/list takes from it)."""
    sid = "pointers-1"
    declared = {"read": "Read", "sidecarTools": {"prefix": "mimo_"}}
    await rpc(
        client, "session/open", {"sessionId": sid, "messages": [message(mid(1))], "toolPointers": declared}
    )

    async def prefix() -> str:
        listed = await rpc(client, "tools/list", {"sessionId": sid})
        assert all(t["name"].startswith(listed["prefix"]) for t in listed["tools"])
        return str(listed["prefix"])

    assert await prefix() == "mimo_"
    await rpc(client, "session/sync", {"sessionId": sid, "upsertMessages": [message(mid(2), created=2000)]})
    assert await prefix() == "mimo_"  # not sent: kept
    await rpc(
        client, "session/sync", {"sessionId": sid, "toolPointers": {"sidecarTools": {"prefix": "ctx_"}}}
    )
    assert await prefix() == "ctx_"
    revision = (await get(client, sid))["revision"]
    synced = await rpc(client, "session/sync", {"sessionId": sid, "toolPointers": None})
    assert synced == {"revision": revision + 1} and await prefix() == ""  # removed
    # a declaration of the wrong type is refused with the field named, and changes nothing
    await rpc(client, "session/sync", {"sessionId": sid, "toolPointers": declared})
    error = await rpc_error(client, "session/sync", {"sessionId": sid, "toolPointers": "none"})
    assert error.code == -32602 and "toolPointers" in str(error)
    assert await prefix() == "mimo_"
