"""The orchestration over a real Session and memory root: compute, insert, build (behavior.md#trigger,
behavior.md#rebuild, behavior.md#request)."""

from __future__ import annotations

import os

import pytest

from mimo_sidecar.core import engine, texts
from mimo_sidecar.core.config import PushCaps, RebuildConfig
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.session import Session
from tests.unit.builders import (
    assistant,
    checkpoint_memory,
    reasoning,
    session_of,
    sync,
    text,
    tool,
    usage,
    user,
)

T0 = 1_700_000_000_000
SID = "ses_demo"


def _open(messages: list[Message], **kw) -> Session:
    return session_of(messages, SID, "proj1", **kw)


def _history() -> list[Message]:
    """u1 a1 u2 a2(read, bash, actor tools; tool-calls) a3(stop) — timestamps 10 ms apart.

    a1's long reasoning is what a rebuild at W = a1 saves: without it the boundary would be larger
    than the history it replaces, and the inflation guard would refuse the rebuild (no-gain)."""
    return [
        user("m01", text("please fix the lexer"), created=T0),
        assistant(
            "m02",
            reasoning("weighing how the lexer should stream its tokens " * 250),
            text("looking"),
            created=T0 + 10,
            tokens=usage(1000, 100),
        ),
        user("m03", text("also check the parser"), created=T0 + 20),
        assistant(
            "m04",
            tool("c1", "read", {"path": "src/lexer.ts"}, output="x" * 500),
            tool("c2", "bash", {"command": "npm test"}, output="ok"),
            tool("c3", "actor", {"op": "spawn"}, output="actor-1"),
            finish="tool-calls",
            created=T0 + 30,
            tokens=usage(2000, 100),
        ),
        assistant("m05", text("tests pass"), created=T0 + 40, tokens=usage(185_000, 1000)),
    ]


@pytest.fixture
def memory(tmp_path) -> MemoryRoot:
    content = "# Session checkpoint\nTopic: lexer rewrite\n\n## §1 Active intent\n\nFix the lexer.\n"
    return checkpoint_memory(tmp_path / "memory", SID, content)


def _stored(s: Session, watermark: str) -> Session:
    s.watermark = watermark
    return s


MODEL = engine.ModelLimits(200_000, 0, 32_000, "anthropic", "claude")


def test_compute_overflow_and_recover_once(memory):
    s = _stored(_open(_history()), "m02")
    first = engine.compute(s, memory, RebuildConfig(), model=MODEL, now_ms=T0 + 100)
    assert first.trigger.usable == 180_000
    assert first.trigger.count == 186_000 and first.trigger.overflow and first.trigger.should_rebuild
    assert first.preview_outcome == "rebuilt" and first.preview is not None and first.preview.has_activity
    assert s.revision == 1  # compute changes nothing

    done = engine.insert(
        s, memory, RebuildConfig(), watermark="m02", reason="auto", now_ms=T0 + 200, minter=IdMinter()
    )
    assert done.outcome == "rebuilt"
    second = engine.compute(s, memory, RebuildConfig(), model=MODEL, now_ms=T0 + 300)
    # The same usage record (m05's) was already recovered by the boundary: never a second rebuild.
    assert second.trigger.overflow and second.trigger.usage_recovered and not second.trigger.should_rebuild


def test_insert_builds_boundary_and_compacts(memory):
    s = _stored(_open(_history()), "m02")
    before = s.revision
    res = engine.insert(
        s, memory, RebuildConfig(), watermark="m02", reason="auto", now_ms=T0 + 500, minter=IdMinter()
    )
    assert res.outcome == "rebuilt" and s.revision == before + 1 and len(s) == 6
    info, parts = res.message["info"], res.message["parts"]
    assert info["role"] == "user" and info["time"]["created"] == T0 + 11  # watermark + 1 ms
    assert [p["type"] for p in parts] == ["checkpoint", "text", "text"]
    assert parts[0]["coveredUpTo"] == "m02" and parts[0]["digestUpTo"] == "m05"
    assert parts[1]["text"].startswith("## Checkpoint") and "lexer rewrite" in parts[1]["text"]
    assert parts[2]["text"].startswith(texts.PREAMBLE) and "# Recent activity" in parts[2]["text"]
    assert {(m.message_id, m.compacted_at) for m in res.compacted} == {("m04", T0 + 500)}
    assert len(res.compacted) == 2  # read and bash; the actor result is never compacted
    stored = s.get("m04").parts
    assert (
        stored[0]["state"]["time"]["compacted"] == T0 + 500 and "compacted" not in stored[2]["state"]["time"]
    )


