"""D12: a boundary is stamped W + 1 even when W lies behind an earlier boundary
(behavior.md#rebuild-from-checkpoint, behavior.md#view).

MiMo looks W up in the view only. After a first rebuild W is behind that boundary, so a second
insert with the same stored watermark stamps its boundary "now": every live message after W then
sorts before the new boundary and drops out of the model's view.
"""

from __future__ import annotations

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.ids import IdMinter
from mimo_sidecar.core.memory_files import MemoryRoot
from mimo_sidecar.core.message import Message
from mimo_sidecar.core.session import Session
from tests.unit.builders import assistant, checkpoint_memory, sync, text, tool, usage, user

T0 = 1_700_000_000_000
SID = "ses_d12"
# The inflation guard is tested on its own; here a tiny history must still rebuild.
CONFIG = RebuildConfig(inflation_guard=False)


def _ids(mode: str) -> dict[str, str]:
    """Host IDs: MiMo v2 ascending IDs (ID mode) or plain names (sequence mode)."""
    names = ["u1", "a1", "u2", "a2", "u3", "a3"]
    if mode == "seq":
        return {n: n for n in names}
    minter = IdMinter(lambda k: bytes(k))
    return {n: minter.ascending("msg", T0 + 10 * i) for i, n in enumerate(names)}


def _msgs(ids: dict[str, str], names: list[str]) -> list[Message]:
    index = {n: i for i, n in enumerate(["u1", "a1", "u2", "a2", "u3", "a3"])}
    made = {
        "u1": lambda: user(ids["u1"], text("port the lexer to Rust"), created=T0),
        "a1": lambda: assistant(ids["a1"], text("reading the lexer"), created=T0 + 10, tokens=usage(9000)),
        "u2": lambda: user(ids["u2"], text("keep the public API"), created=T0 + 20),
        "a2": lambda: assistant(
            ids["a2"],
            tool("c1", "read", {"path": "lexer.ts"}, output="x" * 400),
            finish="tool-calls",
            created=T0 + 30,
            tokens=usage(10_000),
        ),
        "u3": lambda: user(ids["u3"], text("and add a benchmark"), created=T0 + 40),
        "a3": lambda: assistant(ids["a3"], text("benchmark added"), created=T0 + 50, tokens=usage(11_000)),
    }
    return [made[n]() for n in sorted(names, key=index.__getitem__)]


@pytest.fixture
def memory(tmp_path) -> MemoryRoot:
    return checkpoint_memory(tmp_path, SID, "Topic: lexer port\n\n## Intent\n\nPort it.\n")


def _insert(session: Session, memory: MemoryRoot, minter: IdMinter, now: int) -> engine.InsertResult:
    assert session.watermark is not None
    return engine.insert(
        session, memory, CONFIG, watermark=session.watermark, reason="auto", now_ms=now, minter=minter
    )


@pytest.mark.parametrize("mode", ["id", "seq"])
def test_second_insert_behind_the_first_boundary_keeps_the_live_tail(memory: MemoryRoot, mode: str) -> None:
    ids = _ids(mode)
    session = sync(Session(SID, "proj"), _msgs(ids, ["u1", "a1", "u2", "a2"]))
    assert session.id_mode is (mode == "id")
    session.watermark = ids["a1"]
    minter = IdMinter()
    first = _insert(session, memory, minter, T0 + 1_000)
    assert first.outcome == "rebuilt" and first.message is not None
    assert first.message["info"]["time"]["created"] == T0 + 11

    # New host turns; the stored watermark has not moved (no writer succeeded since).
    sync(session, _msgs(ids, ["u3", "a3"]))
    second = _insert(session, memory, minter, T0 + 2_000)
    assert second.outcome == "rebuilt" and second.message is not None
    # W is behind the first boundary, not in the view; still W + 1, not now + 1.
    assert second.message["info"]["time"]["created"] == T0 + 11
    view = [m.id for m in session.view()]
    assert view[0] == second.message["info"]["id"]  # the newest boundary starts the view ...
    # ... and every live message after W stays in it, the user asks included.
    assert view[1:] == [ids["u2"], ids["a2"], ids["u3"], ids["a3"]]
    # The request keeps the user asks verbatim; the assistant turns are digested and collapsed.
    built = engine.build(session, memory, CONFIG, now_ms=T0 + 3_000, memory_reminder=False)
    assert ids["u2"] in built.request.sources and ids["u3"] in built.request.sources
    assert set(built.request.collapsed_ids) == {ids["a2"], ids["a3"]}
    # "Recover once" holds: a3's usage was answered by the new boundary.
    again = engine.compute(session, memory, CONFIG, now_ms=T0 + 3_000, preview=False)
    assert again.trigger.usage_recovered


@pytest.mark.parametrize("mode", ["id", "seq"])
def test_second_insert_marks_only_results_after_w(memory: MemoryRoot, mode: str) -> None:
    """Microcompaction keeps using W's time, so a result before W is never marked
    (behavior.md#microcompaction)."""
    ids = _ids(mode)
    session = sync(Session(SID, "proj"), _msgs(ids, ["u1", "a1", "u2", "a2"]))
    session.watermark = ids["a2"]  # the read result is at or before W
    minter = IdMinter()
    _insert(session, memory, minter, T0 + 1_000)
    sync(session, _msgs(ids, ["u3", "a3"]))
    second = _insert(session, memory, minter, T0 + 2_000)
    assert second.outcome == "rebuilt" and second.compacted == []
    assert second.message is not None and second.message["info"]["time"]["created"] == T0 + 31
