"""Content-Length framing (the LSP base protocol) over binary streams; no pygls, no JSON.

The sidecar reads frames with `FrameReader` on a dedicated thread and writes them with
`FrameWriter`; the Python client (`mimo_sidecar.client`) and the benchmarks use the same reader
and `frame`, so there is one implementation of the framing in the package.

A reader never goes deaf. A header block it cannot use, or a frame over its size limit, comes out
as a `FrameProblem` (the server answers it, id null), and the reader then looks for the next
`Content-Length:` wherever it starts: glued to the tail of a body cut short, or right after raw
JSON sent without a header. A body that turns out not to be JSON is handed back with `resync`, so
frames a too-long Content-Length swallowed are found inside it. Memory stays bounded whatever the
stream holds: header blocks are capped, and an oversized body is read and dropped in chunks.
"""

from __future__ import annotations

import io
import logging
import os
import re
import select
import stat
import threading
from dataclasses import dataclass
from typing import IO, BinaryIO, Literal

logger = logging.getLogger(__name__)

DEFAULT_MAX_FRAME_BYTES = 256 * 1024 * 1024  # 5x the 50 MB histories of the benchmarks
MAX_HEADER_BYTES = 65_536  # a header block longer than this is not one
_READ_CHUNK = 1 << 16
_SKIP_CHUNK = 1 << 20  # an oversized body is dropped this much at a time

_CONTENT_LENGTH_NAME = b"content-length"
_NEXT_HEADER = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_KEEP_WHILE_SCANNING = 64  # bytes kept when a scan runs out of input: a header name cut in two
# A header line: a field name (RFC 9110 token characters), optional blanks, a colon, a value.
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:(.*)", re.DOTALL)
_TOKEN_CHARS = frozenset(b"!#$%&'*+.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-")
_DECIMAL = re.compile(rb"[0-9]+")
_LONGEST_LENGTH = 15  # digits: more is over any limit (and int() refuses > 4300)


