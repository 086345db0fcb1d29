"""The checkpoint writer kit (behavior.md#writer-kit): what lets a host run a writer with one model
call.

- `prepare`: the writer's request, in any output format, with the writer's instructions
  (`core.checkpoint.writer_brief`, the current `checkpoint.md` included) as its last user content.
  It registers the writer when none is in flight, so prepare → model → commit is the whole cycle; the caller's
  `answer` is made first, so a writer is never registered by a request that is not answered.
- `commit`: the model's reply written as `checkpoint.md` (atomically, inside the memory root), then
  the in-flight writer settled as a success: the effect of `checkpoint/writerFinished` success.
  Every check comes first; a refused commit writes nothing and leaves the writer in flight.
- `create_template`: a missing `checkpoint.md` created from the template (`session/open`
  `createCheckpoint`); an existing file is never replaced.

A host that writes the file itself keeps the handshake (`writers.start`, `writers.finish`).
Everything here is synchronous: between its checks and its settlement no other request runs, so
the writer a commit checked is the writer it settles.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..core import engine, texts
from ..core.checkpoint.content import content_problem, content_warnings
from ..core.checkpoint.template import CHECKPOINT_TEMPLATE
from ..core.checkpoint.writer_brief import writer_instructions
from ..core.errors import DomainError, ErrorCode
from ..core.formats import BuildOutput
from ..core.memory.files import MemoryRoot
from ..core.memory.writes import WriteRefused, write_atomically
from ..core.outcomes import Committed, Prepared
from ..core.tool_pointers import PointerTexts
from . import writers
from .insert_flow import Settings
from .sessions import SessionSlot

T = TypeVar("T")


def prepare(
    slot: SessionSlot,
    settings: Settings,
    watermark: str | None,
    output: BuildOutput,
    now_ms: int,
    answer: Callable[[Prepared], T],
) -> T:
    """The in-flight writer's request with its instructions; registers a writer when none is in
    flight (covering `watermark`, or the one `rebuild/compute` reports). Refused while memory
    writing is disabled, since the reply could not be committed."""
    session = slot.session
    writer = session.writer
    if writer.in_flight:
        covered = writer.end_message_id
        if watermark is not None and watermark != covered:
            raise _not_the_writer(session.session_id, watermark, covered)
    else:
        covered = watermark if watermark is not None else _computed_watermark(slot)
    assert covered is not None
    memory = settings.memory
    path = memory.checkpoint_path(session.session_id)
    if settings.config.memory_disable_write:
        raise write_failed(path, "memory-write-off")  # its commit could not be written: no model call
    current, warnings = _current_checkpoint(memory, path)
    pointers = PointerTexts(session.tool_pointers)  # the writer sees paths as the main loop does (D22)
    instructions = writer_instructions(
        current,
        settings.config.push_caps,
        pointers.memory_path(path, memory.relative),
        covered,
        root_relative=pointers.root_relative,
    )
    try:
        built = engine.build_for_writer(
            session,
            covered,
            fmt=output.fmt,
            target=output.target,
            cache_ttl=output.cache_ttl,
            sidecar_tools=output.sidecar_tools,
            instructions=instructions,
        )
    except KeyError:
        raise writers.not_in_main_view(covered, "watermark" if watermark is not None else None) from None
    started = not writer.in_flight
    reply = answer(
        Prepared(
            session.revision,
            built,
            covered,
            started,
            session.watermark,
            path,
            current,
            instructions,
            warnings,
        )
    )
    if started:
        writers.start(slot, covered, now_ms)  # last: a refused or unanswered prepare registers nothing
    return reply


def commit(
    slot: SessionSlot, settings: Settings, content: str, watermark: str | None, now_ms: int
) -> Committed:
    """Write `content` as checkpoint.md and settle the in-flight writer as a success.

    Refused, with nothing written and the writer left in flight: no writer in flight, a `watermark`
    that is not its own, memory writing disabled, content that `content_problem` refuses, or a
    write that `write_atomically` refuses.
    """
    session = slot.session
    sid = session.session_id
    writer = session.writer
    if not writer.in_flight:
        raise DomainError(
            ErrorCode.WRITER_STATE, texts.no_writer_in_flight(sid), ("sessionId",), {"sessionId": sid}
        )
    if watermark is not None and watermark != writer.end_message_id:
        raise _not_the_writer(sid, watermark, writer.end_message_id)
    config, memory = settings.config, settings.memory
    path = memory.checkpoint_path(sid)
    if config.memory_disable_write:
        raise write_failed(path, "memory-write-off")
    data, problem = content_problem(content, config.commit_max_bytes)
    if problem is not None:
        extra = {"bytes": len(content.encode("utf-8", "surrogatepass")), "limit": config.commit_max_bytes}
        raise DomainError(
            ErrorCode.INVALID_CHECKPOINT,
            problem.detail,
            ("content",),
            {"reason": problem.reason, **(extra if problem.reason == "too-large" else {})},
        )
    assert data is not None
    existed = memory.exists(path)
    try:
        write_atomically(memory, path, data)
    except WriteRefused as refused:
        raise write_failed(refused.path, refused.problem, refused.detail) from None
    finish = writers.finish(slot, "success", None, now_ms)
    warnings = content_warnings(content, config.push_caps.checkpoint)
    return Committed(finish, path, len(data), not existed, warnings)


def create_template(session_id: str, settings: Settings) -> bool:
    """Create checkpoint.md from the template when it is missing; True when this call created it."""
    memory = settings.memory
    path = memory.checkpoint_path(session_id)
    if settings.config.memory_disable_write:
        raise write_failed(path, "memory-write-off")
    try:
        return write_atomically(memory, path, CHECKPOINT_TEMPLATE.encode("utf-8"), replace=False)
    except WriteRefused as refused:
        raise write_failed(refused.path, refused.problem, refused.detail) from None


def write_failed(path: str, problem: str, detail: str = "") -> DomainError:
    return DomainError(
        ErrorCode.MEMORY_WRITE_FAILED,
        texts.memory_write_refused(path, problem, detail),
        None,
        {"reason": problem, "path": path},
    )


def _computed_watermark(slot: SessionSlot) -> str:
    computed = engine.writer_watermark(slot.session)
    if computed is None:
        sid = slot.session_id
        raise DomainError(
            ErrorCode.WATERMARK_UNAVAILABLE,
            texts.watermark_not_computable(sid),
            ("watermark",),
            {"sessionId": sid},
        )
    return computed.id


def _not_the_writer(session_id: str, given: str, in_flight: str | None) -> DomainError:
    return DomainError(
        ErrorCode.WRITER_STATE,
        texts.writer_watermark_mismatch(given, in_flight),
        ("watermark",),
        {"sessionId": session_id, "expected": in_flight, "actual": given},
    )


def _current_checkpoint(memory: MemoryRoot, path: str) -> tuple[str | None, list[str]]:
    """checkpoint.md through the confined reader; what makes it unusable goes to the warnings."""
    read = memory.read_text(path)
    if read.problem is None or read.problem == "missing":
        return read.text, []
    if read.problem == "invalid-utf8":
        return read.text, [texts.current_checkpoint_invalid_utf8(path)]
    return None, [texts.current_checkpoint_unusable(path, read.problem)]