def test_insert_gates_change_nothing(memory, tmp_path):
    s = _open(_history())
    rev = s.revision
    assert engine.insert_gate(s, memory, RebuildConfig(), "main") == "no-watermark"
    s.watermark = "m02"
    assert engine.insert_gate(s, memory, RebuildConfig(), "explore-1") == "not-main-agent"
    assert engine.insert_gate(s, memory, RebuildConfig(checkpoint_disabled=True), "main") == "checkpoint-off"
    assert (
        engine.insert_gate(s, memory, RebuildConfig(memory_disable_write=True), "main") == "memory-write-off"
    )
    empty_root = MemoryRoot(str(tmp_path))
    assert engine.insert_gate(s, empty_root, RebuildConfig(), "main") == "no-checkpoint"
    assert engine.insert_gate(s, memory, RebuildConfig(), "main") is None
    assert s.revision == rev


def test_empty_render_is_insert_failed_and_changes_nothing(tmp_path):
    root = tmp_path / "m"
    (root / "sessions" / SID).mkdir(parents=True)
    (root / "sessions" / SID / "checkpoint.md").write_text("   \n")  # exists, but blank
    memory = MemoryRoot(str(root))
    msgs = [assistant("m01", tool("c1", "read", {"path": "a"}, output="x"), created=T0)]
    s = _stored(_open(msgs), "m01")
    rev, parts = s.revision, [dict(p) for p in s.get("m01").parts]
    config = RebuildConfig(push_caps=PushCaps(recent_user=0))
    res = engine.insert(s, memory, config, watermark="m01", reason="auto", now_ms=T0 + 5, minter=IdMinter())
    assert res.outcome == "insert-failed" and res.message is None and res.compacted == []
    assert res.detail and "bail" in res.detail
    assert s.revision == rev and len(s) == 1 and s.get("m01").parts == parts


def test_manual_rebuild_digests_the_whole_idle_tail(memory):
    msgs = _history()
    msgs.append(assistant("m06", text("sub-agent work"), agent_id="explore-1", created=T0 + 50))
    s = _stored(_open(msgs), "m02")
    res = engine.insert(
        s, memory, RebuildConfig(), watermark="m02", reason="manual", now_ms=T0 + 99, minter=IdMinter()
    )
    assert res.digest_up_to == "m05"  # newest main-slice message; the sub-agent never counts
    body = res.message["parts"][2]["text"]
    assert "- assistant: tests pass" in body and "sub-agent work" not in body


def test_build_before_and_after_rebuild(memory):
    s = _stored(_open(_history()), "m02")
    before = engine.build(s, memory, RebuildConfig(), now_ms=T0 + 1)
    assert before.request.sources[0] == "m01"
    engine.insert(
        s, memory, RebuildConfig(), watermark="m02", reason="manual", now_ms=T0 + 2, minter=IdMinter()
    )
    after = engine.build(s, memory, RebuildConfig(), now_ms=T0 + 3)
    first = after.request.messages[0]
    assert first["role"] == "user" and first["content"][0]["text"] == texts.CHECKPOINT_LABEL
    # Digested assistant messages are collapsed; user messages after the watermark stay verbatim.
    assert "m04" not in after.request.sources and "m05" not in after.request.sources
    assert "m03" in after.request.sources
    assert after.usage_pending
    # The memory reminder rides on the newest user model message and is never stored.
    last_user = [m for m in after.request.messages if m["role"] == "user"][-1]
    assert last_user["content"][-1]["text"].startswith("<system-reminder>")
    assert os.sep + SID in last_user["content"][-1]["text"]
    reminder = last_user["content"][-1]["text"]
    assert all(reminder not in str(p) for m in s.messages() for p in m.parts)


def test_prefix_hash_is_stable_and_sensitive():
    a = Session("s", request_prefix={"system": ["you are"], "tools": [{"name": "read"}]})
    b = Session("s", request_prefix={"tools": [{"name": "read"}], "system": ["you are"]})
    c = Session("s", request_prefix={"system": ["you are!"], "tools": [{"name": "read"}]})
    assert engine.prefix_of(a).hash == engine.prefix_of(b).hash != engine.prefix_of(c).hash


