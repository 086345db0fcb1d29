"""What the service answers: plain, frozen results of its methods (no pydantic, no asyncio).

The RPC handlers turn these into wire models; anything else that drives the service (tests, an
embedding host) reads them directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from .engine import BuildResult, ComputeResult, InsertResult
from .words import InsertOutcome, NoticeKind, WaitResult, WriterOutcome, WriterStartState


@dataclass(frozen=True)
class Settlement:
    """One settled checkpoint writer, as waiters see it."""

    number: int  # WriterState.settlements after this settlement
    outcome: WriterOutcome
    retryable: bool | None


@dataclass(frozen=True)
class WriterWait:
    """How a bounded wait for the writer in flight ended (behavior.md#writer-wait)."""

    result: WaitResult
    outcome: WriterOutcome | None = None  # success / failure / cancelled when the writer settled
    retryable: bool | None = None  # classification of a failure, when the host gave one
    waited_ms: int = 0
    bound_ms: int = 0


@dataclass(frozen=True)
class WriterSummary:
    in_flight: bool
    end_message_id: str | None
    queued_end_message_id: str | None
    settlements: int
    last_outcome: WriterOutcome | None
    last_retryable: bool | None


@dataclass(frozen=True)
class WriterStart:
    state: WriterStartState
    watermark: str


@dataclass(frozen=True)
class WriterFinish:
    watermark: str | None  # the stored watermark after this settlement
    promoted: str | None  # the queued request's watermark, now in flight
    writer: WriterSummary


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    project_id: str | None
    revision: int
    message_count: int
    watermark: str | None
    writer: WriterSummary
    estimated_tokens: int
    id_mode: bool
    parent_id: str | None


@dataclass(frozen=True)
class Notice:
    """A one-time notice (behavior.md#one-time-notices): shown the first time a session meets an
    "off" gate."""

    kind: NoticeKind
    text: str


@dataclass(frozen=True)
class Computed:
    revision: int
    writer_in_flight: bool
    result: ComputeResult


@dataclass(frozen=True)
class Inserted:
    """The answer of one rebuild/insert: the outcome and everything the host shows or persists."""

    outcome: InsertOutcome
    revision: int
    result: InsertResult | None = None  # the engine's insertion, when it ran
    wait: WriterWait | None = None
    notice: Notice | None = None
    status_text: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Built:
    revision: int
    result: BuildResult


@dataclass(frozen=True)
class Prepared:
    """`checkpoint/prepare`: the writer's request with its instructions (behavior.md#writer-request)."""

    revision: int
    result: BuildResult  # the view up to `watermark`, the instructions as the last user content
    watermark: str  # the in-flight writer's: what the checkpoint covers, what commit names
    started: bool  # this call registered the writer (none was in flight)
    stored_watermark: str | None  # what the previous successful writer covered
    checkpoint_path: str
    current: str | None  # checkpoint.md as read (None: missing or unusable, see warnings)
    instructions: str
    warnings: list[str]


@dataclass(frozen=True)
class Committed:
    """`checkpoint/commit`: the file written and the writer settled as a success."""

    finish: WriterFinish
    path: str
    bytes_written: int
    created: bool  # there was no checkpoint.md before
    warnings: list[str]


@dataclass(frozen=True)
class Opened:
    revision: int
    checkpoint_created: bool | None = None  # asked for the template: whether this open created it
