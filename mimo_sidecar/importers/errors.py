"""The one error the importers raise: a transcript that cannot be read, with where it went wrong."""

from __future__ import annotations

from pathlib import Path


class TranscriptError(Exception):
    """A file that is missing, empty, not UTF-8, not JSON, or not the expected shape.

    `line` is the 1-based line of a JSONL record (or of a JSON syntax error); `where` is a JSON
    path inside a JSON document (`messages[3].parts`). The message names the file and the place,
    on one line, so a command can print `str(error)` as it is.
    """

    def __init__(self, path: Path | str, message: str, *, line: int | None = None, where: str | None = None):
        self.path = str(path)
        self.line = line
        self.where = where
        self.detail = message
        place = self.path
        if line is not None:
            place += f":{line}"
        if where:
            place += f": {where}"
        super().__init__(f"{place}: {message}")