def frame(body: bytes) -> bytes:
    """A Content-Length frame around a UTF-8 JSON body (the byte length, not characters)."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@dataclass(frozen=True)
class FrameProblem:
    """Bytes that are not a usable frame. `kind` "header": the header block cannot be used (JSON-RPC
    parse error); "too-large": the frame is over the size limit (invalid request), its body dropped."""

    kind: Literal["header", "too-large"]
    message: str
    content_length: int | None = None
    max_frame_bytes: int | None = None


class FrameReader:
    """Reads `Content-Length` framed bodies from a binary stream (blocking; run it in a thread).

    Header names are matched case-insensitively and other headers are ignored; blank lines between
    frames are tolerated. `next()` gives bodies and problems, `read()` only bodies."""

    def __init__(self, stream: IO[bytes], max_frame_bytes: int | None = None) -> None:
        self._stream = stream
        self.max_frame_bytes = max_frame_bytes
        self._buffer = bytearray()
        self._eof = False
        self._scanning = False  # looking for the next Content-Length after a problem
        self._to_skip = 0  # bytes of an oversized body still to drop

    @classmethod
    def inside(cls, body: bytes | bytearray) -> FrameReader | None:
        """A reader of the frames inside a body that was not JSON, from the first Content-Length
        after its first byte (frames a too-long Content-Length swallowed); None when it has none."""
        found = _NEXT_HEADER.search(body, 1)
        if found is None:
            return None
        return cls(io.BytesIO(bytes(memoryview(body)[found.start() :])))

    def read(self) -> bytearray | None:
        """The next body, or None at end of input; problems are logged and passed over."""
        while True:
            event = self.next()
            if not isinstance(event, FrameProblem):
                return event
            logger.warning("skipping bytes that are not a frame: %s", event.message)

    def next(self) -> bytearray | FrameProblem | None:
        """The next body, or what was wrong with the bytes where a frame should have been; None at
        end of input."""
        if self._to_skip and not self._skip_body():
            return None
        if self._scanning:
            if not self._scan_to_header():
                return None
            self._scanning = False
        header = self._header_block()
        if header is None:
            return None
        if isinstance(header, FrameProblem):
            return header
        length = header
        if self.max_frame_bytes is not None and length > self.max_frame_bytes:
            self._to_skip = length
            return FrameProblem(
                "too-large",
                f"a frame of {length} bytes is over the maximum frame size of {self.max_frame_bytes} "
                "bytes (--max-frame-bytes); its body was skipped",
                content_length=length,
                max_frame_bytes=self.max_frame_bytes,
            )
        return self._body(length)

    def resync(self, unread: bytes | bytearray = b"") -> None:
        """Bytes read as a body turned out not to be one: put `unread` back in front of the stream
        and look for the next Content-Length from there."""
        self._buffer[:0] = unread
        self._scanning = True

    # -- header blocks ---------------------------------------------------------------------------
    def _header_block(self) -> int | FrameProblem | None:
        """The Content-Length of the header block at the buffer's start, consumed with the block;
        or a problem, after which the reader scans for the next header: after the block when it
        was all header lines, else from the second byte of the line that was not one (a header
        can be glued to the end of what came before it: `{...}Content-Length: 9`). None at end of
        input."""
        if not self._skip_blank_lines():
            return None
        lengths: list[bytes] = []
        lines: list[tuple[int, bytes]] = []
        pos = 0
        while True:
            line_end = self._line_end(pos)
            if isinstance(line_end, FrameProblem):
                del self._buffer[:pos]
                return self._problem_at_block_start(line_end)
            if line_end is None:
                if self._buffer:
                    logger.info("end of input inside a header block (%d bytes)", len(self._buffer))
                return None
            line_start, pos = pos, line_end
            line = bytes(self._buffer[line_start:line_end]).rstrip(b"\r\n")
            if pos > MAX_HEADER_BYTES:
                del self._buffer[:line_start]
                return self._problem_at_block_start(
                    FrameProblem("header", f"a header block longer than {MAX_HEADER_BYTES} bytes")
                )
            if not line:
                break
            match = _HEADER_LINE.fullmatch(line)
            if match is None:  # the lines before were headers: look for one glued to this line
                del self._buffer[:line_start]
                return self._problem_at_block_start(self._not_a_header(line))
            lines.append((line_start, line))
            if match.group(1).lower() == _CONTENT_LENGTH_NAME:
                lengths.append(match.group(2).strip(b" \t"))
        length = self._content_length(lengths)
        if isinstance(length, FrameProblem):
            # Scan on after the block, or from a header glued to the end of one of its lines
            # (`garbageContent-Length: 9` reads as one header named `garbageContent-Length`).
            pos = next(
                (start + m.start() for start, line in lines if (m := _NEXT_HEADER.search(line, 1))), pos
            )
            self._scanning = True
        del self._buffer[:pos]
        return length

    def _skip_blank_lines(self) -> bool:
        """Drop the blank lines before a header block; False at end of input."""
        while True:
            stripped = self._buffer.lstrip(b"\r\n")
            if stripped:
                if len(stripped) != len(self._buffer):
                    self._buffer[:] = stripped
                return True
            self._buffer.clear()
            if not self._fill():
                return False

    def _line_end(self, pos: int) -> int | FrameProblem | None:
        """The end (after its newline) of the header line at `pos`; a problem as soon as the line
        cannot be a header (raw JSON is refused at its first byte, without waiting for a newline)."""
        while True:
            newline = self._buffer.find(b"\n", pos)
            if newline >= 0:
                return newline + 1
            if len(self._buffer) > MAX_HEADER_BYTES:
                return FrameProblem("header", f"a header block longer than {MAX_HEADER_BYTES} bytes")
            partial = bytes(self._buffer[pos:])
            name = partial.split(b":", 1)[0]
            # A lone "\r" is the start of the blank line that ends the block, its "\n" not read
            # yet: the bytes of one frame may arrive in any number of reads.
            blank_so_far = partial == b"\r"
            token = name.rstrip(b" \t")
            if not blank_so_far and (any(b not in _TOKEN_CHARS for b in token) or len(name) > 256):
                return self._not_a_header(partial)
            if not self._fill():
                return None

    def _not_a_header(self, line: bytes) -> FrameProblem:
        if line[:1] in (b"{", b"["):
            return FrameProblem("header", "JSON without a Content-Length header before it")
        return FrameProblem("header", f"not a header line: {_shown(line)}")

    def _content_length(self, values: list[bytes]) -> int | FrameProblem:
        if not values:
            return FrameProblem("header", "a header block without Content-Length")
        for value in values:
            if not _DECIMAL.fullmatch(value):
                return FrameProblem(
                    "header", f"Content-Length {_shown(value)} is not a non-negative decimal integer"
                )
        if len({value.lstrip(b"0") for value in values}) > 1:
            shown = ", ".join(_shown(v) for v in values)
            return FrameProblem(
                "header", f"Content-Length given more than once, with different values ({shown})"
            )
        digits = values[0].lstrip(b"0") or b"0"
        if len(digits) > _LONGEST_LENGTH:
            return FrameProblem("header", f"Content-Length {_shown(values[0])} is too large to be a frame")
        return int(digits)

    def _problem_at_block_start(self, problem: FrameProblem) -> FrameProblem:
        """Report `problem` and scan for the next header from the buffer's second byte."""
        del self._buffer[:1]
        self._scanning = True
        return problem

    def _scan_to_header(self) -> bool:
        """Drop bytes up to the next `Content-Length:`; False at end of input."""
        while True:
            found = _NEXT_HEADER.search(self._buffer)
            if found is not None:
                del self._buffer[: found.start()]
                return True
            del self._buffer[: max(0, len(self._buffer) - _KEEP_WHILE_SCANNING)]
            if not self._fill():
                return False

    # -- bodies ----------------------------------------------------------------------------------
    def _body(self, length: int) -> bytearray | None:
        body = bytearray(length)
        have = min(length, len(self._buffer))
        body[:have] = self._buffer[:have]
        del self._buffer[:have]
        view = memoryview(body)
        while have < length:
            # typing.IO declares no readinto; the streams given here (stdin.buffer, pipes) have it
            got = self._stream.readinto(view[have:])  # type: ignore[attr-defined]  # see above
            if not got:
                logger.info("end of input inside a frame body (%d of %d bytes)", have, length)
                self._eof = True
                return None
            have += got
        return body

    def _skip_body(self) -> bool:
        """Drop the rest of an oversized body, a chunk at a time; False at end of input."""
        dropped = min(self._to_skip, len(self._buffer))
        del self._buffer[:dropped]
        self._to_skip -= dropped
        while self._to_skip:
            chunk = self._stream.read(min(self._to_skip, _SKIP_CHUNK))
            if not chunk:
                logger.info("end of input inside an oversized frame body")
                self._eof = True
                return False
            self._to_skip -= len(chunk)
        return True

    def _fill(self) -> bool:
        """Read what the stream has (at least one byte); False at end of input."""
        if self._eof:
            return False
        read1 = getattr(self._stream, "read1", None)
        chunk = read1(_READ_CHUNK) if read1 is not None else self._stream.read(_READ_CHUNK)
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True


