"""The inflation guard (behavior.md#inflation-guard) and the request sizes it compares.

A rebuild whose boundary plus the remaining view would not be smaller than the request it replaces
is refused with outcome `no-gain`, both sizes reported, nothing changed. `checkpoint.inflation_guard`
false turns it off.
"""

from __future__ import annotations

import pytest

from mimo_sidecar.core import engine, texts
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.estimate.provider_count import Counting
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.rebuild.boundary import is_marked
from mimo_sidecar.core.request.assembly import build_messages
from mimo_sidecar.core.request.size import cleared_tokens, request_tokens
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.session import Session
from tests.unit.builders import (
    assistant,
    checkpoint_memory,
    compaction,
    custom_tool_call_output,
    function_call_output,
    reasoning,
    session_of,
    sync,
    text,
    tool,
    tool_result,
    tool_use,
    usage,
    user,
)

T0 = 1_700_000_000_000
SID = "ses_guard"
TEXT_ONLY = Counting()  # these sessions hold text only: every provider counts it as characters / 4
BIG_READ = "export function lex() {}\n" * 400  # about 2 500 tokens


@pytest.fixture
def memory(tmp_path) -> MemoryRoot:
    return checkpoint_memory(tmp_path, SID, "Topic: lexer\n\n## Intent\n\n" + "Stream lazily.\n" * 40)


def _open(messages: list[Message]) -> Session:
    return session_of(messages, SID)


def _tiny() -> Session:
    s = _open(
        [
            user("m01", text("fix the lexer"), created=T0),
            assistant("m02", text("looking"), created=T0 + 10),
            user("m03", text("keep the API"), created=T0 + 20),
            assistant("m04", text("done"), created=T0 + 30, tokens=usage(185_000)),
        ]
    )
    s.watermark = "m02"
    return s


def _read_turn(thinking: bool) -> Session:
    """u, a (with long reasoning or not), u, then a big `read`; W = the first assistant step."""
    a1 = [reasoning("thinking " * 3000)] if thinking else []
    s = _open(
        [
            user("m01", text("fix the lexer"), created=T0),
            assistant("m02", *a1, text("looking"), created=T0 + 10),
            user("m03", text("keep the API"), created=T0 + 20),
            assistant(
                "m04",
                tool("c1", "read", {"path": "lexer.ts"}, output=BIG_READ),
                finish="tool-calls",
                created=T0 + 30,
            ),
        ]
    )
    s.watermark = "m02"
    return s


def _insert(s: Session, memory: MemoryRoot, config: RebuildConfig, **kw) -> engine.InsertResult:
    return engine.insert(
        s, memory, config, watermark=s.watermark, reason="auto", now_ms=T0 + 1_000, minter=IdMinter(), **kw
    )


def test_a_rebuild_that_would_not_shrink_the_request_is_refused(memory: MemoryRoot) -> None:
    s = _tiny()
    before = (s.revision, len(s), [list(m.parts) for m in s.messages()])
    preview = engine.compute(s, memory, RebuildConfig(), now_ms=T0 + 1_000)
    res = _insert(s, memory, RebuildConfig())
    assert res.outcome == "no-gain" and res.message is None and res.compacted == []
    assert res.sizes is not None and res.sizes.after >= res.sizes.before > 0
    assert res.detail == texts.no_gain(res.sizes.before, res.sizes.after)
    assert (s.revision, len(s), [list(m.parts) for m in s.messages()]) == before  # nothing changed
    assert preview.preview_outcome == "no-gain" and preview.sizes == res.sizes
    assert res.fidelity is not None and res.fidelity.newest_user_ask.message_id == "m03"
    off = _insert(s, memory, RebuildConfig(inflation_guard=False))
    assert off.outcome == "rebuilt" and off.sizes == res.sizes


