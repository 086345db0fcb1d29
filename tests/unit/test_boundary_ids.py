"""Boundary IDs that sort right under the host's ID scheme (behavior.md#id-host-scheme,
behavior.md#ordering, behavior.md#ids).

With OpenCode's legacy v1 IDs declared ascending, a v2 `msg_g…` boundary sorted after every later host ID: the
boundary stayed "newest", every later usage record looked recovered (behavior.md#recover-once) and no rebuild
ever triggered again. The boundary is now minted in the host's v1 scheme; an unknown scheme needs the host to
name the boundary's ID.
"""

from __future__ import annotations

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.errors import DomainError, ErrorCode
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.session.ids import IdMinter, ascending_scheme, is_v1, timestamp_of
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.session import MessageUpsert, Session, SyncBatch
from tests.unit.builders import assistant, checkpoint_memory, sized_text, sync, text, usage, user

T0 = 1_790_000_000_000  # after the 26th v1 wrap (2026-08-14): v1 IDs start with low hex digits
SID = "ses_ids"
MODEL = engine.ModelLimits(200_000, 0, 32_000, "anthropic", "claude")
NOW = T0 + 3_600_000


def _fixed(n: int) -> bytes:
    return bytes(range(n))


def test_v1_minting_format_and_order() -> None:
    minter = IdMinter(_fixed)
    a = minter.ascending_v1("msg", T0)
    b = minter.ascending_v1("msg", T0)
    c = minter.ascending_v1("msg", T0 + 1)
    assert is_v1(a) and len(a) == len("msg_") + 26
    n = T0 * 4096 + 1
    assert a == "msg_" + format(n & ((1 << 48) - 1), "012x") + "0123456789ABCD"
    assert a < b < c  # one counter, strictly increasing n (D10 guard applies to v1 too)
    assert timestamp_of(a, now_ms=T0 + 5) == T0
    assert ascending_scheme(a) == "v1" and ascending_scheme(IdMinter().ascending("msg", T0)) == "v2"
    assert ascending_scheme(IdMinter().descending("ses", T0)) is None
    assert ascending_scheme("0001") is None and ascending_scheme("msg_short") is None
    assert minter.mint("prt", T0 + 2, "v1").startswith("prt_") and is_v1(minter.mint("prt", T0 + 2, "v1"))


class _Host:
    """An OpenCode-like host: legacy v1 IDs from its own minter and clock, declared ascending."""

    def __init__(self, memory: MemoryRoot) -> None:
        self.memory = memory
        self.minter = IdMinter()
        self.session = Session(SID, "proj", ids_ascending=True)

    def turn(self, t: int, tokens: int) -> tuple[Message, Message]:
        u = user(self.minter.ascending_v1("msg", t), text(f"ask at {t}"), created=t)
        a = assistant(
            self.minter.ascending_v1("msg", t + 5), sized_text(4000), created=t + 5, tokens=usage(tokens)
        )
        sync(self.session, [u, a])
        return u, a


@pytest.fixture
def memory(tmp_path) -> MemoryRoot:
    return checkpoint_memory(tmp_path, SID)


def test_after_a_rebuild_and_new_host_turns_the_next_trigger_fires(memory: MemoryRoot) -> None:
    host = _Host(memory)
    for i in range(12):
        _, last = host.turn(T0 + 1000 * i, 20_000 + 10_000 * i)  # the last step: 130 000 tokens
    s = host.session
    assert s.id_mode and not s.all_ids_v2  # declared ascending, not MiMo v2
    s.watermark = s.slice()[12].id
    first = engine.compute(s, memory, RebuildConfig(), model=MODEL, now_ms=NOW, preview=False)
    assert first.trigger.should_rebuild is False  # 130 000 < 180 000
    _, last = host.turn(T0 + 20_000, 185_000)
    assert engine.compute(s, memory, RebuildConfig(), model=MODEL, now_ms=NOW).trigger.should_rebuild

    res = engine.insert(
        s, memory, RebuildConfig(), watermark=s.watermark, reason="auto", now_ms=NOW, minter=IdMinter()
    )
    assert res.outcome == "rebuilt" and res.message is not None
    boundary_id = res.message["info"]["id"]
    assert is_v1(boundary_id) and all(is_v1(p["id"]) for p in res.message["parts"])
    assert timestamp_of(boundary_id, now_ms=NOW) == NOW
    assert engine.compute(s, memory, RebuildConfig(), model=MODEL, now_ms=NOW).trigger.usage_recovered

    # The host goes on minting from its own clock, after the rebuild.
    _, newer = host.turn(NOW + 60_000, 186_000)
    assert newer.id > boundary_id  # a v2 `msg_g…` boundary would sort after it
    again = engine.compute(s, memory, RebuildConfig(), model=MODEL, now_ms=NOW + 61_000)
    assert not again.trigger.usage_recovered and again.trigger.should_rebuild


