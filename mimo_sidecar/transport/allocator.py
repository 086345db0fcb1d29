"""The C allocator's threshold for mapping large blocks (glibc only).

glibc serves a request above its mmap threshold with a private mapping, returned to the system as
soon as it is freed; below it, from the heap, whose freed space stays with the process. The
threshold starts at 128 KiB but rises, up to 32 MiB, each time a mapped block is freed: after the
first large frame (a 50 MB `session/open`), the growing output buffer of a whole-view
`request/build` (doubling through 1, 2 ... 32 MiB) came from the heap and stayed there, and the
worst case's peak (open, a whole-view build in every format, a rebuild) went over its target of
3 × JSON + 80 MiB. A fixed threshold keeps large buffers mapped, and setting it turns the rising
off. Small objects (the session's dicts and strings) are unaffected: they sit far below it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys

logger = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
MMAP_THRESHOLD_BYTES = 256 * 1024


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD_BYTES) -> bool:
    """Set glibc's mmap threshold; False (and nothing done) on another C library or platform."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    done = bool(mallopt(M_MMAP_THRESHOLD, threshold))
    logger.debug("mmap threshold %s to %d bytes", "set" if done else "not set", threshold)
    return done
