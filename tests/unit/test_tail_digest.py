"""core.rebuild.tail_digest: fold, argument formatting, the "# Recent activity" digest
(behavior.md#fold, D8, D9)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mimo_sidecar.core import texts
from mimo_sidecar.core.estimate.jstext import len16
from mimo_sidecar.core.rebuild.tail_digest import (
    ELLIPSIS,
    build_digest,
    digest,
    digest_lines,
    fold,
    format_args,
    tool_line,
)
from tests.fuzz import examples
from tests.unit.builders import (
    assistant,
    function,
    msg,
    reasoning,
    subtask,
    text,
    tool,
    tool_message,
    tool_result,
    tool_use,
    user,
)

BANNER = texts.DIGEST_INTERRUPTED_BANNER


# -- fold ------------------------------------------------------------------------------------------
def test_fold_collapses_whitespace_runs_and_trims():
    assert fold("  a \n\n\t b  ", 240) == "a b"


def test_fold_cuts_with_one_ellipsis_to_exactly_max():
    folded = fold("x" * 300, 80)
    assert folded == "x" * 79 + ELLIPSIS and len16(folded) == 80
    assert fold("x" * 80, 80) == "x" * 80


def test_fold_uses_the_javascript_whitespace_set():
    assert fold("a\ufeff\ufeffb", 10) == "a b"  # U+FEFF is JS whitespace
    assert fold("a\x1cb", 10) == "a\x1cb"  # \x1c is not (Python's \s would take it)
    assert fold("a\x85b", 10) == "a\x85b"
    assert fold("\u3000a\u2028b\u00a0", 10) == "a b"


def test_fold_counts_utf16_units():
    assert fold("😀" * 5, 10) == "😀" * 5  # 10 units, fits
    # Cut at 9 units: 4 pairs and a dangling high surrogate, which D9 drops.
    assert fold("😀" * 6, 10) == "😀" * 4 + ELLIPSIS


def test_fold_drops_a_dangling_high_surrogate_d9():
    folded = fold("x" * 238 + "😀" + "tail", 240)
    assert folded == "x" * 238 + ELLIPSIS
    assert len16(folded) == 239 <= 240
    folded.encode("utf-8")  # no lone surrogate


def test_fold_keeps_a_pair_that_ends_at_the_cut():
    folded = fold("x" * 237 + "😀" + "tail", 240)
    assert folded == "x" * 237 + "😀" + ELLIPSIS and len16(folded) == 240


# -- arguments -------------------------------------------------------------------------------------
def test_format_args_strings_are_folded_then_quoted():
    assert format_args({"path": "a.ts", "q": 'say "hi"\\'}) == 'path="a.ts", q="say \\"hi\\"\\\\"'
    long = format_args({"body": '"' * 100})
    # 79 quotes + ellipsis, each quote escaped after folding: longer than 82 units.
    assert long == 'body="' + '\\"' * 79 + ELLIPSIS + '"'


def test_format_args_non_strings_are_serialized_then_folded():
    args = {"n": 5, "f": 1.0, "flag": True, "none": None, "list": [1, "a"], "obj": {"k": None}}
    assert format_args(args) == 'n=5, f=1, flag=true, none=null, list=[1,"a"], obj={"k":null}'
    assert format_args({"big": list(range(100))}) == "big=" + fold(str(list(range(100))).replace(" ", ""), 80)


def test_format_args_unserializable_value():
    assert format_args({"x": object()}) == "x=" + texts.UNSERIALIZABLE_ARG
    cyclic: list = []
    cyclic.append(cyclic)
    assert format_args({"c": cyclic}) == "c=" + texts.UNSERIALIZABLE_ARG


def test_format_args_empty():
    assert format_args(None) == ""
    assert format_args({}) == ""


def test_format_args_control_characters_in_strings():
    assert format_args({"s": "a\x1cb"}) == 's="a\\u001cb"'


def test_format_args_non_object_input_from_unparsed_arguments():
    assert format_args("{broken") == '"{broken"'


def test_tool_line_states():
    assert tool_line("read", {"status": "completed", "input": {}}) == "- read()"
    assert tool_line("read", {"status": "running", "input": {"p": "a"}}) == '- read(p="a") → interrupted'
    assert tool_line("read", {"status": "pending"}) == "- read() → interrupted"
    assert tool_line(
        "bash", {"status": "error", "input": {}, "error": "e\n" * 60}
    ) == "- bash() → error: " + fold("e\n" * 60, 80)


# -- behavior.md#digest-examples -------------------------------------------------------------------
def test_example_read_and_text():
    a = assistant(
        "a1",
        tool("c1", "read", {"path": "src/session/prompt.ts"}, output="HUGE" * 10000),
        text("looks fine"),
        text("hidden", synthetic=True),
    )
    assert digest([a]) == '# Recent activity\n\n- read(path="src/session/prompt.ts")\n- assistant: looks fine'


def test_example_folded_argument_subtask_200_units():
    a = assistant(
        "a1",
        tool("c1", "read", {"path": "src/example.ts", "body": "x" * 300}, output="irrelevant"),
        text("completed the inspection"),
        subtask("rg checkpoint"),
        text("internal", synthetic=True),
    )
    expected = (
        '# Recent activity\n\n- read(path="src/example.ts", body="'
        + "x" * 79
        + '…")\n- assistant: completed the inspection\n- subtask: rg checkpoint'
    )
    assert digest([a]) == expected
    assert len16(expected) == 200


def test_example_error_text_is_included():
    a = assistant("a1", tool("c1", "read", {"path": "safe.ts"}, "error", error="SECRET_ERROR_OUTPUT"))
    assert digest([a]) == '# Recent activity\n\n- read(path="safe.ts") → error: SECRET_ERROR_OUTPUT'


def test_example_long_text_line():
    a = assistant("a1", text("a " * 200 + "\n\n\tend"))
    line = digest_lines([a])[0]
    assert line == "- assistant: " + "a " * 119 + "a…"
    assert len16(line) - len("- assistant: ") == 240


def test_example_first_200_lines_kept_and_pending_beyond_does_not_set_the_banner():
    parts = [tool(f"c{i}", "read", {"path": f"p-{i}"}) for i in range(200)]
    parts.append(tool("late", "read", {"path": "late"}, "pending"))
    result = build_digest([assistant("a1", *parts)])
    lines = result.text.split("\n")
    assert len(lines) == 202
    assert lines[:3] == ["# Recent activity", "", '- read(path="p-0")']
    assert lines[-1] == '- read(path="p-199")'
    assert not result.interrupted and BANNER not in result.text
    assert (result.kept_lines, result.dropped_lines) == (200, 1)


def test_example_empty_and_user_only_tails():
    assert digest([]) == ""
    assert digest([user("u1", text("hello")), user("u2", text("again"))]) == ""
    assert not build_digest([]).has_activity


# -- rules -----------------------------------------------------------------------------------------
def test_banner_when_a_kept_line_is_interrupted():
    a = assistant("a1", text("working"), tool("c1", "bash", {"command": "make"}, "running"))
    assert digest([a]) == "\n".join(
        ["# Recent activity", "", BANNER, "", "- assistant: working", '- bash(command="make") → interrupted']
    )


def test_banner_is_a_substring_test_on_any_kept_line():
    a = assistant("a1", text("the call → interrupted earlier"))
    assert BANNER in digest([a])


def test_error_with_interrupted_metadata_is_an_error_line():
    a = assistant("a1", tool("c1", "bash", {}, "error", error="aborted by user", interrupted=True))
    assert digest([a]) == "# Recent activity\n\n- bash() → error: aborted by user"


def test_subtask_nullish_coalescing():
    a = assistant(
        "a1",
        subtask(""),  # empty command is used as is
        subtask(None, agent="explore"),  # null falls back to the agent
        subtask(agent="general"),  # absent falls back to the agent
    )
    assert digest_lines([a]) == ["- subtask: ", "- subtask: explore", "- subtask: general"]


def test_skipped_parts_and_messages():
    a = assistant(
        "a1",
        text("   \n\t "),  # blank after JS-trim
        text("\ufeff"),  # U+FEFF is JS whitespace: blank
        text("\x1c"),  # not JS whitespace: a line
        text("ignored", ignored=True),
        reasoning("thinking hard"),
        {"type": "file", "mime": "image/png", "url": "data:"},
        {"type": "step-start"},
    )
    boundary = user("b", {"type": "checkpoint", "coveredUpTo": "x"}, text("old rebuild", synthetic=True))
    assert digest_lines([boundary, a, user("u", text("hi"))]) == ["- assistant: \x1c"]


# -- split shapes (D8) -----------------------------------------------------------------------------
def test_split_calls_follow_the_issuing_message_part_order():
    a = assistant(
        "a1",
        text("checking"),
        tool_use("X", "read", {"path": "a"}),
        tool_use("Y", "bash", {"command": "false"}),
        tool_use("Z", "grep", {"pattern": "p"}),
        finish="tool-calls",
    )
    carrier = user("c1", tool_result("Y", "exit 1", is_error=True), tool_result("X", "SECRET_OUTPUT"))
    a2 = assistant("a2", text("next"))
    assert digest_lines([a, carrier, a2]) == [
        "- assistant: checking",
        '- read(path="a")',
        '- bash(command="false") → error: exit 1',
        '- grep(pattern="p") → interrupted',
        "- assistant: next",
    ]
    assert "SECRET_OUTPUT" not in digest([a, carrier, a2])


def test_openai_chat_calls_and_tool_messages():
    a = assistant("a1", function("call_1", "grep", '{"pattern":"x"}'), function("call_2", "read", "oops"))
    t1 = tool_message("t1", "call_1", "SECRET")
    t2 = tool_message("t2", "call_2", "failed", is_error=True)
    assert digest_lines([a, t1, t2]) == ['- grep(pattern="x")', '- read("oops") → error: failed']


def test_calls_can_be_resolved_over_a_wider_list():
    a = assistant("a1", tool_use("X", "read"), finish="tool-calls")
    later = user("c1", tool_result("X", "ok"))
    from mimo_sidecar.core.session.shapes import logical_calls

    assert digest_lines([a]) == ["- read() → interrupted"]
    assert digest_lines([a], logical_calls([a, later])) == ["- read()"]


def test_tool_role_messages_produce_nothing():
    assert digest_lines([msg("t", "tool", [text("visible?")], tool_call_id="q")]) == []


# -- properties ------------------------------------------------------------------------------------
OUTPUT_MARK = "§OUT§"
SAFE_TEXT = st.text(st.characters(blacklist_characters="§", blacklist_categories=("Cs",)), max_size=400)
KEYS = st.text(st.characters(whitelist_categories=("Ll", "Nd")), min_size=1, max_size=8)
VALUES = st.one_of(
    SAFE_TEXT,
    st.integers(),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=40),
)
INPUTS = st.dictionaries(KEYS, VALUES, max_size=4)


@st.composite
def tails(draw):
    messages = []
    n_calls = 0
    for i in range(draw(st.integers(0, 8))):
        role = draw(st.sampled_from(["user", "assistant", "assistant", "tool"]))
        parts = []
        pending_split = []
        for _ in range(draw(st.integers(0, 40))):
            kind = draw(st.sampled_from(["text", "synthetic", "inline", "split", "subtask", "reasoning"]))
            n_calls += 1
            if kind == "text":
                parts.append(text(draw(SAFE_TEXT)))
            elif kind == "synthetic":
                parts.append(text(OUTPUT_MARK + "synthetic", synthetic=True))
            elif kind == "reasoning":
                parts.append(reasoning(OUTPUT_MARK))
            elif kind == "subtask":
                parts.append(subtask(draw(st.one_of(st.none(), SAFE_TEXT))))
            elif kind == "inline":
                status = draw(st.sampled_from(["completed", "error", "pending", "running"]))
                parts.append(tool(f"i{n_calls}", "t", draw(INPUTS), status, output=OUTPUT_MARK + "inline"))
            else:
                parts.append(tool_use(f"s{n_calls}", "t", draw(INPUTS)))
                pending_split.append(f"s{n_calls}")
        messages.append(msg(f"m{i}", role, parts))
        if pending_split:
            messages.append(user(f"c{i}", *(tool_result(c, OUTPUT_MARK + "split") for c in pending_split)))
    return messages


@settings(max_examples=examples(60), deadline=None)
@given(tails())
def test_digest_is_bounded_and_never_shows_outputs(tail):
    result = build_digest(tail)
    if not result.text:
        return
    lines = result.text.split("\n")
    assert len(lines) <= 202 + 2
    assert OUTPUT_MARK not in result.text
    assert lines[0] == "# Recent activity" and lines[1] == ""
    assert result.interrupted == (lines[2] == BANNER)
    result.text.encode("utf-8")  # D9: no lone surrogate
    for line in lines:
        if line.startswith(texts.DIGEST_ASSISTANT_PREFIX):
            assert len16(line) <= len(texts.DIGEST_ASSISTANT_PREFIX) + 240
