"""D12: the boundary time after an earlier rebuild (behavior.md#boundary-time, behavior.md#d12).

- W behind an earlier boundary: stamped W + 1, not "now". MiMo looks W up in the view only; after a
  first rebuild W is behind that boundary, so a second insert with the same stored watermark stamps
  its boundary "now", and every live message after W drops out of the model's view.
- W on an earlier boundary B: stamped after the messages B digested. MiMo's B + 1 lists the new
  boundary before them, and the next request sends them again in full.
"""

from __future__ import annotations

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.rebuild.boundary import boundary_base_time
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.session import Session
from tests.unit.builders import (
    assistant,
    checkpoint,
    checkpoint_memory,
    seq_ordering,
    sync,
    text,
    tool,
    usage,
    user,
)

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


# -- W on an earlier boundary: the boundary goes after what that boundary digested -----------------
# A writer that starts after a rebuild, with a short tail, covers the first boundary itself
# (behavior.md#watermark-compute). That boundary B1 is back-dated to W0 + 1 and lists before the tool
# steps it digested; a boundary stamped B1 + 1 would list before them too, and its collapse
# (`ord > ord(B1)`) would not remove them: they came back in full. The base time steps over them.
STEPS = ["u1", "a1", "a2", "a3", "a4", "a5"]
READ = "export function lex() {}\n" * 200  # about 1 200 tokens per result
# What these tests are about is the boundary's time, so each rebuild digests its whole list, the
# newest tool step included (the reference digest point; by default that step stays live, D19).
DIGEST_ALL = RebuildConfig(keep_newest_step=False)


def _ordered_ids(mode: str, names: list[str], start: int) -> dict[str, str]:
    if mode == "seq":
        return {n: n for n in names}
    minter = IdMinter(lambda k: bytes(k))
    return {n: minter.ascending("msg", start + 10 * i) for i, n in enumerate(names)}


def _step(mid: str, k: int, created: int) -> Message:
    return assistant(
        mid,
        tool(f"c{k}", "read", {"path": f"src/f{k}.ts"}, output=READ),
        finish="tool-calls",
        created=created,
        tokens=usage(9_000 + k),
    )


def _rebuilt_once(
    memory: MemoryRoot, mode: str, digest_up_to: str | None = None
) -> tuple[Session, dict[str, str], Message]:
    """u1, a1 (W0), four tool steps; rebuilt once with W0; returns the session, IDs and B1."""
    ids = _ordered_ids(mode, STEPS, T0)
    session = sync(
        Session(SID, "proj"),
        [
            user(ids["u1"], text("port the lexer to Rust"), created=T0),
            assistant(ids["a1"], text("reading the lexer"), created=T0 + 10),
            *[_step(ids[f"a{k}"], k, T0 + 10 * k) for k in range(2, 6)],
        ],
    )
    session.watermark = ids["a1"]
    first = engine.insert(
        session,
        memory,
        DIGEST_ALL,
        watermark=ids["a1"],
        reason="auto",
        now_ms=T0 + 1_000,
        minter=IdMinter(),
        digest_up_to=None if digest_up_to is None else ids[digest_up_to],
    )
    assert first.outcome == "rebuilt" and first.message is not None
    assert first.message["info"]["time"]["created"] == T0 + 11  # W0 + 1
    b1 = session.get(first.message["info"]["id"])
    assert b1 is not None
    return session, ids, b1


def _rebuild(
    session: Session,
    memory: MemoryRoot,
    watermark: str,
    now: int,
    reason: str = "auto",
    config: RebuildConfig | None = None,
) -> engine.InsertResult:
    return engine.insert(
        session,
        memory,
        config or DIGEST_ALL,
        watermark=watermark,
        reason=reason,
        now_ms=now,
        minter=IdMinter(),
    )


def _next_request(session: Session, memory: MemoryRoot) -> engine.BuildResult:
    return engine.build(session, memory, RebuildConfig(), now_ms=T0 + 9_000, memory_reminder=False)


@pytest.mark.parametrize("mode", ["id", "seq"])
def test_watermark_on_the_first_boundary_does_not_resend_what_it_digested(
    memory: MemoryRoot, mode: str
) -> None:
    session, ids, b1 = _rebuilt_once(memory, mode)
    assert _next_request(session, memory).request.sources == [b1.id]
    more = _ordered_ids(mode, ["a6"], T0 + 2_000)
    sync(session, [_step(more["a6"], 6, T0 + 2_000)])
    # The trigger fires again; a writer starting now covers the first boundary itself.
    wm = engine.writer_watermark(session)
    assert wm is not None and wm.id == b1.id
    session.watermark = b1.id  # that writer succeeded

    preview = engine.compute(session, memory, DIGEST_ALL, now_ms=T0 + 3_000)
    second = _rebuild(session, memory, b1.id, T0 + 3_000)
    assert second.outcome == "rebuilt" and second.message is not None and second.sizes is not None
    # Stamped after the last step B1 digested (a5, T0 + 50), not B1 + 1 (T0 + 12).
    assert second.message["info"]["time"]["created"] == T0 + 51
    built = _next_request(session, memory)
    # The steps B1 digested stay out; the new step is digested and collapsed by the new boundary.
    assert built.request.sources == [second.message["info"]["id"]]
    assert built.request.collapsed_ids == [more["a6"]]
    # The guard's estimate is the request that is then built, and compute's preview agrees.
    assert second.sizes.after == built.request.estimated_tokens
    assert preview.sizes == second.sizes
    # Microcompaction uses the same time: the new step's result is marked, nothing older again.
    assert [m.message_id for m in second.compacted] == [more["a6"]]


