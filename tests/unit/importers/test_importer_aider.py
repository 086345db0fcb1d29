"""Aider `.aider.chat.history.md`: sessions, user turns, Aider's output, edits and command runs, on
small hand-written histories (docs/importers.md, "Aider")."""

from __future__ import annotations

from pathlib import Path

import pytest

from mimo_sidecar.core import engine, texts
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.rebuild.tail_digest import digest
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.importers import TranscriptError, detect_format, import_transcript, newest_user_ask
from mimo_sidecar.importers.session_builder import DERIVED_TIME_STEP_MS
from tests.unit.builders import checkpoint_memory
from tests.unit.importers.transcripts import T0, AiderHistory, open_in_core

EDIT_REPLY = """I'll rename it.

<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>

The function is called twice.

</thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>

app/main.py
```python
<<<<<<< SEARCH
def old():
=======
def new():
>>>>>>> REPLACE
```

Done."""


def _history() -> AiderHistory:
    return (
        AiderHistory()
        .start("2026-05-01 09:00:00")
        .user("First session ask")
        .reply("First session answer")
        .tool("Tokens: 900 sent, 120 received.")
        .start("2026-05-02 10:00:00", model="anthropic/claude-sonnet-4")
        .tool("Add .aider* to .gitignore (recommended)? (Y)es/(N)o [Yes]: y")
        .user("Rename old() to new()\n\nin app/main.py")
        .reply(EDIT_REPLY)
        .tool("Tokens: 1.9k sent, 1.2k cache hit, 638 received. Cost: $0.01 message, $0.02 session.")
        .tool("Applied edit to app/main.py", "Commit 1a2b3c4 refactor: rename old to new")
    )


def _by_role(params: dict) -> list[tuple[str, list[str]]]:
    return [(m["info"]["role"], [p["type"] for p in m["parts"]]) for m in params["messages"]]


def test_the_newest_session_by_default_and_another_by_its_id_or_time(tmp_path: Path) -> None:
    path = _history().write(tmp_path / ".aider.chat.history.md")
    assert detect_format(path) == "aider"
    newest = import_transcript(path)
    open_in_core(newest.params)
    assert newest.params["sessionId"] == "aider-2026-05-02T10-00-00"
    line = path.read_text().splitlines().index("#### Rename old() to new()  ") + 1
    ask = (f"{newest.params['sessionId']}.L{line}", "Rename old() to new()\n\nin app/main.py")
    assert newest_user_ask(newest.params) == ask
    assert newest.report.not_imported["line of another session in this file (--session picks it)"] == 5
    assert newest.report.consistent
    for wanted in ("aider-2026-05-01T09-00-00", "2026-05-01 09:00:00"):
        older = import_transcript(path, session=wanted)
        assert older.params["sessionId"] == "aider-2026-05-01T09-00-00"
        assert [m["parts"][0]["text"] for m in older.params["messages"]] == [
            "First session ask",
            "First session answer",
        ]
    with pytest.raises(TranscriptError, match="no session 'x' in this file"):
        import_transcript(path, session="x")


def test_an_applied_search_replace_block_is_an_edit_call_and_the_tokens_its_usage(tmp_path: Path) -> None:
    params = import_transcript(_history().write(tmp_path / "h.md")).params
    user, reply = params["messages"]
    assert reply["info"]["modelID"] == "claude-sonnet-4" and reply["info"]["providerID"] == "anthropic"
    assert reply["info"]["finish"] == "stop"  # Aider hands the turn back once it applied the edit
    assert reply["info"]["tokens"] == {
        "input": 700, "output": 638, "reasoning": 0, "cache": {"read": 1200, "write": 0}, "total": 2538
    }  # fmt: skip
    assert [p["type"] for p in reply["parts"]] == ["text", "reasoning", "tool", "text"]
    assert reply["parts"][1]["text"] == "The function is called twice."
    edit = reply["parts"][2]
    assert edit["callID"] == f"{reply['info']['id']}.edit0" and edit["tool"] == "edit"
    assert edit["state"] == {
        "status": "completed",
        "input": {"filePath": "app/main.py", "oldString": "def old():", "newString": "def new():"},
        "output": "Applied edit to app/main.py", "title": "app/main.py", "metadata": {},
    }  # fmt: skip
    assert reply["parts"][3]["text"] == "Done."
    assert "```" not in "".join(p.get("text", "") for p in reply["parts"])  # the block is the call now


