"""Cancelling a request of the blocking client from another thread (docs/client.md, "Cancelling").

A blocking call cannot be interrupted by its own thread, so the caller hands it a `CancelToken` and
keeps the token where another thread (a UI's stop button, a supervisor) can reach it:

    token = CancelToken()
    threading.Timer(5, token.cancel).start()
    sidecar.rebuild_insert({"sessionId": sid, "reason": "manual"}, cancel=token)

`token.cancel()` sends `$/cancelRequest` for the request the token is bound to. The call still
waits for the sidecar's one answer, so what it returns is what happened: `RequestCancelled` when
the sidecar stopped the request (and changed nothing), or the result when the request had already
finished. A token cancelled before its call starts makes the call raise at once, with nothing sent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .errors import RpcError

REQUEST_CANCELLED = -32800  # the sidecar's answer to a request it stopped (protocol.md, "Errors")


class RequestCancelled(RpcError):
    """The request was cancelled (`$/cancelRequest`, or shutdown after its drain bound): the sidecar
    answered -32800, and the request changed nothing."""


def raised_for(error: RpcError) -> RpcError:
    """The error a call raises for an error answer: `RequestCancelled` for -32800."""
    if error.code == REQUEST_CANCELLED and not isinstance(error, RequestCancelled):
        return RequestCancelled(error.code, error.message, error.data)
    return error


class CancelToken:
    """A cancel switch for one blocking call at a time; thread-safe, usable again after the call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._send_cancel: Callable[[], None] | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """Cancel the bound request (or the next call, when none is bound yet). Idempotent."""
        with self._lock:
            first = not self._cancelled
            self._cancelled = True
            send = self._send_cancel if first else None
        if send is not None:
            send()

    def reset(self) -> None:
        """Arm the token again for another call."""
        with self._lock:
            self._cancelled = False

    # -- used by the client ---------------------------------------------------------------------
    def bind(self, send_cancel: Callable[[], None]) -> None:
        """Called once the request is written: a cancel from now on reaches the sidecar. A cancel
        that came in between (after the check at the start of the call) is sent now."""
        with self._lock:
            self._send_cancel = send_cancel
            late = self._cancelled
        if late:
            send_cancel()

    def unbind(self) -> None:
        with self._lock:
            self._send_cancel = None
