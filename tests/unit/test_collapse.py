"""core.rebuild.collapse: collapse by ID range, carriers following their calls (behavior.md#collapse-split,
behavior.md#ordering, D8)."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from mimo_sidecar.core import texts
from mimo_sidecar.core.rebuild.collapse import collapse
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.ordering import Ordering
from mimo_sidecar.core.session.shapes import is_carrier
from tests.fuzz import examples
from tests.unit.builders import (
    assistant,
    checkpoint,
    function,
    ids,
    msg,
    seq_ordering,
    text,
    tool,
    tool_message,
    tool_result,
    tool_use,
    user,
)

ASCENDING = Ordering(True, lambda _id: None)  # ID mode, as declared ascending by the host


def boundary(digest_up_to: str | None, covered_up_to: str = "msg_01", id: str = "msg_cp") -> Message:
    return user(id, checkpoint(covered_up_to, digest_up_to), text("rebuild text", synthetic=True))


# -- behavior.md#collapse-examples -----------------------------------------------------------------
def test_example_digested_assistant_is_removed():
    msgs = [assistant("msg_02", text("a")), boundary("msg_02"), assistant("msg_03", text("b"))]
    result = collapse(msgs, ASCENDING)
    assert ids(result.messages) == ["msg_cp", "msg_03"]
    assert result.removed_ids == ("msg_02",) and result.warnings == ()


def test_example_same_millisecond_message_sorting_before_the_boundary():
    msgs = [assistant("msg_02", text("a")), boundary("msg_02")]
    assert ids(collapse(msgs, ASCENDING).messages) == ["msg_cp"]


def test_example_legacy_boundary_and_no_boundary_are_unchanged():
    legacy = [assistant("msg_02", text("a")), boundary(None), assistant("msg_03", text("b"))]
    result = collapse(legacy, ASCENDING)
    assert result.messages is legacy and not result.changed
    empty_digest = [assistant("msg_02", text("a")), boundary("")]
    assert collapse(empty_digest, ASCENDING).messages is empty_digest
    plain = [user("msg_01", text("q")), assistant("msg_02", text("a"))]
    assert collapse(plain, ASCENDING).messages is plain


def test_example_user_messages_always_stay():
    msgs = [
        assistant("msg_02", text("a")),
        boundary("msg_03"),
        user("msg_03", text("next")),
        assistant("msg_04", text("b")),
    ]
    assert ids(collapse(msgs, ASCENDING).messages) == ["msg_cp", "msg_03", "msg_04"]


# -- rules -----------------------------------------------------------------------------------------
def test_nothing_in_range_returns_the_same_list():
    msgs = [user("msg_01", text("q")), boundary("msg_01x"), assistant("msg_05", text("a"))]
    assert collapse(msgs, ASCENDING).messages is msgs


def test_covered_messages_before_the_watermark_stay():
    msgs = [
        assistant("msg_00", text("old")),
        assistant("msg_01", text("w")),
        boundary("msg_02"),
        assistant("msg_02", text("x")),
    ]
    assert ids(collapse(msgs, ASCENDING).messages) == ["msg_00", "msg_01", "msg_cp"]


def test_the_newest_checkpoint_boundary_decides_and_its_first_checkpoint_part():
    old = boundary("msg_09", covered_up_to="msg_00", id="msg_b0")
    newest = user("msg_cp", checkpoint("msg_01", "msg_02"), checkpoint("msg_01", "msg_09"))
    msgs = [old, assistant("msg_02", text("a")), assistant("msg_03", text("b")), newest]
    assert ids(collapse(msgs, ASCENDING).messages) == ["msg_b0", "msg_03", "msg_cp"]


def test_an_assistant_message_with_a_checkpoint_part_is_not_a_boundary():
    msgs = [assistant("msg_02", text("a")), assistant("msg_cp", checkpoint("msg_01", "msg_02"))]
    assert collapse(msgs, ASCENDING).messages is msgs


def test_sequence_mode_compares_seq_not_ids():
    w = user("zz-w", text("q"), seq=1)
    a = assistant("yy-a", text("a"), seq=2)
    b = user("aa-b", checkpoint("zz-w", "yy-a"), seq=4)
    later = assistant("00-later", text("b"), seq=5)
    msgs = [w, b, a, later]
    assert ids(collapse(msgs, seq_ordering(w, a, b, later)).messages) == ["zz-w", "aa-b", "00-later"]


def test_sequence_mode_unknown_endpoint_fails_closed_with_a_warning():
    a = assistant("yy-a", text("a"), seq=2)
    for covered, digested in (("nope", "yy-a"), ("yy-a", "nope")):
        b = user("aa-b", checkpoint(covered, digested), seq=4)
        msgs = [a, b]
        result = collapse(msgs, seq_ordering(a, b))
        assert result.messages is msgs
        assert len(result.warnings) == 1 and "nope" in result.warnings[0]


def test_missing_covered_up_to_fails_closed_in_id_mode_too():
    b = user("msg_cp", {"type": "checkpoint", "digestUpTo": "msg_02"})
    msgs = [assistant("msg_02", text("a")), b]
    result = collapse(msgs, ASCENDING)
    assert result.messages is msgs and len(result.warnings) == 1


def test_inline_tool_messages_collapse_whole():
    msgs = [assistant("msg_02", tool("c", "read", {"path": "a"}, output="x")), boundary("msg_02")]
    assert ids(collapse(msgs, ASCENDING).messages) == ["msg_cp"]


# -- split shapes (D8) -----------------------------------------------------------------------------
def test_pure_anthropic_carrier_follows_its_removed_call():
    msgs = [
        assistant("msg_02", tool_use("X", "read"), finish="tool-calls"),
        user("msg_02c", tool_result("X", "out")),
        assistant("msg_03", text("done")),
        boundary("msg_03"),
    ]
    result = collapse(msgs, ASCENDING)
    assert ids(result.messages) == ["msg_cp"]
    assert result.removed_ids == ("msg_02", "msg_02c", "msg_03")


def test_a_result_that_arrives_after_the_digest_brings_its_step_back():
    # D20: the host named D = the tool-calls response, whose result arrived after the insert. It is
    # neither dropped nor left an orphan: the response is sent again, and the result with it.
    msgs = [
        boundary("msg_02b"),
        assistant("msg_02", text("reading"), providerMessageID="resp_1"),
        assistant("msg_02b", tool_use("X", "read"), finish="tool-calls", providerMessageID="resp_1"),
        user("msg_04", tool_result("X", "out")),
        assistant("msg_05", text("next")),
    ]
    result = collapse(msgs, ASCENDING)
    assert ids(result.messages) == ["msg_cp", "msg_02", "msg_02b", "msg_04", "msg_05"]
    assert result.restated_ids == ("msg_02", "msg_02b") and result.removed_ids == ()
    assert result.warnings == (texts.steps_restated(["X"]),)


def test_an_inline_result_the_digest_listed_as_interrupted_brings_its_step_back():
    # The boundary lists the calls its digest showed as interrupted; once one has its result, its
    # message stays. A digested call that had its result all along is collapsed as before.
    cp = boundary("msg_03", id="msg_cp")
    cp.parts[0]["interruptedCalls"] = ["late"]
    msgs = [
        cp,
        assistant("msg_02", tool("done", "read", output="o")),
        assistant("msg_03", tool("late", "bash", output="finished after the insert"), finish="tool-calls"),
    ]
    result = collapse(msgs, ASCENDING)
    assert ids(result.messages) == ["msg_cp", "msg_03"] and result.removed_ids == ("msg_02",)
    assert result.warnings == (texts.steps_restated(["late"]),)
    still_running = [cp, assistant("msg_03", tool("late", "bash", status="running"))]
    assert ids(collapse(still_running, ASCENDING).messages) == ["msg_cp"]


def test_mixed_carrier_keeps_its_user_content_without_mutating_the_store():
    carrier = user("msg_02c", tool_result("X", "out"), text("also, please check Y"))
    stored_parts = copy.deepcopy(carrier.parts)
    msgs = [assistant("msg_02", tool_use("X", "read")), carrier, boundary("msg_02c")]
    result = collapse(msgs, ASCENDING)
    assert ids(result.messages) == ["msg_02c", "msg_cp"]
    trimmed = result.messages[0]
    assert trimmed is not carrier and trimmed.info is carrier.info and trimmed.seq == carrier.seq
    assert trimmed.parts == [text("also, please check Y")]
    assert carrier.parts == stored_parts  # the stored message is untouched
    assert result.trimmed_ids == ("msg_02c",) and result.removed_ids == ("msg_02",)


def test_carrier_keeps_results_of_kept_calls():
    msgs = [
        assistant("msg_01", tool_use("OLD", "read")),  # covered: kept
        assistant("msg_02", tool_use("X", "read")),
        user("msg_02c", tool_result("OLD", "o"), tool_result("X", "x")),
        boundary("msg_02c"),
    ]
    result = collapse(msgs, ASCENDING)
    assert ids(result.messages) == ["msg_01", "msg_02c", "msg_cp"]
    assert result.messages[1].parts == [tool_result("OLD", "o")]


def test_openai_tool_message_is_dropped_with_its_call():
    msgs = [
        assistant("msg_02", function("call_1", "grep"), function("call_2", "read")),
        tool_message("msg_02t1", "call_1", "a"),
        tool_message("msg_02t2", "call_2", "b"),
        boundary("msg_02t2"),
    ]
    assert ids(collapse(msgs, ASCENDING).messages) == ["msg_cp"]


def test_carrier_of_a_kept_call_in_the_range_stays():
    # Malformed but possible: the issuer is after D, its carrier ord sorts inside the range.
    msgs = [
        user("msg_02c", tool_result("Z", "z")),
        boundary("msg_03"),
        assistant("msg_09", tool_use("Z", "read")),
    ]
    result = collapse(msgs, ASCENDING)
    assert result.messages is msgs


def test_orphan_results_are_left_to_the_validity_step():
    carrier = user("msg_02c", tool_result("GONE", "?"))
    msgs = [assistant("msg_02", text("a")), carrier, boundary("msg_02c")]
    assert ids(collapse(msgs, ASCENDING).messages) == ["msg_02c", "msg_cp"]


# -- properties ------------------------------------------------------------------------------------
@st.composite
def histories(draw):
    msgs: list[Message] = []
    ids_so_far: list[str] = []
    pending: list[str] = []
    for i in range(draw(st.integers(0, 14))):
        mid = f"msg_{i:02d}"
        kind = draw(st.sampled_from(["user", "assistant", "uses", "inline", "carrier", "mixed", "tool"]))
        if kind == "user":
            m = user(mid, text("u"))
        elif kind == "assistant":
            m = assistant(mid, text("a"))
        elif kind == "inline":
            m = assistant(mid, tool(f"i{i}", "read"))
        elif kind == "uses":
            calls = [f"c{i}_{k}" for k in range(draw(st.integers(1, 3)))]
            pending.extend(calls)
            m = assistant(mid, *(tool_use(c, "read") for c in calls), finish="tool-calls")
        elif kind == "tool" and pending:
            m = tool_message(mid, pending.pop(0), "r")
        elif kind in ("carrier", "mixed", "tool"):
            take = draw(st.integers(0, len(pending)))
            results = [tool_result(c, "r") for c in pending[:take]] or [tool_result("ghost", "r")]
            del pending[:take]
            extra = [text("and this")] if kind == "mixed" else []
            m = user(mid, *results, *extra)
        msgs.append(m)
        ids_so_far.append(mid)
    endpoints = st.sampled_from(ids_so_far + ["msg_zz", "msg_"]) if ids_so_far else st.just("msg_")
    covered, digested = draw(endpoints), draw(endpoints)
    position = draw(st.integers(0, len(msgs)))
    msgs.insert(position, user("msg_cp", checkpoint(covered, digested)))
    return msgs


@settings(max_examples=examples(300), deadline=None)
@given(histories())
def test_collapse_keeps_user_messages_and_is_idempotent(msgs):
    first = collapse(msgs, ASCENDING)
    survivors = {id(m) for m in first.messages}
    for m in msgs:
        if m.role == "user" and not is_carrier(m):
            assert id(m) in survivors, m.id
    second = collapse(first.messages, ASCENDING)
    assert second.messages is first.messages
    if not first.changed:
        assert first.messages is msgs


@settings(max_examples=examples(200), deadline=None)
@given(histories())
def test_collapse_in_sequence_mode_matches_id_mode_on_ascending_ids(msgs):
    by_seq = {m.id: i for i, m in enumerate(sorted(msgs, key=lambda m: m.id))}
    seq_msgs = [
        msg(
            m.id,
            m.role,
            m.parts,
            seq=by_seq[m.id],
            **{k: v for k, v in m.info.items() if k not in ("id", "role")},
        )
        for m in msgs
    ]
    ordering = Ordering(False, by_seq.get)
    id_result = collapse(msgs, ASCENDING)
    seq_result = collapse(seq_msgs, ordering)
    if seq_result.warnings and not seq_result.restated_ids:
        assert seq_result.messages is seq_msgs  # an endpoint that is not a message: fails closed
    else:
        assert ids(seq_result.messages) == ids(id_result.messages)
