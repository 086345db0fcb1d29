"""The insert flow of the service (`service.insert_flow`): the config snapshot, the writer wait,
status, and a session closed during the wait."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mimo_sidecar.core import texts
from mimo_sidecar.core.config import PushCaps, RebuildConfig
from mimo_sidecar.core.errors import DomainError, ErrorCode
from mimo_sidecar.core.outcomes import Inserted
from mimo_sidecar.service import InsertRequest, OpenRequest, SidecarService
from tests.unit.builders import assistant, reasoning, text, usage, user, write_checkpoint

SID = "ses_flow"
T0 = 1_700_000_000_000


class RecordedStatus:
    def __init__(self, log: StatusLog, session_id: str) -> None:
        self.log, self.session_id = log, session_id

    async def busy(self, message: str) -> None:
        self.log.append(("busy", message))

    def idle(self) -> None:
        self.log.append(("idle", ""))


class StatusLog(list[tuple[str, str]]):
    """The statuses shown, in order; `waiting` is set once the writer wait began."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = asyncio.Event()

    def append(self, item: tuple[str, str]) -> None:
        super().append(item)
        if item == ("busy", texts.PREPARING_STATUS):
            self.waiting.set()


def history() -> list[dict]:
    """m02's long reasoning is what a rebuild covering it saves (else the inflation guard refuses)."""
    msgs = [
        user("m01", text("please fix the lexer"), created=T0),
        assistant(
            "m02",
            reasoning("weighing the lexer " * 600),
            text("looking"),
            created=T0 + 10,
            tokens=usage(1000, 100),
        ),
        user("m03", text("also check the parser"), created=T0 + 20),
        assistant("m04", text("tests pass"), created=T0 + 30, tokens=usage(2000, 100)),
    ]
    return [m.to_json() for m in msgs]


@pytest.fixture
def memory_root(tmp_path: Path) -> Path:
    heading = "# Session checkpoint\nTopic: lexer rewrite\n\n## §1 Active intent\n\n"
    write_checkpoint(tmp_path, SID, heading + "Fix the lexer. " * 40)
    return tmp_path


def service(memory_root: Path, log: StatusLog) -> SidecarService:
    svc = SidecarService(
        memory_root=memory_root, status=lambda sid: RecordedStatus(log, sid), clock=lambda: T0
    )
    svc.open(OpenRequest(SID, messages=history(), watermark="m02"))
    return svc


def checkpoint_cap(inserted: Inserted) -> int | None:
    assert inserted.result is not None and inserted.result.render is not None
    return next(s.cap for s in inserted.result.render.sections if s.key == "checkpoint")


async def until_waiting(log: StatusLog) -> None:
    await asyncio.wait_for(log.waiting.wait(), 5)


async def test_config_changed_during_the_writer_wait_does_not_change_that_insert(memory_root: Path) -> None:
    log = StatusLog()
    svc = service(memory_root, log)
    svc.writer_started(SID, "m04")
    insert = asyncio.ensure_future(svc.insert(InsertRequest(SID, "auto", "main")))
    await until_waiting(log)
    changed = RebuildConfig(
        push_caps=PushCaps(checkpoint=7),
        writer_wait_with_watermark_ms=0,
        checkpoint_disabled=True,  # would stop the insert at its gate, were the gate re-run
    )
    svc.configure(changed)
    svc.writer_finished(SID, "success")
    inserted = await asyncio.wait_for(insert, 5)
    assert inserted.outcome == "rebuilt"
    assert inserted.wait is not None and inserted.wait.result == "success"
    assert inserted.wait.bound_ms == RebuildConfig().writer_wait_with_watermark_ms  # the old bound
    assert checkpoint_cap(inserted) == PushCaps().checkpoint  # the old caps
    assert log[-1] == ("idle", "")

    svc.configure(RebuildConfig(push_caps=PushCaps(checkpoint=7)))
    later = await svc.insert(InsertRequest(SID, "auto", "main"))  # the next request sees the change
    assert later.outcome == "rebuilt" and checkpoint_cap(later) == 7


async def test_cold_start_waits_for_the_first_writer_and_reruns_the_gate(memory_root: Path) -> None:
    log = StatusLog()
    svc = service(memory_root, log)
    svc.sessions.require(SID).session.watermark = None
    svc.writer_started(SID, "m02")
    insert = asyncio.ensure_future(svc.insert(InsertRequest(SID, "manual", "main")))
    await until_waiting(log)
    svc.writer_finished(SID, "success")
    inserted = await asyncio.wait_for(insert, 5)
    assert inserted.outcome == "rebuilt" and inserted.result is not None
    assert inserted.result.watermark == "m02"
    assert log[0] == ("busy", texts.MANUAL_REBUILD_STATUS)
    assert ("busy", texts.OUTCOME_TEXTS["rebuilt"]) in log and log[-1] == ("idle", "")


