"""Content-Length framing (the LSP base protocol) over binary streams; no pygls, no JSON.

The sidecar reads frames with `FrameReader` on a dedicated thread and writes them with
`FrameWriter`; the Python client (`mimo_sidecar.client`) and the benchmarks use the same reader
and `frame`, so there is one implementation of the framing in the package.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import IO, BinaryIO

logger = logging.getLogger(__name__)

MAX_HEADER_LINE = 65_536
MAX_BODY_BYTES = 1 << 30  # a larger Content-Length is treated as a broken stream

_CONTENT_LENGTH = re.compile(rb"content-length\s*:\s*(\d+)\s*", re.IGNORECASE)


def frame(body: bytes) -> bytes:
    """A Content-Length frame around a UTF-8 JSON body (the byte length, not characters)."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class FrameReader:
    """Reads `Content-Length` framed bodies from a binary stream (blocking; run it in a thread).

    Header names are matched case-insensitively and other headers are ignored. A header block
    without a usable Content-Length is skipped with a warning.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream

    def read(self) -> bytes | None:
        """The next body, or None at end of input."""
        while True:
            length = self._read_header()
            if length is None:
                return None
            if length < 0:
                logger.warning("ignoring a frame header without Content-Length")
                continue
            if length > MAX_BODY_BYTES:
                logger.error(
                    "Content-Length %d exceeds %d bytes; closing the connection", length, MAX_BODY_BYTES
                )
                return None
            body = self._stream.read(length)
            if len(body) < length:
                return None  # end of input inside a body
            return body

    def _read_header(self) -> int | None:
        """The Content-Length of the next header block; -1 when it has none; None at end of input."""
        length = -1
        saw_header = False
        while True:
            line = self._stream.readline(MAX_HEADER_LINE)
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                if saw_header:
                    return length
                continue  # blank lines between frames are tolerated
            saw_header = True
            match = _CONTENT_LENGTH.fullmatch(line.rstrip(b"\r\n"))
            if match:
                length = int(match.group(1))


class FrameWriter:
    """Writes whole frames (header and body in one write) and flushes; thread-safe."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.closed = False

    def write(self, data: bytes) -> None:
        with self._lock:
            if self.closed:
                return
            self._stream.write(data)
            self._stream.flush()

    def write_body(self, body: bytes) -> None:
        self.write(frame(body))

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
            try:
                self._stream.flush()
                self._stream.close()
            except OSError:
                pass
