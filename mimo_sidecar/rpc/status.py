"""Session status for the host's UI: `rebuild/status` notifications, plus LSP work-done progress.

Agent hosts are not IDEs, so the custom notification is always sent. `$/progress` is added only when
the client advertised `window.workDoneProgress`, and nothing waits for it: the token is asked for
(`window/workDoneProgress/create`) and the work goes on; progress begins when the client answers,
if the work is still running. A client that refuses the token (vscode-jsonrpc answers -32601 without
a handler) gets no progress for that request. A client that does not answer within
`PROGRESS_ANSWER_SECONDS` (the server's `progress_answer_seconds`) is not asked again on this
connection, and every request still unanswered is forgotten with it: nothing is kept for an
answer that may never come.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ..core import texts
from ..core.words import StatusState
from ..wire.rebuild import StatusNotification

if TYPE_CHECKING:
    from .server import SidecarServer

logger = logging.getLogger(__name__)
STATUS_METHOD = "rebuild/status"
PROGRESS_ANSWER_SECONDS = 5.0


class StatusReporter:
    """Busy/idle status of one session for the duration of one request: the service's
    `StatusListener`, shown as notifications (and progress, when the client has it)."""

    def __init__(
        self, server: SidecarServer, session_id: str, title: str = texts.REBUILD_PROGRESS_TITLE
    ) -> None:
        self.server = server
        self.session_id = session_id
        self.title = title
        self._token: str | None = None  # set once the client accepted it, until the end
        self._message = ""
        self._busy = False

    def _notify(self, state: StatusState, message: str) -> None:
        note = StatusNotification(session_id=self.session_id, state=state, message=message)
        self.server.protocol.notify(STATUS_METHOD, note.model_dump(mode="json", by_alias=True))

    async def busy(self, message: str) -> None:
        self._notify("busy", message)
        self._message = message
        if not self._busy:
            self._busy = True
            self._ask_for_progress()
        elif self._token is not None:
            self._progress(types.WorkDoneProgressReport(message=message))

    def idle(self, message: str = "") -> None:
        if not self._busy:
            return
        self._busy = False
        self._notify("idle", message)
        if self._token is not None:
            self._progress(types.WorkDoneProgressEnd(message=message or None))
            self._token = None

    def _progress(self, value: Any) -> None:
        self.server.protocol.notify(
            types.PROGRESS, types.ProgressParams(token=self._token or "", value=value)
        )

    def _ask_for_progress(self) -> None:
        caps = self.server.client_capabilities
        if self.server.progress_unanswered or not (caps and caps.window and caps.window.work_done_progress):
            return
        token = f"mimo-rebuild-{next(self.server.progress_tokens)}"  # unique per connection
        protocol = self.server.protocol
        answer = protocol.send_request(
            types.WINDOW_WORK_DONE_PROGRESS_CREATE,
            types.WorkDoneProgressCreateParams(token=token),
            msg_id=token,
        )
        expiry = asyncio.get_running_loop().call_later(self.server.progress_answer_seconds, self._unanswered)
        self.server.progress_asks[token] = (answer, expiry)

        def answered(done: Future[Any]) -> None:
            expiry.cancel()
            self.server.progress_asks.pop(token, None)
            if done.cancelled():
                return
            if done.exception() is not None:  # the client cannot show progress: the notification suffices
                logger.info("work-done progress unavailable: %s", done.exception())
                return
            if self._busy:  # else the work ended before the answer came: nothing to show
                self._token = token
                self._progress(
                    types.WorkDoneProgressBegin(title=self.title, message=self._message, cancellable=False)
                )

        answer.add_done_callback(answered)

    def _unanswered(self) -> None:
        """One create went unanswered past the bound: every create still waiting is forgotten."""
        asks = self.server.progress_asks
        if not asks:
            return
        logger.warning(
            "the client did not answer window/workDoneProgress/create within %g s: no more "
            "progress is asked for on this connection",
            self.server.progress_answer_seconds,
        )
        self.server.progress_unanswered = True
        for token, (answer, expiry) in list(asks.items()):
            expiry.cancel()
            self.server.protocol.forget_future(token, answer)
            answer.cancel()  # its done callback drops it from `asks`
        asks.clear()
