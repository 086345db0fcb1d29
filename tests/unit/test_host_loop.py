"""A host built on a provider's API passes `request/build`'s output to its SDK unchanged, turn after
turn, across rebuilds.

The loop a host runs, in each format, on one real session per source tool (imported; generated
sessions in the same shapes when shared/real-sessions is absent): build the request → check it (the
provider-rules checker and the official SDK types; Anthropic with thinking on and cache
breakpoints) → append the model's next step (signed thinking or encrypted reasoning, parallel calls,
now and then an image in a result) and its results, in the session's own shape → build again ... →
a rebuild (writer's watermark, checkpoint, insert) → build ... → a second rebuild → build ...

At every turn: the prefix hash is the one of turn 0 (the prefix never changed), and for Anthropic
every cache entry turn n wrote (the bytes up to each breakpoint) is repeated byte for byte by turn
n+1 when no rebuild came between them. The memory reminder is on (the memory root holds a
checkpoint), so it moves every step in Anthropic-shaped sessions; the breakpoints must not sit on it.
When a user ask arrives, the reminder leaves the previous user message (behavior.md#memory-reminder): only the
entries written after that message are lost, once per user turn (protocol.md says so). Like a real
host, the loop never sends a request that ends on the model's turn: an imported session that ended
on the assistant's answer gets a user ask first.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.generator import generate_session
from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.formats import FORMATS, Target
from mimo_sidecar.core.session.session import batch_from_messages
from tests.real_sessions import imported, main_session_files, real_sessions_root
from tests.unit.builders import checkpoint_memory
from tests.unit.host_loop import (
    HostSteps,
    assert_built_valid,
    cache_prefixes_kept,
    host_prefix,
    rebuild_as_host,
    reminder_position,
)
from tests.unit.importers.transcripts import open_in_core
from tests.unit.test_real_session_requests import CHECKPOINT, NOW

Json = dict[str, Any]
TURNS = 18
REBUILD_AT = (4, 13)  # before these turns' builds
PAYLOAD_CHARS = 3_000  # per result: the steps between the rebuilds outweigh a boundary


def loop_sessions() -> list[Any]:
    """One real session per source tool; generated Anthropic-shaped and inline ones without them."""
    root = real_sessions_root()
    if root is None:
        return [
            pytest.param(
                lambda: generate_session(300, 7, "anthropic", session_id="gen-anthropic"),
                id="generated-anthropic",
            ),
            pytest.param(
                lambda: generate_session(300, 7, "inline", session_id="gen-inline"), id="generated-inline"
            ),
        ]
    first: dict[str, Path] = {}
    for path in main_session_files(root):
        first.setdefault(path.parent.name, path)
    return [
        pytest.param(lambda p=path: imported(p).params, id=folder)
        for folder, path in sorted(first.items())
    ]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("source", loop_sessions())
def test_turn_after_turn_across_rebuilds(source: Callable[[], Json], fmt: str, tmp_path: Path) -> None:
    params = source()
    params["requestPrefix"] = host_prefix(params)
    session = open_in_core(params)
    memory = checkpoint_memory(tmp_path, session.session_id, CHECKPOINT)
    steps = HostSteps(params, payload_chars=PAYLOAD_CHARS)
    anthropic = fmt == "anthropic"
    target = Target(thinking=True, given=True) if anthropic else None
    if params["messages"][-1]["info"]["role"] == "assistant":  # a request never ends on the model's turn
        session.apply(batch_from_messages(steps.user_ask("Carry on with the next item.")))
    first_hash: str | None = None
    previous: tuple[Json, list[Json]] | None = None
    rebuilt = 0
    asked = False
    for turn in range(TURNS):
        if turn in REBUILD_AT:
            outcome = rebuild_as_host(session, memory, NOW + turn)
            assert outcome.outcome == "rebuilt", (turn, outcome.detail)
            rebuilt += 1
            previous = None  # a rebuild rewrites the history after the prefix
        res = engine.build(
            session,
            memory,
            RebuildConfig(),
            now_ms=NOW,
            fmt=fmt,
            target=target,
            cache_ttl="5m" if anthropic else None,
        )
        request = res.request
        assert_built_valid(fmt, res, thinking=True if anthropic else None, where=f"turn {turn}")
        first_hash = first_hash or res.prefix.hash
        assert res.prefix.hash == first_hash, turn
        if anthropic:
            current = (res.prefix.request or {}, request.messages)
            if previous is not None:
                missed = cache_prefixes_kept(previous, current)
                if asked:  # the reminder left the previous user message: entries after it are lost
                    moved_from = reminder_position(*previous)
                    assert moved_from is not None and all(p > moved_from for p in missed), turn
                else:
                    assert missed == [], turn
            previous = current
            if (
                turn > 0 and params["messages"][-1]["info"]["role"] != "user"
            ):  # our steps: signed thinking first
                assert request.overrides == {} or not steps.model["providerID"].startswith("anthropic"), turn
        appended = steps.step(turn, image=turn % 4 == 1)
        asked = turn % 6 == 5
        if asked:
            appended += steps.user_ask(f"Now check step {turn} again.")
        session.apply(batch_from_messages(appended))
    assert rebuilt == len(REBUILD_AT)
