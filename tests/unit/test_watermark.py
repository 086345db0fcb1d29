"""core.rebuild.watermark: computeBoundary, the adjust walker, the caller convention
(behavior.md#watermark, D8)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mimo_sidecar.core.rebuild.watermark import Element, adjust, compute_boundary, project, watermark_for
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.shapes import logical_calls, provider_id
from tests.fuzz import examples
from tests.unit.builders import (
    assistant,
    function_call,
    function_call_output,
    msg,
    reasoning,
    sized_text,
    text,
    tool,
    tool_message,
    tool_result,
    tool_use,
    user,
)


def boundary_id(msgs: list[Message]) -> str:
    i = compute_boundary(msgs)
    return "" if i is None else msgs[i].id


# -- behavior.md#watermark-examples computeBoundary examples ---------------------------------------
def test_trivial_lists():
    assert boundary_id([assistant("a1", text("x"))]) == "a1"
    assert boundary_id([user("u0", text("x"))]) == "u0"
    assert compute_boundary([]) is None
    assert watermark_for([]) is None


def test_sized_text_matches_the_spec_estimates():
    assert user("u", sized_text(2000)).tokens == 2006
    assert user("u", sized_text(100)).tokens == 106
    assert user("u", sized_text(1000)).tokens == 1006
    assert user("u", sized_text(3000)).tokens == 3006


def small_tail() -> list[Message]:
    return [
        user("u1", sized_text(2000)),
        assistant("a1", sized_text(2000)),
        user("u2", sized_text(2000)),
        assistant("a2", sized_text(2000)),
        user("u3", sized_text(100)),
        assistant("a3", sized_text(100)),
    ]


def test_small_tail_walks_back_to_the_first_message():
    msgs = small_tail()
    assert boundary_id(msgs) == "u1"
    result = watermark_for(msgs)
    assert result is not None
    assert (result.index, result.id, result.adjusted) == (0, "u1", False)
    assert result.tail_tokens == 2006 * 3 + 106 * 2
    assert result.tail_text_blocks == 5


def test_huge_tail_stays_whole():
    huge = {"type": "tool", "tool": "read", "payload": "x" * 220000}
    msgs = [
        user("u1", sized_text(1000)),
        assistant("a1", sized_text(1000)),
        user("u2", sized_text(1000)),
        assistant("a2", huge),
    ]
    assert msgs[3].tokens == 55011
    assert boundary_id(msgs) == "u2"
    result = watermark_for(msgs)
    assert result is not None and result.id == "u2" and result.tail_tokens == 55011


def test_text_block_floor():
    msgs = [
        user("u1", sized_text(3000)),
        assistant("a1", sized_text(3000)),
        user("u2", sized_text(3000)),
        assistant("a2", sized_text(3000)),
        user("u3", sized_text(3000)),
        assistant("a3", sized_text(3000)),
    ]
    assert boundary_id(msgs) == "a1"


def test_finish_present_means_any_value_even_empty():
    msgs = [user("u1", text("q")), assistant("a1", text("x"), finish=""), user("u2", text("y"))]
    # a = 1 (an empty finish is present), s = 0.
    assert compute_boundary(msgs) == 0
    unfinished = [user("u1", text("q")), msg("a1", "assistant", [text("x")]), user("u2", text("y"))]
    assert compute_boundary(unfinished) == 0  # no finished assistant → msgs[0]


def test_reasoning_counts_as_a_text_block():
    msgs = [user("u0", text("q"))] + [assistant(f"a{i}", reasoning("x" * 4000)) for i in range(8)]
    # Every message is a text block (reasoning), 1006 tokens each: the token floor decides.
    i = compute_boundary(msgs)
    assert i is not None
    assert sum(m.tokens for m in msgs[i:]) >= 10000 or i == 0


# -- behavior.md#watermark-adjust walker -----------------------------------------------------------
def walker_example() -> list[Message]:
    return [
        user("m0", text("please read")),
        assistant("m1", tool_use("X", "read", {"path": "a"}), finish="tool-calls"),
        tool_message("m2", "X", "contents"),
        assistant("m3", text("done")),
    ]


def test_walker_example_orphan_result_pulls_the_start_back():
    assert adjust(project(walker_example()), 2) == 1


def test_walker_caller_convention_keeps_call_and_result_in_the_tail():
    msgs = walker_example()
    # computeBoundary: a = 3, s = 2 → ... tiny tail walks back to 0. Force w = 1 through the walker.
    elems = project(msgs)
    assert adjust(elems, 1 + 1) - 1 == 0


def test_walker_bounds_are_unchanged():
    elems = project(walker_example())
    assert adjust(elems, 0) == 0
    assert adjust(elems, -3) == -3
    assert adjust(elems, 4) == 4
    assert adjust(elems, 9) == 9


def test_walker_looks_only_at_assistant_elements():
    elems = [
        Element("user", "u", frozenset({"X"}), ()),
        Element("assistant", "a", frozenset(), ()),
        Element("tool", "t", frozenset(), ("X",)),
    ]
    assert adjust(elems, 2) == 2


def test_walker_joins_entries_of_one_provider_message():
    msgs = [
        user("u1", text("go")),
        assistant("a1", reasoning("thinking"), finish=None, providerMessageID="resp_1"),
        assistant("a2", text("answer"), providerMessageID="resp_1"),
        user("u2", text("thanks")),
    ]
    assert adjust(project(msgs), 2) == 1
    assert adjust(project(msgs), 3) == 3


def test_walker_fixpoint_rechecks_the_widened_range():
    # Malformed order: X's result comes after another assistant message. One pass of steps 1-2
    # from c = 3 stops at the issuer of Y (1); the widened range then holds X's orphan result.
    elems = [
        Element("assistant", "a0", frozenset({"X"}), ()),
        Element("assistant", "a1", frozenset({"Y"}), ()),
        Element("tool", "t0", frozenset(), ("X",)),
        Element("tool", "t1", frozenset(), ("Y",)),
    ]
    assert adjust(elems, 3) == 0


def test_walker_fixpoint_after_a_provider_join():
    # Step 2 pulls c back to a1, whose sibling entry's call X has its result inside the range.
    elems = [
        Element("assistant", "r0", frozenset({"X"}), ()),
        Element("tool", "t0", frozenset(), ("X",)),
        Element("assistant", "r1", frozenset({"Y"}), ()),
        Element("assistant", "r1", frozenset(), ()),
        Element("tool", "t1", frozenset(), ("Y",)),
    ]
    assert adjust(elems, 3) == 2


def test_inline_adjust_is_a_no_op():
    msgs = [
        user("u1", text("q")),
        assistant("a1", tool("c1", "read", {"path": "a"}), text("x"), finish="tool-calls"),
        assistant("a2", tool("c2", "bash", {}, "running"), finish="tool-calls"),
        user("u2", text("more")),
        assistant("a3", tool("c3", "grep", {}, "error", error="no"), text("y")),
    ]
    elems = project(msgs)
    assert all(adjust(elems, c) == c for c in range(-1, len(msgs) + 2))


def test_watermark_on_a_call_moves_before_it():
    # One provider response stored as two entries: the call X (no finish yet) and a text entry
    # that carries the finish. computeBoundary lands on the call entry; its result and its sibling
    # entry are in the tail, so the watermark moves to u1.
    msgs = [
        user("u1", sized_text(500)),
        assistant("a1", tool_use("X", "read"), finish=None, providerMessageID="R"),
        assistant("a2", text("reading"), finish="tool-calls", providerMessageID="R"),
        user("c1", tool_result("X", "y" * 90000)),
    ]
    assert compute_boundary(msgs) == 1  # a = 2, s = 1, tail ≥ 20000 at once
    result = watermark_for(msgs)
    assert result is not None
    assert (result.boundary_index, result.index, result.id, result.adjusted) == (1, 0, "u1", True)
    assert result.tail_tokens == sum(m.tokens for m in msgs[1:])


def test_watermark_between_entries_of_one_provider_message_moves_before_them():
    msgs = [
        user("u1", sized_text(500)),
        assistant("a1", reasoning("r" * 90000), finish=None, providerMessageID="R"),
        assistant("a2", text("answer"), providerMessageID="R"),
        user("u2", text("ok")),
    ]
    # a = 2, s = 1: the watermark would be the reasoning entry, splitting R; it moves to u1.
    assert compute_boundary(msgs) == 1
    result = watermark_for(msgs)
    assert result is not None and result.id == "u1"


def test_no_valid_watermark_when_the_adjustment_reaches_the_start():
    msgs = [
        assistant("a0", function_call("X", "read"), finish="tool-calls"),
        msg("t0", "tool", [function_call_output("X", "y")]),
        assistant("a1", text("done")),
    ]
    assert compute_boundary(msgs) == 0
    assert watermark_for(msgs) is None


# -- property: split histories are never cut through a pair or a provider message -----------------
SIZES = st.sampled_from([0, 40, 400, 4000, 16000, 40000, 90000])


@st.composite
def split_history(draw) -> list[Message]:
    msgs: list[Message] = []
    n = 0

    def next_id() -> str:
        nonlocal n
        n += 1
        return f"m{n:03d}"

    call_n = 0
    for _turn in range(draw(st.integers(1, 6))):
        msgs.append(user(next_id(), text("u" * draw(SIZES))))
        for _round in range(draw(st.integers(1, 3))):
            pid = f"resp_{n}" if draw(st.booleans()) else None
            entries = draw(
                st.lists(
                    st.sampled_from(["reasoning", "text", "use", "uses", "inline"]), min_size=1, max_size=3
                )
            )
            calls: list[str] = []
            for k, kind in enumerate(entries):
                parts = []
                if kind == "reasoning":
                    parts.append(reasoning("r" * draw(SIZES)))
                elif kind == "text":
                    parts.append(text("t" * draw(SIZES)))
                elif kind == "inline":
                    call_n += 1
                    parts.append(tool(f"i{call_n}", "read", {"p": "x"}, output="o" * draw(SIZES)))
                else:
                    for _ in range(1 if kind == "use" else 2):
                        call_n += 1
                        calls.append(f"c{call_n}")
                        parts.append(tool_use(calls[-1], "read", {"p": "x" * draw(SIZES)}))
                last = k == len(entries) - 1
                finish = ("tool-calls" if calls else "stop") if last else None
                extra = {"providerMessageID": pid} if pid else {}
                msgs.append(msg(next_id(), "assistant", parts, finish=finish, **extra))
            if calls and draw(st.integers(0, 9)) > 0:  # sometimes the last calls stay pending
                if draw(st.booleans()):
                    body = [tool_result(c, "r" * draw(SIZES)) for c in calls]
                    if draw(st.booleans()):
                        body.append(text("also"))
                    msgs.append(user(next_id(), *body))
                else:
                    msgs.extend(tool_message(next_id(), c, "r" * draw(SIZES)) for c in calls)
    return msgs


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split_history())
def test_watermark_never_splits_a_call_or_a_provider_message(msgs):
    result = watermark_for(msgs)
    if result is None:
        return
    w = result.index
    assert 0 <= w <= result.boundary_index < len(msgs)
    assert msgs[w].id == result.id
    position = {id(m): i for i, m in enumerate(msgs)}
    for call in logical_calls(msgs).values():
        if call.carrier is not None:
            assert (position[id(call.issuer)] <= w) == (position[id(call.carrier)] <= w), call.call_id
    if w + 1 < len(msgs):
        assert provider_id(msgs[w]) != provider_id(msgs[w + 1])
    assert result.tail_tokens == sum(m.tokens for m in msgs[w + 1 :])


@settings(max_examples=examples(70), deadline=None)
@given(split_history(), st.data())
def test_adjust_output_range_has_no_orphan_and_no_split(msgs, data):
    elems = project(msgs)
    c = data.draw(st.integers(0, len(elems)))
    out = adjust(elems, c)
    assert out <= c
    if 0 < out < len(elems):
        kept = elems[out:]
        used = set().union(*(e.use_ids for e in kept))
        issued_anywhere = set().union(*(e.use_ids for e in elems if e.role == "assistant"))
        orphans = {r for e in kept for r in e.result_ids if r not in used}
        assert not (orphans & issued_anywhere)
        assert elems[out - 1].id != elems[out].id
