"""Keys the host chooses (extra keys of a message's `info` or a part, unknown config keys) are never
validated as strings: a JavaScript host can put a lone surrogate in one. Found by the wire property
test, where such a key got a -32602 naming the enclosing object ("Input should be a valid string")."""

from __future__ import annotations

from mimo_sidecar.core.session.data_model import MESSAGE_INFO, STREAMED_PART
from mimo_sidecar.wire.config import SidecarConfig, config_warnings, to_rebuild_config
from mimo_sidecar.wire.host_data import check


def test_info_and_part_keep_extra_keys_of_any_name() -> None:
    info = {"id": "m1", "role": "user", "note\ud800": {"\udc00": 1}, "time": {"created\udfff": 1}}
    assert check(MESSAGE_INFO, info) is info
    part = {"id": "p1", "type": "text", "text": "x\ud83d", "\ude00": True}
    assert check(STREAMED_PART, part) is part


def test_declared_keys_are_still_checked() -> None:
    for bad in ({"id": "", "role": "user"}, {"id": "m", "role": "robot"}, {"id": "m\ud800", "role": "user"}):
        try:
            check(MESSAGE_INFO, bad)
        except ValueError:
            continue
        raise AssertionError(f"accepted {bad}")


def test_unknown_config_keys_of_any_name_are_warned_about() -> None:
    cfg = SidecarConfig.model_validate({"memory": {"odd\udc00": 1, "disable_write": True}, "\ud800": {}})
    assert config_warnings(cfg) == [
        "config.\ud800: unknown key, ignored",
        "config.memory.odd\udc00: unknown key, ignored",
    ]
    assert to_rebuild_config(cfg).memory_disable_write is True
