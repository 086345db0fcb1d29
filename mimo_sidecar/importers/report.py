"""What an import kept, left out and adjusted, as data and as a short table for stderr.

Accounting rule (checked by the tests): every record read from the source (a JSONL line, an
element of a JSON history, a message file) is either *imported* (it contributed to at least one
message of the output) or counted once under a reason in `not_imported`. So
`records_read == records_imported + sum(not_imported.values())`. `adjusted` counts changes made
to imported data (a stop reason inferred, a timestamp raised...); it does not take part in that sum.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class ImportReport:
    format: str
    source: str
    session_id: str = ""
    records_read: int = 0
    records_imported: int = 0
    messages: int = 0
    slices: dict[str, int] = field(default_factory=dict)  # agentID ("main" for the main slice) -> messages
    not_imported: Counter[str] = field(default_factory=Counter)
    adjusted: Counter[str] = field(default_factory=Counter)
    newest_user_ask: str | None = None  # message ID of the newest genuine user ask in the main slice
    newest_user_ask_excerpt: str = ""  # its first characters, on one line
    notes: list[str] = field(default_factory=list)  # what the reader chose for the user (which session)

    def skip(self, reason: str, count: int = 1) -> None:
        """Count `count` source records that contributed nothing to the output."""
        if count:
            self.not_imported[reason] += count

    def note(self, text: str) -> None:
        self.notes.append(text)

    def adjust(self, what: str, count: int = 1) -> None:
        if count:
            self.adjusted[what] += count

    @property
    def consistent(self) -> bool:
        return self.records_read == self.records_imported + sum(
            self.not_imported.values()
        ) and self.messages == sum(self.slices.values())

    def as_dict(self) -> dict[str, object]:
        return {
            "format": self.format,
            "source": self.source,
            "sessionId": self.session_id,
            "recordsRead": self.records_read,
            "recordsImported": self.records_imported,
            "messages": self.messages,
            "slices": dict(self.slices),
            "notImported": dict(sorted(self.not_imported.items())),
            "adjusted": dict(sorted(self.adjusted.items())),
            "newestUserAsk": self.newest_user_ask,
            "newestUserAskExcerpt": self.newest_user_ask_excerpt,
            "notes": list(self.notes),
        }

    def table(self) -> str:
        """A few lines for a terminal: totals, then one line per reason."""
        slices = ", ".join(f"{agent} {n}" for agent, n in self.slices.items())
        lines = [
            f"imported {self.format} session {self.session_id} from {self.source}",
            f"  records read {self.records_read}, imported {self.records_imported}",
            f"  messages {self.messages} ({slices})" if slices else f"  messages {self.messages}",
            f"  newest user ask: {self.newest_user_ask} {self.newest_user_ask_excerpt!r}"
            if self.newest_user_ask
            else "  newest user ask: (none found)",
            *(f"  note: {note}" for note in self.notes),
        ]
        lines += _section("not imported", self.not_imported)
        lines += _section("adjusted", self.adjusted)
        return "\n".join(lines)


def _section(title: str, counts: Counter[str]) -> list[str]:
    if not counts:
        return [f"  {title}: nothing"]
    width = max(len(reason) for reason in counts)
    rows = [f"  {title}:"]
    for reason, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rows.append(f"    {reason.ljust(width)}  {n:>7}")
    return rows
