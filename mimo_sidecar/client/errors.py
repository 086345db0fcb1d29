"""What a request can end in besides its result, for both flavours of the client."""

from __future__ import annotations

from typing import Any

METHOD_NOT_FOUND = -32601
CONNECTION_CLOSED = -32099  # a client-side code, in the JSON-RPC range reserved for implementations


class RpcError(Exception):
    """An error response: `code`, `message` and `data` as the sidecar sent them (protocol.md, "Errors")."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data

    @property
    def name(self) -> str | None:
        """`data.name`: the error's name in protocol.md's table (`SessionNotFound`, `InvalidParams`...)."""
        return self.data.get("name") if isinstance(self.data, dict) else None

    @property
    def field(self) -> str | None:
        """`data.field`: the input at fault, as a wire path (`upsertParts.0.part.id`), when there is one."""
        return self.data.get("field") if isinstance(self.data, dict) else None

    @property
    def method_missing(self) -> bool:
        return self.code == METHOD_NOT_FOUND


class SidecarClosed(RpcError):
    """The sidecar's output ended (the process exited or closed stdout) before the answer came."""

    def __init__(self, detail: str) -> None:
        super().__init__(CONNECTION_CLOSED, f"sidecar connection closed: {detail}")


class RpcTimeout(Exception):
    """No response within the time allowed."""


def error_of(message: dict[str, Any]) -> RpcError:
    """The `RpcError` of an error response."""
    error = message.get("error") or {}
    return RpcError(error.get("code", 0), error.get("message", ""), error.get("data"))
