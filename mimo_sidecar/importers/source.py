"""Reading transcript files: whole JSON documents, JSONL streams and JSON arrays of records, with
errors that name the line (or the array index).

Strict by default: a line that is not valid UTF-8 or not a JSON object stops the import with a
`TranscriptError` naming the file and the line (a crash mid-write leaves a truncated last line;
importing it silently would hide that the newest step is missing). With `tolerate_bad_lines`, such
lines are skipped and counted in the report instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .errors import TranscriptError
from .report import ImportReport

UTF8_BOM = b"\xef\xbb\xbf"
BAD_LINE = "unreadable line (skipped on request)"
BAD_ELEMENT = "array element that is not an object (skipped on request)"


def read_bytes(path: Path) -> bytes:
    """The file's bytes; missing, unreadable or empty files are a `TranscriptError`."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise TranscriptError(path, "is a directory, not a transcript file") from None
    except OSError as exc:
        raise TranscriptError(path, f"cannot read: {exc.strerror or exc}") from None
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]
    if not data.strip():
        raise TranscriptError(path, "empty file")
    return data


def _decode(path: Path, data: bytes, line: int | None = None) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = line if line is not None else data.count(b"\n", 0, exc.start) + 1
        raise TranscriptError(path, f"invalid UTF-8 (byte {exc.start} of the line)", line=at) from None


def load_json(path: Path, data: bytes) -> Any:
    """A whole JSON document; syntax errors name the line and column."""
    text = _decode(path, data)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:  # the stdlib parser reports line and column; orjson only knows the document failed
        json.loads(text)
    except json.JSONDecodeError as exc:
        truncated = " (the file looks truncated)" if exc.pos >= len(text.rstrip()) else ""
        raise TranscriptError(
            path, f"not valid JSON: {exc.msg} at column {exc.colno}{truncated}", line=exc.lineno
        ) from None
    raise TranscriptError(path, "not valid JSON")  # pragma: no cover - both parsers disagree


def whole_document(data: bytes) -> Any:
    """The file as one JSON document, or None when it is not one (JSONL, damaged JSON, text)."""
    if not data.lstrip().startswith((b"[", b"{")):
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def opens_a_document(data: bytes) -> bool:
    """Whether the bytes start like a multi-line JSON document (a lone `{` or any `[` first), not
    like JSONL (a whole object on its first line)."""
    head = data.lstrip()
    return head.startswith(b"[") or head.split(b"\n", 1)[0].strip() == b"{"


@dataclass(frozen=True, slots=True)
class Record:
    """One record and where it came from: a JSONL line (`line`, 1-based), or an element of a JSON
    array (`where` = `[index]`; `line` is then the 0-based index, its place in the source)."""

    line: int
    data: dict[str, Any]
    where: str | None = None

    @property
    def at_line(self) -> int | None:
        """The line to name in an error (None for an array element: `where` names it)."""
        return None if self.where is not None else self.line

    @property
    def tag(self) -> str:
        """A short, stable label of the record's place, for derived IDs (`L12`, `E3`)."""
        return f"L{self.line}" if self.where is None else f"E{self.line}"


def jsonl_records(
    path: Path, data: bytes, report: ImportReport, *, tolerate_bad_lines: bool
) -> Iterator[Record]:
    """The JSON objects of a JSONL file, one per non-blank line, counted in `report.records_read`."""
    lines = data.split(b"\n")
    last = len(lines)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        report.records_read += 1
        try:
            record = _parse_line(path, raw, number, is_last=number == last)
        except TranscriptError:
            if not tolerate_bad_lines:
                raise
            report.skip(BAD_LINE)
            continue
        yield Record(number, record)


def _parse_line(path: Path, raw: bytes, number: int, *, is_last: bool) -> dict[str, Any]:
    text = _decode(path, raw, number)
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        hint = " (truncated last line?)" if is_last else ""
        raise TranscriptError(path, f"not a valid JSON record{hint}", line=number) from None
    if not isinstance(value, dict):
        raise TranscriptError(path, "a JSONL record must be a JSON object", line=number)
    return value


def json_array_records(
    path: Path, data: bytes, report: ImportReport, *, tolerate_bad_lines: bool
) -> Iterator[Record]:
    """The objects of a JSON array document (records saved as one array), one per element,
    counted in `report.records_read`; an element that is not an object is named by its index."""
    document = load_json(path, data)
    if not isinstance(document, list):
        raise TranscriptError(path, "expected a JSON array of records")
    for index, value in enumerate(document):
        report.records_read += 1
        where = f"[{index}]"
        if not isinstance(value, dict):
            if not tolerate_bad_lines:
                raise TranscriptError(path, "a record must be a JSON object", where=where)
            report.skip(BAD_ELEMENT)
            continue
        yield Record(index, value, where)


def records_of(
    path: Path, data: bytes, report: ImportReport, *, tolerate_bad_lines: bool
) -> Iterator[Record]:
    """JSONL records, or the elements of a JSON array: a JSONL file never starts with `[`."""
    read = json_array_records if data.lstrip().startswith(b"[") else jsonl_records
    return read(path, data, report, tolerate_bad_lines=tolerate_bad_lines)


def peek_jsonl(data: bytes, limit: int = 50) -> list[dict[str, Any]]:
    """Up to `limit` parseable object records from the start of `data` (format detection only)."""
    found: list[dict[str, Any]] = []
    for raw in data.split(b"\n", 4 * limit)[: 4 * limit]:
        if len(found) >= limit:
            break
        try:  # damaged bytes do not hide the format: the reader reports them with their line
            value = orjson.loads(raw.decode("utf-8", errors="replace"))
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found
