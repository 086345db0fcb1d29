"""D11 and D13: Recent user input over logical messages, and the newest ask never missing
(behavior.md#section-recent-user).

One conversation is built in four host shapes: inline (MiMo/OpenCode), Anthropic as Claude Code
stores it (one provider response as several entries sharing `providerMessageID`, each result in its
own carrier, between the entries), OpenAI Chat (tool-role messages) and OpenAI Responses
(`function_call_output` carriers). They are the same conversation, so Recent user input must be
the same; with a window of 200 *stored* messages the split shapes kept far fewer asks.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mimo_sidecar.core import engine, texts
from mimo_sidecar.core.config import PushCaps, RebuildConfig
from mimo_sidecar.core.estimate.jstext import est
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.rebuild.fidelity import fidelity_report
from mimo_sidecar.core.rebuild.recent_user import (
    MIN_TRUNCATION_CAP,
    fit_user_entry,
    is_user_ask,
    logical_window,
    newest_user_ask,
    recent_user_entries,
    truncate_user,
)
from mimo_sidecar.core.rebuild.render import RenderInputs, render
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.session import Session
from tests.fuzz import examples
from tests.unit.builders import (
    assistant,
    function,
    function_call,
    function_call_output,
    msg,
    reasoning,
    session_of,
    text,
    tool,
    tool_message,
    tool_result,
    tool_use,
    user,
)

T0 = 1_700_000_000_000
SID = "ses_window"
ASKS = 60  # user asks, each followed by a tool loop of three steps and a final answer
STEPS = 3

Step = Callable[[int, int, int], list[Message]]  # (ask, step, time) -> the step's stored messages


def _calls(i: int, k: int) -> tuple[str, str]:
    return f"c{i}_{k}_a", f"c{i}_{k}_b"


def _inline_step(i: int, k: int, t: int) -> list[Message]:
    a, b = _calls(i, k)
    return [
        assistant(
            f"s{i}_{k}",
            reasoning("thinking"),
            tool(a, "read", {"path": f"f{i}"}, output="x" * 40),
            tool(b, "grep", {"q": f"q{k}"}, output="y" * 40),
            finish="tool-calls",
            created=t,
        )
    ]


def _claude_code_step(i: int, k: int, t: int) -> list[Message]:
    """One response stored as three entries; a parallel call's result lands between two of them."""
    a, b = _calls(i, k)
    pid = {"providerMessageID": f"resp{i}_{k}"}
    return [
        assistant(f"s{i}_{k}_0", reasoning("thinking"), finish="tool-calls", created=t, **pid),
        assistant(
            f"s{i}_{k}_1", tool_use(a, "read", {"path": f"f{i}"}), finish="tool-calls", created=t + 1, **pid
        ),
        user(f"r{i}_{k}_a", tool_result(a, "x" * 40), created=t + 2),
        assistant(
            f"s{i}_{k}_2", tool_use(b, "grep", {"q": f"q{k}"}), finish="tool-calls", created=t + 3, **pid
        ),
        user(f"r{i}_{k}_b", tool_result(b, "y" * 40), created=t + 4),
    ]


def _openai_chat_step(i: int, k: int, t: int) -> list[Message]:
    a, b = _calls(i, k)
    return [
        assistant(f"s{i}_{k}", function(a, "read"), function(b, "grep"), finish="tool-calls", created=t),
        tool_message(f"r{i}_{k}_a", a, "x" * 40, created=t + 1),
        tool_message(f"r{i}_{k}_b", b, "y" * 40, created=t + 2),
    ]


def _openai_responses_step(i: int, k: int, t: int) -> list[Message]:
    a, b = _calls(i, k)
    return [
        assistant(
            f"s{i}_{k}", function_call(a, "read"), function_call(b, "grep"), finish="tool-calls", created=t
        ),
        msg(
            f"r{i}_{k}",
            "user",
            [function_call_output(a, "x" * 40), function_call_output(b, "y" * 40)],
            created=t + 1,
        ),
    ]


SHAPES: dict[str, Step] = {
    "inline": _inline_step,
    "claude-code": _claude_code_step,
    "openai-chat": _openai_chat_step,
    "openai-responses": _openai_responses_step,
}


def conversation(step: Step, asks: int = ASKS, steps: int = STEPS) -> list[Message]:
    messages: list[Message] = []
    for i in range(asks):
        t = T0 + 1000 * i
        messages.append(user(f"u{i:03}", text(f"ask number {i}: please handle item {i}"), created=t))
        for k in range(steps):
            messages += step(i, k, t + 10 * (k + 1))
        messages.append(assistant(f"z{i:03}", text(f"item {i} handled"), created=t + 900))
    return messages


