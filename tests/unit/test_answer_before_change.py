"""A request's state change is visible only if its response says so.

The insert writes its answer before the session changes (`engine.plan_insert`, the service's
`answer`, `engine.apply_insert`): an answer that cannot be written leaves the boundary out, the
compaction marks off and a one-time notice unshown; the request gets -32603 for its id. The same for
`checkpoint/prepare`, whose answer carries host text: no writer is registered unless it is answered.
A response the protocol cannot encode becomes an internal error for its id; a notification is
dropped.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.formats import AI_SDK_OUTPUT
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.rpc.handlers import rebuild as rebuild_handlers
from mimo_sidecar.rpc.server import build_server
from mimo_sidecar.service import InsertRequest, OpenRequest, SidecarService
from mimo_sidecar.transport.jsonrpc_codec import loads
from tests.harness import Harness
from tests.unit.builders import assistant, text, tool, usage, user, write_checkpoint

SID = "ses_atomic"
T0 = 1_700_000_000_000
# A small session: without the inflation guard its rebuild is `rebuilt` (not `no-gain`).
CONFIG = RebuildConfig(inflation_guard=False)


def history() -> list[dict[str, Any]]:
    msgs = [
        user("m01", text("fix the lexer"), created=T0),
        assistant("m02", text("reading"), created=T0 + 10, tokens=usage(1000, 100)),
        user("m03", text("and the parser"), created=T0 + 20),
        assistant("m04", tool("c1", "read", {"filePath": "a.ts"}, output="x" * 400), created=T0 + 30),
    ]
    return [m.to_json() for m in msgs]


@pytest.fixture
def memory_root(tmp_path: Path) -> Path:
    write_checkpoint(tmp_path, SID, "# Session checkpoint\nTopic: lexer\n\nFix the lexer.\n")
    return tmp_path


def snapshot(svc: SidecarService) -> Any:
    session = svc.sessions.require(SID).session
    parts = [(m.id, copy.deepcopy(m.parts), m.tokens) for m in session.messages()]
    return session.revision, len(session), session.total_tokens, parts


class AnswerFailed(Exception):
    pass


def failing_answer(outcome: Any) -> None:
    raise AnswerFailed(getattr(outcome, "outcome", "prepared"))


async def test_an_insert_whose_answer_fails_changes_nothing(memory_root: Path) -> None:
    svc = SidecarService(memory_root=memory_root, config=CONFIG, clock=lambda: T0 + 99)
    svc.open(OpenRequest(SID, messages=history(), watermark="m02"))
    before = snapshot(svc)
    request = InsertRequest(SID, "auto", "main")
    with pytest.raises(AnswerFailed, match="rebuilt"):
        await svc.insert(request, failing_answer)
    assert snapshot(svc) == before  # no boundary, no time.compacted, same estimates and revision

    inserted = await svc.insert(request)  # the same insert, answered: now it happens
    assert inserted.outcome == "rebuilt" and inserted.revision == before[0] + 1
    assert [(m.message_id, m.part_id) for m in inserted.result.compacted] == [("m04", None)]
    session = svc.sessions.require(SID).session
    assert session.revision == inserted.revision and len(session) == len(history()) + 1
    assert session.get("m04").parts[0]["state"]["time"]["compacted"] == T0 + 99


async def test_a_one_time_notice_is_spent_only_when_answered(memory_root: Path) -> None:
    svc = SidecarService(
        memory_root=memory_root, config=RebuildConfig(checkpoint_disabled=True, inflation_guard=False)
    )
    svc.open(OpenRequest(SID, messages=history(), watermark="m02"))
    request = InsertRequest(SID, "auto", "main")
    with pytest.raises(AnswerFailed, match="checkpoint-off"):
        await svc.insert(request, failing_answer)
    first = await svc.insert(request)
    assert first.notice is not None and first.notice.kind == "checkpoint-off"
    assert (await svc.insert(request)).notice is None


def test_plan_then_apply_is_what_insert_does(memory_root: Path) -> None:
    planned, direct = (SidecarService(memory_root=memory_root, config=CONFIG) for _ in range(2))
    for svc in (planned, direct):
        svc.open(OpenRequest(SID, messages=history(), watermark="m02"))
        svc.minter = IdMinter(random_bytes=bytes)  # the same IDs on both sides
    kw: dict[str, Any] = {"watermark": "m02", "reason": "auto", "now_ms": T0 + 5}
    s1, s2 = (svc.sessions.require(SID).session for svc in (planned, direct))
    settings = planned.settings()
    plan = engine.plan_insert(s1, settings.memory, settings.config, minter=planned.minter, **kw)
    assert s1.revision == 1 and plan.changes is not None
    engine.apply_insert(s1, plan)
    done = engine.insert(s2, settings.memory, settings.config, minter=direct.minter, **kw)
    assert plan.compacted == done.compacted and s1.revision == s2.revision == 2
    assert [m.to_json() for m in s1.messages()] == [m.to_json() for m in s2.messages()]
    assert s1.total_tokens == s2.total_tokens


async def test_rpc_insert_that_cannot_be_encoded_is_an_internal_error_and_changes_nothing(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness = Harness(memory_root=str(memory_root), config=CONFIG)
    await harness.call("session/open", {"sessionId": SID, "messages": history(), "watermark": "m02"})
    before = await harness.call("session/get", {"sessionId": SID})

    def unencodable(result: Any) -> Any:
        raise TypeError("cannot encode")

    monkeypatch.setattr(rebuild_handlers, "encode_result", unencodable)
    err = await harness.error("rebuild/insert", {"sessionId": SID, "reason": "auto"})
    assert err.code == -32603 and err.data == {"name": "InternalError"}
    assert await harness.call("session/get", {"sessionId": SID}) == before
    monkeypatch.undo()
    done = await harness.call("rebuild/insert", {"sessionId": SID, "reason": "auto"})
    assert done["outcome"] == "rebuilt" and done["revision"] == before["revision"] + 1


def test_a_prepare_whose_answer_fails_registers_no_writer(memory_root: Path) -> None:
    svc = SidecarService(memory_root=memory_root, config=CONFIG)
    svc.open(OpenRequest(SID, messages=history(), watermark="m02"))
    with pytest.raises(AnswerFailed):
        svc.prepare_writer(SID, "m02", AI_SDK_OUTPUT, failing_answer)
    assert svc.describe(SID).writer.in_flight is False
    prepared = svc.prepare_writer(SID, "m02")
    assert prepared.started and svc.describe(SID).writer.in_flight is True


class Frames:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def write_body(self, body: bytes) -> None:
        self.bodies.append(body)


def test_a_response_that_cannot_be_encoded_becomes_an_internal_error_for_its_id() -> None:
    protocol = build_server().protocol
    frames = Frames()
    protocol.frames = frames  # type: ignore[assignment]
    protocol._send_data({"jsonrpc": "2.0", "id": "r\ud800", "result": {"x": object()}})
    protocol._send_data({"jsonrpc": "2.0", "method": "rebuild/status", "params": {"x": object()}})
    protocol._send_data({"jsonrpc": "2.0", "id": 8, "result": {"text": "lone \udc00", "n": 2**70}})
    first, last = (loads(b) for b in frames.bodies)  # the notification was dropped
    assert first == {
        "jsonrpc": "2.0",
        "id": "r\ud800",
        "error": {"code": -32603, "message": first["error"]["message"], "data": {"name": "InternalError"}},
    }
    assert last == {"jsonrpc": "2.0", "id": 8, "result": {"text": "lone \udc00", "n": 2**70}}
    assert b"\\udc00" in frames.bodies[-1]
