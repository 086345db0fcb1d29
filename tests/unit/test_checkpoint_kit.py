"""The checkpoint writer kit on the service (behavior.md#writer-kit): checkpoint/prepare, the
instructions in every format, checkpoint/commit and its refusals, the template on open, and a
commit that ends a rebuild's writer wait."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mimo_sidecar.core import texts
from mimo_sidecar.core.checkpoint.template import CHECKPOINT_TEMPLATE
from mimo_sidecar.core.checkpoint.writer_brief import CURRENT_OPEN, INSTRUCTIONS_LEAD, NO_CURRENT
from mimo_sidecar.core.config import PushCaps, RebuildConfig
from mimo_sidecar.core.errors import DomainError, ErrorCode
from mimo_sidecar.core.formats import FORMATS, BuildOutput
from mimo_sidecar.core.formats.rules import check
from mimo_sidecar.core.memory import writes as memory_writes
from mimo_sidecar.service import InsertRequest, OpenRequest, SidecarService
from mimo_sidecar.testing.standin_writer import standin_checkpoint
from tests.fuzz import examples
from tests.unit.builders import assistant, text, tool, usage, user
from tests.unit.test_format_properties import PREFIX, SHAPES, session_messages, steps
from tests.unit.test_memory_writes import snapshot

SID = "ses_kit"
T0 = 1_700_000_000_000
WRITTEN = "# Session checkpoint\n\nTopic: the lexer rewrite\n\n## §1 Active intent\n_x_\n- stream tokens\n"


def history(*, end_with_user: bool = False) -> list[dict[str, Any]]:
    msgs = [
        user("m01", text("please rewrite the lexer to stream tokens"), created=T0),
        assistant(
            "m02",
            text("reading it first"),
            # a long result: the rebuild clears it, so it gains (the inflation guard lets it through)
            tool("c1", "read", {"filePath": "src/lexer.ts"}, output="export function lex() {}\n" * 400),
            finish="tool-calls",
            created=T0 + 10,
            tokens=usage(1000, 100),
        ),
        user("m03", text("never change the public API"), created=T0 + 20),
        assistant(
            "m04",
            tool("c2", "bash", {"command": "npm test"}, status="error", error="1 failing"),
            finish="tool-calls",
            created=T0 + 30,
            tokens=usage(2000, 100),
        ),
    ]
    if end_with_user:
        msgs.append(user("m05", text("and keep going"), created=T0 + 40))
    return [m.to_json() for m in msgs]


def service(root: Path, config: RebuildConfig | None = None, **open_kw: Any) -> SidecarService:
    svc = SidecarService(memory_root=root, config=config, clock=lambda: T0)
    svc.open(OpenRequest(SID, messages=open_kw.pop("messages", history()), **open_kw))
    return svc


def session_dir(root: Path) -> Path:
    return root / "sessions" / SID


def strings(value: Any) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [s for item in items for s in strings(item)]


def code_of(call: Any) -> tuple[ErrorCode, str | None, dict[str, Any]]:
    with pytest.raises(DomainError) as err:
        call()
    return err.value.code, err.value.path, err.value.data


# -- checkpoint/prepare -----------------------------------------------------------------------------
def test_prepare_registers_the_writer_once_and_prepares_the_one_in_flight_after(tmp_path: Path) -> None:
    svc = service(tmp_path)
    first = svc.prepare_writer(SID)
    assert first.started is True and first.watermark == svc.describe(SID).writer.end_message_id
    again = svc.prepare_writer(SID)
    assert again.started is False and again.watermark == first.watermark
    assert again.result.request.messages == first.result.request.messages  # deterministic
    assert svc.describe(SID).writer.in_flight and svc.describe(SID).writer.settlements == 0


def test_prepare_covers_the_given_watermark_and_the_view_up_to_it(tmp_path: Path) -> None:
    svc = service(tmp_path)
    prepared = svc.prepare_writer(SID, "m02")
    assert prepared.watermark == "m02" and prepared.started
    assert {s for group in prepared.result.request.source_groups for s in group} == {"m01", "m02"}
    assert "message m02" in prepared.instructions


def test_prepare_refusals_register_nothing(tmp_path: Path) -> None:
    svc = service(tmp_path)
    code, field, data = code_of(lambda: svc.prepare_writer(SID, "nope"))
    assert (code, field, data["messageId"]) == (ErrorCode.MESSAGE_NOT_FOUND, "watermark", "nope")
    assert svc.describe(SID).writer.in_flight is False
    empty = SidecarService(memory_root=tmp_path)
    empty.open(OpenRequest("empty"))
    code, field, _ = code_of(lambda: empty.prepare_writer("empty"))
    assert (code, field) == (ErrorCode.WATERMARK_UNAVAILABLE, "watermark")
    assert empty.describe("empty").writer.in_flight is False
    svc.configure(RebuildConfig(memory_disable_write=True))
    code, _, data = code_of(lambda: svc.prepare_writer(SID))
    assert (code, data["reason"]) == (ErrorCode.MEMORY_WRITE_FAILED, "memory-write-off")
    assert svc.describe(SID).writer.in_flight is False
    svc.configure(RebuildConfig())
    svc.prepare_writer(SID, "m02")
    code, field, data = code_of(lambda: svc.prepare_writer(SID, "m04"))
    assert (code, field) == (ErrorCode.WRITER_STATE, "watermark")
    assert data["expected"] == "m02" and data["actual"] == "m04"
    assert svc.describe(SID).writer.end_message_id == "m02"


def test_the_instructions_carry_the_current_checkpoint_read_through_the_memory_root(tmp_path: Path) -> None:
    svc = service(tmp_path)
    assert NO_CURRENT in svc.prepare_writer(SID).instructions  # no file yet
    session_dir(tmp_path).mkdir(parents=True)
    (session_dir(tmp_path) / "checkpoint.md").write_text(WRITTEN, encoding="utf-8")
    prepared = svc.prepare_writer(SID)
    assert prepared.current == WRITTEN and prepared.warnings == []
    assert f"{CURRENT_OPEN}\n{WRITTEN}" in prepared.instructions
    assert prepared.checkpoint_path == str(session_dir(tmp_path) / "checkpoint.md")


def test_an_unreadable_current_checkpoint_is_reported_not_silently_dropped(tmp_path: Path) -> None:
    svc = service(tmp_path)
    session_dir(tmp_path).mkdir(parents=True)
    (session_dir(tmp_path) / "checkpoint.md").write_bytes(b"# Session\0checkpoint\n")
    prepared = svc.prepare_writer(SID)
    assert prepared.current is None and NO_CURRENT in prepared.instructions
    assert prepared.warnings == [texts.current_checkpoint_unusable(prepared.checkpoint_path, "binary")]


def test_a_checkpoint_outside_the_root_is_never_read(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "secret.md"
    outside.write_text("# Secret\nTopic: not yours\n", encoding="utf-8")
    (root / "sessions" / SID).mkdir(parents=True)
    (root / "sessions" / SID / "checkpoint.md").symlink_to(outside)
    prepared = service(root).prepare_writer(SID)
    assert prepared.current is None and "not yours" not in prepared.instructions
    assert "outside-root" in prepared.warnings[0]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("end_with_user", [False, True])
def test_the_instructions_close_the_request_in_every_format_within_the_provider_rules(
    tmp_path: Path, fmt: str, end_with_user: bool
) -> None:
    # The host's tools: Anthropic rejects a history with calls and no tools (anthropic/tools-required).
    svc = service(tmp_path, messages=history(end_with_user=end_with_user), request_prefix=PREFIX)
    watermark = "m05" if end_with_user else "m04"
    prepared = svc.prepare_writer(SID, watermark, BuildOutput(fmt))  # type: ignore[arg-type]
    request = prepared.result.request
    assert (
        check(fmt, request.messages, prefix=prepared.result.prefix.request, overrides=request.overrides) == []
    )
    last = request.messages[-1]
    assert last.get("role") == "user" or last.get("type") == "message" and last["role"] == "user"
    assert prepared.instructions in strings(last)
    assert sum(INSTRUCTIONS_LEAD in x for x in strings(request.messages)) == 1
    assert (
        watermark in request.source_groups[-1]
    )  # the instructions' turn is the watermark's, or merged into it


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.sampled_from(SHAPES), generated=st.lists(steps, min_size=1, max_size=10))
def test_any_writer_request_with_its_instructions_keeps_the_provider_rules(
    shape: str, generated: list[tuple[Any, ...]]
) -> None:
    svc = SidecarService(memory_root="/nonexistent-kit-root")
    svc.open(OpenRequest(SID, messages=session_messages(shape, generated), request_prefix=PREFIX))
    for fmt in FORMATS:
        try:
            prepared = svc.prepare_writer(SID, output=BuildOutput(fmt))  # type: ignore[arg-type]
        except DomainError as err:
            assert err.code == ErrorCode.WATERMARK_UNAVAILABLE  # nothing in the view
            return
        request = prepared.result.request
        violations = check(
            fmt, request.messages, prefix=prepared.result.prefix.request, overrides=request.overrides
        )
        assert violations == [], (fmt, violations)
        assert [x for x in strings(request.messages[-1]) if INSTRUCTIONS_LEAD in x] == [prepared.instructions]


# -- checkpoint/commit ------------------------------------------------------------------------------
def test_commit_writes_the_file_and_settles_the_writer_as_a_success(tmp_path: Path) -> None:
    svc = service(tmp_path)
    prepared = svc.prepare_writer(SID, "m02")
    committed = svc.commit_checkpoint(SID, WRITTEN, prepared.watermark)
    path = session_dir(tmp_path) / "checkpoint.md"
    assert path.read_text(encoding="utf-8") == WRITTEN and os.listdir(session_dir(tmp_path)) == [
        "checkpoint.md"
    ]
    assert committed.created is True and committed.bytes_written == len(WRITTEN.encode())
    assert committed.path == str(path) and committed.warnings == []
    assert committed.finish.watermark == "m02" and svc.describe(SID).watermark == "m02"
    assert committed.finish.writer.in_flight is False and committed.finish.writer.last_outcome == "success"
    svc.prepare_writer(SID, "m04")
    again = svc.commit_checkpoint(SID, WRITTEN.replace("lexer", "parser"))  # no watermark: the one in flight
    assert again.created is False and svc.describe(SID).watermark == "m04"
    assert "parser" in path.read_text(encoding="utf-8")


def test_commit_promotes_a_queued_writer_like_writer_finished(tmp_path: Path) -> None:
    svc = service(tmp_path)
    svc.prepare_writer(SID, "m02")
    svc.writer_started(SID, "m04")  # queued behind it
    committed = svc.commit_checkpoint(SID, WRITTEN, "m02")
    assert committed.finish.watermark == "m02" and committed.finish.promoted == "m04"
    assert svc.prepare_writer(SID).watermark == "m04"  # the promoted writer is the one prepared next


def test_commit_warns_about_what_the_readers_will_do(tmp_path: Path) -> None:
    svc = service(tmp_path, config=RebuildConfig(push_caps=PushCaps(checkpoint=20)))
    svc.prepare_writer(SID)
    committed = svc.commit_checkpoint(SID, "# notes\n\n" + "- a long line of findings\n" * 10)
    assert committed.warnings[0] == texts.CHECKPOINT_NO_TOPIC
    assert (
        committed.warnings[1].startswith("checkpoint.md: ")
        and "over push_caps.checkpoint (20)" in committed.warnings[1]
    )
    svc.configure(RebuildConfig())
    svc.prepare_writer(SID)
    assert svc.commit_checkpoint(SID, CHECKPOINT_TEMPLATE).warnings == [texts.CHECKPOINT_IS_TEMPLATE]


OLD = "# Session checkpoint\n\nTopic: old\n"
Setup = Any  # (SidecarService, tmp_path) -> None: puts the case in place before the snapshot


def no_setup(svc: SidecarService, tmp: Path) -> None:
    return None


def configured(**config: Any) -> Setup:
    return lambda svc, tmp: svc.configure(RebuildConfig(**config))


def writer_failed(svc: SidecarService, tmp: Path) -> None:
    svc.writer_finished(SID, "failure")


def no_memory_root(svc: SidecarService, tmp: Path) -> None:
    svc._memory = None  # a service nobody initialized


def linked_out_of_the_root(svc: SidecarService, tmp: Path) -> None:
    target = session_dir(tmp / "root") / "checkpoint.md"
    target.unlink()
    (tmp / "outside.md").write_text(OLD, encoding="utf-8")
    target.symlink_to(tmp / "outside.md")


# name: (setup, content, watermark, code, field, data reason)
REFUSALS: dict[str, tuple[Setup, str, str | None, ErrorCode, str | None, str | None]] = {
    "nul": (no_setup, "# x\0y\n", None, ErrorCode.INVALID_CHECKPOINT, "content", "nul"),
    "surrogate": (no_setup, "# x \ud800\n", None, ErrorCode.INVALID_CHECKPOINT, "content", "surrogate"),
    "blank": (no_setup, " \n\t\n", None, ErrorCode.INVALID_CHECKPOINT, "content", "blank"),
    "too-large": (
        configured(commit_max_bytes=64),
        "# " + "\u00e9" * 40,
        None,
        ErrorCode.INVALID_CHECKPOINT,
        "content",
        "too-large",
    ),
    "other-watermark": (no_setup, WRITTEN, "m04", ErrorCode.WRITER_STATE, "watermark", None),
    "no-writer": (writer_failed, WRITTEN, None, ErrorCode.WRITER_STATE, "sessionId", None),
    "memory-write-off": (
        configured(memory_disable_write=True),
        WRITTEN,
        None,
        ErrorCode.MEMORY_WRITE_FAILED,
        None,
        "memory-write-off",
    ),
    "no-memory-root": (no_memory_root, WRITTEN, None, ErrorCode.MEMORY_WRITE_FAILED, None, "no-memory-root"),
    "outside-root": (
        linked_out_of_the_root,
        WRITTEN,
        None,
        ErrorCode.MEMORY_WRITE_FAILED,
        None,
        "outside-root",
    ),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_every_refused_commit_leaves_the_disk_and_the_writer_as_they_were(tmp_path: Path, case: str) -> None:
    setup, content, watermark, code, field, reason = REFUSALS[case]
    root = tmp_path / "root"
    session_dir(root).mkdir(parents=True)
    (session_dir(root) / "checkpoint.md").write_text(OLD, encoding="utf-8")
    svc = service(root)
    svc.prepare_writer(SID, "m02")
    setup(svc, tmp_path)
    before, writer = snapshot(tmp_path), svc.describe(SID).writer
    with pytest.raises(DomainError) as err:
        svc.commit_checkpoint(SID, content, watermark)
    assert err.value.code == code and err.value.path == field
    if reason is not None:
        assert err.value.data["reason"] == reason
    assert snapshot(tmp_path) == before  # same entries, same bytes: nothing written, no temporary file
    assert svc.describe(SID).writer == writer and svc.describe(SID).watermark is None


def test_a_failure_mid_write_keeps_the_old_checkpoint_and_the_writer_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_dir(tmp_path).mkdir(parents=True)
    (session_dir(tmp_path) / "checkpoint.md").write_text(OLD, encoding="utf-8")
    svc = service(tmp_path)
    svc.prepare_writer(SID, "m02")
    before = snapshot(tmp_path)

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(memory_writes.os, "replace", full_disk)
    code, field, data = code_of(lambda: svc.commit_checkpoint(SID, WRITTEN))
    monkeypatch.undo()
    assert code == ErrorCode.MEMORY_WRITE_FAILED and data["reason"] == "os-error"
    assert snapshot(tmp_path) == before
    assert svc.describe(SID).writer.in_flight and svc.describe(SID).watermark is None
    svc.commit_checkpoint(SID, WRITTEN)  # the host may simply retry
    assert svc.describe(SID).watermark == "m02"


# -- the template on open ---------------------------------------------------------------------------
def test_open_creates_a_missing_checkpoint_from_the_template_and_never_replaces_one(tmp_path: Path) -> None:
    svc = SidecarService(memory_root=tmp_path)
    opened = svc.open(OpenRequest(SID, messages=history()), create_checkpoint=True)
    path = session_dir(tmp_path) / "checkpoint.md"
    assert opened.checkpoint_created is True and opened.revision == 1
    assert path.read_text(encoding="utf-8") == CHECKPOINT_TEMPLATE
    assert os.listdir(session_dir(tmp_path)) == ["checkpoint.md"]
    path.write_text(WRITTEN, encoding="utf-8")
    svc.close(SID)
    assert svc.open(OpenRequest(SID, messages=history()), create_checkpoint=True).checkpoint_created is False
    assert path.read_text(encoding="utf-8") == WRITTEN
    assert svc.open(OpenRequest("plain")).checkpoint_created is None  # not asked
    assert not (tmp_path / "sessions" / "plain").exists()


def test_a_template_that_cannot_be_written_fails_the_open_and_keeps_nothing(tmp_path: Path) -> None:
    svc = SidecarService(memory_root=tmp_path, config=RebuildConfig(memory_disable_write=True))
    code, _, data = code_of(lambda: svc.open(OpenRequest(SID), create_checkpoint=True))
    assert code == ErrorCode.MEMORY_WRITE_FAILED and data["reason"] == "memory-write-off"
    assert SID not in svc.sessions and not (tmp_path / "sessions").exists()
    gone = SidecarService(memory_root=tmp_path / "gone")
    code, _, data = code_of(lambda: gone.open(OpenRequest(SID), create_checkpoint=True))
    assert data["reason"] == "no-root" and SID not in gone.sessions
    gone.open(OpenRequest(SID))  # the same open without the option works


# -- the whole loop on the service ------------------------------------------------------------------
async def test_prepare_standin_commit_during_a_cold_start_wait_rebuilds_from_the_committed_file(
    tmp_path: Path,
) -> None:
    svc = SidecarService(memory_root=tmp_path, clock=lambda: T0)
    svc.open(OpenRequest(SID, messages=history()), create_checkpoint=True)
    prepared = svc.prepare_writer(SID)
    insert = asyncio.ensure_future(svc.insert(InsertRequest(SID, "auto", "main")))
    await asyncio.sleep(0.05)
    assert not insert.done()  # cold start: no watermark yet, the writer is running
    reply = standin_checkpoint(
        prepared.result.request.messages, prepared.current, sources=prepared.result.request.sources
    )
    svc.commit_checkpoint(SID, reply, prepared.watermark)
    inserted = await asyncio.wait_for(insert, 5)
    assert inserted.outcome == "rebuilt" and inserted.wait is not None and inserted.wait.result == "success"
    assert inserted.result is not None and inserted.result.message is not None
    boundary = "\n".join(p.get("text", "") for p in inserted.result.message["parts"])
    assert "Topic: please rewrite the lexer to stream tokens" in boundary
    assert "## §1 Active intent" in boundary and "never change the public API" in boundary
