"""`bun run src/cli.ts ...` in the story: what the CLI prints (and writes) for a `Behaviour`.

Each command is a function of the story returning `(text, ok)`; `run(...)` joins commands as a
shell `&&` chain and applies a pipe to the combined output. A command that crashes prints the
crash text the story gives for it (a Bun stack trace); an unexpected crash is a bug in the story.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from home import RULES
from kit import Story
from tally_model import Behaviour, CliCrash, Entry, balances, decode, import_text, journal_text

Command = Callable[[Story], tuple[str, bool]]
Crash = Callable[[Story], str]


def _journal_entries(text: str, crash: Crash | None, s: Story | None) -> list[Entry] | str:
    """The journal read back as `readJournal` does; the crash text when a line does not parse."""
    entries: list[Entry] = []
    current: Entry | None = None
    for n, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            current = None
        elif line.startswith(";"):
            continue
        elif m := re.match(r"^(\d{4}-\d{2}-\d{2})( [*!])? (.+)$", line):
            current = Entry(m.group(1), m.group(3), 0, "EUR", "")
            entries.append(current)
        elif current is None or not line.startswith(" "):
            if crash is None or s is None:
                raise CliCrash("JournalError", f"line {n}: {line!r}")
            return crash(s)
        elif m := re.match(r"^\s+; ([a-z][a-z0-9-]*): (.*)$", line):
            current.tags[m.group(1)] = m.group(2)
        elif m := re.match(r"^\s+(\S.*?)\s{2,}(-?\d+)\.(\d{2}) (\S+)\s*$", line):
            sign = -1 if m.group(2).startswith("-") else 1
            current.account = m.group(1)
            current.amount = -sign * (abs(int(m.group(2))) * 100 + int(m.group(3)))
    return entries


def journal_entries(text: str) -> list[Entry]:
    read = _journal_entries(text, None, None)
    assert isinstance(read, list)
    return read


def tally_import(
    files: list[str],
    b: Behaviour,
    *,
    journal: str | None = None,
    crash: Crash | None = None,
    dry_run: bool = False,
    stderr: bool = True,
) -> Command:
    """`tally import --profile kontor [--dry-run] [--journal J] FILES`, appending to J unless it
    is a dry run; `stderr=False` for `2>/dev/null` (no skipped rows, no summary)."""

    def run(s: Story) -> tuple[str, bool]:
        out: list[str] = []
        known: set[str] = set()
        if journal and b.dedupe and s.fs.abs(journal) in s.fs.files:
            read = _journal_entries(s.fs.read(journal), None, s)
            assert isinstance(read, list)
            known = {e.tags["tally-id"] for e in read if "tally-id" in e.tags}
        imported = duplicates = 0
        for file in files:
            path = s.fs.abs(file)
            text = decode(s.fs.read(path), s.fs.encodings.get(path) == "cp1252", b)
            try:
                result = import_text(text, s.fs.read(RULES), b)
            except CliCrash:
                if crash is None:
                    raise
                return "\n".join([*out, crash(s)]), False
            if stderr:
                out += [f"{file}:{row}: skipped: {reason}" for row, reason in result.skipped]
            entries = []
            for entry in result.entries:
                if b.dedupe and entry.tags["tally-id"] in known:
                    duplicates += 1
                    continue
                known.add(entry.tags.get("tally-id", ""))
                entries.append(entry)
            if journal and not dry_run:
                if entries:
                    before = s.fs.files.get(path_j := s.fs.abs(journal), "")
                    s.fs.write(path_j, before + ("\n" if before else "") + journal_text(entries, b))
            else:
                out.append(journal_text(entries, b).rstrip("\n"))
            imported += len(entries)
        summary = f"{'would import' if dry_run else 'imported'} {imported} transaction(s) with profile kontor"
        if duplicates:
            summary += f", skipped {duplicates} already in the journal"
        if stderr:
            out.append(summary)
        return "\n".join(out), True

    return run


def tally_balance(journal: str, *, depth: int | None = None, crash: Crash | None = None) -> Command:
    def run(s: Story) -> tuple[str, bool]:
        read = _journal_entries(s.fs.read(journal), crash, s)
        if isinstance(read, str):
            return read, False
        return balances(read, depth), True

    return run


def effect(fn: Callable[[Story], None], text: str = "") -> Command:
    def run(s: Story) -> tuple[str, bool]:
        fn(s)
        return text, True

    return run


def run(*commands: Command, pipe: Callable[[str], str] | None = None) -> Callable[[Story], str]:
    """`a && b && c | pipe`: stop at the first failing command."""

    def output(s: Story) -> str:
        texts = []
        for command in commands:
            text, ok = command(s)
            if text:
                texts.append(text)
            if not ok:
                break
        combined = "\n".join(texts)
        return pipe(combined) if pipe else combined

    return output


def head(n: int) -> Callable[[str], str]:
    return lambda text: "\n".join(text.split("\n")[:n])


def tail(n: int) -> Callable[[str], str]:
    return lambda text: "\n".join(text.split("\n")[-n:])


def grep_context(pattern: str, after: int = 0, before: int = 0) -> Callable[[str], str]:
    """`grep -n -B<before> -A<after> pattern`."""

    def pipe(text: str) -> str:
        lines = text.split("\n")
        hits = [i for i, line in enumerate(lines) if re.search(pattern, line)]
        keep = sorted({j for i in hits for j in range(max(0, i - before), min(len(lines), i + after + 1))})
        out, last = [], None
        for j in keep:
            if last is not None and j != last + 1:
                out.append("--")
            out.append(f"{j + 1}{':' if j in hits else '-'}{lines[j]}")
            last = j
        return "\n".join(out)

    return pipe


def journal_tail(journal: str, n: int) -> Command:
    return lambda s: ("\n".join(s.fs.read(journal).rstrip("\n").split("\n")[-n:]), True)