def test_v2_sessions_keep_minting_v2(memory: MemoryRoot) -> None:
    for ascending in (False, True):
        minter = IdMinter()
        s = Session(SID, "proj", ids_ascending=ascending)
        msgs = [
            user(minter.ascending("msg", T0), text("hi"), created=T0),
            assistant(minter.ascending("msg", T0 + 1), sized_text(9000), created=T0 + 1),
        ]
        sync(s, msgs)
        assert engine.boundary_id_scheme(s) == "v2"
    mixed = Session(SID, "proj", ids_ascending=True)
    legacy = IdMinter().ascending_v1("msg", T0)
    current = IdMinter().ascending("msg", T0 + 1)  # MiMo after its v1 → v2 migration
    sync(mixed, [user(legacy, text("a"), created=T0), user(current, text("b"), created=T0 + 1)])
    assert engine.boundary_id_scheme(mixed) == "v2"
    assert engine.boundary_id_scheme(Session(SID)) == "v2"
    seq = Session(SID)
    seq.apply(SyncBatch(upsert_messages=[MessageUpsert({"id": "u-1", "role": "user"}, [text("x")])]))
    assert not seq.id_mode and engine.boundary_id_scheme(seq) == "v2"  # order comes from seq


def _unknown_scheme_session() -> Session:
    s = Session(SID, "proj", ids_ascending=True)
    msgs = [
        user("0001", text("port the lexer"), created=T0),
        assistant("0002", sized_text(9000), created=T0 + 1),
        user("0003", text("go on"), created=T0 + 2),
        assistant("0004", sized_text(9000), created=T0 + 3),
    ]
    sync(s, msgs)
    s.watermark = "0002"
    return s


def test_unknown_ascending_scheme_requires_boundary_message_id(memory: MemoryRoot) -> None:
    s = _unknown_scheme_session()
    rev = s.revision
    assert engine.boundary_id_scheme(s) is None
    with pytest.raises(DomainError) as err:
        engine.insert(
            s, memory, RebuildConfig(), watermark="0002", reason="auto", now_ms=NOW, minter=IdMinter()
        )
    assert err.value.code is ErrorCode.BOUNDARY_ID_REQUIRED and err.value.path == "boundaryMessageId"
    assert str(err.value).startswith("boundaryMessageId: required") and "'0004'" in str(err.value)
    assert s.revision == rev and len(s) == 4  # nothing changed
    res = engine.insert(
        s,
        memory,
        RebuildConfig(),
        watermark="0002",
        reason="auto",
        now_ms=NOW,
        minter=IdMinter(),
        boundary_id="0005",
    )
    assert res.outcome == "rebuilt" and res.message is not None and res.message["info"]["id"] == "0005"
    with pytest.raises(DomainError):  # the newest ID is still of an unknown scheme
        engine.require_boundary_id(s, None)


def test_require_boundary_id_only_where_it_cannot_be_minted() -> None:
    s = _unknown_scheme_session()
    with pytest.raises(DomainError):
        engine.require_boundary_id(s, None)
    engine.require_boundary_id(s, "0009")
    plain = Session(SID)
    plain.apply(SyncBatch(upsert_messages=[MessageUpsert({"id": "0001", "role": "user"}, [text("x")])]))
    engine.require_boundary_id(plain, None)  # sequence mode: any ID sorts right by its seq