def _open(messages: list[Message]) -> Session:
    return session_of(messages, SID)


def _recent_user_section(text_: str) -> str:
    start = text_.index("# " + texts.HEADING_RECENT_USER)
    return text_[start : text_.index("\n\n", start)]


def _rendered_section(session: Session, tmp_path) -> str:
    inputs = engine.render_inputs(
        session,
        MemoryRoot(str(tmp_path)),
        RebuildConfig(),
        tail=None,
        last_info=None,
        agent_id="main",
        now_ms=T0,
        memory_keys=[],
    )
    return _recent_user_section(render(inputs).text)


def test_split_shapes_keep_the_same_user_asks_as_their_inline_twin(tmp_path) -> None:
    sections = {name: _rendered_section(_open(conversation(step)), tmp_path) for name, step in SHAPES.items()}
    inline = sections["inline"]
    # 5 logical messages per ask: the newest 200 hold the last 40 asks, and the section shows them.
    assert inline.count("ask number") == 40 and "ask number 20:" in inline and "ask number 19:" not in inline
    for name, section in sections.items():
        assert section == inline, name


@pytest.mark.parametrize("shape", ["claude-code", "openai-chat", "openai-responses"])
def test_the_split_twin_is_longer_than_the_window_it_would_have_had(shape: str) -> None:
    """What D11 changes: 200 *stored* messages of a split shape hold far fewer asks."""
    stored = conversation(SHAPES[shape])
    newest_200 = stored[-200:]
    assert sum(is_user_ask(m) for m in newest_200) < 40
    window = logical_window(reversed(stored))
    assert sum(is_user_ask(m) for m in window) == 40
    assert window == logical_window(reversed(window))  # the window of a window is itself


def test_inline_window_is_misos_newest_200() -> None:
    stored = conversation(_inline_step)
    assert logical_window(reversed(stored)) == stored[-200:]


def test_entries_of_one_response_count_once_even_when_split_by_a_carrier() -> None:
    entries = _claude_code_step(0, 0, T0)
    assert len(logical_window(reversed(entries), limit=1)) == len(entries)
    two = [user("u", text("go"), created=T0 - 1), *entries]
    assert logical_window(reversed(two), limit=1) == entries  # the ask is the second logical message
    assert logical_window(reversed(two), limit=2) == two


# -- D13 -------------------------------------------------------------------------------------------
def _long_loop_after_ask(steps: int = 250) -> list[Message]:
    """One ask, then an autonomous loop far longer than the window."""
    messages = [user("u000", text("port the whole parser to the new AST"), created=T0)]
    for k in range(steps):
        messages += _claude_code_step(0, k, T0 + 10 * (k + 1))
    return messages


def _inputs(messages: list[Message], tmp_path, caps: PushCaps | None = None) -> RenderInputs:
    window = logical_window(reversed(messages))
    return RenderInputs(
        session_id=SID,
        project_id=None,
        memory=MemoryRoot(str(tmp_path)),
        caps=caps or PushCaps(),
        tasks=[{"id": "T1", "status": "open", "summary": "parser", "created_at": 0}],
        recent_candidates=window,
        newest_user_ask=newest_user_ask(reversed(messages)),
        memory_keys=[],
    )


def test_newest_ask_outside_the_window_is_appended(tmp_path) -> None:
    messages = _long_loop_after_ask()
    without = recent_user_entries(logical_window(reversed(messages)), PushCaps())
    assert without.entries == []  # MiMo's rule alone: the ask fell out of the window
    inputs = _inputs(messages, tmp_path)
    result = render(inputs)
    assert "# Recent user input (verbatim)\nport the whole parser to the new AST\n" in result.text
    section = next(s for s in result.sections if s.key == "recent_user")
    assert section.present and not section.truncated
    assert section.reason == texts.user_ask_appended(texts.ASK_OUTSIDE_WINDOW)
    ask = fidelity_report(inputs, result, None).newest_user_ask
    assert (ask.status, ask.message_id, ask.appended, ask.reason) == (
        "verbatim",
        "u000",
        True,
        texts.ASK_OUTSIDE_WINDOW,
    )


