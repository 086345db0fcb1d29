"""A request converted from a kept prefix (`core.request.build_memo`) is the request a conversion of the
whole view makes: messages, sources, warnings in their order, counts, the call-ID map, overrides,
the target, the estimate and each message's share, in every format, with and without the per-turn
reminder, Anthropic breakpoints and the writer's closing text. Checked after random sequences of
changes (the running-size property test's changes, plus orphan and second results, reused call IDs,
entries of one response and trailing whitespace), on cases written for each thing that crosses a
cut, and on the real transcripts as they grow."""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mimo_sidecar.core.formats import FORMATS
from mimo_sidecar.core.formats.target import Target
from mimo_sidecar.core.request.assembly import BuiltRequest, build_messages, normalise_ahead
from mimo_sidecar.core.request.build_memo import BuildMemo, prepare
from mimo_sidecar.core.session.message import Json, Message
from mimo_sidecar.core.session.session import PartUpsert, Session, SyncBatch
from mimo_sidecar.core.words import MAIN_AGENT
from tests.fuzz import examples
from tests.real_sessions import imported, real_session_files
from tests.unit import builders as b
from tests.unit.importers.transcripts import open_in_core
from tests.unit.test_running_size import Model, _info, apply
from tests.unit.test_running_size import ops as size_ops
from tests.unit.test_running_size import texts as size_texts

REMINDER = "<system-reminder>memory</system-reminder>"


def dump(built: BuiltRequest) -> bytes:
    """Everything a build returns, as bytes (the target by value)."""
    return orjson.dumps(
        {
            "messages": built.messages,
            "sources": built.sources,
            "groups": built.source_groups,
            "collapsed": built.collapsed_ids,
            "warnings": built.warnings,
            "tokens": built.estimated_tokens,
            "shares": list(built.message_tokens.items()),
            "ids": list(built.call_id_map.items()),
            "overrides": built.overrides,
            "target": repr(built.target),
            "ttl": built.cache_ttl,
        }
    )


def variants() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [(fmt, {}) for fmt in FORMATS]
    out.append(("anthropic", {"cache_ttl": "5m"}))
    out.append(("anthropic", {"target": Target(thinking=True, given=True)}))
    out.append(("gemini", {"target": Target(model_id="gemini-3-pro", given=True)}))
    return out


def build(
    msgs: list[Message], session: Session, fmt: str, memo: BuildMemo | None, **options: Any
) -> BuiltRequest:
    options.setdefault("reminder", None)
    return build_messages(
        msgs, collapse_tail=True, ordering=session.ordering(), fmt=fmt, memo=memo, **options
    )


# What each memo's previous request held, by version: the message, its JSON and its sources then.
Held = dict[int, tuple[Json, bytes, bytes, str]]
PREVIOUS: weakref.WeakKeyDictionary[BuildMemo, Held] = weakref.WeakKeyDictionary()


def assert_versions_kept(memo: BuildMemo, built: BuiltRequest) -> None:
    """`Rendered.versions`' promise, which the transport's slice cache relies on to send a run of
    messages as it encoded it before: one version per message, and a message with a version the
    memo's previous request had is that request's message object, its JSON and sources unchanged
    since that request was returned."""
    versions = list(built.versions)
    assert len(versions) == len(built.messages) == len(built.source_groups) == len(built.sources)
    assert len(set(versions)) == len(versions)
    before = PREVIOUS.get(memo, {})
    for i, version in enumerate(versions):
        if version in before:
            message, encoded, groups, first = before[version]
            assert built.messages[i] is message, (i, version)
            assert orjson.dumps(message) == encoded, (i, "changed in place since it was returned")
            assert orjson.dumps(built.source_groups[i]) == groups and built.sources[i] == first, i
    PREVIOUS[memo] = {
        v: (m, orjson.dumps(m), orjson.dumps(g), first)
        for v, m, g, first in zip(versions, built.messages, built.source_groups, built.sources, strict=True)
    }


