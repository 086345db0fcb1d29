"""Logging for a process whose stdout carries the protocol: stderr or a file, with timestamps.

pygls logs every outgoing body at INFO (conversation content, and slow), so its loggers stay at
WARNING whatever level the sidecar runs at.
"""

from __future__ import annotations

import logging
import sys

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
FORMAT = "%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s"
DATE_FORMAT = "%Y-%m-%dT%H:%M:%S"
QUIET_LOGGERS = ("pygls", "lsprotocol", "asyncio")


def configure_logging(level: str = "INFO", log_file: str | None = None) -> None:
    """Route all logging to `log_file` (appended) or stderr. Raises OSError if the file cannot be
    opened."""
    handler: logging.Handler
    if log_file:
        handler = logging.FileHandler(log_file, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT, DATE_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.captureWarnings(True)
