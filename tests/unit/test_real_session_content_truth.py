"""What the model is shown is what happened: every real transcript, in every format, before and
after a rebuild, checked against facts read from the raw transcript (tests/content_truth.py).

- Every call the transcript answered successfully is answered by a success in the main request
  and in the writer's: not an error, not the synthesized "interrupted" result.
- Every reasoning item of the stored messages a request is built from is sent, or its drop is
  reported under a provider rule.
- The newest ask the user typed is in the main request after the rebuild.

Each transcript is imported once per test run (tests.real_sessions.imported) and each format built
once per phase (`verdicts`, cached); the three tests read the verdicts.
"""

from __future__ import annotations

import functools
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from mimo_sidecar.core import engine
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.formats import FORMATS
from mimo_sidecar.core.request.assembly import BuiltRequest, build_messages
from mimo_sidecar.importers import import_transcript
from tests.content_truth import (
    FACTS_OF_FOLDER,
    claude_facts,
    exchange,
    holds_ask,
    lost_reasoning,
    reasoning_in_scope,
    strings_of,
    transcript_facts,
    wrongly_failed,
)
from tests.real_sessions import FORMAT_OF_FOLDER, imported, real_session_files
from tests.unit.builders import checkpoint_memory
from tests.unit.host_loop import rebuild_as_host
from tests.unit.importers.transcripts import ClaudeLog, open_in_core, text, thinking, tool_result, tool_use

NOW = 1_800_000_000_000
CHECKPOINT = (
    "# Checkpoint\nTopic: continuing the imported session\n\n## 1 Active intent\n\nFinish the work.\n"
)
MEMORY = tempfile.TemporaryDirectory(prefix="mimo-content-truth-")


@dataclass
class Verdicts:
    wrongly_failed: list[str] = field(default_factory=list)
    lost_reasoning: list[str] = field(default_factory=list)
    ask_after_rebuild: bool = False
    results_checked: int = 0  # calls answered in the transcript found in the request before the rebuild
    reasoning_checked: int = 0  # the transcript's reasoning items in the request's scope before it


def verdicts(path: Path, fmt: str) -> Verdicts:
    return verdicts_of_every_format(path)[fmt]


@functools.cache
def verdicts_of_every_format(path: Path) -> dict[str, Verdicts]:
    """One session per transcript: every format built before the rebuild, then after it."""
    facts = transcript_facts(path)
    params = imported(path).params
    stored = {m["info"]["id"]: strings_of(m) for m in params["messages"]}
    session = open_in_core(params)
    root = Path(MEMORY.name) / f"{path.parent.name}-{path.name}"
    root.mkdir()
    memory = checkpoint_memory(root, session.session_id, CHECKPOINT)
    out = {fmt: Verdicts() for fmt in FORMATS}

    def check(phase: str, fmt: str, *, writer: bool) -> BuiltRequest:
        main = engine.build(session, memory, RebuildConfig(), now_ms=NOW, fmt=fmt).request
        requests = [("main", main)]
        if writer:  # the checkpoint writer reads the history before the rebuild
            requests.append(("writer", engine.build_for_writer(session, fmt=fmt).request))
        for purpose, built in requests:
            where = f"{phase} {purpose}"
            out[fmt].wrongly_failed += [f"{where}: {problem}" for problem in wrongly_failed(facts, built)]
            out[fmt].lost_reasoning += [
                f"{where}: {problem}" for problem in lost_reasoning(facts, built, stored)
            ]
        return main

    for fmt in FORMATS:
        before = check("before", fmt, writer=True)
        out[fmt].results_checked = len(exchange(before).calls & facts.answered)
        out[fmt].reasoning_checked = len(reasoning_in_scope(facts, before, stored))
    rebuilt = rebuild_as_host(session, memory, NOW)
    assert rebuilt.outcome == "rebuilt", rebuilt.detail
    for fmt in FORMATS:
        out[fmt].ask_after_rebuild = holds_ask(facts, check("after a rebuild", fmt, writer=False))
    return out