async def test_cold_start_writer_failure_is_writer_failed(memory_root: Path) -> None:
    svc = service(memory_root, StatusLog())
    svc.sessions.require(SID).session.watermark = None
    svc.writer_started(SID, "m02")
    insert = asyncio.ensure_future(svc.insert(InsertRequest(SID, "auto", "main")))
    await asyncio.sleep(0.01)
    svc.writer_finished(SID, "failure")
    inserted = await asyncio.wait_for(insert, 5)
    assert (inserted.outcome, inserted.detail) == ("writer-failed", texts.OUTCOME_DETAILS["writer-failed"])
    assert inserted.result is None and inserted.wait is not None and inserted.wait.result == "failure"


async def test_gate_outcomes_carry_their_detail_and_a_notice_once(memory_root: Path) -> None:
    svc = service(memory_root, StatusLog())
    other = await svc.insert(InsertRequest(SID, "auto", "explore-1"))
    assert (other.outcome, other.detail) == ("not-main-agent", texts.OUTCOME_DETAILS["not-main-agent"])
    svc.configure(RebuildConfig(memory_disable_write=True))
    first = await svc.insert(InsertRequest(SID, "auto", "main"))
    second = await svc.insert(InsertRequest(SID, "auto", "main"))
    assert first.notice is not None and first.notice.text == texts.NOTICES["memory-write-off"]
    assert second.outcome == "memory-write-off" and second.notice is None


async def test_a_session_closed_and_reopened_during_the_wait_is_not_written_to(memory_root: Path) -> None:
    log = StatusLog()
    svc = service(memory_root, log)
    svc.writer_started(SID, "m04")
    insert = asyncio.ensure_future(svc.insert(InsertRequest(SID, "auto", "main")))
    await until_waiting(log)
    svc.close(SID)
    svc.open(OpenRequest(SID, messages=history(), watermark="m02"))
    with pytest.raises(DomainError) as exc:
        await asyncio.wait_for(insert, 5)
    assert exc.value.code is ErrorCode.SESSION_NOT_FOUND
    assert svc.describe(SID).revision == 1  # the new session was not touched


async def test_cold_start_without_a_checkpoint_file_waits_with_the_long_bound(memory_root: Path) -> None:
    """A stored watermark but no checkpoint.md yet, and a writer in flight: the insert waits for it
    with the no-watermark bound (behavior.md#cold-start), then rebuilds from the file it wrote."""
    log = StatusLog()
    svc = service(memory_root, log)
    checkpoint = memory_root / "sessions" / SID / "checkpoint.md"
    text_before = checkpoint.read_text()
    checkpoint.unlink()
    svc.configure(RebuildConfig(writer_wait_with_watermark_ms=10, writer_wait_without_watermark_ms=5000))
    svc.writer_started(SID, "m04")
    insert = asyncio.ensure_future(svc.insert(InsertRequest(SID, "auto", "main")))
    await until_waiting(log)
    await asyncio.sleep(0.05)  # longer than the short bound: the long one applies
    assert not insert.done()
    checkpoint.write_text(text_before)
    svc.writer_finished(SID, "success")
    inserted = await asyncio.wait_for(insert, 5)
    assert inserted.outcome == "rebuilt" and inserted.wait is not None
    assert (inserted.wait.result, inserted.wait.bound_ms) == ("success", 5000)
    assert inserted.result is not None and inserted.result.watermark == "m04"  # the writer's
    assert log == [("busy", texts.PREPARING_STATUS), ("idle", "")]


async def test_cold_start_timeout_is_writer_failed_and_leaves_the_writer(memory_root: Path) -> None:
    svc = service(memory_root, StatusLog())
    svc.sessions.require(SID).session.watermark = None
    svc.configure(RebuildConfig(writer_wait_without_watermark_ms=30))
    svc.writer_started(SID, "m02")
    inserted = await asyncio.wait_for(svc.insert(InsertRequest(SID, "auto", "main")), 5)
    assert inserted.outcome == "writer-failed" and inserted.wait is not None
    assert inserted.wait.result == "timeout" and inserted.wait.bound_ms == 30
    assert svc.describe(SID).writer.in_flight and svc.describe(SID).revision == 1


async def test_a_cold_start_cancelled_during_its_wait_changes_nothing(memory_root: Path) -> None:
    log = StatusLog()
    svc = service(memory_root, log)
    svc.sessions.require(SID).session.watermark = None
    svc.writer_started(SID, "m02")
    before = svc.describe(SID)
    insert = asyncio.ensure_future(svc.insert(InsertRequest(SID, "auto", "main")))
    await until_waiting(log)
    insert.cancel()
    with pytest.raises(asyncio.CancelledError):
        await insert
    assert svc.describe(SID) == before and log[-1] == ("idle", "")
    svc.writer_finished(SID, "success")  # the writer is still the one in flight, and settles
    assert (await svc.insert(InsertRequest(SID, "auto", "main"))).outcome == "rebuilt"