def test_the_activity_digest_lists_edits_and_command_runs(tmp_path: Path) -> None:
    history = (
        _history()
        .reply("Now run the tests:\n\n```bash\npytest -q\n```")
        .tool("pytest -q", "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y", "Running pytest -q")
        .tool(
            "Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y",
            "Added 12 lines of output to the chat.",
        )
        .user("/run make lint")
        .tool("Add 0.2k tokens of command output to the chat? (Y)es/(N)o [Yes]: n")
    )
    params = import_transcript(history.write(tmp_path / "h.md")).params
    session = open_in_core(params)
    lines = digest([m for m in session.messages() if isinstance(m, Message)])
    assert '- edit(filePath="app/main.py", oldString="def old():", newString="def new():")' in lines
    assert '- bash(command="pytest -q")' in lines and '- bash(command="make lint")' in lines
    runs = [p for m in params["messages"] for p in m["parts"] if p.get("tool") == "bash"]
    assert [r["state"]["output"] for r in runs] == [
        texts.aider_command_output(12, True),
        texts.aider_command_output(None, False),
    ]
    ran = next(m for m in params["messages"] if m["info"]["id"].endswith(".run"))
    assert ran["info"]["role"] == "assistant" and ran["parts"][0]["callID"] == ran["info"]["id"] + "0"


def test_a_failed_edit_is_an_error_and_an_unconfirmed_block_stays_text(tmp_path: Path) -> None:
    history = (
        AiderHistory()
        .start()
        .user("Change a and b")
        .reply(
            EDIT_REPLY.replace("app/main.py", "a.py")
            + "\n\nb.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```"
        )
        .tool(
            "# 1 SEARCH/REPLACE block failed to match!",
            "",
            "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in b.py",
            "The other 1 SEARCH/REPLACE block were applied successfully.",
        )
        .user("/ask what would you change in c.py?")
        .reply("c.py\n```\n<<<<<<< SEARCH\np\n=======\nq\n>>>>>>> REPLACE\n```")
    )
    params = import_transcript(history.write(tmp_path / "h.md")).params
    calls = {
        p["state"]["input"]["filePath"]: p["state"]
        for m in params["messages"]
        for p in m["parts"]
        if p["type"] == "tool"
    }
    assert calls["a.py"]["status"] == "completed"
    assert (
        calls["b.py"]["status"] == "error"
        and "failed to exactly match lines in b.py" in calls["b.py"]["error"]
    )
    assert "c.py" not in calls  # a proposal in ask mode: nothing says it was applied
    ask, proposal = params["messages"][-2:]
    assert ask["info"]["mode"] == "ask" and ask["parts"][0]["text"] == "what would you change in c.py?"
    assert "<<<<<<< SEARCH" in proposal["parts"][0]["text"]


def test_a_whole_file_listing_is_a_write_only_when_aider_applied_it(tmp_path: Path) -> None:
    history = (
        AiderHistory()
        .start()
        .user("Rewrite a.py, and show me a sample")
        .reply("a.py\n```python\nprint('a')\n```\n\nsample.py\n```python\nprint('s')\n```")
        .tool("Applied edit to a.py")
    )
    params = import_transcript(history.write(tmp_path / "h.md")).params
    reply = params["messages"][-1]
    assert [p["type"] for p in reply["parts"]] == ["tool", "text"]
    assert reply["parts"][0]["tool"] == "write"
    assert reply["parts"][0]["state"]["input"] == {"filePath": "a.py", "content": "print('a')"}
    assert reply["parts"][1]["text"].startswith("sample.py\n```python")


