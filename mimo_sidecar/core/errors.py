"""The one error type of the core and the service: `DomainError`, with a code from `ErrorCode`.

A `DomainError` says what went wrong in domain terms: its code, the path of the input at fault
(`field`, e.g. `("upsertMessages", 1, "info", "id")`) and a detail sentence. It carries no
JSON-RPC number and no method name: the RPC edge (`rpc.errors`) maps each code to its wire error
and writes the message as `"<method>: <path>: <detail>"`. Every code must have a wire mapping; a
test fails when one has none.
"""

from __future__ import annotations

import enum
from typing import Any

FieldPath = tuple[str | int, ...]


class ErrorCode(enum.Enum):
    SESSION_NOT_FOUND = "session-not-found"
    SESSION_EXISTS = "session-exists"
    REVISION_CONFLICT = "revision-conflict"
    MESSAGE_NOT_FOUND = "message-not-found"
    INVALID_SESSION_DATA = "invalid-session-data"
    WRITER_STATE = "writer-state"
    WATERMARK_UNAVAILABLE = "watermark-unavailable"
    INVALID_CHECKPOINT = "invalid-checkpoint"
    MEMORY_WRITE_FAILED = "memory-write-failed"
    # rebuild/insert without the boundaryMessageId the session's ID scheme makes required
    BOUNDARY_ID_REQUIRED = "boundary-id-required"
    # tools/call with a name that is not one of the sidecar's model tools (with the prefix in use)
    UNKNOWN_TOOL = "unknown-tool"
    # request/build whose request would hold no message at all: no provider accepts one
    EMPTY_REQUEST = "empty-request"


def dotted(path: FieldPath) -> str:
    """`("upsertParts", 1, "part")` -> `upsertParts.1.part` (the one path style on the wire)."""
    return ".".join(str(p) for p in path)


class DomainError(Exception):
    """A request the session or the service cannot carry out; nothing was changed.

    `field` is the input at fault, as the host sent it: the wire's `data.field`, and the path the
    message starts with.
    """

    def __init__(
        self,
        code: ErrorCode,
        detail: str,
        field: FieldPath | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{dotted(field)}: {detail}" if field is not None else detail)
        self.code = code
        self.detail = detail
        self.field = field
        self.data = data or {}

    @property
    def path(self) -> str | None:
        """The dotted path of `field`, or None when no single input is at fault."""
        return dotted(self.field) if self.field is not None else None

    @property
    def message(self) -> str:
        """`<path>: <detail>` (the path of `field`), or the detail alone."""
        return str(self)
