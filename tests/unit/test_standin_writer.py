"""mimo_sidecar.testing.standin_writer: the deterministic stand-in checkpoint writer."""

from __future__ import annotations

from mimo_sidecar.core import texts
from mimo_sidecar.core.checkpoint.template import CHECKPOINT_TEMPLATE, SECTIONS, checkpoint_topic, is_template
from mimo_sidecar.core.estimate.jstext import est
from mimo_sidecar.core.memory.budgeted_read import section_aware_read
from mimo_sidecar.core.request.assembly import build_messages
from mimo_sidecar.core.session.ordering import id_ordering
from mimo_sidecar.testing.standin_writer import standin_checkpoint
from tests.unit.builders import assistant, text, tool, user

ROOT = "/home/dev/tally"


def conversation() -> tuple[list, list[str]]:
    """A short inline session, converted to the writer's AI SDK messages as the sidecar does."""
    stored = [
        user("msg_01", text("Kontor Bank imports show amounts 100x too small.\nCan you find out why?")),
        assistant(
            "msg_02",
            text("Let me look at the amount parser."),
            tool("c1", "read", {"filePath": f"{ROOT}/src/money.ts"}, output="<file>...</file>"),
            tool(
                "c2",
                "bash",
                {"command": "bun test tests/money.test.ts"},
                output="✗ parseAmount > comma decimals\n\n 3 pass\n 1 fail\n",
            ),
            finish="tool-calls",
        ),
        assistant(
            "msg_03",
            text(
                "It turns out parseAmount assumes a dot decimal separator. "
                "I'll pass the profile's separator instead of guessing from the string."
            ),
            tool("c3", "edit", {"filePath": f"{ROOT}/src/money.ts", "oldString": "a", "newString": "b"}),
            tool(
                "c4",
                "read",
                {"filePath": f"{ROOT}/src/nope.ts"},
                "error",
                error="File not found: nope.ts",
            ),
            finish="tool-calls",
        ),
        user("msg_04", text("Good. Don't add any dependency for this, and always keep amounts in cents.")),
        assistant(
            "msg_05",
            tool("c5", "write", {"filePath": f"{ROOT}/tests/fixtures/kontor.csv", "content": "x"}),
            tool(
                "c6",
                "actor",
                {"action": "spawn", "description": "Benchmark the 40k-row import", "background": True},
                output="Actor bench-1 started in the background.",
            ),
            finish="tool-calls",
        ),
        assistant("msg_06", text("The fix is in. Should I also change the Ridgeway profile?")),
    ]
    built = build_messages(stored, collapse_tail=False, ordering=id_ordering(), reminder=None)
    return built.messages, built.sources


def body(checkpoint: str, number: int) -> str:
    """The lines under section `number`'s italic line, up to the next heading."""
    section = checkpoint.split(SECTIONS[number - 1].italic + "\n", 1)[1]
    return section.split("\n## ", 1)[0]


def test_fills_every_section_from_the_conversation() -> None:
    messages, _ = conversation()
    got = standin_checkpoint(messages)
    assert checkpoint_topic(got) == "Kontor Bank imports show amounts 100x too small."
    assert "Latest ask: \u201cGood. Don't add any dependency" in body(got, 1)
    assert "The session began with: \u201cKontor Bank imports" in body(got, 1)
    assert "instead of guessing" in body(got, 2)
    assert "Last said: \u201cThe fix is in." in body(got, 3)
    assert "Don't add any dependency for this, and always keep amounts in cents." in body(got, 4)
    assert "Should I also change the Ridgeway profile?" in body(got, 5)
    errors = body(got, 6)
    assert "File not found: nope.ts" in errors and "✗ parseAmount > comma decimals" in errors
    assert "turns out parseAmount assumes a dot" in body(got, 7)
    files = body(got, 8)
    # Shown relative to the directory all changed files share.
    assert "- `src/money.ts`: edited 1\u00d7" in files
    assert "- `tests/fixtures/kontor.csv`: written 1\u00d7" in files
    assert "read" not in files  # reads touch nothing
    assert "Benchmark the 40k-row import" in body(got, 9) and "bench-1" in body(got, 9)
    assert "- 2 user message(s), 6 tool call(s), 2 of them failed or reported errors." in body(got, 10)


