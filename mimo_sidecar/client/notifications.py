"""What the sidecar sends a client, delivered as typed callbacks.

    Notifications(rebuild_status=lambda s: print(s.state, s.message))

Each callback takes the message's params as their wire model. Every message of the sidecar's has a
field here, named after its method (`client/methods.py`); `unknown` gets, as plain JSON, a message
this version of the client does not know (a newer sidecar's), so nothing arrives unseen. A callback
may be a coroutine function in the asyncio client; the sync client calls it on its reader thread,
so it should return quickly.

The one request the sidecar sends, `window/workDoneProgress/create`, is answered `null` for the
host (creating a progress token needs nothing); its callback only tells the host that it came.
The sidecar sends it, and `$/progress`, only to a client that advertised
`window.workDoneProgress`: the typed clients advertise it when a `progress` callback is given.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..wire.lifecycle import LogMessageParams
from ..wire.rebuild import ProgressParams, StatusNotification, WorkDoneProgressCreateParams
from .methods import python_name, sidecar_messages

logger = logging.getLogger(__name__)

Callback = Callable[[Any], "None | Awaitable[None]"]


@dataclass
class Notifications:
    """The host's handlers for what the sidecar sends; any may be left out."""

    window_log_message: Callable[[LogMessageParams], None | Awaitable[None]] | None = None
    rebuild_status: Callable[[StatusNotification], None | Awaitable[None]] | None = None
    window_work_done_progress_create: (
        Callable[[WorkDoneProgressCreateParams], None | Awaitable[None]] | None
    ) = None
    progress: Callable[[ProgressParams], None | Awaitable[None]] | None = None
    unknown: Callable[[str, Any], None | Awaitable[None]] | None = None

    @property
    def wants_progress(self) -> bool:
        return self.progress is not None or self.window_work_done_progress_create is not None

    def deliver(self, method: str, params: Any) -> None | Awaitable[None]:
        """Call the callback of one message of the sidecar's, with its params as their model."""
        spec = sidecar_messages().get(method)
        if spec is None or spec.params is None:
            return self.unknown(method, params) if self.unknown is not None else None
        callback: Callback | None = getattr(self, python_name(method))
        if callback is None:
            return None
        try:
            typed = spec.params.model_validate(params)
        except ValidationError:
            logger.warning("%s: params that do not match %s: %r", method, spec.params.__name__, params)
            return self.unknown(method, params) if self.unknown is not None else None
        return callback(typed)


# The sidecar's one request to a client, answered with this result.
PROGRESS_CREATE = "window/workDoneProgress/create"
