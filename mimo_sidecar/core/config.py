"""The configuration values the core reads (behavior.md#configuration), with their defaults.

Validation of what a host sends lives in `wire.config`; the core only sees these plain, already
valid values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_WRITER_WAIT_WITH_WATERMARK_MS = 30_000
DEFAULT_WRITER_WAIT_WITHOUT_WATERMARK_MS = 300_000
DEFAULT_TRIGGER_RATIO = 0.9
DEFAULT_TASK_ARCHIVE_DAYS = 7
DEFAULT_COMMIT_MAX_BYTES = 1024 * 1024  # checkpoint/commit: about 24x the default checkpoint budget


@dataclass(frozen=True)
class PushCaps:
    """`checkpoint.push_caps` (behavior.md#push-caps). Units: `tasks_ledger` in UTF-16 characters, the rest
    tokens."""

    tasks_ledger: int = 2000
    checkpoint: int = 11000
    actor_ledger: int = 500
    recent_user: int = 16000
    recent_user_per_msg: int = 2000
    memory: int = 10000
    global_: int = 6000
    notes: int = 6000
    memory_titles: int = 500
    total: int | None = None  # D7: optional total cap, off when None


@dataclass(frozen=True)
class RebuildConfig:
    push_caps: PushCaps = field(default_factory=PushCaps)
    task_archive_days: float = DEFAULT_TASK_ARCHIVE_DAYS
    compaction_auto: bool = True
    # `compaction.max_context`: a number, a string ("80%", "150K") or a map of model globs to those.
    max_context: int | str | dict[str, int | str] | None = None
    compaction_reserved: int | None = None
    trigger_ratio: float = DEFAULT_TRIGGER_RATIO
    writer_wait_with_watermark_ms: int = DEFAULT_WRITER_WAIT_WITH_WATERMARK_MS
    writer_wait_without_watermark_ms: int = DEFAULT_WRITER_WAIT_WITHOUT_WATERMARK_MS
    memory_disable_write: bool = False
    checkpoint_disabled: bool = False
    # The largest `checkpoint/commit` content, in UTF-8 bytes (behavior.md#checkpoint-commit).
    commit_max_bytes: int = DEFAULT_COMMIT_MAX_BYTES
    # Refuse (`no-gain`) a rebuild whose boundary plus the remaining view would not be smaller than
    # the request it replaces (`checkpoint.inflation_guard`).
    inflation_guard: bool = True
    # D19: an automatic rebuild whose list ends in a step that called tools leaves that step live
    # after the boundary (`checkpoint.keep_newest_step`); False digests it with the tail, as MiMo.
    keep_newest_step: bool = True
    # D20: a newest step with a call still waiting for its result is never digested, whatever the
    # reason or the host's `digestUpTo` (`checkpoint.keep_pending_step`); False digests it as MiMo
    # does, its calls `→ interrupted` (a result that arrives later still brings the step back).
    keep_pending_step: bool = True
    # D21: an insert that waited for a writer that succeeded places its boundary at the watermark
    # that writer stored (`checkpoint.follow_writer_watermark`); False keeps the one read before
    # the wait, as MiMo (D4).
    follow_writer_watermark: bool = True
