"""In-process handler tests: the real server's handlers, called without a transport.

    harness = Harness(memory_root="/tmp/mem")
    await harness.call("session/open", {...})        # the JSON result, decoded from the wire bytes
    err = await harness.error("session/get", {...})  # the JSON-RPC error object

It goes through `SidecarServer.handlers` (the validated handlers `rpc_method` registers) and
`rpc.errors.error_of` (the one place errors become wire error objects), never through pygls
internals. Lifecycle methods with LSP params (initialize, shutdown) are not served here: set the
memory root and the config on `harness.service` instead.
"""

from __future__ import annotations

import copy
from typing import Any

from mimo_sidecar.core.config import RebuildConfig
from mimo_sidecar.rpc import errors
from mimo_sidecar.rpc.server import SidecarServer, build_server
from mimo_sidecar.service import SidecarService
from mimo_sidecar.transport.jsonrpc_codec import loads


class RpcFailure(Exception):
    """An error answer: `code`, `message` and `data` as the wire would carry them."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error['code']}: {error['message']}")
        self.code: int = error["code"]
        self.message: str = error["message"]
        self.data: Any = error.get("data")


class Harness:
    def __init__(self, memory_root: str | None = None, config: RebuildConfig | None = None) -> None:
        self.server: SidecarServer = build_server()
        if memory_root is not None:
            self.service.set_memory_root(memory_root)
        if config is not None:
            self.service.configure(config)

    @property
    def service(self) -> SidecarService:
        return self.server.service

    @property
    def methods(self) -> set[str]:
        return set(self.server.handlers)

    async def call(self, method: str, params: Any = None) -> Any:
        """The method's result; raises RpcFailure for an error answer (params are copied first)."""
        handler = self.server.handlers[method]
        try:
            encoded = await handler(copy.deepcopy(params))
        except Exception as exc:
            raise RpcFailure(errors.error_of(exc)) from exc
        return loads(encoded.body)

    async def error(self, method: str, params: Any = None) -> RpcFailure:
        """The error answer of a call that must fail."""
        try:
            result = await self.call(method, params)
        except RpcFailure as failure:
            return failure
        raise AssertionError(f"{method} answered {result!r}, not an error")