def assert_same(
    msgs: list[Message],
    session: Session,
    memos: dict[Any, BuildMemo],
    kinds: list[tuple[str, dict[str, Any]]] | None = None,
    **extra: Any,
) -> int:
    """Each variant built through its memo equals the whole conversion, and keeps the versions'
    promise; the messages reused."""
    reused = 0
    for i, (fmt, options) in enumerate(kinds or variants()):
        memo = memos.setdefault(i, BuildMemo())
        kept = build(msgs, session, fmt, memo, **options, **extra)
        whole = build(msgs, session, fmt, None, **options, **extra)
        assert dump(kept) == dump(whole), (fmt, options, memo.reused)
        assert_versions_kept(memo, kept)
        reused += memo.reused
    return reused


# -- random changes -------------------------------------------------------------------------------
def apply_more(model: Model, op: tuple[Any, ...]) -> None:
    """Changes that cross a cut, beyond the running-size ones."""
    kind = op[0]
    if kind == "orphan":
        model.add(
            _info(model, "user", MAIN_AGENT),
            [{"id": "r", "type": "tool_result", "tool_use_id": f"ghost-{op[1]}", "content": "late"}],
        )
    elif kind == "reuse-call":
        if model.calls:
            _, call = model.calls[op[1] % len(model.calls)]
            model.add(
                _info(model, "assistant", MAIN_AGENT, finish="tool-calls"),
                [{"id": call, "type": "tool_use", "name": "read", "input": {"again": True}}],
            )
    elif kind == "entry":
        previous = next((m for m in reversed(model.session.context_view()) if m.role == "assistant"), None)
        response = previous.info.get("providerMessageID") if previous is not None else None
        extra: Json = {"providerMessageID": response} if response else {}
        model.add(
            _info(model, "assistant", MAIN_AGENT, **extra),
            [{"id": "t", "type": "text", "text": (op[1] or "more") + ("  \n" if op[2] else "")}],
        )
    elif kind == "carrier-text":
        if model.calls:
            _, call = model.calls[-1]
            model.add(
                _info(model, "user", MAIN_AGENT),
                [
                    {"id": "r", "type": "tool_result", "tool_use_id": call, "content": op[1]},
                    {"id": "t", "type": "text", "text": "and then " + op[1]},
                ],
            )
    else:
        apply(model, op)


more_ops = st.one_of(
    size_ops,
    st.tuples(st.just("orphan"), st.integers(0, 3)),
    st.tuples(st.just("reuse-call"), st.integers(0, 50)),
    st.tuples(st.just("entry"), size_texts, st.booleans()),
    st.tuples(st.just("carrier-text"), size_texts),
)


@settings(max_examples=examples(120), deadline=None)
@given(
    st.lists(st.lists(more_ops, min_size=1, max_size=4), min_size=1, max_size=20),
    st.sampled_from([None, REMINDER]),
)
def test_a_kept_prefix_converts_to_the_whole_conversion_after_any_changes(
    batches: list[list[tuple[Any, ...]]], reminder: str | None
) -> None:
    model = Model()
    memos: dict[Any, BuildMemo] = {}
    for batch in batches:
        for op in batch:
            apply_more(model, op)
        msgs = list(model.session.context_view())
        assert_same(msgs, model.session, memos, reminder=reminder)


# -- cases ------------------------------------------------------------------------------------------
def conversation(turns: int, steps: int = 3) -> Model:
    """Prompts, each followed by steps whose calls are answered by the next record (Claude Code's
    shape: one entry per block, results in user-role carriers)."""
    model = Model()
    for t in range(turns):
        apply(model, ("prompt", MAIN_AGENT, f"task {t}"))
        for _ in range(steps):
            apply(model, ("split-step", MAIN_AGENT, f"file-{model.n}", True))
    return model


def test_the_next_build_converts_only_what_is_new() -> None:
    model = conversation(6)
    memo = BuildMemo()
    view = list(model.session.context_view())
    build(view, model.session, "anthropic", memo)
    assert memo.reused == 0
    apply(model, ("split-step", MAIN_AGENT, "next", True))
    view = list(model.session.context_view())
    kept, whole = build(view, model.session, "anthropic", memo), build(view, model.session, "anthropic", None)
    assert dump(kept) == dump(whole)
    assert memo.reused >= len(view) - 4  # the new step and the one before the newest cut


