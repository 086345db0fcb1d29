"""The digest point (behavior.md#digest-point): the newest step stays in view on an automatic rebuild
(D19), a step waiting for results is never digested, and a result that arrives for a digested call
brings its step back (D20). Checked on the core's rules, then through insert and build in every
output format with the provider-rules checker and the SDK types, in the inline shape and the three
split shapes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.core import engine, texts
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.formats import FORMATS
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.rebuild.boundary import LastMessageInfo
from mimo_sidecar.core.rebuild.live_step import digest_point, newest_step
from mimo_sidecar.core.rebuild.tail_digest import digest
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.message import Message
from mimo_sidecar.core.session.ordering import Ordering
from mimo_sidecar.core.session.session import Session
from tests.unit.builders import (
    assistant,
    checkpoint_memory,
    function,
    function_call,
    function_call_output,
    msg,
    session_of,
    sync,
    text,
    tool,
    tool_message,
    tool_result,
    tool_use,
    usage,
    user,
)
from tests.unit.host_loop import assert_built_valid

SID = "ses_live"
T0 = 1_760_000_000_000
CLAUDE = {"providerID": "anthropic", "modelID": "claude-sonnet-4-6"}
OLD = "old read output line\n" * 600  # the step before: digested, and what the rebuild saves
LIVE, LIVE2 = "LIVE-RESULT: 28 tests passed", "LIVE-RESULT-2: 3 matches"
ORDER = Ordering(True, lambda _id: None)
PREFIX = {
    "system": ["You are a coding agent."],
    "tools": [
        {"name": n, "description": n, "input_schema": {"type": "object"}}
        for n in ("read", "bash", "grep", "shell")
    ],
}


def _a(mid: str, *parts: dict[str, Any], t: int, **kw: Any) -> Message:
    return assistant(mid, *parts, created=T0 + t, **CLAUDE, **kw)


def _head() -> list[Message]:
    return [
        user("m01", text("Fix the CSV export for accented names."), created=T0),
        _a("m02", text("Reading the exporter."), t=10),
        user("m03", text("Keep the public API."), created=T0 + 20),
    ]


# -- one mid-loop session per host shape: an old step, then the newest step with its results ------
def inline() -> list[Message]:
    return [
        *_head(),
        _a("m04", tool("c1", "read", {"path": "csv.ts"}, output=OLD), finish="tool-calls", t=30),
        _a(
            "m05",
            text("Running the tests."),
            tool("c2", "bash", {"command": "npm test"}, output=LIVE),
            tool("c3", "grep", {"pattern": "toCsv"}, output=LIVE2),
            finish="tool-calls",
            t=40,
            tokens=usage(185_000),
        ),
    ]


def anthropic() -> list[Message]:
    """Claude Code's entries: one response per block sharing `providerMessageID`, a carrier per call,
    the first one written between two entries of the response."""
    r5 = {"providerMessageID": "resp_5"}
    return [
        *_head(),
        _a("m04", tool_use("u1", "read", {"path": "csv.ts"}), finish="tool-calls", t=30),
        user("m04c", tool_result("u1", OLD), created=T0 + 31),
        _a("m05a", text("Running the tests."), t=40, **r5),
        _a("m05b", tool_use("u2", "bash", {"command": "npm test"}), t=41, **r5),
        user("m05c", tool_result("u2", LIVE), created=T0 + 42),
        _a("m05d", tool_use("u3", "grep", {"pattern": "toCsv"}), finish="tool-calls", t=43, **r5),
        user("m05e", tool_result("u3", LIVE2), created=T0 + 44),
    ]


def responses() -> list[Message]:
    """Codex: Responses calls, their outputs on one tool-role carrier."""
    return [
        *_head(),
        _a("m04", function_call("f1", "shell", '{"command":"cat csv.ts"}'), finish="tool-calls", t=30),
        msg("m04c", "tool", [function_call_output("f1", OLD)], created=T0 + 31),
        _a(
            "m05",
            function_call("f2", "shell", '{"command":"npm test"}'),
            function_call("f3", "shell", '{"command":"grep -n toCsv"}'),
            finish="tool-calls",
            t=40,
        ),
        msg(
            "m05c",
            "tool",
            [function_call_output("f2", LIVE), function_call_output("f3", LIVE2)],
            created=T0 + 41,
        ),
    ]


def chat() -> list[Message]:
    """OpenAI Chat: `tool_calls` entries, one tool-role message per result."""
    return [
        *_head(),
        _a("m04", function("k1", "read", '{"path":"csv.ts"}'), finish="tool-calls", t=30),
        tool_message("m04c", "k1", OLD, created=T0 + 31),
        _a(
            "m05",
            text("Running the tests."),
            function("k2", "bash"),
            function("k3", "grep"),
            finish="tool-calls",
            t=40,
        ),
        tool_message("m05c", "k2", LIVE, created=T0 + 41),
        tool_message("m05d", "k3", LIVE2, created=T0 + 42),
    ]


SHAPES: dict[str, tuple[Callable[[], list[Message]], str, str]] = {
    # shape: (session, D = the message before the newest step, the reminder the boundary ends with)
    "inline": (inline, "m04", texts.AUTONOMOUS_LOOP_REMINDER),
    "anthropic": (anthropic, "m04c", texts.TOOL_REMINDER),
    "responses": (responses, "m04c", texts.TOOL_REMINDER),
    "chat": (chat, "m04c", texts.TOOL_REMINDER),
}


@pytest.fixture
def memory(tmp_path: Path) -> MemoryRoot:
    return checkpoint_memory(tmp_path, SID, "Topic: CSV export\n\n## Intent\n\nKeep accented names.\n")


def opened(messages: list[Message]) -> Session:
    s = session_of(messages, SID)
    s.watermark = "m02"
    s.request_prefix = PREFIX
    s.tool_name_map = {"shell": "bash"}  # Codex's, as its importer opens it
    return s


def rebuild(s: Session, memory: MemoryRoot, reason: str = "auto", **kw: Any) -> engine.InsertResult:
    config = kw.pop("config", RebuildConfig())
    return engine.insert(
        s, memory, config, watermark="m02", reason=reason, now_ms=T0 + 10_000, minter=IdMinter(), **kw
    )


def built(s: Session, memory: MemoryRoot, fmt: str) -> engine.BuildResult:
    result = engine.build(s, memory, RebuildConfig(), now_ms=T0 + 20_000, fmt=fmt, memory_reminder=False)
    assert_built_valid(fmt, result, where=fmt)  # every call paired with its result, SDK types accept it
    return result


def sent(result: engine.BuildResult) -> str:
    return json.dumps(result.request.messages, ensure_ascii=False)


def boundary_text(res: engine.InsertResult) -> str:
    assert res.message is not None
    return "\n".join(p["text"] for p in res.message["parts"] if p["type"] == "text")


# -- the rules of core.rebuild.live_step -------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
def test_the_newest_step_is_one_response_with_its_carriers(shape: str) -> None:
    make, before, _ = SHAPES[shape]
    msgs = make()
    step = newest_step(msgs)
    assert step is not None and msgs[step.start - 1].id == before
    assert step.ends_list and step.unresolved == () and len(step.call_ids) == 2


@pytest.mark.parametrize("shape", SHAPES)
def test_automatic_rebuilds_leave_the_step_manual_ones_and_the_reference_digest_it(shape: str) -> None:
    make, before, _ = SHAPES[shape]
    msgs = make()
    for reason_automatic in (True, False):
        point = digest_point(
            msgs, automatic=reason_automatic, keep_newest_step=True, requested=None, ordering=ORDER
        )
        assert (point.message_id, point.rule) == (
            (before, "newest-step") if reason_automatic else (msgs[-1].id, "tail")
        )
    reference = digest_point(msgs, automatic=True, keep_newest_step=False, requested=None, ordering=ORDER)
    assert (reference.message_id, reference.live_from) == (msgs[-1].id, None)
    assert reference.last_info is not None and not reference.last_info.step_live


def test_a_step_that_ended_with_a_stop_is_digested() -> None:
    msgs = [*_head(), _a("m04", tool("c1", "read", output="x"), text("done"), finish="stop", t=30)]
    point = digest_point(msgs, automatic=True, keep_newest_step=True, requested=None, ordering=ORDER)
    assert (point.message_id, point.rule) == ("m04", "tail")


def test_a_step_waiting_for_results_is_never_digested() -> None:
    running = _a("m05", tool("c2", "bash", {"command": "npm test"}, status="running"), t=40)  # no finish yet
    msgs = [*inline()[:4], running]
    for automatic in (True, False):
        for keep in (True, False):
            point = digest_point(
                msgs, automatic=automatic, keep_newest_step=keep, requested=None, ordering=ORDER
            )
            assert (point.message_id, point.rule, point.live_from) == ("m04", "pending-calls", 4)
            # the reminder of a loop step, though the response has no finish yet
            assert point.last_info == LastMessageInfo("assistant", "tool-calls", step_live=True)
    # a host digestUpTo inside the step is moved before it, and said so; one before it is kept
    moved = digest_point(msgs, automatic=True, keep_newest_step=True, requested="m05", ordering=ORDER)
    assert moved.message_id == "m04" and moved.warning == texts.digest_point_moved("m05", ("c2",))
    kept = digest_point(msgs, automatic=True, keep_newest_step=True, requested="m03", ordering=ORDER)
    assert (kept.message_id, kept.rule, kept.warning) == ("m03", "host", None)


def test_with_d20_off_a_waiting_step_is_digested_as_the_reference_does() -> None:
    running = _a("m05", tool("c2", "bash", {"command": "npm test"}, status="running"), t=40)
    msgs = [*inline()[:4], running]
    for automatic in (True, False):
        point = digest_point(
            msgs,
            automatic=automatic,
            keep_newest_step=False,
            keep_pending_step=False,
            requested=None,
            ordering=ORDER,
        )
        assert (point.message_id, point.rule, point.live_from, point.warning) == ("m05", "tail", None, None)
    # the host's digestUpTo is taken as it is, with no warning
    host = digest_point(
        msgs, automatic=True, keep_newest_step=False, keep_pending_step=False, requested="m05", ordering=ORDER
    )
    assert (host.message_id, host.rule, host.warning) == ("m05", "host", None)


def test_a_step_at_the_start_of_the_list_leaves_nothing_to_digest() -> None:
    msgs = [
        _a("m05", tool_use("u2", "bash"), finish="tool-calls", t=40),
        user("m05c", tool_result("u2", LIVE)),
    ]
    point = digest_point(msgs, automatic=True, keep_newest_step=True, requested=None, ordering=ORDER)
    assert (point.message_id, point.live_from) == (None, 0)


# -- D19 through insert and build, in every format ------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
def test_a_mid_loop_rebuild_keeps_the_newest_step_in_every_format(memory: MemoryRoot, shape: str) -> None:
    make, before, reminder = SHAPES[shape]
    s = opened(make())
    step_ids = [m.id for m in s.slice()[[m.id for m in s.slice()].index(before) + 1 :]]
    res = rebuild(s, memory)
    assert res.outcome == "rebuilt" and res.digest_up_to == before
    assert boundary_text(res).endswith(reminder)  # "the tool results below": they are below
    # microcompaction clears the old step's result, never the live step's
    assert res.compacted and all(m.message_id not in step_ids for m in res.compacted)
    for fmt in FORMATS:
        result = built(s, memory, fmt)
        assert LIVE in sent(result) and LIVE2 in sent(result) and OLD not in sent(result), fmt
        assert set(step_ids) <= {i for g in result.request.source_groups[1:] for i in g}, fmt
        assert set(result.request.collapsed_ids) & set(step_ids) == set(), fmt


@pytest.mark.parametrize("shape", ["inline", "anthropic"])
def test_with_the_reference_setting_the_step_is_digested(memory: MemoryRoot, shape: str) -> None:
    make, _, reminder = SHAPES[shape]
    msgs = make()
    s = opened(msgs)
    res = rebuild(s, memory, config=RebuildConfig(keep_newest_step=False))
    assert res.outcome == "rebuilt" and res.digest_up_to == msgs[-1].id
    expected = texts.TOOL_REMINDER_DIGESTED if reminder == texts.TOOL_REMINDER else reminder
    assert boundary_text(res).endswith(expected)
    assert LIVE not in sent(built(s, memory, "anthropic"))


# -- D20: a rebuild between a call and its result loses nothing -----------------------------------
@pytest.mark.parametrize("reason", ["auto", "manual"])
def test_a_rebuild_before_the_results_keeps_the_step_and_pairs_them_later(
    memory: MemoryRoot, reason: str
) -> None:
    s = opened(anthropic()[:-1])  # u3's result is not synced yet
    res = rebuild(s, memory, reason)
    assert res.outcome == "rebuilt" and res.digest_up_to == "m04c"
    assert texts.DIGEST_INTERRUPTED_SUFFIX not in boundary_text(res)  # nothing recorded as interrupted
    assert "interruptedCalls" not in res.message["parts"][0]  # type: ignore[index]
    sync(s, [user("m05e", tool_result("u3", LIVE2), created=T0 + 50_000)])  # the result arrives
    for fmt in FORMATS:
        result = built(s, memory, fmt)
        assert LIVE in sent(result) and LIVE2 in sent(result), fmt
        assert not [w for w in result.request.warnings if "result-synthesized" in w], fmt


# Every switch of a deviation that concerns the digest point off: MiMo's behaviour (behavior.md#d20).
REFERENCE = RebuildConfig(keep_newest_step=False, keep_pending_step=False, follow_writer_watermark=False)


@pytest.mark.parametrize("shape", ["inline", "anthropic"])
def test_the_reference_settings_digest_a_waiting_step_as_interrupted(memory: MemoryRoot, shape: str) -> None:
    """MiMo digests the whole list: each call without a result is one `→ interrupted` line under the
    banner, exactly the reference digest of everything after the watermark."""
    if shape == "inline":
        running = _a("m05", tool("c2", "bash", {"command": "npm test"}, status="running"), t=40)
        msgs = [*inline()[:4], running]
        waiting = ["c2"]
    else:
        msgs = anthropic()[:-1]  # u3's result is not synced yet
        waiting = ["u3"]
    s = opened(msgs)
    res = rebuild(s, memory, config=REFERENCE)
    assert res.outcome == "rebuilt" and res.digest_up_to == msgs[-1].id
    tail = [m for m in msgs if m.id > "m02"]  # (W, D]: the ids sort by creation here
    reference = digest(tail)
    assert texts.DIGEST_INTERRUPTED_BANNER in reference
    assert reference in boundary_text(res)
    assert texts.digest_point_moved("m05", tuple(waiting)) not in res.warnings
    assert res.message is not None and res.message["parts"][0]["interruptedCalls"] == waiting
    # the same session with the default settings keeps the step live and records nothing as interrupted
    default = rebuild(opened(msgs), memory)
    assert default.digest_up_to != msgs[-1].id and texts.DIGEST_INTERRUPTED_SUFFIX not in boundary_text(
        default
    )


def test_an_inline_part_still_running_stays_live_until_it_completes(memory: MemoryRoot) -> None:
    msgs = inline()
    running = _a("m05", tool("c2", "bash", {"command": "npm test"}, status="running"), t=40)
    s = opened([*msgs[:4], running])
    res = rebuild(s, memory)
    assert res.outcome == "rebuilt" and res.digest_up_to == "m04"
    assert boundary_text(res).endswith(texts.AUTONOMOUS_LOOP_REMINDER)
    sync(s, [_a("m05", tool("c2", "bash", {"command": "npm test"}, output=LIVE), finish="tool-calls", t=40)])
    for fmt in FORMATS:
        assert LIVE in sent(built(s, memory, fmt)), fmt


def test_a_host_digest_point_inside_a_waiting_step_is_moved(memory: MemoryRoot) -> None:
    s = opened(anthropic()[:-1])
    res = rebuild(s, memory, digest_up_to="m05c")
    assert res.outcome == "rebuilt" and res.digest_up_to == "m04c"
    assert texts.digest_point_moved("m05c", ("u3",)) in res.warnings


# -- D20: a result that arrives for a call already digested ---------------------------------------
def test_a_late_split_result_brings_its_digested_step_back(memory: MemoryRoot) -> None:
    """The loop moved past a call without its result; a manual rebuild digests it as interrupted;
    the result still arrives. The request sends the call again, with the result, after the boundary."""
    msgs = [
        *_head(),
        _a("m04", tool_use("u1", "read", {"path": "csv.ts"}), finish="tool-calls", t=30),
        _a("m05", text("The read is slow; I will wait for it."), t=40),
    ]
    s = opened(msgs)
    res = rebuild(s, memory, "manual", config=RebuildConfig(inflation_guard=False))
    assert res.outcome == "rebuilt" and res.digest_up_to == "m05"
    assert res.message is not None and res.message["parts"][0]["interruptedCalls"] == ["u1"]
    sync(s, [user("m06", tool_result("u1", LIVE), created=T0 + 50_000)])
    for fmt in FORMATS:
        result = built(s, memory, fmt)
        assert LIVE in sent(result) and "m04" in result.request.sources, fmt
        assert texts.steps_restated(["u1"]) in result.request.warnings, fmt


def test_a_late_inline_result_brings_its_digested_step_back(memory: MemoryRoot) -> None:
    msgs = [
        *_head(),
        _a("m04", tool("c1", "bash", {"command": "npm test"}, status="running"), finish="tool-calls", t=30),
        _a("m05", text("Waiting for the suite."), t=40),
    ]
    s = opened(msgs)
    res = rebuild(s, memory, "manual", config=RebuildConfig(inflation_guard=False))
    assert res.message is not None and res.message["parts"][0]["interruptedCalls"] == ["c1"]
    assert ids_of(built(s, memory, "ai-sdk")) == [res.message["info"]["id"], "m03"]  # still running: out
    sync(s, [_a("m04", tool("c1", "bash", {"command": "npm test"}, output=LIVE), finish="tool-calls", t=30)])
    for fmt in FORMATS:
        result = built(s, memory, fmt)
        assert LIVE in sent(result) and texts.steps_restated(["c1"]) in result.request.warnings, fmt


def ids_of(result: engine.BuildResult) -> list[str]:
    return list(dict.fromkeys(result.request.sources))
