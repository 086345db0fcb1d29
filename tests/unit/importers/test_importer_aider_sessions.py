"""Aider histories of many sessions: the newest session with an exchange by default (the report's
note says which), the session list, one chosen by its number, and the errors that name the field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mimo_sidecar.importers import TranscriptError, import_transcript, list_sessions, newest_user_ask
from tests.content_truth import aider_facts
from tests.real_sessions import absent_reason, real_sessions_root
from tests.unit.importers.transcripts import AiderHistory, open_in_core

SESSIONS, ANSWERED = 54, 51  # the shape of a real history: its 3 newest sessions only ran commands
TIMEOUT_S = 60


def started(n: int) -> str:
    return f"2026-04-{1 + n // 24:02d} {n % 24:02d}:15:00"


def ask(n: int) -> str:
    return f"Session {n}: make the parser keep blank rows, and explain why it dropped them"


def many_sessions(tmp_path: Path) -> Path:
    history = AiderHistory()
    for n in range(1, SESSIONS + 1):
        history.start(started(n))
        if n <= ANSWERED:
            history.user(ask(n)).reply(f"Answer {n}: the parser skipped them.")
            history.tool("Tokens: 900 sent, 12 received.")
        else:
            history.user("/add src/parser.py").tool("Added src/parser.py to the chat").user("/commit")
    return history.write(tmp_path / ".aider.chat.history.md")


def test_the_newest_session_with_an_exchange_is_imported_and_the_note_says_which(tmp_path: Path) -> None:
    path = many_sessions(tmp_path)
    result = import_transcript(path)
    open_in_core(result.params)
    assert result.params["sessionId"] == "aider-" + started(ANSWERED).replace(" ", "T").replace(":", "-")
    found = newest_user_ask(result.params)
    assert found is not None and found[1] == ask(ANSWERED) == aider_facts(path).newest_ask
    assert [p["text"] for m in result.params["messages"] for p in m["parts"]] == [
        ask(ANSWERED),
        f"Answer {ANSWERED}: the parser skipped them.",
    ]
    assert result.report.notes == [
        f"session {ANSWERED} of {SESSIONS}, started at {started(ANSWERED)}, the newest with an exchange: "
        f"the {SESSIONS - ANSWERED} newer have no exchange"
    ]
    assert f"note: session {ANSWERED} of {SESSIONS}" in result.report.table()
    assert result.report.as_dict()["notes"] == result.report.notes
    assert result.report.consistent


def test_the_session_list_and_one_session_by_its_number(tmp_path: Path) -> None:
    path = many_sessions(tmp_path)
    listed = list_sessions(path)
    assert [s.index for s in listed] == list(range(1, SESSIONS + 1))
    assert [s.started for s in listed] == [started(n) for n in range(1, SESSIONS + 1)]
    assert [s.has_exchange for s in listed] == [n <= ANSWERED for n in range(1, SESSIONS + 1)]
    first = listed[0]
    assert first.first_ask == ask(1)[:59] + "\u2026" and len(first.first_ask) == 60  # cut on one line
    assert listed[-1].first_ask == "" and listed[-1].messages == 0
    for n in (1, 27, ANSWERED):
        chosen = import_transcript(path, session=str(n))
        assert chosen.params["sessionId"] == listed[n - 1].session_id
        assert len(chosen.params["messages"]) == listed[n - 1].messages == 2
        assert newest_user_ask(chosen.params)[1] == ask(n)  # type: ignore[index]
        note = f"session {n} of {SESSIONS}, started at {started(n)}, as --session {n} chose"
        assert chosen.report.notes == [note]
    chunks = path.read_text(encoding="utf-8").split("# aider chat started at")
    assert listed[2].characters == len("# aider chat started at" + chunks[3])  # header to the next one


def test_a_session_of_commands_only_and_a_number_out_of_range(tmp_path: Path) -> None:
    path = many_sessions(tmp_path)
    with pytest.raises(TranscriptError, match="no aider message in this file"):
        import_transcript(path, session=str(SESSIONS))  # chosen, but it holds only commands
    for wanted in ("0", str(SESSIONS + 1)):
        expected = f"session {wanted}: there is no such session; this file holds {SESSIONS}, numbered 1"
        with pytest.raises(TranscriptError, match=expected):
            import_transcript(path, session=wanted)


def test_a_file_without_any_exchange_says_so(tmp_path: Path) -> None:
    history = AiderHistory()
    history.start(started(1)).user("/add a.py").user("/commit")
    history.start(started(2)).user("An ask that Aider never answered")  # Aider was stopped
    path = history.write(tmp_path / "h.md")
    with pytest.raises(TranscriptError, match="no session in this file has an exchange: none of its 2"):
        import_transcript(path)
    assert [s.has_exchange for s in list_sessions(path)] == [False, False]
    assert list_sessions(path)[1].first_ask == "An ask that Aider never answered"
    unanswered = import_transcript(path, session="2")  # chosen by number, it still imports
    assert [m["info"]["role"] for m in unanswered.params["messages"]] == ["user"]


def test_listing_is_for_aider_histories(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"type": "user"}\n')
    with pytest.raises(TranscriptError, match="listing sessions is offered for Aider histories"):
        list_sessions(path, "claude-code")


def sidecar(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mimo_sidecar", *args], capture_output=True, text=True, timeout=TIMEOUT_S
    )


def test_the_commands_list_and_pick_sessions(tmp_path: Path) -> None:
    path = str(many_sessions(tmp_path))
    table = sidecar("import", path, "--list-sessions")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["#", "started", "messages", "characters", "exchange", "first", "ask"]
    assert len(lines) == SESSIONS + 1
    row = lines[ANSWERED].split()
    assert row[:4] == [str(ANSWERED), *started(ANSWERED).split(), "2"] and row[5] == "yes"
    assert " ".join(row[6:]) == ask(ANSWERED)[:59] + "\u2026"
    assert lines[-1].split()[5:] == ["no", "-"]
    picked = sidecar("import", path, "--session", "3")
    assert picked.returncode == 0, picked.stderr
    assert newest_user_ask(json.loads(picked.stdout))[1] == ask(3)  # type: ignore[index]
    assert f"note: session 3 of {SESSIONS}" in picked.stderr
    bad = sidecar("import", path, "--session", "99")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "session 99: there is no such session" in bad.stderr
    listed = sidecar("inspect", path, "--list-sessions", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [r["hasExchange"] for r in rows] == [n <= ANSWERED for n in range(1, SESSIONS + 1)]
    inspected = sidecar("inspect", path, "--json")
    assert inspected.returncode == 0, inspected.stderr
    warnings = json.loads(inspected.stdout)["warnings"]
    assert any(w.startswith(f"session {ANSWERED} of {SESSIONS}") for w in warnings)


def test_the_real_history_imports_its_newest_exchange() -> None:
    root = real_sessions_root()
    if root is None:
        pytest.skip(absent_reason())
    path = root / "aider" / "luvatrix.aider.chat.history.md"
    headers = path.read_text(encoding="utf-8").count("# aider chat started at")
    listed = list_sessions(path)
    assert len(listed) == headers
    result = import_transcript(path)
    found = newest_user_ask(result.params)
    expected = aider_facts(path).newest_ask  # read from the raw file, not by the importer
    assert found is not None and expected is not None and found[1] == expected
    chosen = next(s for s in listed if s.session_id == result.params["sessionId"])
    assert chosen.has_exchange and chosen.messages == len(result.params["messages"])
    assert all(not s.has_exchange for s in listed[chosen.index :])  # nothing newer has one