def cases(marks: dict[tuple[str, str], str] | None = None) -> list[object]:
    out: list[object] = []
    for param in real_session_files():
        path = param.values[0]  # type: ignore[attr-defined]
        for fmt in FORMATS:
            if path is None:
                out.append(pytest.param(None, fmt, marks=param.marks, id=f"{param.id}-{fmt}"))  # type: ignore[attr-defined]
                continue
            key = (f"{path.parent.name}/{path.name}", fmt)
            reason = (marks or {}).get(key)
            extra = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(path, fmt, marks=extra, id=f"{key[0]}-{fmt}"))
    return out


def test_every_folder_has_a_transcript_reader() -> None:
    assert set(FORMAT_OF_FOLDER) <= set(FACTS_OF_FOLDER)


@pytest.mark.parametrize(("path", "fmt"), cases())
def test_successful_results_reach_every_request_as_successes(path: Path, fmt: str) -> None:
    found = verdicts(path, fmt)
    assert found.wrongly_failed == []
    if transcript_facts(path).answered:
        assert found.results_checked > 0  # the check saw the transcript's results in the request


@pytest.mark.parametrize(("path", "fmt"), cases())
def test_reasoning_is_sent_or_its_drop_reported_under_a_provider_rule(path: Path, fmt: str) -> None:
    found = verdicts(path, fmt)
    assert found.lost_reasoning == []
    if transcript_facts(path).reasoning:
        assert found.reasoning_checked > 0  # the check saw the transcript's reasoning in the session


@pytest.mark.parametrize(("path", "fmt"), cases())
def test_the_newest_ask_is_in_the_rebuilt_request(path: Path, fmt: str) -> None:
    assert transcript_facts(path).newest_ask is not None
    assert verdicts(path, fmt).ask_after_rebuild


def test_the_checks_see_a_result_sent_as_failed_and_reasoning_dropped_without_a_rule(tmp_path: Path) -> None:
    """The checks themselves, on a hand-written transcript: its result is answered in the file, so
    a request that synthesizes an interrupted result for the call fails them; so does a reasoning
    drop whose reason is not a provider rule, and a request without the newest ask."""
    log = ClaudeLog()
    log.user("Read the config")
    log.assistant([thinking("Read it first."), tool_use("toolu_c")], mid="msg_c1")
    log.user([tool_result("toolu_c", "port = 8080")])
    log.assistant([text("Port 8080.")], mid="msg_c2")
    path = log.write(tmp_path / "s.jsonl")
    facts = claude_facts(path)
    assert facts.answered == {"toolu_c"} and facts.newest_ask == "Read the config"
    params = import_transcript(path).params
    stored = {m["info"]["id"]: strings_of(m) for m in params["messages"]}
    whole = open_in_core(params)
    good = build_messages(
        whole.view(), collapse_tail=False, ordering=whole.ordering(), reminder=None, fmt="anthropic"
    )
    assert wrongly_failed(facts, good) == [] and lost_reasoning(facts, good, stored) == []
    assert holds_ask(facts, good)
    params["messages"] = [
        m for m in params["messages"] if not any(p["type"] == "tool_result" for p in m["parts"])
    ]
    cut = open_in_core(params)
    bad = build_messages(
        cut.view(), collapse_tail=False, ordering=cut.ordering(), reminder=None, fmt="anthropic"
    )
    assert wrongly_failed(facts, bad) == ["toolu_c: sent as failed"]
    unruled = replace(
        good, warnings=["reasoning-dropped: 1 × reasoning not replayed to anthropic: no ID (in x)"]
    )
    assert lost_reasoning(facts, unruled, stored) == [
        f"dropped without a provider rule: {unruled.warnings[0]}"
    ]
    without_ask = replace(good, messages=good.messages[1:])
    assert not holds_ask(facts, without_ask)
