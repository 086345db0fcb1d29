"""Session status for the host's UI: `rebuild/status` notifications, plus LSP work-done progress.

Agent hosts are not IDEs, so the custom notification is always sent. `$/progress` is added only when
the client advertised `window.workDoneProgress`; a client that then fails to create the token
(vscode-jsonrpc answers -32601 without a handler) just gets no progress, never a failed request.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from ..core import texts
from ..core.words import StatusState
from ..wire.rebuild import StatusNotification

if TYPE_CHECKING:
    from .server import SidecarServer

logger = logging.getLogger(__name__)
STATUS_METHOD = "rebuild/status"


class StatusReporter:
    """Busy/idle status of one session for the duration of one request: the service's
    `StatusListener`, shown as notifications (and progress, when the client has it)."""

    def __init__(
        self, server: SidecarServer, session_id: str, title: str = texts.REBUILD_PROGRESS_TITLE
    ) -> None:
        self.server = server
        self.session_id = session_id
        self.title = title
        self._token: str | None = None
        self._busy = False

    def _notify(self, state: StatusState, message: str) -> None:
        note = StatusNotification(session_id=self.session_id, state=state, message=message)
        self.server.protocol.notify(STATUS_METHOD, note.model_dump(mode="json", by_alias=True))

    async def busy(self, message: str) -> None:
        self._notify("busy", message)
        if not self._busy:
            self._busy = True
            await self._begin_progress(message)
        elif self._token is not None:
            self.server.work_done_progress.report(self._token, types.WorkDoneProgressReport(message=message))

    def idle(self, message: str = "") -> None:
        if not self._busy:
            return
        self._busy = False
        self._notify("idle", message)
        if self._token is not None:
            self.server.work_done_progress.end(
                self._token, types.WorkDoneProgressEnd(message=message or None)
            )
            self._release(self._token)
            self._token = None

    def _release(self, token: str) -> None:
        # pygls keeps a future per token it ever created and never drops one: one per insert that
        # showed progress, for the process's life (memory kept after the session closed).
        self.server.work_done_progress.tokens.pop(token, None)

    async def _begin_progress(self, message: str) -> None:
        caps = self.server.client_capabilities
        if not (caps and caps.window and caps.window.work_done_progress):
            return
        token = f"mimo-rebuild-{next(self.server.progress_tokens)}"  # unique per connection
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception as exc:  # the client cannot show progress: the notification suffices
            logger.info("work-done progress unavailable: %s", exc)
            self._release(token)
            return
        self._token = token
        self.server.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title=self.title, message=message, cancellable=False)
        )
