"""Every real transcript, imported, gives valid requests in every format, before and after rebuilds.

For each session of shared/real-sessions (read in place, never copied; skipped when absent): import
it, open it with the prefix its host declares (`host_loop.host_prefix`), then build the main request
and the writer's request (its history, and closed by its instructions as `checkpoint/prepare`
sends it) in each of the five formats (Anthropic with thinking unset, on and off,
and with cache breakpoints) and require zero provider-rule violations and the official SDK types'
acceptance, and every reasoning part the main and the writer's request draw from sent or its drop
reported (`tests/unit/reasoning_count.py`). Then a rebuild (a writer's watermark stored, a checkpoint
written in a temporary memory root, `insert`), the same checks; the host's next steps appended and a
second rebuild, the same checks again. Over stdio: tests/e2e/test_real_session_formats.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.formats import Target
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.session.session import Session, batch_from_messages
from mimo_sidecar.importers import newest_user_ask
from tests.real_sessions import imported, real_session_files
from tests.unit.builders import checkpoint_memory
from tests.unit.host_loop import HostSteps, assert_built_valid, host_prefix, rebuild_as_host
from tests.unit.importers.transcripts import open_in_core
from tests.unit.reasoning_count import unaccounted

NOW = 1_800_000_000_000
CHECKPOINT = (
    "# Checkpoint\nTopic: continuing the imported session\n\n## 1 Active intent\n\nFinish the work.\n"
)
# (format, Anthropic thinking): thinking only applies to Anthropic's two
# `anthropic/thinking-*` rules about the final assistant message.
RUNS: list[tuple[str, bool | None]] = [
    ("ai-sdk", None),
    ("anthropic", None),
    ("anthropic", True),
    ("anthropic", False),
    ("openai-chat", None),
    ("openai-responses", None),
    ("gemini", None),
]
WRITER_INSTRUCTIONS = "Update checkpoint.md from the conversation above; reply with the whole file."
HOST_STEPS = 24  # enough new tool output after the first rebuild for the second one to gain


def check_every_format(session: Session, memory: MemoryRoot, phase: str) -> int:
    """The main and writer requests in every run of RUNS are valid; returns how many were checked."""
    checked = 0
    for fmt, thinking in RUNS:
        target = None if thinking is None else Target(thinking=thinking, given=True)
        cache = "5m" if fmt == "anthropic" else None
        main = engine.build(
            session, memory, RebuildConfig(), now_ms=NOW, fmt=fmt, target=target, cache_ttl=cache
        )
        assert main.request.messages, (phase, fmt)
        assert_built_valid(fmt, main, thinking=thinking, where=f"{phase} main")
        view = session.context_view()
        assert unaccounted(fmt, view, main.request) == 0, (phase, fmt, "reasoning lost silently")
        writer = engine.build_for_writer(session, None, fmt=fmt, target=target, cache_ttl=cache)
        assert writer.request.messages, (phase, fmt)
        # The writer's history: checkpoint/prepare closes it with the instructions.
        assert_built_valid(fmt, writer, thinking=thinking, open_end=True, where=f"{phase} writer")
        assert unaccounted(fmt, engine.writer_view(session), writer.request) == 0, (phase, fmt, "writer")
        closed = engine.build_for_writer(
            session, None, fmt=fmt, target=target, cache_ttl=cache, instructions=WRITER_INSTRUCTIONS
        )
        assert_built_valid(fmt, closed, thinking=thinking, where=f"{phase} writer with its instructions")
        assert closed.prefix.hash == main.prefix.hash  # the writer reads the main loop's prompt cache
        checked += 2
    return checked


def phases(path: Path, tmp_path: Path) -> Iterator[tuple[str, Session, MemoryRoot]]:
    """The imported session opened with its host's prefix, then after each step of the cycle:
    before, after one rebuild, with the host's next steps, after a second rebuild."""
    params = imported(path).params
    params["requestPrefix"] = host_prefix(params)
    session = open_in_core(params)
    memory = checkpoint_memory(tmp_path, session.session_id, CHECKPOINT)
    yield "before", session, memory

    first = rebuild_as_host(session, memory, NOW)
    assert first.outcome == "rebuilt", first.detail
    ask = newest_user_ask(params)
    assert ask is not None and first.fidelity is not None
    assert first.fidelity.newest_user_ask.message_id == ask[0]
    yield "after one rebuild", session, memory

    steps = HostSteps(params)
    appended = [m for k in range(HOST_STEPS) for m in steps.step(k, image=k % 5 == 0)]
    session.apply(batch_from_messages(appended))
    yield "host steps after the rebuild", session, memory
    second = rebuild_as_host(session, memory, NOW + 1)
    assert second.outcome == "rebuilt", second.detail
    yield "after a second rebuild", session, memory


@pytest.mark.parametrize("path", real_session_files())
def test_every_format_is_valid_before_and_after_two_rebuilds(path: Path, tmp_path: Path) -> None:
    checked = [
        check_every_format(session, memory, phase) for phase, session, memory in phases(path, tmp_path)
    ]
    assert checked == [2 * len(RUNS)] * 4
