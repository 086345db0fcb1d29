"""Every importer opens its session with its tool's names mapped onto MiMo's (`toolNameMap`), so that
a rebuild clears old results of the tools that produce large reproducible output or confirmations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.rebuild.boundary import COMPACTABLE, KEPT_TOOLS
from mimo_sidecar.importers import import_transcript, tool_names
from tests.real_sessions import expected_format, imported, real_session_files, results_stamped_after
from tests.unit.builders import checkpoint_memory
from tests.unit.host_loop import rebuild_as_host
from tests.unit.importers.transcripts import (
    T0,
    ClaudeLog,
    CodexRollout,
    cline_message,
    open_in_core,
    opencode_export,
    text,
    tool_result,
    tool_use,
)

MAPS = {"claude-code": tool_names.CLAUDE_CODE, "codex": tool_names.CODEX, "cline": tool_names.CLINE}
CODE_MODE_WAIT = '{"cell_id":"1","yield_time_ms":30000}'
AGENT_WAIT = '{"ids":["agent_1"],"timeout_ms":60000}'


@pytest.mark.parametrize("fmt", sorted(MAPS))
def test_every_name_is_mapped_onto_a_mimo_tool_compacted_or_kept(fmt: str) -> None:
    assert set(MAPS[fmt].values()) <= COMPACTABLE | KEPT_TOOLS
    assert not set(MAPS[fmt]) & COMPACTABLE  # MiMo's own names need no entry


def test_claude_code_sessions_and_lone_subagent_files_carry_claude_codes_map(tmp_path: Path) -> None:
    log = ClaudeLog()
    log.user("Read the app")
    log.assistant([tool_use("toolu_1", "Read")], mid="msg_1", stop_reason="tool_use")
    log.user([tool_result("toolu_1", "print('hi')")])
    params = import_transcript(log.write(tmp_path / f"{log.session_id}.jsonl")).params
    assert params["toolNameMap"] == tool_names.CLAUDE_CODE
    sub = ClaudeLog(agent="a1b2c3")
    sub.user("Explore the tests")
    sub.assistant([tool_use("toolu_2", "Grep")], mid="msg_2", stop_reason="tool_use")
    alone = import_transcript(sub.write(tmp_path / "agent-a1b2c3.jsonl")).params
    assert alone["sessionId"].endswith("__subagents__agent-a1b2c3")
    assert alone["toolNameMap"] == tool_names.CLAUDE_CODE


def _codex(tmp_path: Path, *waits: str) -> dict:
    rollout = CodexRollout()
    rollout.meta()
    rollout.user("Run the tests")
    rollout.call("call_1", "exec_command", '{"cmd":"pytest"}')
    rollout.output("call_1", "3 passed")
    for n, arguments in enumerate(waits):
        rollout.call(f"call_w{n}", "wait", arguments)
        rollout.output(f"call_w{n}", "done")
    rollout.usage()
    return import_transcript(rollout.write(tmp_path / "rollout-2025-10-09T08-53-20-names.jsonl")).params


def test_codex_wait_is_code_modes_only_when_every_wait_names_a_script_cell(tmp_path: Path) -> None:
    assert _codex(tmp_path)["toolNameMap"] == tool_names.CODEX  # no wait call: no `wait` entry
    assert _codex(tmp_path, CODE_MODE_WAIT, CODE_MODE_WAIT)["toolNameMap"]["wait"] == "bash"
    assert _codex(tmp_path, AGENT_WAIT)["toolNameMap"]["wait"] == "task"  # a sub-agent's answer: kept
    assert _codex(tmp_path, CODE_MODE_WAIT, AGENT_WAIT)["toolNameMap"]["wait"] == "task"


def test_cline_carries_clines_map_and_opencode_none(tmp_path: Path) -> None:
    history = [
        cline_message("user", [text("<task>\nList the files\n</task>")], T0),
        cline_message("assistant", [tool_use("toolu_1", "list_files", path=".")], T0 + 1000),
        cline_message("user", [text("[list_files for '.'] Result:\na.ts")], T0 + 2000),
    ]
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    assert import_transcript(path).params["toolNameMap"] == tool_names.CLINE
    export = tmp_path / "export.json"
    export.write_text(json.dumps(opencode_export()), encoding="utf-8")
    assert "toolNameMap" not in import_transcript(export).params  # OpenCode's names are MiMo's


@pytest.mark.parametrize("path", real_session_files())
def test_a_rebuild_of_a_real_session_clears_old_tool_results(path: Path, tmp_path: Path) -> None:
    """Results stamped after the watermark's millisecond are cleared (behavior.md#microcompaction-rule);
    a log whose records share one timestamp (a hook script's `chat.json`) has none."""
    params = imported(path).params
    session = open_in_core(params)
    memory = checkpoint_memory(tmp_path, session.session_id, "Topic: go on\n\n## Intent\n\nGo on.\n")
    watermark = engine.writer_watermark(session)
    assert watermark is not None
    stamped_later = results_stamped_after(params, watermark.id)
    inserted = rebuild_as_host(session, memory, T0)
    assert inserted.outcome == "rebuilt", inserted.detail
    assert (len(inserted.compacted) > 0) == stamped_later, expected_format(path)
    assert len({(m.message_id, m.call_id) for m in inserted.compacted}) == len(inserted.compacted)
