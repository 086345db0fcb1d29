"""The C allocator's thresholds for large blocks (glibc only).

glibc serves a request above its mmap threshold with a private mapping, returned to the system as
soon as it is freed; below it, from the heap, whose freed space stays with the process except what
lies at its top beyond the trim threshold. Left alone, the mmap threshold starts at 128 KiB and
rises, up to 32 MiB, each time a mapped block is freed (the trim threshold with it, to twice as
much): after the first large frame (a 50 MB `session/open`), every buffer up to 32 MiB came from
the heap, and the worst case's peak (open, a whole-view build in every format, a rebuild) went over
its target of 3 × JSON + 80 MiB. Both are fixed at start-up, which turns the rising off:

- the mmap threshold at 4 MiB: a frame, a large host string or anything else of that size is mapped
  and goes back to the system when freed;
- the trim threshold at 16 MiB: a response's slices (about 512 KB each, `jsonrpc_codec.SLICE_BYTES`)
  come from the heap, and the space they leave when a memo starts again or a session closes stays
  for the next response to be written into. Fresh mappings instead cost a page fault per 4 KiB on
  first touch: about 1,000 for a 4 MB response, 2.5 ms of its 5 ms encode on a VM.

Small objects (the session's dicts and strings) are unaffected: Python keeps them in its own arenas.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys

logger = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 4 * 1024 * 1024
TRIM_THRESHOLD_BYTES = 16 * 1024 * 1024


def fix_malloc_thresholds(threshold: int = MMAP_THRESHOLD_BYTES, trim: int = TRIM_THRESHOLD_BYTES) -> bool:
    """Set glibc's mmap and trim thresholds; False (and nothing done) on another C library or
    platform."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    done = bool(mallopt(M_MMAP_THRESHOLD, threshold)) and bool(mallopt(M_TRIM_THRESHOLD, trim))
    logger.debug(
        "mmap threshold %s to %d bytes, trim threshold to %d", "set" if done else "not set", threshold, trim
    )
    return done
