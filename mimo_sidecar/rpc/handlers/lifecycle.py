"""Lifecycle handlers: initialize (options, config), sidecar/configure, shutdown.

- `initialize` validates `initializationOptions` (memory root, config); on failure it answers -32602
  naming the field and the server stays uninitialized (the client may retry). (`processId` and
  `capabilities` are validated before, by the protocol: `rpc.protocol.LSP_PARAMS`.) Config
  warnings go to the client as one `window/logMessage` per load, and to the log.
- `sidecar/configure` encodes its answer before it installs the config: a config is never changed
  by a request that is not answered with the change.
- `shutdown` waits for in-flight requests for at most `SHUTDOWN_DRAIN_SECONDS`; pygls then cancels
  what is left (-32800) and answers null. Later requests get -32600.
- `exit` stops the server (protocol.lsp_exit); the process exit code is 0 after shutdown, else 1.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ...core import texts
from ...transport.jsonrpc_codec import EncodedJson
from ...wire.config import SidecarConfig, config_warnings, to_rebuild_config
from ...wire.lifecycle import ConfigureParams, ConfigureResult, InitializationOptions
from ..dispatch import encode_result, rpc_method, validate_params

if TYPE_CHECKING:
    from ..server import SidecarServer

logger = logging.getLogger(__name__)

SHUTDOWN_DRAIN_SECONDS = 10.0


def apply_config(server: SidecarServer, config: SidecarConfig, warnings: list[str], source: str) -> None:
    """Install a validated config; report its warnings once (log + window/logMessage)."""
    server.service.configure(to_rebuild_config(config))
    if warnings:
        for line in warnings:
            logger.warning("%s: %s", source, line)
        text = texts.config_warnings_message(warnings)
        server.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=text))


def register(server: SidecarServer) -> None:
    # Synchronous on purpose: pygls then answers initialize before it reads the next frame, so a
    # client that pipelines requests behind initialize does not see -32002.
    @server.feature(types.INITIALIZE)
    def on_initialize(params: types.InitializeParams) -> None:
        options = validate_params(
            "initialize", InitializationOptions, params.initialization_options, prefix="initializationOptions"
        )
        server.service.set_memory_root(options.memory_root)
        apply_config(server, options.config, config_warnings(options.config), "initialize")
        server.protocol.initialized = True
        if params.process_id:
            server.parent_watcher.watch(params.process_id, "initialize.processId")
        logger.info("initialized (memory root %s)", options.memory_root)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(params: Any) -> None:
        left = await server.drain(SHUTDOWN_DRAIN_SECONDS)
        if left:
            logger.warning(
                "shutdown: cancelling %d request(s) still running after %.0f s", left, SHUTDOWN_DRAIN_SECONDS
            )
        server.protocol.shutdown_completed = True  # pygls answers as soon as this returns

    @rpc_method(server, "sidecar/configure", ConfigureParams)
    async def configure(ls: SidecarServer, params: ConfigureParams) -> EncodedJson:
        warnings = config_warnings(params.config)
        answer = encode_result(ConfigureResult(warnings=warnings))
        apply_config(ls, params.config, warnings, "sidecar/configure")
        return answer