def test_a_change_to_an_old_message_is_converted_again() -> None:
    model = conversation(4)
    memo = BuildMemo()
    view = list(model.session.context_view())
    build(view, model.session, "openai-chat", memo)
    first = view[1]
    model.session.apply(
        SyncBatch(upsert_parts=[PartUpsert(first.id, {"id": "p1", "type": "text", "text": "edited"})])
    )
    apply(model, ("split-step", MAIN_AGENT, "next", True))
    view = list(model.session.context_view())
    kept = build(view, model.session, "openai-chat", memo)
    assert memo.reused == 0
    assert dump(kept) == dump(build(view, model.session, "openai-chat", None))
    assert "edited" in orjson.dumps(kept.messages).decode()


def test_a_call_sent_as_interrupted_before_the_cut_takes_its_result_when_it_comes() -> None:
    model = conversation(2)
    apply(model, ("split-step", MAIN_AGENT, "slow", False))  # no result yet
    _, pending = model.calls[-1]
    apply(model, ("prompt", MAIN_AGENT, "meanwhile"))
    memo = BuildMemo()
    for step in range(2):
        apply(model, ("split-step", MAIN_AGENT, f"other-{step}", True))
        view = list(model.session.context_view())
        built = build(view, model.session, "anthropic", memo)
        assert any(w.startswith("result-synthesized") for w in built.warnings)
    assert memo.reused > 0  # the cut went past the interrupted call
    model.add(
        _info(model, "user", MAIN_AGENT),
        [{"id": "r", "type": "tool_result", "tool_use_id": pending, "content": "done at last"}],
    )
    view = list(model.session.context_view())
    kept = build(view, model.session, "anthropic", memo)
    assert dump(kept) == dump(build(view, model.session, "anthropic", None))
    assert not any(w.startswith("result-synthesized") for w in kept.warnings)
    assert "done at last" in orjson.dumps(kept.messages).decode()


def test_the_newest_turn_of_a_prefix_gains_its_reasoning_back_while_in_progress() -> None:
    """The turn in progress counts the reasoning of its steps: a share kept from a prefix moves
    with the newest prompt."""
    model = Model()
    apply(model, ("prompt", MAIN_AGENT, "first"))
    apply(model, ("step", MAIN_AGENT, "thinking hard", True, "anthropic", 1))
    apply(model, ("prompt", MAIN_AGENT, "second"))
    memos: dict[Any, BuildMemo] = {}
    assert_same(list(model.session.context_view()), model.session, memos)
    for op in [("step", MAIN_AGENT, "again", True, "anthropic", 2), ("prompt", MAIN_AGENT, "third")]:
        apply(model, op)
        assert assert_same(list(model.session.context_view()), model.session, memos) > 0


def test_an_anthropic_merge_across_the_cut_leaves_the_prefix_as_it_was() -> None:
    """A user prompt after a carrier merges into the carrier's message (one user message): the
    merged message is a copy, so the prefix's own stays for the next request."""
    model = conversation(3)
    memo = BuildMemo()
    outputs = []
    for text in ["one", "two", "three"]:
        apply(model, ("prompt", MAIN_AGENT, text))
        view = list(model.session.context_view())
        kept = build(view, model.session, "anthropic", memo, cache_ttl="1h")
        assert dump(kept) == dump(build(view, model.session, "anthropic", None, cache_ttl="1h"))
        outputs.append(kept)
    # Every earlier request is still what it was when it was returned (nothing changed in place).
    for kept in outputs:
        assert kept.messages[-1]["content"][-1].get("cache_control") is not None


def test_a_change_to_the_message_at_the_cut_is_converted_again() -> None:
    """The cut went before a prompt because it had parts: once it has none, the pass skips it and
    the next entry of the response before it merges into that response (found by the property
    test: the kept prefix had closed the response at the cut)."""
    model = Model()
    apply(model, ("prompt", MAIN_AGENT, "go"))
    apply(model, ("step", MAIN_AGENT, "work", False, "anthropic", 1))
    apply(model, ("prompt", MAIN_AGENT, "and?"))
    apply_more(model, ("entry", "more of the same response", False))
    memos: dict[Any, BuildMemo] = {}
    assert_same(list(model.session.context_view()), model.session, memos)
    prompt = list(model.session.context_view())[2]
    model.session.apply(SyncBatch(remove_parts=[(prompt.id, "p1")]))
    assert assert_same(list(model.session.context_view()), model.session, memos) == 0