def test_newest_ask_over_the_section_cap_is_truncated_to_fit(tmp_path) -> None:
    long_ask = "rewrite the parser " * 400  # about 1 900 tokens
    messages = [user("u0", text("older ask"), created=T0), user("u1", text(long_ask), created=T0 + 1)]
    caps = PushCaps(recent_user=300, recent_user_per_msg=2000)
    inputs = _inputs(messages, tmp_path, caps)
    result = render(inputs)
    body = _recent_user_section(result.text)
    assert "tokens elided from message u1" in body and "older ask" not in body
    assert est(body.split("\n", 1)[1]) <= 300
    ask = fidelity_report(inputs, result, None).newest_user_ask
    assert (ask.status, ask.appended, ask.reason) == ("truncated", True, texts.ASK_OVER_SECTION_CAP)


def test_newest_ask_that_cannot_fit_is_reported_missing(tmp_path) -> None:
    messages = [user("u1", text("rewrite the parser " * 400), created=T0)]
    inputs = _inputs(messages, tmp_path, PushCaps(recent_user=20))
    result = render(inputs)
    assert "# Recent user input" not in result.text
    ask = fidelity_report(inputs, result, None).newest_user_ask
    assert (ask.status, ask.reason) == ("missing", texts.ASK_SECTION_CAP_TOO_SMALL)


def test_disabled_section_reports_the_ask_missing(tmp_path) -> None:
    inputs = _inputs([user("u1", text("hi"), created=T0)], tmp_path, PushCaps(recent_user=0))
    ask = fidelity_report(inputs, render(inputs), None).newest_user_ask
    assert (ask.status, ask.reason) == ("missing", texts.ASK_DISABLED)


def test_the_total_cap_never_sheds_the_newest_ask(tmp_path) -> None:
    """D7 sheds Recent user entries oldest first; D13 keeps the newest ask, over the cap if need be."""
    messages = [user(f"u{i}", text(f"a rather long ask {i} " * 50), created=T0 + i) for i in range(3)]
    inputs = _inputs(messages, tmp_path, PushCaps(total=60))
    result = render(inputs)
    assert result.shed_units[-2:] == ["recent_user:u0", "recent_user:u1"]
    assert "a rather long ask 2" in result.text and result.over_cap
    ask = fidelity_report(inputs, result, None).newest_user_ask
    assert (ask.status, ask.message_id) == ("verbatim", "u2")


def test_no_ask_at_all(tmp_path) -> None:
    inputs = _inputs([assistant("a1", text("hello"), created=T0)], tmp_path)
    assert fidelity_report(inputs, render(inputs), None).newest_user_ask.status == "none"


def test_synthetic_text_is_not_an_ask() -> None:
    injected = user("u2", text("<system-reminder>be brief</system-reminder>", synthetic=True))
    assert (
        not is_user_ask(injected)
        and newest_user_ask(reversed([user("u1", text("real")), injected])).id == "u1"
    )


def test_the_early_bail_counts_the_appended_ask(tmp_path) -> None:
    """Without D13 this render bails (nothing but an ask beyond the window); with it, it does not."""
    messages = _long_loop_after_ask()
    inputs = _inputs(messages, tmp_path)
    bare = RenderInputs(**{**inputs.__dict__, "tasks": []})
    assert render(bare).text and not render(RenderInputs(**{**bare.__dict__, "newest_user_ask": None})).text


@settings(max_examples=examples(150), deadline=None)
@given(
    raw=st.text(min_size=1, max_size=3000).filter(lambda s: s.strip()),
    per_msg=st.integers(1, 800),
    budget=st.integers(0, 900),
)
@example(raw="000000", per_msg=1, budget=2)  # the raw text fits the budget, not the per-message cap
def test_fit_user_entry_stays_within_the_budget(raw: str, per_msg: int, budget: int) -> None:
    entry = fit_user_entry(raw, per_msg, budget, "msg_1")
    if entry is not None:
        assert est(entry) <= budget
        assert entry == raw or texts.user_elision_marker(0, "msg_1").split(" ")[0] in entry
        assert entry != raw or est(raw) <= per_msg  # the per-message cap binds even when the budget is larger
    else:
        # None only when neither the entry under the per-message cap nor the smallest truncation fits:
        # a text within the budget but over the cap is still shortened, never sent whole
        assert est(truncate_user(raw, per_msg, "msg_1")) > budget
        smallest = min(per_msg, budget)
        assert smallest < MIN_TRUNCATION_CAP or est(truncate_user(raw, MIN_TRUNCATION_CAP, "msg_1")) > budget
