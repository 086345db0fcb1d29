"""`mimo-sidecar inspect --json`: its numbers are the core's own, computed here through another path.

`inspect` drives the sidecar's service (open, a writer that succeeds, compute, build, insert,
build). The reference here calls the engine directly, step by step: open a core `Session`, store
the file's watermark, else the writer watermark, `engine.compute`, `engine.build`, the insert
gate, `engine.insert`, `engine.build`. Every number inspect prints must equal the engine's. Both
run at the same fixed clock (task archival and actor idle times depend on it) and read the same
memory root (the checkpoint section names its file, so the root's path counts in the section's
tokens), holding `checkpoint.md` from the template as inspect's temporary root does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mimo_sidecar.cli import inspect_command
from mimo_sidecar.core import engine, texts
from mimo_sidecar.core.checkpoint.template import CHECKPOINT_TEMPLATE
from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.core.estimate.jstext import est
from mimo_sidecar.core.memory.files import MemoryRoot
from mimo_sidecar.core.session.ids import IdMinter
from mimo_sidecar.core.session.session import Session, batch_from_messages
from mimo_sidecar.core.words import MAIN_AGENT
from mimo_sidecar.inspection import run as inspection_run
from mimo_sidecar.inspection.run import DEFAULT_WINDOW
from tests.real_sessions import (
    FORMAT_OF_FOLDER,
    absent_reason,
    imported,
    main_session_files,
    real_sessions_root,
    results_stamped_after,
)

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "sample" / "session.json"
NOW_MS = 1_790_000_000_000


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inspection_run, "wall_clock_ms", lambda: NOW_MS)


def inspect_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = inspect_command.main(["--json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


# -- the reference: the service, step by step ------------------------------------------------------
def template_root(tmp_path: Path, session_id: str) -> Path:
    root = tmp_path / "memory"
    checkpoint = root / "sessions" / session_id / "checkpoint.md"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_text(CHECKPOINT_TEMPLATE, encoding="utf-8")
    return root


def core_run(params: dict[str, Any], model: engine.ModelLimits, memory_root: Path) -> dict[str, Any]:
    """What the core computes for these params, called step by step through the engine."""
    session = Session(
        params["sessionId"],
        params.get("projectId"),
        ids_ascending=params.get("idsAscending", False),
        request_prefix=params.get("requestPrefix"),
    )
    batch = batch_from_messages(params["messages"])
    batch.tasks, batch.actors = params.get("tasks") or [], params.get("actors") or []
    batch.tool_name_map = params.get("toolNameMap") or {}
    session.apply(batch)
    writer = engine.writer_watermark(session)
    assert writer is not None
    stored = params.get("watermark") or writer.id  # the file's, else what a writer's success stores
    session.watermark = stored
    memory, config = MemoryRoot(str(memory_root)), RebuildConfig()
    computed = engine.compute(session, memory, config, model=model, now_ms=NOW_MS)
    before = engine.build(session, memory, config, now_ms=NOW_MS).request
    assert engine.insert_gate(session, memory, config, MAIN_AGENT) is None
    inserted = engine.insert(
        session, memory, config, watermark=stored, reason="auto", now_ms=NOW_MS, minter=IdMinter()
    )
    assert inserted.message is not None and inserted.render is not None
    after = engine.build(session, memory, config, now_ms=NOW_MS).request
    boundary = session.get(inserted.message["info"]["id"])
    assert boundary is not None
    return {
        "watermark": stored,
        "watermark_source": "file" if params.get("watermark") else "writer",
        "computed": computed,
        "before": before,
        "inserted": inserted,
        "after": after,
        # The boundary's share of the request after (D15's count; for its text, characters / 4).
        "boundary_tokens": after.message_tokens[boundary.id],
    }


def assert_matches_the_core(data: dict[str, Any], ref: dict[str, Any]) -> None:
    computed, inserted = ref["computed"], ref["inserted"]
    t = computed.trigger
    assert data["trigger"] == {
        "usable": t.usable,
        "count": t.count,
        "overflow": t.overflow,
        "usageRecovered": t.usage_recovered,
        "shouldRebuild": t.should_rebuild,
        "hard": t.hard,
        "budget": t.budget,
        "usageSource": t.usage_source,
        "warnings": list(t.warnings),
    }
    w = computed.watermark
    assert data["watermark"]["messageId"] == ref["watermark"]
    assert data["watermark"]["source"] == ref["watermark_source"]
    assert data["rebuild"]["statusText"] == texts.OUTCOME_TEXTS["rebuilt"]
    assert data["watermark"]["writer"] == {
        "messageId": w.id,
        "index": w.index,
        "tailTokens": w.tail_tokens,
        "tailTextBlocks": w.tail_text_blocks,
        "adjusted": w.adjusted,
    }
    assert data["preview"]["outcome"] == computed.preview_outcome
    rebuild = data["rebuild"]
    assert rebuild["outcome"] == inserted.outcome == "rebuilt"
    assert rebuild["digestUpTo"] == inserted.digest_up_to
    assert rebuild["compactedParts"] == len(inserted.compacted)
    sections = [
        (s["key"], s["tokens"], s["cap"], s["unit"], s["present"], s["truncated"], s["shed"], s["reason"])
        for s in rebuild["report"]["sections"]
    ]
    assert sections == [
        (s.key, s.tokens, s.cap, s.unit, s.present, s.truncated, s.shed, s.reason)
        for s in inserted.render.sections
    ]
    assert rebuild["report"]["totalTokens"] == inserted.render.total_tokens
    before, after = data["request"]["before"], data["request"]["after"]
    assert (before["messages"], before["estimatedTokens"]) == (
        len(ref["before"].messages),
        ref["before"].estimated_tokens,
    )
    assert (after["messages"], after["estimatedTokens"]) == (
        len(ref["after"].messages),
        ref["after"].estimated_tokens,
    )
    assert after["boundaryTokens"] == ref["boundary_tokens"]
    assert data["request"]["sizes"] == {
        "beforeTokens": inserted.sizes.before,
        "afterTokens": inserted.sizes.after,
    }
    assert inserted.sizes.after < inserted.sizes.before  # the inflation guard let it through
    assert data["estimateAccuracy"] == [
        {
            "providerId": a.provider_id,
            "modelId": a.model_id,
            "ratio": round(a.ratio, 3),
            "estimatedTokens": a.estimated,
            "usageTokens": a.counted,
            "steps": [
                {"messageId": s.message_id, "estimatedTokens": s.estimated, "usageTokens": s.counted}
                for s in a.steps
            ],
        }
        for a in computed.accuracy
    ]
    f = inserted.fidelity
    ask, tasks, error = f.newest_user_ask, f.tasks, f.newest_tool_error
    assert data["fidelity"] == {
        "newestUserAsk": {
            "status": ask.status,
            "messageId": ask.message_id,
            "appended": ask.appended,
            "reason": ask.reason,
        },
        "tasks": {
            "openHeld": tasks.open_held,
            "openListed": tasks.open_listed,
            "unlisted": [{"taskId": u.task_id, "reason": u.reason} for u in tasks.unlisted],
        },
        "newestToolError": None
        if error is None
        else {
            "messageId": error.message_id,
            "callId": error.call_id,
            "tool": error.tool,
            "inDigest": error.in_digest,
            "reason": error.reason,
        },
        "cutSections": list(f.cut_sections),
        "shedSections": list(f.shed_sections),
    }
    assert ask.status != "missing"  # D13: the newest user ask is never missing
    preview = [(s["key"], s["tokens"]) for s in data["preview"]["report"]["sections"]]
    assert preview == [(s.key, s.tokens) for s in computed.preview.sections]
    # The two splits add up to the totals they split.
    assert before["upToWatermarkTokens"] + before["afterWatermarkTokens"] == before["estimatedTokens"]
    assert after["boundaryTokens"] + after["keptTokens"] == after["estimatedTokens"]
    assert 0 < before["afterWatermarkTokens"] < before["estimatedTokens"]


# -- the bundled sample ----------------------------------------------------------------------------
@pytest.mark.parametrize("stored", [True, False], ids=["its-stored-watermark", "without-one"])
def test_json_on_the_sample_is_the_cores_own_numbers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, stored: bool
) -> None:
    """The sample as bundled rebuilds from its stored watermark; without one, from the watermark a
    writer starting now would cover."""
    params = json.loads(SAMPLE.read_text(encoding="utf-8"))
    path = SAMPLE
    if not stored:
        del params["watermark"]
        path = tmp_path / "no-watermark.json"
        path.write_text(json.dumps(params), encoding="utf-8")
    root = template_root(tmp_path, params["sessionId"])
    data = inspect_json(capsys, str(path), "--memory-root", str(root))
    m = params.pop("model")
    model = engine.ModelLimits(m["contextWindow"], 0, m["maxOutputTokens"], m["providerId"], m["modelId"])
    assert_matches_the_core(data, core_run(params, model, root))
    assert data["source"]["format"] == "session-open"
    assert data["model"]["source"] == "file" and data["model"]["contextWindow"] == m["contextWindow"]
    assert data["memory"] == {"root": str(root), "temporary": False, "checkpoint": "present"}
    # The sample is built so that its last step crossed the trigger line (examples/sample/README.md).
    assert data["trigger"]["shouldRebuild"] and data["trigger"]["count"] >= data["trigger"]["usable"]
    assert data["request"]["after"]["estimatedTokens"] < data["request"]["before"]["estimatedTokens"]


def test_without_a_memory_root_the_checkpoint_is_the_template(capsys: pytest.CaptureFixture[str]) -> None:
    data = inspect_json(capsys, str(SAMPLE), "--text")
    assert data["memory"] == {"root": None, "temporary": True, "checkpoint": "template"}
    checkpoint = next(s for s in data["rebuild"]["report"]["sections"] if s["key"] == "checkpoint")
    assert checkpoint["present"] and not Path(checkpoint["path"]).exists()  # deleted afterwards
    assert "# Session checkpoint" in data["rebuild"]["report"]["text"]
    assert data["rebuild"]["outcome"] == "rebuilt"


def test_json_keys_come_in_the_documented_order(capsys: pytest.CaptureFixture[str]) -> None:
    data = inspect_json(capsys, str(SAMPLE))
    assert list(data) == [
        "inspect", "source", "model", "trigger", "watermark", "memory", "preview", "rebuild",
        "request", "estimateAccuracy", "fidelity", "modelView", "toolCalls", "warnings",
    ]  # fmt: skip
    documented = (REPO / "docs" / "inspect.md").read_text(encoding="utf-8")
    for key in data:
        assert f"`{key}`" in documented, key
    assert "text" not in data["rebuild"]["report"]
    with_text = inspect_json(capsys, str(SAMPLE), "--text")
    text = with_text["rebuild"]["report"]["text"]
    assert text.startswith(texts.PREAMBLE) and "# Recent activity" in text
    assert with_text["rebuild"]["report"]["totalTokens"] == est(text)


def test_window_and_watermark_options(capsys: pytest.CaptureFixture[str]) -> None:
    base = inspect_json(capsys, str(SAMPLE))
    wide = inspect_json(capsys, str(SAMPLE), "--window", "1,000,000")
    assert wide["model"]["source"] == "option" and wide["model"]["contextWindow"] == 1_000_000
    assert wide["trigger"]["usable"] == 900_000 and not wide["trigger"]["shouldRebuild"]
    stored_index = base["watermark"]["indexInView"]
    params = json.loads(SAMPLE.read_text(encoding="utf-8"))
    main = [m for m in params["messages"] if m["info"].get("agentID", "main") == "main"]
    assert main[stored_index]["info"]["id"] == params["watermark"] == base["watermark"]["messageId"]
    earlier = main[stored_index - 40]["info"]["id"]
    moved = inspect_json(capsys, str(SAMPLE), "--watermark", earlier)
    assert moved["watermark"]["messageId"] == earlier and moved["watermark"]["source"] == "option"
    assert moved["watermark"]["indexInView"] == stored_index - 40
    assert moved["rebuild"]["outcome"] == "rebuilt"
    assert (
        moved["request"]["before"]["afterWatermarkTokens"] > base["request"]["before"]["afterWatermarkTokens"]
    )


def test_a_given_memory_root_is_read_and_left_as_it_was(capsys: pytest.CaptureFixture[str]) -> None:
    root = REPO / "examples" / "sample" / "memory"
    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    data = inspect_json(capsys, str(SAMPLE), "--memory-root", str(root))
    assert data["memory"] == {"root": str(root), "temporary": False, "checkpoint": "present"}
    assert data["watermark"]["source"] == "file"  # where the bundled checkpoint.md ends, as in the demo
    checkpoint = next(s for s in data["rebuild"]["report"]["sections"] if s["key"] == "checkpoint")
    assert checkpoint["present"] and checkpoint["path"].startswith(str(root))
    assert checkpoint["tokens"] > 1000  # the sample's own checkpoint, not the template
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == snapshot


def test_a_memory_root_without_checkpoint_answers_no_checkpoint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = inspect_json(capsys, str(SAMPLE), "--memory-root", str(tmp_path))
    assert data["memory"]["checkpoint"] == "missing"
    assert data["preview"]["outcome"] == data["rebuild"]["outcome"] == "no-checkpoint"
    assert data["request"]["after"] is None and data["rebuild"]["report"] is None
    dry_checkpoint = next(s for s in data["preview"]["report"]["sections"] if s["key"] == "checkpoint")
    assert dry_checkpoint["reason"] == "file missing"
    assert data["fidelity"]["newestUserAsk"]["status"] == "verbatim"  # the dry run's report
    assert list(tmp_path.iterdir()) == []  # nothing written there


# -- one real transcript per tool ------------------------------------------------------------------
def first_session_of_each_tool() -> list[Any]:
    """One main session file per tool folder (a skipped param, with the reason, when absent)."""
    root = real_sessions_root()
    if root is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason=absent_reason()), id="real-sessions-absent")]
    firsts = {f.parent.name: f for f in reversed(main_session_files(root))}
    return [pytest.param(firsts[k], id=k) for k in sorted(firsts)]


@pytest.mark.parametrize("path", first_session_of_each_tool())
def test_json_on_a_real_transcript_is_the_cores_own_numbers(
    path: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    params = imported(path).params
    root = template_root(tmp_path, params["sessionId"])
    data = inspect_json(capsys, str(path), "--memory-root", str(root))
    assert data["source"]["format"] == FORMAT_OF_FOLDER[path.parent.name]
    model = engine.model_from_history(_main_view_of(params)) or engine.ModelLimits(DEFAULT_WINDOW)
    assert data["model"]["contextWindow"] == model.context_window
    core = core_run(params, model, root)
    assert_matches_the_core(data, core)
    # the importer's tool-name map, used
    assert (data["rebuild"]["compactedParts"] > 0) == results_stamped_after(params, core["watermark"])


def test_a_params_files_tool_name_map_is_used(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The sample with its tools renamed as another agent names them: nothing is cleared, and the
    warning names them, until the file maps them back."""
    params = json.loads(SAMPLE.read_text(encoding="utf-8"))
    renamed = {"read": "ReadFile", "bash": "Shell"}
    for message in params["messages"]:
        for part in message["parts"]:
            if part.get("type") == "tool" and part["tool"] in renamed:
                part["tool"] = renamed[part["tool"]]
    path = tmp_path / "renamed.json"
    path.write_text(json.dumps(params), encoding="utf-8")
    root = template_root(tmp_path, params["sessionId"])
    bundled = inspect_json(capsys, str(SAMPLE), "--memory-root", str(root))
    unmapped = inspect_json(capsys, str(path), "--memory-root", str(root))
    assert unmapped["rebuild"]["compactedParts"] < bundled["rebuild"]["compactedParts"]
    assert any('"Shell" \u00d7' in w and '"ReadFile" \u00d7' in w for w in unmapped["warnings"])
    params["toolNameMap"] = {new: old for old, new in renamed.items()}
    path.write_text(json.dumps(params), encoding="utf-8")
    mapped = inspect_json(capsys, str(path), "--memory-root", str(root))
    assert mapped["rebuild"]["compactedParts"] == bundled["rebuild"]["compactedParts"]
    assert not [w for w in mapped["warnings"] if "toolNameMap" in w]


def _main_view_of(params: dict[str, Any]) -> list[Any]:
    session = Session(params["sessionId"])
    session.apply(batch_from_messages(params["messages"]))
    return list(session.context_view("main"))