def test_the_sizes_predict_the_request_after_the_rebuild(memory: MemoryRoot) -> None:
    s = _read_turn(thinking=True)
    sync(s, [assistant("m05", text("done"), created=T0 + 40, tokens=usage(185_000))])
    now = request_tokens(s.context_view(), s.ordering(), engine.session_counting(s))
    res = _insert(s, memory, RebuildConfig())
    assert res.outcome == "rebuilt" and res.sizes is not None
    assert res.sizes.before == now and res.sizes.after < res.sizes.before
    assert request_tokens(s.context_view(), s.ordering(), engine.session_counting(s)) == res.sizes.after


def test_planned_compaction_counts_as_gain(memory: MemoryRoot) -> None:
    """digestUpTo before a big read: the read stays live but is cleared, which is the gain."""
    s = _read_turn(thinking=False)
    res = _insert(s, memory, RebuildConfig(), digest_up_to="m03")
    assert res.outcome == "rebuilt" and res.sizes is not None and res.sizes.after < res.sizes.before
    assert len(res.compacted) == 1
    boundary = s.get(res.message["info"]["id"])
    stored_after = sum(m.tokens for m in s.view())  # what the stored estimate alone would say
    assert boundary is not None and stored_after >= res.sizes.before  # it would have refused
    assert request_tokens(s.context_view(), s.ordering(), engine.session_counting(s)) == res.sizes.after


def test_a_newer_boundary_keeps_the_view_and_nothing_is_gained(memory: MemoryRoot) -> None:
    s = _tiny()
    later = user("c1", compaction(), text("summary of everything"), created=T0 + 25)
    sync(s, [later])
    draft = Message({"id": "msg_b", "role": "user", "time": {"created": T0 + 11}}, [text("boundary")])
    assert [m.id for m in s.view_with(draft)] == [m.id for m in s.view()] == ["c1", "m04"]
    res = _insert(s, memory, RebuildConfig())
    assert res.outcome == "no-gain"


def test_view_with_places_the_boundary_as_insertion_would(memory: MemoryRoot) -> None:
    s = _tiny()
    draft = Message({"id": "zz", "role": "user", "time": {"created": T0 + 11}}, [text("b")])
    assert [m.id for m in s.view_with(draft)] == ["zz", "m03", "m04"]
    assert len(s) == 4 and s.get("zz") is None  # not registered


def test_request_tokens_counts_marked_results_as_cleared() -> None:
    part = tool("c1", "read", {"path": "a"}, output=BIG_READ, compacted=T0)
    carrier_part = {**tool_result("t1", BIG_READ), "time": {"compacted": T0}}
    msgs = [
        user("u1", text("go"), created=T0),
        assistant("a1", part, created=T0 + 1),
        assistant("a2", tool_use("t1", "read"), finish="tool-calls", created=T0 + 2),
        user("r2", carrier_part, created=T0 + 3),
    ]
    s = _open(msgs)
    assert is_marked(part) and is_marked(carrier_part)
    saved = cleared_tokens(part, TEXT_ONLY) + cleared_tokens(carrier_part, TEXT_ONLY)
    assert saved > 2 * 2400
    counting = engine.session_counting(s)
    parts = sum(m.request_tokens(counting) for m in s.view())  # every part as stored, marks unapplied
    assert request_tokens(s.view(), s.ordering(), counting) == parts - saved


@pytest.mark.parametrize("output", [function_call_output, custom_tool_call_output])
def test_a_marked_responses_output_counts_as_cleared(output) -> None:
    marked = {**output("c1", BIG_READ), "time": {"compacted": T0}}
    assert is_marked(marked) and cleared_tokens(marked, TEXT_ONLY) > 2400


def test_request_tokens_match_request_build_without_marks() -> None:
    msgs = [
        user("u1", text("go"), created=T0),
        assistant("a1", tool_use("t1", "read", {"p": 1}), finish="tool-calls", created=T0 + 1),
        user("r1", tool_result("t1", "content"), text("and also this"), created=T0 + 2),
        assistant("a2", reasoning("hmm"), tool("c2", "bash", {}, output="ok"), created=T0 + 3),
    ]
    s = _open(msgs)
    built = build_messages(s.view(), collapse_tail=True, ordering=s.ordering(), reminder=None)
    assert request_tokens(s.view(), s.ordering(), engine.session_counting(s)) == built.estimated_tokens
