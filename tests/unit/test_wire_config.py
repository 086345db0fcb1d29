"""The `config` wire model: MiMo's snake_case keys, strict validation, warnings, conversion."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from mimo_sidecar.core.config import PushCaps, RebuildConfig
from mimo_sidecar.rpc.dispatch import describe_errors
from mimo_sidecar.wire.config import (
    UNUSED_PUSH_CAPS,
    PushCapsConfig,
    SidecarConfig,
    config_warnings,
    to_rebuild_config,
)
from mimo_sidecar.wire.lifecycle import InitializationOptions


def load(raw: dict) -> SidecarConfig:
    return SidecarConfig.model_validate(raw)


def problems(raw: dict, prefix: str = "config") -> str:
    with pytest.raises(ValidationError) as exc:
        load(raw)
    return describe_errors(exc.value, prefix)[0]


def test_empty_config_gives_the_core_defaults() -> None:
    assert to_rebuild_config(load({})) == RebuildConfig()
    assert config_warnings(load({})) == []


def test_every_key_converts() -> None:
    cfg = load(
        {
            "checkpoint": {
                "push_caps": {
                    "tasks_ledger": 1,
                    "checkpoint": 2,
                    "actor_ledger": 3,
                    "recent_user": 0,
                    "recent_user_per_msg": 5,
                    "memory": 6,
                    "global": 7,
                    "notes": 8,
                    "memory_titles": 9,
                    "total": 10,
                },
                "task_archive_days": 2.5,
                "disabled": True,
                "writer_wait_ms": {"with_watermark": 0, "without_watermark": 1000},
            },
            "compaction": {
                "auto": False,
                "max_context": {"anthropic/*": "150K", "*": 90000},
                "reserved": 1,
                "trigger_ratio": "85%",
            },
            "memory": {"disable_write": True},
        }
    )
    assert to_rebuild_config(cfg) == RebuildConfig(
        push_caps=PushCaps(1, 2, 3, 0, 5, 6, 7, 8, 9, total=10),
        task_archive_days=2.5,
        compaction_auto=False,
        max_context={"anthropic/*": "150K", "*": 90000},
        compaction_reserved=1,
        trigger_ratio=0.85,
        writer_wait_with_watermark_ms=0,
        writer_wait_without_watermark_ms=1000,
        memory_disable_write=True,
        checkpoint_disabled=True,
    )


MC = "config.compaction.max_context"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            {"checkpoint": {"push_caps": {"memory": 0}}},
            "config.checkpoint.push_caps.memory: Input should be greater than 0",
        ),
        (
            {"checkpoint": {"push_caps": {"recent_user": -1}}},
            "config.checkpoint.push_caps.recent_user: Input should be greater than or equal to 0",
        ),
        (
            {"checkpoint": {"push_caps": {"global": "6000"}}},
            "config.checkpoint.push_caps.global: Input should be a valid integer",
        ),
        (
            {"checkpoint": {"push_caps": {"notes": 1.5}}},
            "config.checkpoint.push_caps.notes: Input should be a valid integer",
        ),
        (
            {"checkpoint": {"push_caps": {"notes": True}}},
            "config.checkpoint.push_caps.notes: Input should be a valid integer",
        ),
        (
            {"checkpoint": {"push_caps": {"focus_task": 0}}},
            "config.checkpoint.push_caps.focus_task: Input should be greater than 0",
        ),
        (
            {"checkpoint": {"task_archive_days": -1}},
            "config.checkpoint.task_archive_days: Input should be greater",
        ),
        (
            {"checkpoint": {"task_cleanup_days": "7"}},
            "config.checkpoint.task_cleanup_days: Input should be a valid number",
        ),
        ({"checkpoint": {"disabled": "yes"}}, "config.checkpoint.disabled: Input should be a valid boolean"),
        (
            {"checkpoint": {"writer_wait_ms": {"with_watermark": -5}}},
            "config.checkpoint.writer_wait_ms.with_watermark",
        ),
        ({"compaction": {"auto": 1}}, "config.compaction.auto: Input should be a valid boolean"),
        ({"compaction": {"trigger_ratio": 0}}, "config.compaction.trigger_ratio: must be a number in (0, 1]"),
        (
            {"compaction": {"trigger_ratio": 1.5}},
            "config.compaction.trigger_ratio: must be a number in (0, 1]",
        ),
        ({"compaction": {"trigger_ratio": "150%"}}, "config.compaction.trigger_ratio: must be"),
        ({"compaction": {"trigger_ratio": "abc"}}, "config.compaction.trigger_ratio: must be"),
        ({"compaction": {"trigger_ratio": "nan"}}, "config.compaction.trigger_ratio: must be"),
        (
            {"compaction": {"trigger_ratio": True}},
            "config.compaction.trigger_ratio: must be a number in (0, 1]",
        ),
        ({"compaction": {"max_context": [1]}}, f"{MC}: must be a number or a string"),
        ({"compaction": {"max_context": True}}, f"{MC}: must be a number or a string"),
        ({"compaction": {"max_context": {"a/*": [1]}}}, f"{MC}.a/*: must be a number"),
        # numbers are bounded (`"1" × 5000` answered -32603 at the first trigger)
        ({"compaction": {"max_context": 2**53}}, f"{MC}: a number must be finite, from 0"),
        ({"compaction": {"max_context": float("inf")}}, f"{MC}: a number must be finite"),
        ({"compaction": {"max_context": -1}}, f"{MC}: a number must be finite"),
        ({"compaction": {"max_context": {"x/*": "1" * 5000}}}, f"{MC}.x/*: a string must be at most 64"),
        ({"checkpoint": {"push_caps": {"memory": 2**53}}}, "config.checkpoint.push_caps.memory: Input"),
        ({"checkpoint": {"task_archive_days": 1e300}}, "config.checkpoint.task_archive_days: Input"),
        ({"memory": {"disable_write": None}}, "config.memory.disable_write: Input should be a valid boolean"),
        ({"checkpoint": []}, "config.checkpoint: Input should be a valid dictionary"),
    ],
)
def test_invalid_values_name_the_key(raw: dict, expected: str) -> None:
    found = problems(raw)
    assert found.startswith(expected)
    assert ";" not in found  # exactly one problem: no per-union-member noise


@pytest.mark.parametrize(
    ("value", "ratio"), [(1, 1.0), (0.85, 0.85), ("0.85", 0.85), (" 85% ", 0.85), ("100%", 1.0)]
)
def test_trigger_ratio_forms(value: object, ratio: float) -> None:
    assert to_rebuild_config(load({"compaction": {"trigger_ratio": value}})).trigger_ratio == pytest.approx(
        ratio
    )


def test_task_cleanup_days_alias() -> None:
    assert to_rebuild_config(load({"checkpoint": {"task_cleanup_days": 3}})).task_archive_days == 3
    cfg = load({"checkpoint": {"task_archive_days": 2, "task_cleanup_days": 9}})
    assert to_rebuild_config(cfg).task_archive_days == 2
    assert config_warnings(cfg) == [
        "config.checkpoint.task_cleanup_days: ignored, "
        "config.checkpoint.task_archive_days is also set and wins"
    ]


def test_unknown_and_unused_keys_are_accepted_with_warnings() -> None:
    cfg = load(
        {
            "checkpoint": {"push_caps": {"focus_task": 4000, "open_notes": 800, "bogus": 1}, "fork": True},
            "compaction": {"prune": True},
            "experimental": {"x": 1},
        }
    )
    assert sorted(config_warnings(cfg)) == sorted(
        [
            "config.experimental: unknown key, ignored",
            "config.checkpoint.fork: unknown key, ignored",
            "config.checkpoint.push_caps.bogus: unknown key, ignored",
            "config.compaction.prune: unknown key, ignored",
            "config.checkpoint.push_caps.focus_task: accepted but has no effect (MiMo never reads it, D6)",
            "config.checkpoint.push_caps.open_notes: accepted but has no effect (MiMo never reads it, D6)",
        ]
    )
    assert to_rebuild_config(cfg) == RebuildConfig()  # none of them changes anything


def test_initialization_options(tmp_path) -> None:
    opts = InitializationOptions.model_validate({"memoryRoot": str(tmp_path), "config": {}})
    assert opts.memory_root == str(tmp_path)
    for bad, message in [
        ({}, "initializationOptions.memoryRoot: Field required"),
        ({"memoryRoot": "relative/dir"}, "initializationOptions.memoryRoot: must be an absolute path"),
        ({"memoryRoot": str(tmp_path / "missing")}, "is not an existing directory"),
        (
            {"memoryRoot": str(tmp_path), "memory_root": "x"},
            "initializationOptions.memory_root: Extra inputs",
        ),
        (
            {"memoryRoot": str(tmp_path), "config": {"checkpoint": {"push_caps": {"memory": 0}}}},
            "initializationOptions.config.checkpoint.push_caps.memory: Input should be greater than 0",
        ),
    ]:
        with pytest.raises(ValidationError) as exc:
            InitializationOptions.model_validate(bad)
        assert message in describe_errors(exc.value, "initializationOptions")[0]


# -- one list: the wire config and the core config agree ------------------------------------------


def _leaves(model: type[BaseModel], path: tuple[str, ...] = ()) -> dict[tuple[str, ...], FieldInfo]:
    """Every leaf key of the wire config (nested sections walked), by its path."""
    out: dict[tuple[str, ...], FieldInfo] = {}
    for name, info in model.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out |= _leaves(ann, (*path, name))
        else:
            out[(*path, name)] = info
    return out


def _changed(raw_key: tuple[str, ...], value: object) -> set[str]:
    """The core fields that differ from the defaults when one wire key is set."""
    raw: dict = {}
    holder = raw
    for key in raw_key[:-1]:
        holder = holder.setdefault(key, {})
    holder["global" if raw_key[-1] == "global_" else raw_key[-1]] = value
    got, default = to_rebuild_config(load(raw)), RebuildConfig()
    diff = {
        f.name for f in dataclasses.fields(RebuildConfig) if getattr(got, f.name) != getattr(default, f.name)
    }
    if "push_caps" in diff:
        diff.remove("push_caps")
        diff |= {
            f"push_caps.{f.name}"
            for f in dataclasses.fields(PushCaps)
            if getattr(got.push_caps, f.name) != getattr(default.push_caps, f.name)
        }
    return diff


def _other_value(info: FieldInfo) -> object:
    default = info.get_default(call_default_factory=True)
    if isinstance(default, bool):
        return not default
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        return default + 1 if not (0 < default <= 1 and isinstance(default, float)) else 0.5
    return 3  # optional keys (None by default) that take a number


def test_push_caps_fields_and_defaults_agree() -> None:
    wire = PushCapsConfig.model_fields
    core = {f.name: f.default for f in dataclasses.fields(PushCaps)}
    assert set(core) == set(wire) - set(UNUSED_PUSH_CAPS)
    for name, default in core.items():
        assert wire[name].default == default, name


def test_every_wire_key_sets_exactly_one_core_field_and_every_core_field_is_set() -> None:
    reached: set[str] = set()
    for path, info in _leaves(SidecarConfig).items():
        if path[-1] in UNUSED_PUSH_CAPS:
            assert _changed(path, 5) == set(), path  # D6: accepted, no effect
            continue
        value = {"x/*": 1000} if path[-1] == "max_context" else _other_value(info)
        changed = _changed(path, value)
        assert len(changed) == 1, (path, changed)
        reached |= changed
    core = {f.name for f in dataclasses.fields(RebuildConfig) if f.name != "push_caps"}
    core |= {f"push_caps.{f.name}" for f in dataclasses.fields(PushCaps)}
    assert reached == core
