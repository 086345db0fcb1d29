"""The sidecar server: a pygls `LanguageServer` around the `SidecarService`, served over stdio.

The transport loop is our own (pygls's `start_io` is replaced): a daemon thread reads frames,
parses each body and hands the message to the event loop, where the protocol dispatches it. A body
over `LARGE_FRAME_BYTES` is parsed instead on a thread of its own, slice by slice, while the
reader goes on: one big `session/open` does not hold up the requests behind it. Bytes that are not
a frame are answered (id null) and the reader resynchronises on the next header. The loop stops on
`exit`, at end of input, when stdout is closed or the client can no longer be written to; the
process then ends within a bounded time even if a handler is stuck (see `cli.main`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcMethodNotFound
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..core.session.ids import IdMinter
from ..service import SidecarService
from ..service.service import now_ms
from ..transport.framing import DEFAULT_MAX_FRAME_BYTES, FrameProblem, FrameReader, FrameWriter
from ..transport.jsonrpc_codec import LARGE_FRAME_BYTES, Unreadable, decode_frame
from .dispatch import RawHandler
from .parent_watch import ParentWatcher
from .protocol import SidecarProtocol, raw_converter_factory
from .status import PROGRESS_ANSWER_SECONDS, StatusReporter

logger = logging.getLogger(__name__)

SERVER_NAME = "mimo-sidecar"
# End of input: requests already read get EOF_DRAIN_SECONDS to answer (a client may close its
# side and still read), then remaining tasks are cancelled and get TEARDOWN_SECONDS to unwind.
EOF_DRAIN_SECONDS = 0.3
TEARDOWN_SECONDS = 0.2

T = TypeVar("T")


class SidecarServer(LanguageServer):
    protocol: SidecarProtocol

    def __init__(self, *, clock: Callable[[], int] = now_ms, minter: IdMinter | None = None) -> None:
        """`clock` and `minter` are the service's (injected for deterministic runs: rpc.doc_examples)."""
        super().__init__(
            SERVER_NAME,
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.None_,
            protocol_cls=SidecarProtocol,
            converter_factory=raw_converter_factory,
        )
        self.service = SidecarService(
            status=lambda session_id: StatusReporter(self, session_id), clock=clock, minter=minter
        )
        self.progress_tokens = itertools.count(1)  # work-done progress tokens: mimo-rebuild-<n>
        self.progress_unanswered = False  # the client left a progress token unanswered (rpc.status)
        # creates still waiting for an answer, token -> (answer, expiry timer): when one expires, all
        # are forgotten together (a second insert may have asked before the first one's bound ran out)
        self.progress_asks: dict[str, tuple[Any, asyncio.TimerHandle]] = {}
        self.progress_answer_seconds = PROGRESS_ANSWER_SECONDS
        self.handlers: dict[str, RawHandler] = {}  # method -> validated handler (rpc.dispatch)
        self.inflight: set[asyncio.Task[Any]] = set()
        self.stop_reason: str | None = None
        self.max_frame_bytes = DEFAULT_MAX_FRAME_BYTES
        # One thread for large frames: one at a time, so two big opens do not double the peak memory.
        self._large_frames = ThreadPoolExecutor(max_workers=1, thread_name_prefix="large-frame")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        self._on_loop_start: list[Callable[[], None]] = []
        self.parent_watcher = ParentWatcher(self)
        self.protocol.on_exit = lambda: self.request_stop("exit")
        self.protocol.on_connection_lost = lambda: self.request_stop("connection lost")

    # -- errors ----------------------------------------------------------------------------------
    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log only: never pop a window/showMessage in the client's UI. An unknown method is the
        host's mistake (a typo, a newer protocol), already answered -32601: not a server error."""
        if isinstance(error, JsonRpcMethodNotFound):
            logger.info("unknown method, answered -32601: %s", error)
            return
        logger.error("server error (%s): %s", getattr(source, "__name__", source), error)

    # -- in-flight work --------------------------------------------------------------------------
    @contextlib.contextmanager
    def track_current_task(self) -> Iterator[None]:
        """Count the running task as in-flight work that `shutdown` waits for."""
        task = asyncio.current_task()
        if task is None:
            yield
            return
        self.inflight.add(task)
        try:
            yield
        finally:
            self.inflight.discard(task)

    def spawn(self, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run background work as a task that `shutdown` waits for, like a request."""
        task = asyncio.get_running_loop().create_task(coro)
        self.inflight.add(task)
        task.add_done_callback(self.inflight.discard)
        return task

    async def drain(self, bound: float) -> int:
        """Wait up to `bound` seconds for in-flight work (other than the caller); returns how many
        tasks were still running at the deadline."""
        current = asyncio.current_task()
        pending = {t for t in self.inflight if t is not current and not t.done()}
        if not pending:
            return 0
        _done, still = await asyncio.wait(pending, timeout=bound)
        return len(still)

    # -- running ---------------------------------------------------------------------------------
    @property
    def exit_code(self) -> int:
        """0 when the client completed `shutdown` before the end, 1 otherwise (LSP `exit` rule)."""
        return 0 if self.protocol.shutdown_completed else 1

    def call_when_running(self, fn: Callable[[], None]) -> None:
        """Run `fn` on the loop once it starts (immediately if it is running)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(fn)
        else:
            self._on_loop_start.append(fn)

    def request_stop(self, reason: str, drain: float = 0.0) -> None:
        """Stop serving, after giving in-flight requests up to `drain` seconds; any thread."""
        loop = self._loop
        if loop is None:
            return

        def stop() -> None:
            if self.stop_reason is None:
                self.stop_reason = reason
                logger.info("stopping: %s", reason)
            if self._stopped is not None:
                self._stopped.set()

        async def drain_then_stop() -> None:
            await self.drain(drain)
            stop()

        def schedule() -> None:
            if drain > 0:
                loop.create_task(drain_then_stop())
            else:
                stop()

        try:
            loop.call_soon_threadsafe(schedule)
        except RuntimeError:
            pass  # loop already closed

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve JSON-RPC on the given streams until exit, end of input or a lost connection."""
        rpc_in = stdin or sys.stdin.buffer
        writer = FrameWriter(stdout or sys.stdout.buffer)
        self.protocol.frames = writer
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve(rpc_in, writer))
            _cancel_remaining(loop, TEARDOWN_SECONDS)
        except KeyboardInterrupt:
            self.stop_reason = self.stop_reason or "interrupted"
        finally:
            writer.close()
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            except Exception:  # pragma: no cover - best effort
                pass
            asyncio.set_event_loop(None)
            loop.close()  # does not wait for executor threads
            self._large_frames.shutdown(wait=False, cancel_futures=True)
            if self._thread_pool is not None:
                self._thread_pool.shutdown(wait=False, cancel_futures=True)

    async def _serve(self, rpc_in: BinaryIO, writer: FrameWriter) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        for fn in self._on_loop_start:
            fn()
        self._on_loop_start.clear()
        reader = FrameReader(rpc_in, self.max_frame_bytes)
        threading.Thread(
            target=self._read_frames, args=(reader, self._loop), name="rpc-reader", daemon=True
        ).start()
        threading.Thread(target=self._watch_output, args=(writer,), name="rpc-output", daemon=True).start()
        await self._stopped.wait()

    def _read_frames(self, reader: FrameReader, loop: asyncio.AbstractEventLoop) -> None:
        try:
            while True:
                event = reader.next()
                if event is None:
                    break
                self._deliver(event, reader, loop)
                # Drop our reference while blocked on the next frame: a session/open body can be
                # tens of megabytes, and it is freed as soon as it is parsed.
                del event
        except RuntimeError:
            return  # the loop is closed: we are exiting anyway
        except Exception as exc:
            if isinstance(exc, ValueError) and "closed file" in str(exc):
                # The input stream was closed under the reader (an in-process host ending its
                # pipes, as the doc recorder does): end of input, not a failure worth a traceback.
                logger.debug("input closed while reading: %s", exc)
            else:
                logger.exception("reading from the client failed")
        self.request_stop("end of input", drain=EOF_DRAIN_SECONDS)

    def _deliver(
        self, event: bytearray | FrameProblem, reader: FrameReader, loop: asyncio.AbstractEventLoop
    ) -> None:
        """Hand one frame (or what stood where a frame should have) to the loop; on a reading thread."""
        if isinstance(event, FrameProblem):
            loop.call_soon_threadsafe(self.protocol.refuse_frame, event)
        elif len(event) > LARGE_FRAME_BYTES:
            loop.call_soon_threadsafe(self._receive_large, event)
        else:
            decoded = decode_frame(event)
            if isinstance(decoded, Unreadable) and not decoded.too_deep:
                reader.resync(event[1:])  # a Content-Length too long swallowed the next frames
            loop.call_soon_threadsafe(self.protocol.receive, decoded)

    def _receive_large(self, body: bytearray) -> None:
        self.spawn(self._parse_large(body))

    async def _parse_large(self, body: bytearray) -> None:
        """Parse a large frame off the loop, then dispatch it. Requests read after it may start
        first (protocol.md, "Transport", says a host must not rely on their order)."""
        loop = asyncio.get_running_loop()
        decoded = await loop.run_in_executor(self._large_frames, decode_frame, body)
        self.protocol.receive(decoded)
        if isinstance(decoded, Unreadable) and not decoded.too_deep:
            inner = FrameReader.inside(body)
            if inner is not None:  # the frames a too-long Content-Length swallowed
                await loop.run_in_executor(self._large_frames, self._read_inside, inner, loop)

    def _read_inside(self, reader: FrameReader, loop: asyncio.AbstractEventLoop) -> None:
        while (event := reader.next()) is not None:
            self._deliver(event, reader, loop)

    def _watch_output(self, writer: FrameWriter) -> None:
        """A closed stdout ends the serving like a closed stdin: nobody reads the answers."""
        if writer.wait_until_unread():
            self.request_stop("stdout closed")


def _cancel_remaining(loop: asyncio.AbstractEventLoop, timeout: float) -> None:
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    if not tasks:
        return
    for t in tasks:
        t.cancel()
    loop.run_until_complete(asyncio.wait(tasks, timeout=timeout))


def build_server(
    extra: tuple[Callable[[SidecarServer], None], ...] = (),
    *,
    clock: Callable[[], int] = now_ms,
    minter: IdMinter | None = None,
) -> SidecarServer:
    """A server with every method registered (`rpc.handlers`); `extra` registrars run last (tests)."""
    from .handlers import register_all

    server = SidecarServer(clock=clock, minter=minter)
    register_all(server)
    for register in extra:
        register(server)
    return server
