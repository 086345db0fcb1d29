"""The edits inside an Aider reply: SEARCH/REPLACE blocks and whole-file listings.

Aider has no tool calls: the model writes its edits into its reply, and Aider applies them and says
so in its own output (`> Applied edit to <path>`). A reply is cut into segments: text, and the
edits Aider confirmed or reported failed. An edit becomes a MiMo `tool` part (docs/importers.md,
"Aider"): a SEARCH/REPLACE block is `edit {filePath, oldString, newString}`, a whole-file listing
`write {filePath, content}`, the names and inputs of MiMo's own tools. A block nobody confirmed (a
proposal in ask or architect mode, an edit the user declined) stays text, as the model wrote it.

    path/to/file.py          <- the file: the line before the fence (or before the markers)
    ```python
    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE
    ```
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SEARCH = re.compile(r"^<{5,9} SEARCH>?\s*$")
DIVIDER = re.compile(r"^={5,9}\s*$")
REPLACE = re.compile(r"^>{5,9} REPLACE\s*$")
FENCE = re.compile(r"^(`{3,}|~{3,})\S*\s*$")


@dataclass(frozen=True)
class Edit:
    tool: str  # "edit" (a SEARCH/REPLACE block) or "write" (a whole file)
    path: str
    old: str  # the SEARCH lines ("" for a whole file)
    new: str  # the REPLACE lines, or the file's content


Segment = str | Edit


def file_name(line: str) -> str | None:
    """The file a block is for, from the line before it, as Aider strips it (backticks, bold, a
    trailing colon); None when the line cannot be a path."""
    name = line.strip().strip("`*").rstrip(":").strip().strip("`*")
    if not name or FENCE.match(name) or name.startswith("#") or len(name.split()) > 1:
        return None
    return name


def segments(text: str, written: frozenset[str]) -> list[Segment]:
    """The reply cut into text and edits. `written` are the files Aider reports as edited: a
    whole-file listing is an edit only for one of them (else it is a code sample)."""
    lines = text.split("\n")
    out: list[Segment] = []
    buffer: list[str] = []
    last_path: str | None = None
    i = 0
    while i < len(lines):
        found = _search_block(lines, i, buffer, last_path) or _whole_file(lines, i, buffer, written)
        if found is None:
            buffer.append(lines[i])
            i += 1
            continue
        edit, consumed_before, i = found
        del buffer[len(buffer) - consumed_before :]
        _flush(buffer, out)
        out.append(edit)
        last_path = edit.path
    _flush(buffer, out)
    return out


def _flush(buffer: list[str], out: list[Segment]) -> None:
    chunk = "\n".join(buffer).strip("\n")
    if any(line.strip() and not FENCE.match(line) for line in buffer):  # a lone fence closed an edit
        out.append(chunk)
    buffer.clear()


def _search_block(
    lines: list[str], i: int, before: list[str], last_path: str | None
) -> tuple[Edit, int, int] | None:
    """A SEARCH/REPLACE block starting at line `i`: the edit, how many lines of `before` (the file
    name, the fence) belong to it, and the index after it. None when it is not one (or unfinished)."""
    if not SEARCH.match(lines[i]):
        return None
    consumed, fenced = 0, False
    if before and FENCE.match(before[-1]):
        consumed, fenced = 1, True
    path = file_name(before[-consumed - 1]) if len(before) > consumed else None
    if path is not None:
        consumed += 1
    path = path or last_path
    divider = next((j for j in range(i + 1, len(lines)) if DIVIDER.match(lines[j])), None)
    end = (
        next((j for j in range(divider + 1, len(lines)) if REPLACE.match(lines[j])), None)
        if divider
        else None
    )
    if path is None or divider is None or end is None:
        return None
    after = end + 1
    if fenced and after < len(lines) and FENCE.match(lines[after]):
        after += 1
    edit = Edit("edit", path, "\n".join(lines[i + 1 : divider]), "\n".join(lines[divider + 1 : end]))
    return edit, consumed, after


def _whole_file(
    lines: list[str], i: int, before: list[str], written: frozenset[str]
) -> tuple[Edit, int, int] | None:
    """A whole-file listing: a file Aider edited, named on the line right before a fence."""
    opener = FENCE.match(lines[i])
    if opener is None or not before or (path := file_name(before[-1])) is None or path not in written:
        return None
    marker = opener.group(1)
    end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == marker), None)
    if end is None or any(SEARCH.match(line) for line in lines[i + 1 : end]):
        return None  # unfinished, or the fence of SEARCH/REPLACE blocks
    return Edit("write", path, "", "\n".join(lines[i + 1 : end])), 1, end + 1