def test_prompts_commands_lint_and_clear(tmp_path: Path) -> None:
    history = (
        AiderHistory()
        .start()
        .user("Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: skip")
        .user("/add a.py")
        .user("Fix a.py")
        .reply("a.py\n```\nfixed\n```")
        .tool("Applied edit to a.py", "", "# Fix any errors below, if possible.", "", "a.py:1: E999", "")
        .tool("Attempt to fix lint errors? (Y)es/(N)o [Yes]: y")
        .reply("a.py\n```\nfixed again\n```")
        .tool("Applied edit to a.py")
        .user("/clear")
        .user("Start over")
    )
    result = import_transcript(history.write(tmp_path / "h.md"))
    params = result.params
    assert _by_role(params) == [
        ("user", ["text"]), ("assistant", ["tool"]), ("user", ["text"]), ("assistant", ["tool"]),
        ("user", ["compaction", "text"]), ("user", ["text"]),
    ]  # fmt: skip
    lint = params["messages"][2]["parts"][0]
    assert (
        lint["synthetic"] is True and lint["text"] == "# Fix any errors below, if possible.\n\na.py:1: E999"
    )
    assert params["messages"][4]["parts"][1]["text"] == texts.AIDER_CHAT_CLEARED
    assert result.report.not_imported["Aider command (not sent to the model)"] == 1
    assert result.report.not_imported["answer Aider gave a prompt for the user (not sent to the model)"] == 1
    assert newest_user_ask(params)[1] == "Start over"  # type: ignore[index]
    assert result.report.consistent
    session = open_in_core(params)
    assert [m.id for m in session.view()][0] == params["messages"][4]["info"]["id"]  # /clear starts the view


def test_a_history_whose_trailing_spaces_were_stripped_is_read_by_its_prefixes(tmp_path: Path) -> None:
    text = _history().text.replace("  \n", "\n")
    path = tmp_path / "h.md"
    path.write_text(text)
    params = import_transcript(path).params
    assert _by_role(params) == [("user", ["text"]), ("assistant", ["text", "reasoning", "tool", "text"])]


def test_bad_aider_files_name_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "h.md"
    path.write_bytes(b"# aider chat started at 2026-05-02 13:55:39\n\n#### hi \xff  \n")
    with pytest.raises(TranscriptError, match="invalid UTF-8") as err:
        import_transcript(path)
    assert err.value.line == 3
    path.write_text("# notes\n\nnothing here\n")
    with pytest.raises(TranscriptError, match="no '# aider chat started at' line"):
        import_transcript(path, "aider")
    path.write_text("# aider chat started at 2026-05-02 13:55:39\n\n> Aider v0.86.2  \n")
    with pytest.raises(TranscriptError, match="no session in this file has an exchange: none of its 1 "):
        import_transcript(path)
    with pytest.raises(TranscriptError, match="no aider message in this file"):
        import_transcript(path, session="1")  # chosen, it still has nothing to import


def test_a_rebuild_keeps_the_turns_after_its_watermark_visible(tmp_path: Path) -> None:
    """Aider writes one time per session: each message gets its own, or every message after the
    watermark would share its millisecond and list before the boundary, out of the view."""
    long_answer = "A long explanation of the module. " * 400  # so that the rebuild gains
    history = AiderHistory().start().user("Explain").reply(long_answer).user("And add a test")
    history = history.reply("Added test_new.").user("Run them")
    params = import_transcript(history.write(tmp_path / "h.md")).params
    times = [m["info"]["time"]["created"] for m in params["messages"]]
    assert times == sorted(set(times)) and times[1] - times[0] == DERIVED_TIME_STEP_MS
    session = open_in_core(params)
    watermark = params["messages"][1]["info"]["id"]  # the first reply
    session.watermark = watermark
    memory = checkpoint_memory(tmp_path, session.session_id, "Topic: rename\n\n## Intent\n\nRename.\n")
    inserted = engine.insert(
        session, memory, RebuildConfig(), watermark=watermark, reason="auto", now_ms=T0, minter=IdMinter()
    )
    assert inserted.outcome == "rebuilt", inserted.detail
    view = [m.id for m in session.view()]
    assert view[0] == inserted.message["info"]["id"]
    assert params["messages"][-1]["info"]["id"] in view  # the newest ask is live after the boundary