def _shown(raw: bytes) -> str:
    """A piece of the host's bytes in an error message: printable, at most 40 characters."""
    text = raw[:40].decode("utf-8", "replace")
    return repr(text + ("…" if len(raw) > 40 else ""))


class FrameWriter:
    """Writes whole frames (header and body under one lock) and flushes; thread-safe."""

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

    def write_body(self, body: bytes | tuple[bytes | memoryview, ...]) -> None:
        """One frame around `body`, or around the concatenation of its pieces (written one after
        the other under the lock, so no copy of a large body is made)."""
        pieces = (body,) if isinstance(body, bytes) else body
        header = b"Content-Length: %d\r\n\r\n" % sum(len(p) for p in pieces)
        with self._lock:
            if self.closed:
                return
            self._stream.write(header)
            for piece in pieces:
                self._stream.write(piece)
            self._stream.flush()

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

    def wait_until_unread(self) -> bool:
        """Block until nobody can read the stream any more (the reader closed its end of the pipe
        or socket): True then. False at once when that cannot be watched (a file, a terminal, no
        `poll` on this platform): the next write's error is then the only sign."""
        try:
            fd = self._stream.fileno()
            mode = os.fstat(fd).st_mode
        except (AttributeError, OSError, ValueError):
            return False
        if not hasattr(select, "poll") or not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return False
        poller = select.poll()
        poller.register(fd, 0)  # no events asked: POLLERR and POLLHUP are always reported
        while True:
            for _fd, events in poller.poll():
                if events & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
                    return True
