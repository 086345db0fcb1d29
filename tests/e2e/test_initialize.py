"""initialize and sidecar/configure over a real process (pytest-lsp, a fresh server per test)."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from mimo_sidecar import __version__

from .conftest import init_params

pytestmark = pytest.mark.e2e


async def test_valid_initialize_then_a_session(fresh_client: LanguageClient, tmp_path) -> None:
    result = await fresh_client.initialize_session(init_params(tmp_path))
    assert result.server_info is not None
    assert (result.server_info.name, result.server_info.version) == ("mimo-sidecar", __version__)
    assert fresh_client.log_messages == []  # a clean config warns about nothing
    opened = await fresh_client.protocol.send_request_async("session/open", {"sessionId": "s1"})
    assert opened == {"sessionId": "s1", "revision": 1}


async def test_request_before_initialize_gets_32002(fresh_client: LanguageClient) -> None:
    with pytest.raises(JsonRpcException) as exc:
        await fresh_client.protocol.send_request_async("session/get", {"sessionId": "s1"})
    assert exc.value.code == -32002
    assert "not initialized" in exc.value.message


async def test_invalid_option_fails_naming_the_field_and_a_retry_works(
    fresh_client: LanguageClient, tmp_path
) -> None:
    bad = init_params(tmp_path, {"checkpoint": {"push_caps": {"memory": 0}}})
    with pytest.raises(JsonRpcException) as exc:
        await fresh_client.initialize_session(bad)
    assert exc.value.code == -32602
    assert (
        "initializationOptions.config.checkpoint.push_caps.memory: Input should be greater than 0"
        in exc.value.message
    )
    assert exc.value.data["errors"][0]["field"] == "initializationOptions.config.checkpoint.push_caps.memory"

    with pytest.raises(JsonRpcException) as exc:  # still not initialized
        await fresh_client.protocol.send_request_async("session/get", {"sessionId": "s1"})
    assert exc.value.code == -32002

    await fresh_client.initialize_session(
        init_params(tmp_path, {"checkpoint": {"push_caps": {"memory": 8000}}})
    )
    assert await fresh_client.protocol.send_request_async("session/open", {"sessionId": "s1"}) == {
        "sessionId": "s1",
        "revision": 1,
    }


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        ("relative/memory", "initializationOptions.memoryRoot: must be an absolute path"),
        (None, "initializationOptions.memoryRoot: Field required"),
    ],
)
async def test_bad_memory_root(fresh_client: LanguageClient, root: str | None, expected: str) -> None:
    options = {} if root is None else {"memoryRoot": root}
    params = types.InitializeParams(capabilities=types.ClientCapabilities(), initialization_options=options)
    with pytest.raises(JsonRpcException) as exc:
        await fresh_client.initialize_session(params)
    assert exc.value.code == -32602
    assert expected in exc.value.message


async def test_unknown_and_unused_keys_warn_once_with_log_message(
    fresh_client: LanguageClient, tmp_path
) -> None:
    config = {"checkpoint": {"push_caps": {"focus_task": 4000, "nonsense": 1}}, "extra_section": {}}
    await fresh_client.initialize_session(init_params(tmp_path, config))
    assert len(fresh_client.log_messages) == 1
    log = fresh_client.log_messages[0]
    assert log.type == types.MessageType.Warning
    for path in (
        "config.checkpoint.push_caps.focus_task",
        "config.checkpoint.push_caps.nonsense",
        "config.extra_section",
    ):
        assert path in log.message


async def test_sidecar_configure(fresh_client: LanguageClient, tmp_path) -> None:
    await fresh_client.initialize_session(init_params(tmp_path))
    with pytest.raises(JsonRpcException) as exc:
        await fresh_client.protocol.send_request_async(
            "sidecar/configure", {"config": {"compaction": {"trigger_ratio": "120%"}}}
        )
    assert exc.value.code == -32602
    assert "config.compaction.trigger_ratio: must be a number in (0, 1]" in exc.value.message

    result = await fresh_client.protocol.send_request_async(
        "sidecar/configure", {"config": {"compaction": {"trigger_ratio": "85%"}, "memory": {"mystery": 1}}}
    )
    assert result == {"warnings": ["config.memory.mystery: unknown key, ignored"]}
    assert "config.memory.mystery" in fresh_client.log_messages[-1].message