def test_appending_one_message_to_5000_costs_only_that_message(memory, monkeypatch):
    """Re-estimating after one new message must not re-serialize the other 4 999, and the watermark
    must not re-project the whole history (behavior.md#watermark-compute walks back from the end)."""
    from mimo_sidecar.core.rebuild import watermark as watermark_mod
    from mimo_sidecar.core.session import message as message_mod

    history = []
    for i in range(2500):
        history.append(user(f"u{i:05}", text(f"step {i}"), created=T0 + 2 * i))
        history.append(
            assistant(
                f"a{i:05}",
                tool(f"c{i}", "read", {"path": f"f{i}"}, output="x" * 40),
                created=T0 + 2 * i + 1,
                tokens=usage(1000, 10),
            )
        )
    s = _open(history)
    engine.compute(s, memory, RebuildConfig(), model=MODEL, preview=False, now_ms=T0)  # warm caches
    new = assistant("a99999", text("one more"), created=T0 + 10**6)
    serialized: list[object] = []
    projected: list[object] = []
    real_length, real_element = message_mod.js_json_length_and_plain, watermark_mod.element_of
    monkeypatch.setattr(
        message_mod, "js_json_length_and_plain", lambda p: serialized.append(p) or real_length(p)
    )
    monkeypatch.setattr(watermark_mod, "element_of", lambda m: projected.append(m) or real_element(m))
    before = s.total_tokens
    sync(s, [new])
    res = engine.compute(s, memory, RebuildConfig(), model=MODEL, preview=False, now_ms=T0 + 1)
    assert len(s) == 5001 and s.total_tokens == before + new.tokens
    assert serialized == new.parts  # only the new message's single part was serialized
    assert res.watermark is not None
    # The tail and the watermark message itself (the walker compares it with the tail's first message).
    assert len({id(m) for m in projected}) <= 5001 - res.watermark.index < 500


def test_a_chain_of_3000_forks_is_read_to_its_root(memory):
    """Compute, build and prepare answered -32603 on a chain of 3,000 sessions forked one
    from the next (the inherited context was read by recursion). Each fork inherits its parent's
    view up to its watermark, then adds its own message: the last one sees them all, in order."""
    sessions = [_open([user("f0", text("root"), created=T0)])]
    for n in range(1, 3000):
        fork = Session(f"ses_fork{n}", "proj1")
        fork.set_parent(sessions[-1], f"f{n - 1}")
        sync(fork, [user(f"f{n}", text(f"fork {n}"), created=T0 + n)])
        sessions.append(fork)
    last = sessions[-1]
    assert [m.id for m in last.context_view()] == [f"f{n}" for n in range(3000)]
    assert last.find_in_context("f0") is sessions[0].get("f0")
    built = engine.build(last, memory, RebuildConfig(), now_ms=T0, memory_reminder=False)
    assert built.request.sources[0] == "f0" and built.request.sources[-1] == "f2999"
    assert engine.writer_watermark(last) is not None


def test_inherited_context_comes_first_until_the_child_has_a_boundary(memory, tmp_path):
    """behavior.md#inherited-context: a session created from another sees the parent's main view up to the
    context watermark in front of its own; the watermark and the request both see it."""
    parent = _open(_history())
    child = Session("ses_child", "proj1")
    child.set_parent(parent, "m03")
    sync(
        child,
        [
            user("c01", text("continue in a fork"), created=T0 + 100),
            assistant("c02", text("ok"), created=T0 + 110, tokens=usage(2000, 10)),
        ],
    )
    assert [m.id for m in child.inherited_context()] == ["m01", "m02", "m03"]
    assert [m.id for m in child.context_view()] == ["m01", "m02", "m03", "c01", "c02"]
    assert child.find_in_context("m02") is parent.get("m02") and child.find_in_context("m05") is None
    wm = engine.writer_watermark(child)
    assert wm is not None and wm.id == "m01"  # a small tail walks back into the inherited context
    built = engine.build(child, memory, RebuildConfig(), now_ms=T0, memory_reminder=False)
    assert built.request.sources[0] == "m01" and built.request.sources[-1] == "c02"
    missing = Session("ses_orphan")
    missing.set_parent(parent, "nope")  # a watermark not in the parent view: the whole view
    assert [m.id for m in missing.inherited_context()] == [m.id for m in parent.view()]

    root = checkpoint_memory(tmp_path / "memory", "ses_child", "# Session checkpoint\nTopic: fork\n\nwork\n")
    res = engine.insert(
        child, root, RebuildConfig(), watermark="m02", reason="auto", now_ms=T0 + 500, minter=IdMinter()
    )
    assert res.outcome == "rebuilt" and res.message["info"]["time"]["created"] == T0 + 11
    # With its own boundary the child's view starts there: the inherited context is behind it.
    assert [m.id for m in child.context_view()][0] == res.message["info"]["id"]
