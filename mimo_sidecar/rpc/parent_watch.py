"""Parent-process watching: the parent process (`--clientProcessId`, `initialize.processId`) is polled
every second; when it is gone the process ends at once with `os._exit`, since a thread blocked
reading stdin would keep a normal exit waiting.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import sys
from typing import TYPE_CHECKING

from ..wire.lifecycle import PROCESS_ID_MAX

if TYPE_CHECKING:
    from .server import SidecarServer

logger = logging.getLogger(__name__)

PID_POLL_SECONDS = 1.0


def pid_alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie counts as dead)."""
    if pid <= 0:
        return True
    if sys.platform == "win32":  # pragma: no cover - not exercised on CI
        return _pid_alive_windows(pid)
    try:
        os.kill(pid, 0)
    except OSError as exc:
        return exc.errno == errno.EPERM
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def _pid_alive_windows(pid: int) -> bool:  # pragma: no cover - Windows only
    import ctypes

    if sys.platform != "win32":  # what follows is typed (and run) on Windows only
        raise OSError(errno.ENOSYS, "no Windows process API on this platform")
    synchronize, wait_timeout = 0x00100000, 0x00000102
    kernel32 = ctypes.windll.kernel32
    handle = kernel32.OpenProcess(synchronize, False, pid)
    if not handle:
        return False
    try:
        return bool(kernel32.WaitForSingleObject(handle, 0) == wait_timeout)
    finally:
        kernel32.CloseHandle(handle)


class ParentWatcher:
    """Ends the process when a watched parent process dies."""

    def __init__(self, server: SidecarServer, interval: float = PID_POLL_SECONDS) -> None:
        self._server = server
        self._interval = interval
        self._watched: dict[int, str] = {}
        self._task: asyncio.Task[None] | None = None

    def watch(self, pid: int, source: str) -> None:
        """Start watching `pid` (safe before the loop runs). The wire and the command line refuse
        process ids the platform cannot have; one that still gets here is logged, not watched."""
        if not 0 <= pid <= PROCESS_ID_MAX:
            logger.error("not watching %d (%s): not a process id of this platform", pid, source)
            return
        if pid == 0 or pid == os.getpid() or pid in self._watched:
            return
        self._watched[pid] = source
        logger.info("watching parent process %d (%s)", pid, source)
        self._server.call_when_running(self._ensure_task)

    def _ensure_task(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._poll(), name="parent-watcher")

    async def _poll(self) -> None:
        while True:
            for pid, source in list(self._watched.items()):
                try:
                    alive = pid_alive(pid)
                except (OverflowError, ValueError) as exc:  # the watcher must outlive a bad pid
                    logger.error("cannot watch process %d (%s): %s", pid, source, exc)
                    del self._watched[pid]
                    continue
                if not alive:
                    logger.warning("parent process %d (%s) is gone; exiting", pid, source)
                    hard_exit(self._server.exit_code)
            await asyncio.sleep(self._interval)


def hard_exit(code: int) -> None:
    """Flush logs and end the process now, whatever threads are still blocked."""
    logging.shutdown()
    try:
        sys.stderr.flush()
    finally:
        os._exit(code)