async def test_with_nothing_in_flight_the_cold_start_gates_answer_at_once(memory_root: Path) -> None:
    log = StatusLog()
    svc = service(memory_root, log)
    svc.sessions.require(SID).session.watermark = None
    no_watermark = await svc.insert(InsertRequest(SID, "auto", "main"))
    (memory_root / "sessions" / SID / "checkpoint.md").unlink()
    no_checkpoint = await svc.insert(InsertRequest(SID, "auto", "main"))
    assert (no_watermark.outcome, no_checkpoint.outcome) == ("no-watermark", "no-checkpoint")
    assert no_watermark.wait is None and no_checkpoint.wait is None
    assert [state for state, _ in log if state == "busy"] == []  # nothing waited, nothing shown


class SettlingStatus(RecordedStatus):
    """A host that commits the writer the moment it sees "Preparing…", before the wait begins:
    sending the status yields, and the commit lands in between."""

    def __init__(self, log: StatusLog, session_id: str, settle: list[SidecarService]) -> None:
        super().__init__(log, session_id)
        self.settle = settle

    async def busy(self, message: str) -> None:
        await super().busy(message)
        if message == texts.PREPARING_STATUS:
            self.settle[0].writer_finished(SID, "success")
            await asyncio.sleep(0)


@pytest.mark.parametrize("cold", [True, False], ids=["cold-start", "stored-watermark"])
async def test_a_writer_settled_while_the_busy_status_goes_out_is_the_waits_answer(
    memory_root: Path, cold: bool
) -> None:
    log = StatusLog()
    box: list[SidecarService] = []
    svc = SidecarService(
        memory_root=memory_root, status=lambda sid: SettlingStatus(log, sid, box), clock=lambda: T0
    )
    box.append(svc)
    svc.open(OpenRequest(SID, messages=history(), watermark=None if cold else "m02"))
    svc.writer_started(SID, "m02")
    inserted = await asyncio.wait_for(svc.insert(InsertRequest(SID, "auto", "main")), 5)
    assert inserted.outcome == "rebuilt"  # not writer-failed (a wait that found "no writer")
    assert inserted.wait is not None and inserted.wait.result == "success"


# -- D21: which watermark the boundary gets after a writer wait ---------------------------------
async def _insert_during_a_writer(
    memory_root: Path, outcome: str | None, config: RebuildConfig | None = None
) -> Inserted:
    """m02 stored; a writer covering m03 runs; an insert arrives and waits; the writer settles with
    `outcome` (None: it never does, the short bound ends the wait)."""
    svc = service(memory_root, StatusLog())
    if config is not None:
        svc.configure(config)
    svc.writer_started(SID, "m03")
    insert = asyncio.ensure_future(svc.insert(InsertRequest(SID, "auto", "main")))
    await asyncio.sleep(0.01)
    if outcome is not None:
        svc.writer_finished(SID, outcome)  # type: ignore[arg-type]
    return await asyncio.wait_for(insert, 5)


def _covered(inserted: Inserted) -> str:
    assert inserted.result is not None and inserted.result.message is not None
    return str(inserted.result.message["parts"][0]["coveredUpTo"])


async def test_the_boundary_follows_the_writer_it_waited_for(memory_root: Path) -> None:
    inserted = await _insert_during_a_writer(memory_root, "success")
    assert inserted.outcome == "rebuilt" and inserted.wait is not None and inserted.wait.result == "success"
    assert inserted.result is not None and inserted.result.watermark == "m03" == _covered(inserted)
    # the boundary's time and microcompaction follow the same W: stamped after m03
    boundary = inserted.result.message
    assert boundary is not None and boundary["info"]["time"]["created"] == T0 + 21
    assert texts.watermark_followed_writer("m02", "m03") in inserted.result.warnings


@pytest.mark.parametrize("outcome", ["failure", None])
async def test_a_writer_that_did_not_succeed_leaves_the_stored_watermark(
    memory_root: Path, outcome: str | None
) -> None:
    config = RebuildConfig(writer_wait_with_watermark_ms=50)
    inserted = await _insert_during_a_writer(memory_root, outcome, config)
    assert inserted.wait is not None and inserted.wait.result == ("failure" if outcome else "timeout")
    assert inserted.result is not None and inserted.result.watermark == "m02" == _covered(inserted)
    assert not [w for w in inserted.result.warnings if "watermark" in w]


async def test_the_reference_setting_keeps_the_watermark_read_before_the_wait(memory_root: Path) -> None:
    reference = RebuildConfig(follow_writer_watermark=False)
    inserted = await _insert_during_a_writer(memory_root, "success", reference)
    assert inserted.outcome == "rebuilt" and inserted.result is not None
    assert inserted.result.watermark == "m02" == _covered(inserted)  # D4
    assert texts.watermark_kept_before_wait("m02", "m03") in inserted.result.warnings