def test_output_reads_back_as_a_checkpoint() -> None:
    messages, _ = conversation()
    got = standin_checkpoint(messages)
    assert not is_template(got)
    assert [line for line in got.split("\n") if line.startswith("## ")] == [s.heading for s in SECTIONS]
    assert section_aware_read(got, 11000, "/p").text == got  # small enough to come back whole


def test_deterministic() -> None:
    messages, sources = conversation()
    current = standin_checkpoint(messages[:3])
    a = standin_checkpoint(messages, current, sources=sources, since="msg_02")
    b = standin_checkpoint(messages, current, sources=sources, since="msg_02")
    assert a == b


def test_updates_the_current_file_instead_of_starting_over() -> None:
    messages, sources = conversation()
    current = CHECKPOINT_TEMPLATE.replace("(not written yet)", "Kontor import: amounts and dates").replace(
        SECTIONS[1].italic + "\n", SECTIONS[1].italic + "\n- Amounts stay integer cents (user).\n"
    )
    current = current.replace(
        SECTIONS[7].italic + "\n", SECTIONS[7].italic + "\n- `src/money.ts`: parseAmount\n"
    )
    got = standin_checkpoint(messages, current, sources=sources, since="msg_03")
    assert checkpoint_topic(got) == "Kontor import: amounts and dates"  # the topic is kept
    assert body(got, 2).startswith("- Amounts stay integer cents (user).\n")  # old bullets first
    assert "money.ts`: edited" not in body(got, 8)  # already listed by the current file
    assert "kontor.csv`: written" in body(got, 8)
    # Only what came after `since` is added to the list sections and to "Since the last checkpoint".
    assert "File not found" not in body(got, 6)
    assert "- 1 user message(s), 2 tool call(s)" in body(got, 10)


def test_the_template_counts_as_no_current_file() -> None:
    messages, _ = conversation()
    assert standin_checkpoint(messages, CHECKPOINT_TEMPLATE) == standin_checkpoint(messages)


def test_boundaries_and_delegations_are_not_user_asks() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Fix the CSV reader."}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": texts.CHECKPOINT_LABEL},
                {"type": "text", "text": "## Checkpoint\n\nOld rebuild text"},
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": texts.subtask_request_text("explore", "x")}]},
    ]
    got = standin_checkpoint(messages)
    assert "Latest ask: \u201cFix the CSV reader.\u201d" in body(got, 1)
    assert "Old rebuild text" not in got and "Delegated" not in got


def test_over_budget_drops_the_oldest_list_bullets_and_keeps_index_lines() -> None:
    messages, _ = conversation()
    index_line = "- See checkpoint-notes.md (12 items) \u2014 CSV quirks"
    filler = "\n".join(f"- finding {i} " + "y" * 200 for i in range(40))
    current = CHECKPOINT_TEMPLATE.replace("(not written yet)", "t").replace(
        SECTIONS[6].italic + "\n", f"{SECTIONS[6].italic}\n{index_line}\n{filler}\n"
    )
    got = standin_checkpoint(messages, current, budget=1500)
    assert est(got) <= 1500
    assert index_line in got
    assert "- finding 39 " in got and "- finding 0 " not in got  # the newest survive
    assert "Latest ask:" in body(got, 1)


def test_empty_conversation_still_gives_a_valid_file() -> None:
    got = standin_checkpoint([])
    assert checkpoint_topic(got) == "(no user request yet)"
    assert [line for line in got.split("\n") if line.startswith("## ")] == [s.heading for s in SECTIONS]
