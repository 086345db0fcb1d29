"""The session's tool-name map (behavior.md#compactable-tools) through the service: stored by
`open`, replaced by `sync`, used by every insert, merged under an insert's own map; and the
insert's warning about results left only for want of a mapped name."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mimo_sidecar.core import texts
from mimo_sidecar.core.outcomes import Inserted
from mimo_sidecar.core.session.session import SyncBatch
from mimo_sidecar.service import InsertRequest, OpenRequest, SidecarService
from tests.unit.builders import assistant, text, tool, tool_result, tool_use, user, write_checkpoint

SID = "ses_names"
T0 = 1_700_000_000_000
BIG = "export function lex() {}\n" * 400  # about 2 500 tokens: clearing it makes the rebuild pay
CLAUDE_CODE = {"Read": "read", "Bash": "bash"}


def history() -> list[dict]:
    """Claude Code's names, inline and split: Read and Bash results worth clearing, then a tool
    no map names (twice) and one of MiMo's kept tools. The loop has come to rest (a last answer),
    so every step is digested (a newest step that called tools would stay live, D19)."""
    msgs = [
        user("m01", text("stream the lexer"), created=T0),
        assistant("m02", text("looking"), created=T0 + 10),
        assistant(
            "m03",
            tool("c1", "Read", output=BIG),
            tool("c2", "Deploy", output="deployed"),
            tool("c3", "task", output="T1 done"),
            created=T0 + 20,
        ),
        assistant(
            "m04",
            tool_use("u1", "Bash"),
            tool_use("u2", "Deploy"),
            finish="tool-calls",
            created=T0 + 30,
        ),
        user("m05", tool_result("u1", BIG), tool_result("u2", "deployed"), created=T0 + 40),
        assistant("m06", text("read, ran and deployed"), created=T0 + 50),
    ]
    return [m.to_json() for m in msgs]


@pytest.fixture
def service(tmp_path: Path) -> SidecarService:
    write_checkpoint(tmp_path, SID, "Topic: lexer\n\n## Intent\n\nStream tokens.\n")
    return SidecarService(memory_root=tmp_path, clock=lambda: T0 + 1000)


def opened(service: SidecarService, tool_name_map: dict[str, str] | None) -> SidecarService:
    service.open(OpenRequest(SID, messages=history(), watermark="m02", tool_name_map=tool_name_map))
    return service


def insert(service: SidecarService, tool_name_map: dict[str, str] | None = None) -> Inserted:
    return asyncio.run(service.insert(InsertRequest(SID, "auto", "main", tool_name_map=tool_name_map)))


def marked(inserted: Inserted) -> list[tuple[str, str]]:
    assert inserted.result is not None
    return sorted((m.message_id, m.call_id) for m in inserted.result.compacted)


def name_warnings(inserted: Inserted) -> list[str]:
    assert inserted.result is not None
    return [w for w in inserted.result.warnings if "toolNameMap" in w]


def test_every_insert_uses_the_map_the_session_was_opened_with(service: SidecarService) -> None:
    inserted = insert(opened(service, CLAUDE_CODE))
    assert inserted.outcome == "rebuilt"
    assert marked(inserted) == [("m03", "c1"), ("m05", "u1")]
    # Once per insert, each unmapped name with its count; `task` is MiMo's and kept by design.
    assert name_warnings(inserted) == [texts.unmapped_tool_results({"Deploy": 2})]


def test_without_a_map_nothing_of_these_is_cleared_and_the_insert_says_why(service: SidecarService) -> None:
    inserted = insert(opened(service, None))
    assert inserted.result is not None and inserted.result.compacted == []
    assert name_warnings(inserted) == [texts.unmapped_tool_results({"Read": 1, "Bash": 1, "Deploy": 2})]


def test_an_insert_map_is_merged_over_the_session_map_and_wins(service: SidecarService) -> None:
    inserted = insert(opened(service, CLAUDE_CODE), {"Bash": "Bash", "Deploy": "task"})
    assert marked(inserted) == [("m03", "c1")]  # Bash kept for this insert; Read from the session
    assert name_warnings(inserted) == []  # every name now mapped
    assert service.sessions.require(SID).session.tool_name_map == CLAUDE_CODE  # the insert's is not stored


def test_sync_replaces_the_map_the_next_insert_uses(service: SidecarService) -> None:
    opened(service, {"Grep": "grep"})
    service.sync(SID, SyncBatch(tool_name_map=CLAUDE_CODE))
    assert marked(insert(service)) == [("m03", "c1"), ("m05", "u1")]

