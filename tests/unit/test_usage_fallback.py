"""Usage fallback of the trigger (behavior.md#usage-fallback).

Codex and Cline transcripts carry no usage on their newest finished step; counting 0 meant those
sessions never triggered and nothing told the host. The count now falls back to the newest step
with usage since the last boundary, then to the estimated request, and `usage_source` says which.
"""

from __future__ import annotations

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.rebuild.trigger import choose_usage, has_usage
from mimo_sidecar.core.request.size import prefix_tokens, request_tokens
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.session import Session
from tests.unit.builders import (
    assistant,
    checkpoint_memory,
    seq_ordering,
    session_of,
    sized_text,
    sync,
    text,
    usage,
    user,
)

T0 = 1_700_000_000_000
SID = "ses_usage"
SMALL_MODEL = engine.ModelLimits(20_000, 0, 4_000, "openai", "gpt")  # usable = 18 000


def _open(messages: list[Message], **kw) -> Session:
    return session_of(messages, SID, **kw)


def _codex_like(n_steps: int, step_tokens: int) -> list[Message]:
    """Steps whose assistant messages carry no usage at all, as Codex rollouts import."""
    msgs = []
    for i in range(n_steps):
        msgs.append(user(f"u{i:03}", text(f"step {i}"), created=T0 + 10 * i))
        msgs.append(assistant(f"a{i:03}", sized_text(step_tokens), created=T0 + 10 * i + 5))
    return msgs


def test_usage_of_the_newest_finished_step_is_counted_as_before() -> None:
    s = _open(
        [
            user("u1", text("hi"), created=T0),
            assistant("a1", text("ok"), created=T0 + 1, tokens=usage(19_000)),
        ]
    )
    t = engine.decide_trigger(s, RebuildConfig(), SMALL_MODEL, None, "main")
    assert (t.usage_source, t.count, t.should_rebuild, t.warnings) == ("last-finished", 19_000, True, ())


def test_no_finished_step_counts_nothing() -> None:
    s = _open([user("u1", text("hi"), created=T0), assistant("a1", text("…"), finish=None, created=T0 + 1)])
    t = engine.decide_trigger(s, RebuildConfig(), SMALL_MODEL, None, "main")
    assert (t.usage_source, t.count, t.overflow) == ("none", 0, False)


@pytest.mark.parametrize("empty", [None, {}, usage(0, 0)])
def test_an_earlier_step_with_usage_is_counted_and_reported(empty) -> None:
    msgs = [
        user("u1", text("hi"), created=T0),
        assistant("a1", text("reading"), finish="tool-calls", created=T0 + 1, tokens=usage(18_500, 100)),
        assistant("a2", text("done"), created=T0 + 2, **({"tokens": empty} if empty is not None else {})),
    ]
    s = _open(msgs)
    t = engine.decide_trigger(s, RebuildConfig(), SMALL_MODEL, None, "main")
    assert t.usage_source == "earlier-step" and t.count == 18_600 and t.should_rebuild
    assert len(t.warnings) == 1 and "a2" in t.warnings[0] and "a1" in t.warnings[0]


def test_without_any_usage_the_estimate_triggers() -> None:
    """A Codex-like session: no step has usage; 40 steps of ~500 tokens pass the 18 000 line."""
    s = _open(_codex_like(40, 500), request_prefix={"system": ["You are a coding agent."], "tools": []})
    t = engine.decide_trigger(s, RebuildConfig(), SMALL_MODEL, None, "main")
    view = s.context_view("main")
    counting = engine.session_counting(s)
    expected = prefix_tokens(s.request_prefix) + request_tokens(view, s.ordering(), counting)
    assert expected == prefix_tokens(s.request_prefix) + sum(m.tokens for m in view)  # nothing collapsed yet
    assert t.usage_source == "estimate" and t.count == expected > 18_000
    assert t.overflow and t.should_rebuild
    assert len(t.warnings) == 1 and str(expected) in t.warnings[0]
    small = _open(_codex_like(3, 500))
    quiet = engine.decide_trigger(small, RebuildConfig(), SMALL_MODEL, None, "main")
    assert quiet.usage_source == "estimate" and 0 < quiet.count < 18_000 and not quiet.should_rebuild


def test_the_request_usage_wins_over_any_fallback() -> None:
    s = _open(_codex_like(3, 100))
    t = engine.decide_trigger(s, RebuildConfig(), SMALL_MODEL, usage(100), "main")
    assert (t.usage_source, t.count, t.warnings) == ("request", 100, ())


def test_usage_from_before_the_boundary_is_never_counted_again(tmp_path) -> None:
    """After a rebuild, the steps of the tail measured the request the boundary replaced: a new
    step without usage falls back to the estimate of the new (smaller) request, so one usage
    record never rebuilds twice (behavior.md#recover-once)."""
    memory = checkpoint_memory(tmp_path, SID)
    msgs = _codex_like(40, 500)
    msgs[-1].info["tokens"] = usage(19_000)  # the step that triggered, measured by the host
    s = _open(msgs)
    s.watermark = "a035"
    res = engine.insert(
        s, memory, RebuildConfig(), watermark="a035", reason="auto", now_ms=T0 + 10_000, minter=IdMinter()
    )
    assert res.outcome == "rebuilt"
    sync(
        s,
        [
            user("u900", text("next"), created=T0 + 20_000),
            assistant("a900", text("ok"), created=T0 + 20_001),
        ],
    )
    t = engine.decide_trigger(s, RebuildConfig(), SMALL_MODEL, None, "main")
    assert not t.usage_recovered
    assert t.usage_source == "estimate" and t.count < 18_000 and not t.should_rebuild


def test_choose_usage_in_sequence_mode_respects_the_boundary_order() -> None:
    """The boundary is back-dated, so listing order cannot tell what came after it: creation
    order (seq) does. a1 sorts after the boundary in listing order but was created before it."""
    b = user("b", {"type": "checkpoint", "coveredUpTo": "u0"}, created=T0 + 1, seq=10)
    a1 = assistant("a1", text("x"), created=T0 + 2, tokens=usage(50_000), seq=5)
    a2 = assistant("a2", text("y"), created=T0 + 3, seq=11)
    choice = choose_usage([b, a1, a2], seq_ordering(b, a1, a2), b, lambda: 42)
    assert (choice.source, choice.tokens, choice.message_id) == ("estimate", {"total": 42}, None)
    a3 = assistant("a3", text("z"), created=T0 + 4, tokens=usage(7), seq=12)
    a4 = assistant("a4", text("w"), created=T0 + 5, seq=13)
    choice = choose_usage([b, a1, a3, a4], seq_ordering(b, a1, a3, a4), b, lambda: 42)
    assert (choice.source, choice.message_id) == ("earlier-step", "a3")


def test_has_usage() -> None:
    assert has_usage(usage(1)) and has_usage({"total": 5}) and has_usage({"cache": {"read": 3}})
    assert not has_usage(None) and not has_usage({}) and not has_usage(usage(0, 0)) and not has_usage("x")
