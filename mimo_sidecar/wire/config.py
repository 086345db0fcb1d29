"""The `config` object of `initialize` / `sidecar/configure`: MiMo Code's own config keys.

Keys are snake_case exactly as in MiMo's config file (behavior.md#configuration), not camelCase like method
params. Values are type-checked strictly (a string is not a number, `true` is not an integer); a wrong value
fails the request with -32602 naming the key. Unknown keys, and the three push caps that MiMo declares but
never reads (D6), are accepted and reported as warnings.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from ..core import texts
from ..core.config import (
    DEFAULT_COMMIT_MAX_BYTES,
    DEFAULT_TASK_ARCHIVE_DAYS,
    DEFAULT_TRIGGER_RATIO,
    DEFAULT_WRITER_WAIT_WITH_WATERMARK_MS,
    DEFAULT_WRITER_WAIT_WITHOUT_WATERMARK_MS,
    PushCaps,
    RebuildConfig,
)
from ..core.memory.files import DEFAULT_MAX_FILE_BYTES
from ..core.rebuild.trigger import MAX_BUDGET_TOKENS

# Every number of the config is bounded by JavaScript's largest exact integer: beyond it a value
# says nothing a smaller one does not, and arithmetic on it could overflow (`"1" × 5000` did).
MAX_CONFIG_NUMBER = MAX_BUDGET_TOKENS
PositiveInt = Annotated[int, Field(gt=0, le=MAX_CONFIG_NUMBER)]
NonNegativeInt = Annotated[int, Field(ge=0, le=MAX_CONFIG_NUMBER)]
# A budget string ("80%", "150K", "1.5M") is short; a longer one is a mistake, refused at once.
MAX_BUDGET_TEXT = 64

UNUSED_PUSH_CAPS = ("focus_task", "design_decisions", "open_notes")  # behavior.md#unused-keys, D6
_DEFAULT_CAPS = PushCaps()


class _Section(BaseModel):
    """A config object: declared keys are validated, unknown ones are set aside for the warnings
    without being validated (their names are the host's, a lone surrogate included)."""

    model_config = ConfigDict(
        extra="allow", strict=True, frozen=True, populate_by_name=False, defer_build=True
    )

    _unknown: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _set_aside_unknown(cls, data: Any, handler: Any) -> Any:
        if not isinstance(data, dict):
            return handler(data)
        used = {
            next(k for k in keys if k in data) for keys in _field_keys(cls) if any(k in data for k in keys)
        }
        section = handler({k: v for k, v in data.items() if k in used})
        section._unknown = tuple(k for k in data if k not in used)
        return section


def _field_keys(model: type[BaseModel]) -> list[tuple[str, ...]]:
    """Per field, the keys it is read from, first choice first: its validation aliases, else its
    alias, else its name. A later choice sent beside an earlier one is set aside (and warned of)."""
    out: list[tuple[str, ...]] = []
    for name, info in model.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            out.append(tuple(c for c in alias.choices if isinstance(c, str)))
        elif isinstance(alias, str):
            out.append((alias,))
        else:
            out.append((info.alias or name,))
    return out


class PushCapsConfig(_Section):
    """`checkpoint.push_caps` (behavior.md#push-caps). Units: `tasks_ledger` in UTF-16 characters, the rest
    tokens."""

    tasks_ledger: PositiveInt = Field(_DEFAULT_CAPS.tasks_ledger, description="UTF-16 characters.")
    checkpoint: PositiveInt = Field(_DEFAULT_CAPS.checkpoint, description="Tokens.")
    actor_ledger: PositiveInt = Field(_DEFAULT_CAPS.actor_ledger, description="Tokens.")
    recent_user: NonNegativeInt = Field(
        _DEFAULT_CAPS.recent_user, description="Tokens; 0 disables the section."
    )
    recent_user_per_msg: PositiveInt = Field(_DEFAULT_CAPS.recent_user_per_msg, description="Tokens.")
    memory: PositiveInt = Field(_DEFAULT_CAPS.memory, description="Tokens.")
    global_: PositiveInt = Field(_DEFAULT_CAPS.global_, alias="global", description="Tokens.")
    notes: PositiveInt = Field(_DEFAULT_CAPS.notes, description="Tokens.")
    memory_titles: PositiveInt = Field(_DEFAULT_CAPS.memory_titles, description="Tokens.")
    focus_task: PositiveInt | None = Field(None, description="Accepted, no effect (D6).")
    design_decisions: PositiveInt | None = Field(None, description="Accepted, no effect (D6).")
    open_notes: PositiveInt | None = Field(None, description="Accepted, no effect (D6).")
    total: PositiveInt | None = Field(None, description="Tokens; optional total cap (D7). Absent: off.")


class WriterWaitConfig(_Section):
    """Bounds of the render-time wait for an in-flight checkpoint writer (behavior.md#render-time-wait), in
    milliseconds."""

    with_watermark: NonNegativeInt = Field(
        DEFAULT_WRITER_WAIT_WITH_WATERMARK_MS, description="Milliseconds, when a watermark is stored."
    )
    without_watermark: NonNegativeInt = Field(
        DEFAULT_WRITER_WAIT_WITHOUT_WATERMARK_MS, description="Milliseconds, when no watermark is stored."
    )


class CheckpointConfig(_Section):
    push_caps: PushCapsConfig = PushCapsConfig.model_validate({})
    task_archive_days: Annotated[float, Field(ge=0, le=MAX_CONFIG_NUMBER, allow_inf_nan=False)] = Field(
        DEFAULT_TASK_ARCHIVE_DAYS,
        validation_alias=AliasChoices("task_archive_days", "task_cleanup_days"),
        description="Days after which done/abandoned tasks are archived (behavior.md#task-archival). "
        "Alias: task_cleanup_days.",
    )
    disabled: bool = Field(False, description="Sidecar equivalent of MIMOCODE_DISABLE_CHECKPOINT.")
    writer_wait_ms: WriterWaitConfig = WriterWaitConfig.model_validate({})
    commit_max_bytes: Annotated[int, Field(gt=0, le=DEFAULT_MAX_FILE_BYTES)] = Field(
        DEFAULT_COMMIT_MAX_BYTES,
        description="Bytes of UTF-8: the largest content checkpoint/commit writes (at most the "
        "readers' 64 MiB file limit).",
    )
    inflation_guard: bool = Field(
        True,
        description="Refuse (outcome no-gain) a rebuild whose boundary plus the remaining view would not "
        "be smaller than the request it replaces. false: rebuild anyway.",
    )
    keep_newest_step: bool = Field(
        True,
        description="D19: an automatic rebuild (auto, overflow) whose list ends in a step that called "
        "tools leaves that step, its calls and their results, live after the boundary. false: the "
        "step is digested with the rest of the tail, as MiMo does.",
    )
    keep_pending_step: bool = Field(
        True,
        description="D20: a newest step with a call still waiting for its result is never digested, "
        "whatever the rebuild's reason or the host's digestUpTo: it stays live after the boundary. "
        "false: it is digested as MiMo does, its calls shown as interrupted (a result that arrives "
        "later still brings the step back into the request, reported).",
    )
    follow_writer_watermark: bool = Field(
        True,
        description="D21: an insert that waited for a checkpoint writer that succeeded places the "
        "boundary at the watermark that writer stored. false: at the watermark read before the wait, "
        "as MiMo does (D4).",
    )


ContextValue = int | float | str
MaxContextType = ContextValue | dict[str, ContextValue]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _budget_problem(value: Any) -> str | None:
    """Why one budget value (behavior.md#window-budget) is refused before any trigger reads it: its
    type, a number out of [0, 2^53 − 1] or not finite, a string over `MAX_BUDGET_TEXT` characters.
    A short string of another form is only warned about at trigger time, as MiMo does."""
    if _is_number(value):
        in_range = math.isfinite(value) and 0 <= value <= MAX_CONFIG_NUMBER
        return None if in_range else texts.budget_number_out_of_range(MAX_CONFIG_NUMBER)
    if isinstance(value, str):
        return None if len(value) <= MAX_BUDGET_TEXT else texts.budget_text_too_long(MAX_BUDGET_TEXT)
    return texts.BUDGET_TYPE


def _check_max_context(value: Any) -> Any:
    """Type and bounds only: the values themselves are resolved per model at trigger time
    (behavior.md#usable-line). A map's problem is reported at its glob's path."""
    if value is None:
        return value
    if not isinstance(value, dict):
        problem = _budget_problem(value)
        if problem is not None:
            raise PydanticCustomError("max_context", texts.budget_or_map(problem))
        return value
    errors: list[InitErrorDetails] = []
    for key, item in value.items():
        problem = texts.GLOB_TYPE if not isinstance(key, str) else _budget_problem(item)
        if problem is not None:
            error = PydanticCustomError("max_context", problem)
            errors.append({"type": error, "loc": (str(key),), "input": None})
    if errors:
        raise ValidationError.from_exception_data("max_context", errors)
    return value


def _parse_ratio(value: Any) -> float:
    ratio = math.nan
    if isinstance(value, str):
        text = value.strip()
        try:
            ratio = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            pass
    elif _is_number(value):
        ratio = float(value)
    if not (math.isfinite(ratio) and 0 < ratio <= 1):
        raise PydanticCustomError(
            "trigger_ratio",
            'must be a number in (0, 1] or a string such as "0.85" or "85%"',
        )
    return ratio


MaxContext = Annotated[Any, BeforeValidator(_check_max_context, json_schema_input_type=MaxContextType | None)]
TriggerRatio = Annotated[float, BeforeValidator(_parse_ratio, json_schema_input_type=float | str)]


class CompactionConfig(_Section):
    auto: bool = Field(True, description="false disables the overflow trigger (behavior.md#overflow-test).")
    max_context: MaxContext = Field(
        None,
        description='Working-window budget (behavior.md#window-budget): a number of tokens, a string ("80%", '
                    '"150K", '
        '"1.5M") or a map of "<providerID>/<modelID>" globs to those. Resolved per model at trigger time.',
    )
    reserved: NonNegativeInt | None = Field(
        None, description="Tokens; default min(33000, maxOutputTokens) (behavior.md#usable-line)."
    )
    trigger_ratio: TriggerRatio = Field(
        DEFAULT_TRIGGER_RATIO, description='Fraction of the window: number in (0, 1], or "0.85" / "85%".'
    )


class MemoryConfig(_Section):
    disable_write: bool = Field(False, description="true: rebuild outcome memory-write-off "
                                                   "(behavior.md#rebuild-outcomes).")


class SidecarConfig(_Section):
    """The whole `config` object. Every key is optional."""

    checkpoint: CheckpointConfig = CheckpointConfig.model_validate({})
    compaction: CompactionConfig = CompactionConfig.model_validate({})
    memory: MemoryConfig = MemoryConfig.model_validate({})


def to_rebuild_config(cfg: SidecarConfig) -> RebuildConfig:
    """The plain values the core reads. Push caps carry over by field name (the core's `PushCaps`
    fields are the wire model's, less the D6 caps; tests/unit/test_wire_config.py proves that the
    two lists and their defaults agree)."""
    caps = cfg.checkpoint.push_caps
    ck, cp = cfg.checkpoint, cfg.compaction
    max_context: Any = cp.max_context
    return RebuildConfig(
        push_caps=PushCaps(**{f.name: getattr(caps, f.name) for f in dataclasses.fields(PushCaps)}),
        task_archive_days=ck.task_archive_days,
        compaction_auto=cp.auto,
        max_context=max_context,
        compaction_reserved=cp.reserved,
        trigger_ratio=float(cp.trigger_ratio),
        writer_wait_with_watermark_ms=ck.writer_wait_ms.with_watermark,
        writer_wait_without_watermark_ms=ck.writer_wait_ms.without_watermark,
        memory_disable_write=cfg.memory.disable_write,
        checkpoint_disabled=ck.disabled,
        commit_max_bytes=ck.commit_max_bytes,
        inflation_guard=ck.inflation_guard,
        keep_newest_step=ck.keep_newest_step,
        keep_pending_step=ck.keep_pending_step,
        follow_writer_watermark=ck.follow_writer_watermark,
    )


def config_warnings(cfg: SidecarConfig, prefix: str = "config") -> list[str]:
    """One line per unknown key and per unused (D6) key that is set, with its full path."""
    out: list[str] = []
    _walk_unknown(cfg, prefix, out)
    caps = cfg.checkpoint.push_caps
    for key in UNUSED_PUSH_CAPS:
        if key in caps.model_fields_set:
            out.append(
                f"{prefix}.checkpoint.push_caps.{key}: accepted but has no effect (MiMo never reads it, D6)"
            )
    return out


_ALIAS_DUPLICATES: dict[type[BaseModel], set[str]] = {CheckpointConfig: {"task_cleanup_days"}}


def _walk_unknown(model: BaseModel, path: str, out: list[str]) -> None:
    duplicates = _ALIAS_DUPLICATES.get(type(model), set())
    for key in model._unknown if isinstance(model, _Section) else ():
        if key in duplicates:
            out.append(f"{path}.{key}: ignored, {path}.task_archive_days is also set and wins")
        else:
            out.append(f"{path}.{key}: unknown key, ignored")
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            _walk_unknown(value, f"{path}.{name}", out)
