"""Every real transcript of shared/real-sessions imports into params the real sidecar accepts.

Nothing of these files is copied here: the tests read them in place (tests/real_sessions.py) and
check properties, against facts they read from the source files themselves.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.importers import detect_format, newest_user_ask
from mimo_sidecar.importers.harness import (
    CLAUDE_CODE_MARKERS,
    CLINE_MARKERS,
    CODEX_MARKERS,
    GEMINI_MARKERS,
)
from tests.real_sessions import SUBAGENT_MARK, claude_records, expected_format, imported, real_session_files
from tests.unit.importers.transcripts import open_in_core

ROLES = {"user", "assistant", "tool"}
# The part vocabulary of protocol.md ("Split shapes: field reference"): MiMo's part types
# (behavior.md#parts), then the provider-native blocks the sidecar understands in split-shape sessions.
MIMO_PARTS = {
    "text", "reasoning", "file", "tool", "checkpoint", "compaction", "subtask",
    "step-start", "step-finish", "snapshot", "patch", "retry", "agent",
}  # fmt: skip
ANTHROPIC_PARTS = {"thinking", "redacted_thinking", "image", "document", "tool_use", "tool_result"}
RESPONSES_PARTS = {
    "reasoning", "function_call", "custom_tool_call", "function_call_output", "custom_tool_call_output",
    "input_image", "input_file",
}  # fmt: skip
CHAT_PARTS = {"function"}
VOCABULARY = MIMO_PARTS | ANTHROPIC_PARTS | RESPONSES_PARTS | CHAT_PARTS
CALLS = {"tool_use": "id", "function_call": "call_id", "custom_tool_call": "call_id"}
RESULTS = {
    "tool_result": "tool_use_id",
    "function_call_output": "call_id",
    "custom_tool_call_output": "call_id",
}

pytestmark = pytest.mark.parametrize("path", real_session_files())


def _imported(path: Path) -> Any:
    return imported(path, shared=True)  # these tests only read it


def _source_files(path: Path) -> list[Path]:
    if path.suffix != ".jsonl":
        return [path]
    stem = path.name.removesuffix(".jsonl")
    return [path, *sorted(path.parent.glob(f"{stem}{SUBAGENT_MARK}*.jsonl"))]


def _walk(value: Any) -> Any:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def test_imports_and_opens_in_the_sidecar(path: Path) -> None:
    assert detect_format(path) == expected_format(path)
    result = _imported(path)
    session = open_in_core(result.params)  # the wire model of session/open, then the core session
    assert len(session.messages()) == result.report.messages > 0


def test_roles_and_parts_are_of_the_contract_vocabulary(path: Path) -> None:
    messages = _imported(path).params["messages"]
    roles = Counter(m["info"]["role"] for m in messages)
    types = Counter(p["type"] for m in messages for p in m["parts"])
    assert set(roles) <= ROLES, roles
    assert set(types) <= VOCABULARY, set(types) - VOCABULARY


def test_the_report_accounts_for_every_record(path: Path) -> None:
    report = _imported(path).report
    assert report.consistent, report.as_dict()
    if path.suffix == ".md":  # Aider: every line that says something, once Aider's `#### ` / `> ` is off
        lines = path.read_text(encoding="utf-8").splitlines()
        assert report.records_read == sum(1 for line in lines if re.sub(r"^(####|>)( |$)", "", line).strip())
    elif path.suffix == ".jsonl":
        lines = sum(1 for f in _source_files(path) for line in f.read_bytes().split(b"\n") if line.strip())
        assert report.records_read == lines
    else:
        document = json.loads(path.read_text(encoding="utf-8"))
        expected = (
            len(document) if isinstance(document, list) else len(document["messages"]) + ("todos" in document)
        )
        assert report.records_read == expected


def test_the_newest_genuine_user_ask_is_found_and_plain(path: Path) -> None:
    params = _imported(path).params
    found = newest_user_ask(params)
    assert found is not None, f"{path.name}: no genuine user ask found"
    message_id, ask = found
    shown = f"{path.name}: newest user ask {message_id}: {ask[:200]!r}"
    message = next(m for m in params["messages"] if m["info"]["id"] == message_id)
    assert message["info"].get("agentID", "main") == "main", shown
    plain = [p for p in message["parts"] if p["type"] == "text" and not p.get("synthetic")]
    assert plain and "\n".join(p["text"] for p in plain) == ask, shown
    markers = CLAUDE_CODE_MARKERS + CODEX_MARKERS + CLINE_MARKERS + GEMINI_MARKERS
    assert not ask.lstrip().startswith(markers), shown
    if expected_format(path) == "codex":  # the UI recorded what the user typed: it must be one of those
        typed = {
            (r["payload"].get("message") or "").strip()
            for line in path.read_text(encoding="utf-8").splitlines()
            if (r := json.loads(line)).get("type") == "event_msg"
            and r["payload"].get("type") == "user_message"
        }
        assert ask.strip() in typed, shown
    if expected_format(path) == "claude-code":  # not a harness record
        source = {r["uuid"]: r for r in claude_records(path) if r.get("uuid")}
        record = source.get(message_id.removesuffix("#text"))
        assert record is None or not (record.get("isMeta") or record.get("isCompactSummary")), shown


def test_subagent_files_become_slices(path: Path) -> None:
    report = _imported(path).report
    subagents = {
        f.name.removesuffix(".jsonl").rsplit("agent-", 1)[-1]
        for f in _source_files(path)
        if SUBAGENT_MARK in f.name
    }
    assert set(report.slices) == {"main"} | subagents
    params = _imported(path).params
    for agent in subagents:
        assert any(m["info"].get("agentID") == agent for m in params["messages"])


def test_calls_are_answered_at_most_once_and_results_have_calls(path: Path) -> None:
    messages = _imported(path).params["messages"]
    by_slice: dict[str, tuple[Counter[str], Counter[str]]] = {}
    for m in messages:
        calls, results = by_slice.setdefault(m["info"].get("agentID", "main"), (Counter(), Counter()))
        for part in m["parts"]:
            if part["type"] in CALLS:
                calls[part[CALLS[part["type"]]]] += 1
            elif part["type"] in RESULTS:
                results[part[RESULTS[part["type"]]]] += 1
    for agent, (calls, results) in by_slice.items():
        assert max(calls.values(), default=1) == 1, agent
        assert max(results.values(), default=1) == 1, agent
        assert set(results) <= set(calls), (agent, set(results) - set(calls))


def test_thinking_signatures_and_images_survive_byte_for_byte(path: Path) -> None:
    source_thinking: set[tuple[str, str]] = set()
    source_images = 0
    for f in _source_files(path):
        if f.suffix == ".md":
            continue  # Aider's Markdown holds no thinking signature or image
        text = f.read_text(encoding="utf-8")
        records = (
            [json.loads(line) for line in text.splitlines() if line.strip()]
            if f.suffix == ".jsonl"
            else [json.loads(text)]
        )
        for record in records:
            if isinstance(record, dict) and record.get("type") == "event_msg":
                continue  # Codex UI copies of items
            for block in _walk(record):
                if block.get("type") == "thinking":
                    source_thinking.add((block.get("thinking"), block.get("signature")))
                elif block.get("type") in ("image", "input_image"):
                    source_images += 1
    messages = _imported(path).params["messages"]
    out_thinking = {
        (b.get("thinking"), b.get("signature")) for b in _walk(messages) if b.get("type") == "thinking"
    }
    out_images = sum(1 for b in _walk(messages) if b.get("type") in ("image", "input_image"))
    assert out_thinking <= source_thinking
    assert len(out_thinking) == len(
        source_thinking
    )  # none lost (these sessions have no abandoned branch with one)
    assert out_images == source_images