@pytest.mark.parametrize("mode", ["id", "seq"])
def test_manual_rebuild_right_after_a_rebuild_sends_only_the_boundary_and_the_new_ask(
    memory: MemoryRoot, mode: str
) -> None:
    session, ids, b1 = _rebuilt_once(memory, mode)
    more = _ordered_ids(mode, ["u2"], T0 + 2_000)
    sync(session, [user(more["u2"], text("ok, rebuild please"), created=T0 + 2_000)])
    assert engine.writer_watermark(session).id == b1.id  # type: ignore[union-attr]
    session.watermark = b1.id
    second = _rebuild(session, memory, b1.id, T0 + 3_000, "manual")
    assert second.outcome == "rebuilt" and second.message is not None and second.sizes is not None
    built = _next_request(session, memory)
    assert built.request.sources == [second.message["info"]["id"], more["u2"]]
    assert not {ids[f"a{k}"] for k in range(2, 6)} & set(built.request.sources)
    assert second.sizes.after == built.request.estimated_tokens < second.sizes.before


@pytest.mark.parametrize("mode", ["id", "seq"])
def test_what_the_first_boundary_left_live_stays_live(memory: MemoryRoot, mode: str) -> None:
    """A host `digestUpTo` before the newest message: B1 digested a2, a3 and left a4, a5 live. A
    boundary covering B1 steps over what B1 digested only; a4 and a5, which no checkpoint and no
    digest holds, stay in the request (in `ord ≤ ord(W)` terms they are older than B1, but B1
    never covered them)."""
    session, ids, b1 = _rebuilt_once(memory, mode, digest_up_to="a3")
    assert _next_request(session, memory).request.sources[1:] == [ids["a4"]] * 2 + [ids["a5"]] * 2
    session.watermark = b1.id
    more = _ordered_ids(mode, ["a6"], T0 + 2_000)
    sync(session, [_step(more["a6"], 6, T0 + 2_000)])
    unguarded = RebuildConfig(inflation_guard=False, keep_newest_step=False)
    second = _rebuild(session, memory, b1.id, T0 + 3_000, config=unguarded)
    assert second.message is not None and second.message["info"]["time"]["created"] == T0 + 31  # a3 + 1
    built = _next_request(session, memory)
    assert built.request.sources == [second.message["info"]["id"]] + [ids["a4"]] * 2 + [ids["a5"]] * 2
    assert built.request.collapsed_ids == [more["a6"]]


@pytest.mark.parametrize("mode", ["id", "seq"])
def test_the_guard_still_refuses_a_second_rebuild_that_gains_nothing(memory: MemoryRoot, mode: str) -> None:
    """Right after a rebuild, with nothing new and the same stored watermark, a second boundary
    would replace the first with the same text: `no-gain`, and nothing changes."""
    session, ids, b1 = _rebuilt_once(memory, mode)
    revision = session.revision
    again = _rebuild(session, memory, ids["a1"], T0 + 2_000)
    assert again.outcome == "no-gain" and again.sizes is not None
    assert again.sizes.after == again.sizes.before == _next_request(session, memory).request.estimated_tokens
    assert session.revision == revision and session.view_start() is b1


def test_base_time_is_w_unless_w_is_a_boundary_that_digested_later_listed_messages() -> None:
    """`boundary_base_time` over listing-order inputs, in sequence mode (`seq` = creation order)."""
    early = assistant("early", text("z"), created=T0 + 90, seq=0)  # older by seq, later by time
    w0 = assistant("w0", text("a"), created=T0 + 10, seq=1)
    w = assistant("w", text("c"), created=T0 + 20, seq=3)
    late = assistant("late", text("b"), created=T0 + 80, seq=2)  # older than w by seq, later by time
    later = assistant("later", text("d"), created=T0 + 30, seq=4)
    b1_seq = 5
    ordering = seq_ordering(early, w0, late, w, later, user("b1", seq=b1_seq))
    # An ordinary W: its own time, whatever the host's times of older messages (nothing is read).
    assert boundary_base_time(w, [later, late, early], ordering) == T0 + 20
    assert boundary_base_time(None, [], ordering) is None
    assert boundary_base_time(assistant("untimed", text("e"), seq=6), [], ordering) is None

    def b1(*digest: str) -> Message:
        return user("b1", checkpoint("w0", *digest), created=T0 + 11, seq=b1_seq)

    after_b1 = [w, later, late, early]  # listing order after B1 (T0 + 11)
    # A boundary: its time, stepped over what its collapse removed, (w0, digestUpTo]; `early` is
    # not in that range (w0's checkpoint covered it by creation order, B1 left it in its view).
    assert boundary_base_time(b1("later"), after_b1, ordering) == T0 + 80
    assert boundary_base_time(b1("w"), after_b1, ordering) == T0 + 80
    assert boundary_base_time(b1("late"), after_b1, ordering) == T0 + 80
    assert boundary_base_time(b1("later"), [w, later], ordering) == T0 + 30
    # Without a digest B1 collapsed nothing; with an unknown endpoint neither (fail closed).
    assert boundary_base_time(b1(), after_b1, ordering) == T0 + 11
    assert boundary_base_time(b1("nowhere"), after_b1, ordering) == T0 + 11