def test_the_writers_closing_text_and_a_new_format_start_again() -> None:
    model = conversation(3)
    memo = BuildMemo()
    view = list(model.session.context_view())
    for fmt, closing in [
        ("gemini", None),
        ("gemini", ("Write the checkpoint.", view[-1].id)),
        ("ai-sdk", None),
    ]:
        kept = build(view, model.session, fmt, memo, closing=closing)
        assert dump(kept) == dump(build(view, model.session, fmt, None, closing=closing))
    assert memo.reused == 0  # a new format: converted whole


# -- a long turn: the cut inside it ------------------------------------------------------------------
LONG_TURN_STEPS = 40
SHAPES = {
    "inline": ("step", MAIN_AGENT, "inline work", True, "anthropic", 1),  # MiMo's: results in the step
    "entries": ("step", MAIN_AGENT, "two entries", True, "openai", 2),  # one response, two messages
    "split": ("split-step", MAIN_AGENT, "split work", True),  # Claude Code's: results in a user carrier
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_step_of_a_long_turn_converts_that_step_whatever_the_turns_length(shape: str) -> None:
    """With the per-turn reminder in the turn's prompt (inline shapes) or in the newest carrier
    (split), each step of one long turn is converted from a cut inside the turn: every format
    builds the request a whole conversion makes, and what is converted again stays a step long.
    A new prompt then moves the reminder: the prefix before the turn serves it."""
    model = conversation(3, steps=2)
    apply(model, ("prompt", MAIN_AGENT, "a long autonomous task"))
    memos: dict[Any, BuildMemo] = {}
    kinds = variants()
    for step in range(LONG_TURN_STEPS):
        apply(model, SHAPES[shape])
        msgs = list(model.session.context_view())
        assert_same(msgs, model.session, memos, kinds, reminder=REMINDER)
        if step >= 2:
            for i in range(len(kinds)):
                assert memos[i].reused >= len(msgs) - 4, (kinds[i], step, memos[i].reused, len(msgs))
    before_turn = len(msgs) - LONG_TURN_STEPS * (1 if shape == "inline" else 2) - 1
    apply(model, ("prompt", MAIN_AGENT, "next task"))
    msgs = list(model.session.context_view())
    assert_same(msgs, model.session, memos, kinds, reminder=REMINDER)
    assert all(memos[i].reused >= before_turn for i in range(len(kinds)))
    apply(model, SHAPES[shape])
    msgs = list(model.session.context_view())
    assert_same(msgs, model.session, memos, kinds, reminder=REMINDER)
    # Without a reminder, and with another reminder text: still the whole conversion.
    assert_same(msgs, model.session, memos, kinds)
    apply(model, SHAPES[shape])
    msgs = list(model.session.context_view())
    assert_same(msgs, model.session, memos, kinds, reminder=REMINDER + "!")


@settings(max_examples=examples(25), deadline=None)
@given(
    st.sampled_from(sorted(SHAPES)),
    st.lists(
        st.tuples(
            st.lists(more_ops, min_size=1, max_size=3), st.sampled_from([REMINDER, REMINDER, None, "r2"])
        ),
        min_size=1,
        max_size=12,
    ),
)
def test_changes_inside_a_long_turn_convert_as_a_whole(
    shape: str, batches: list[tuple[list[tuple[Any, ...]], str | None]]
) -> None:
    """Random changes (streamed parts and usage on any message, removed parts, prompts, results,
    entries) after a long turn of each shape, the reminder on, off or another: every build is the
    whole conversion."""
    model = conversation(2, steps=1)
    apply(model, ("prompt", MAIN_AGENT, "a long task"))
    for _ in range(12):
        apply(model, SHAPES[shape])
    memos: dict[Any, BuildMemo] = {}
    kinds = variants()[:6]
    assert_same(list(model.session.context_view()), model.session, memos, kinds, reminder=REMINDER)
    for ops, reminder in batches:
        for op in ops:
            apply_more(model, op)
        apply(model, SHAPES[shape])
        assert_same(list(model.session.context_view()), model.session, memos, kinds, reminder=reminder)


# -- real transcripts ------------------------------------------------------------------------------
REAL_VIEW = 300  # messages of each transcript's view used (the whole view is the content-truth tests')


@pytest.mark.parametrize("path", real_session_files())
def test_real_transcripts_growing_step_by_step_convert_as_a_whole(path: Path) -> None:
    session = open_in_core(imported(path).params)
    view = list(session.context_view())[:REAL_VIEW]
    n = len(view)
    lengths = sorted({*(max(1, n * k // 3) for k in range(1, 4)), max(1, n - 1)})
    kinds = variants()[:6]  # every format, and Anthropic with breakpoints
    with_reminder: dict[Any, BuildMemo] = {}
    without: dict[Any, BuildMemo] = {}
    reused = 0
    for k in lengths:
        assert_same(view[:k], session, with_reminder, kinds, reminder=REMINDER)
        reused += assert_same(view[:k], session, without, kinds)
    assert reused > 0 or n < 10


# -- what `session/open` prepares ---------------------------------------------------------------
def opened(
    msgs: list[Message], session: Session, kinds: list[tuple[str, dict[str, Any]]] | None = None
) -> dict[Any, BuildMemo]:
    """A memo per variant, each with the view normalised as `session/open` leaves it."""
    memos: dict[Any, BuildMemo] = {}
    for i in range(len(kinds or variants())):
        memos[i] = BuildMemo()
        normalise_ahead(msgs, collapse_tail=True, ordering=session.ordering(), memo=memos[i])
    return memos


@settings(max_examples=examples(80), deadline=None)
@given(
    st.lists(st.lists(more_ops, min_size=1, max_size=4), min_size=1, max_size=12),
    st.lists(more_ops, max_size=4),
    st.sampled_from([None, REMINDER]),
)
def test_a_view_normalised_at_open_converts_to_the_whole_conversion_after_any_changes(
    before: list[list[tuple[Any, ...]]], after: list[tuple[Any, ...]], reminder: str | None
) -> None:
    # The first build takes the turns `session/open` normalised up to the latest cut that still
    # holds once the changes synced since are in (none, a step, a new prompt, an edit, a result
    # for a call sent as interrupted), and the builds after it go on from the prefixes it kept.
    model = Model()
    for batch in before:
        for op in batch:
            apply_more(model, op)
    memos = opened(list(model.session.context_view()), model.session)
    for op in after:
        apply_more(model, op)
    assert_same(list(model.session.context_view()), model.session, memos, reminder=reminder)
    apply(model, ("split-step", MAIN_AGENT, "one more", True))
    assert_same(list(model.session.context_view()), model.session, memos, reminder=reminder)


@pytest.mark.parametrize("reminder", [None, REMINDER])
def test_the_first_build_after_open_normalises_only_what_came_after_the_open_cut(
    reminder: str | None,
) -> None:
    model = conversation(6)
    view = list(model.session.context_view())
    kinds = variants()[:5]
    memos = opened(view, model.session, kinds)
    assert assert_same(view, model.session, memos, kinds, reminder=reminder) == 0  # no prefix yet
    # The open's latest cut: before the newest step's first entry (inside the turn in progress).
    assert [memos[i].headed for i in range(len(kinds))] == [len(view) - 2] * len(kinds)
    # The prefixes that first build kept serve the next one.
    apply(model, ("split-step", MAIN_AGENT, "next", True))
    assert assert_same(list(model.session.context_view()), model.session, memos, kinds, reminder=reminder) > 0


def test_what_was_synced_after_the_open_is_normalised_from_the_latest_cut_that_holds() -> None:
    kinds = variants()[:5]
    # A new prompt and a step after the open: normalised from the open's latest cut.
    model = conversation(4)
    view = list(model.session.context_view())
    memos = opened(view, model.session, kinds)
    apply(model, ("prompt", MAIN_AGENT, "and now"))
    apply(model, ("split-step", MAIN_AGENT, "more", True))
    assert_same(list(model.session.context_view()), model.session, memos, kinds, reminder=REMINDER)
    assert {memos[i].headed for i in range(len(kinds))} == {len(view) - 2}
    # A message before the open's cuts edited (the newest turn's first step, or an old prompt):
    # nothing the open normalised holds.
    for edited in (
        lambda v: next(
            i
            for i in range(len(v) - 1, 0, -1)
            if v[i - 1].role == "user" and v[i - 1].parts[0]["type"] == "text"
        ),
        lambda v: 0,
    ):
        model = conversation(4)
        view = list(model.session.context_view())
        memos = opened(view, model.session, kinds)
        target = view[edited(view)]
        model.session.apply(
            SyncBatch(upsert_parts=[PartUpsert(target.id, {"id": "t9", "type": "text", "text": "edited"})])
        )
        assert_same(list(model.session.context_view()), model.session, memos, kinds, reminder=REMINDER)
        assert {memos[i].headed for i in range(len(kinds))} == {0}


def test_a_result_synced_after_the_open_for_a_call_sent_as_interrupted_normalises_the_whole_view() -> None:
    model = conversation(2)
    apply(model, ("split-step", MAIN_AGENT, "slow", False))  # no result yet
    _, pending = model.calls[-1]
    apply(model, ("prompt", MAIN_AGENT, "meanwhile"))
    apply(model, ("split-step", MAIN_AGENT, "other", True))
    memo = BuildMemo()
    normalise_ahead(
        list(model.session.context_view()), collapse_tail=True, ordering=model.session.ordering(), memo=memo
    )
    model.add(
        _info(model, "user", MAIN_AGENT),
        [{"id": "r", "type": "tool_result", "tool_use_id": pending, "content": "done at last"}],
    )
    view = list(model.session.context_view())
    kept = build(view, model.session, "anthropic", memo)
    assert memo.headed == 0
    assert dump(kept) == dump(build(view, model.session, "anthropic", None))
    assert not any(w.startswith("result-synthesized") for w in kept.warnings)
    assert "done at last" in orjson.dumps(kept.messages).decode()


@pytest.mark.parametrize("path", real_session_files())
def test_real_transcripts_first_build_after_open_converts_as_a_whole(path: Path) -> None:
    session = open_in_core(imported(path).params)
    view = list(session.context_view())[:REAL_VIEW]
    kinds = variants()[:6]
    for reminder in (REMINDER, None):
        memos = opened(view, session, kinds)
        assert_same(view, session, memos, kinds, reminder=reminder)
        assert all(memos[i].headed > 0 for i in range(len(kinds))) or len(view) < 10


def _arguments(built: BuiltRequest, fmt: str) -> list[str]:
    if fmt == "openai-chat":
        return [c["function"]["arguments"] for m in built.messages for c in m.get("tool_calls", ())]
    return [item["arguments"] for item in built.messages if item.get("type") == "function_call"]


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses"])
def test_inputs_written_at_open_are_what_javascript_writes(fmt: str) -> None:
    # `prepare` writes each call's input while the parts are fresh from their measure, by orjson
    # alone when nothing in the message's parts is written otherwise: a float in the input, a
    # float beside it (a step's cost) or an input changed by a sync after the open must still be
    # sent as JSON.stringify writes it, the same request as with nothing prepared.
    def messages() -> list[Message]:
        read = {"path": "a.py", "lines": [1, 2**53], "all": True, "to": None}
        plain = {**b.tool("c1", "read", read), "id": "p1"}
        floaty = b.tool("c2", "seek", {"at": 2.0, "ratio": 1e21, "small": 1e-7, "big": 2**60})
        beside = b.tool("c3", "read", {"path": "b.py"})
        return [
            b.user("u1", b.text("go")),
            b.assistant("a1", plain, created=2),
            b.assistant("a2", floaty, created=3),
            b.assistant("a3", beside, {"type": "step-finish", "cost": 0.25}, created=4),
        ]

    prepared = b.session_of(messages(), "s-open")
    prepare(prepared.view())
    assert [m.plain_json for m in prepared.view()] == [True, True, False, False]
    fresh = b.session_of(messages(), "s-lazy")
    built = build(prepared.view(), prepared, fmt, None)
    assert dump(built) == dump(build(fresh.view(), fresh, fmt, None))
    assert _arguments(built, fmt) == [
        '{"path":"a.py","lines":[1,9007199254740992],"all":true,"to":null}',
        '{"at":2,"ratio":1e+21,"small":1e-7,"big":1152921504606847000}',
        '{"path":"b.py"}',
    ]
    # A float synced into a prepared message's input after the open.
    changed = b.tool("c1", "read", {"path": "a.py", "scale": 3.0})
    prepared.apply(SyncBatch(upsert_parts=[PartUpsert("a1", {**changed, "id": "p1"})]))
    assert len(prepared.get("a1").parts) == 1 and not prepared.get("a1").plain_json
    again = build(prepared.view(), prepared, fmt, None)
    assert _arguments(again, fmt)[0] == '{"path":"a.py","scale":3}'
