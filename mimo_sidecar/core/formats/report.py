"""What a request leaves out or changes, reported in `warnings` (nothing is dropped silently).

Each warning is one string `"<code>: <detail>"`. The codes are stable (docs/formats.md "Formats" lists
them); the detail names the stored messages and call IDs involved. Per-item fixes (a synthesized
result, a dropped orphan) get one warning each; frequent routine drops (every reasoning block of a
target that cannot take reasoning) are counted and reported once per request.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RESULT_SYNTHESIZED = "result-synthesized"
ORPHAN_RESULT_DROPPED = "orphan-result-dropped"
DUPLICATE_RESULT_DROPPED = "duplicate-result-dropped"
DUPLICATE_CALL_DROPPED = "duplicate-call-dropped"
REASONING_DROPPED = "reasoning-dropped"
REASONING_MERGED = "reasoning-merged"
ERRORED_DROPPED = "errored-step-dropped"
THINKING_DISABLED = "thinking-disabled"
MEDIA_MOVED = "media-moved"
MEDIA_REPLACED = "media-replaced"
FILE_SKIPPED = "file-skipped"
PART_NOT_SENT = "part-not-sent"
BLANK_TEXT_DROPPED = "blank-text-dropped"
COMPACTION_DROPPED = "compaction-dropped"
PROVIDER_OPTIONS_DROPPED = "provider-options-dropped"
TEXT_MOVED = "text-moved-before-calls"
TOOL_INPUT_WRAPPED = "tool-input-wrapped"
PROVIDER_EXECUTED_DROPPED = "provider-executed-dropped"
TRAILING_WHITESPACE_TRIMMED = "trailing-whitespace-trimmed"
LEADING_TURN_ADDED = "leading-user-turn-added"
TOOL_NOT_CONVERTED = "tool-definition-not-converted"
TOOLS_MISSING = "tools-missing"
CACHE_IGNORED = "cache-ignored"
BOUNDARY = "boundary"  # D2: boundary content that could not be sent as is
REMINDER_NOT_ADDED = "reminder-not-added"
COLLAPSE = "collapse"
NAMED_TOOL_MISSING = "named-tool-missing"  # D18: the text names a tool the request's tools lack

MAX_EXAMPLES = 3


@dataclass
class _Tally:
    count: int = 0
    examples: list[str] = field(default_factory=list)


class Report:
    """Collects the warnings of one request build, in the order they arose."""

    def __init__(self, warnings: list[str] | None = None) -> None:
        self.warnings: list[str] = warnings if warnings is not None else []
        self._tallies: dict[tuple[str, str], _Tally] = {}

    def warn(self, code: str, detail: str) -> None:
        self.warnings.append(f"{code}: {detail}")

    def tally(self, code: str, what: str, source: str) -> None:
        """Count one routine drop; `flush` reports `<n> <what> (in <first sources>)` once."""
        entry = self._tallies.setdefault((code, what), _Tally())
        entry.count += 1
        if len(entry.examples) < MAX_EXAMPLES and source not in entry.examples:
            entry.examples.append(source)

    def copy(self) -> Report:
        twin = Report(list(self.warnings))
        twin._tallies = {key: _Tally(t.count, list(t.examples)) for key, t in self._tallies.items()}
        return twin

    def absorb(self, other: Report) -> None:
        """`other`'s warnings and counts after these, as if its events had come after this
        report's (a cached prefix's report, then the rest of the request's: `build_memo`).
        The first `MAX_EXAMPLES` distinct sources of each side are enough to merge the examples."""
        self.warnings += other.warnings
        for key, theirs in other._tallies.items():
            mine = self._tallies.setdefault(key, _Tally())
            mine.count += theirs.count
            for source in theirs.examples:
                if len(mine.examples) < MAX_EXAMPLES and source not in mine.examples:
                    mine.examples.append(source)

    def flush(self) -> list[str]:
        for (code, what), entry in self._tallies.items():
            more = ", …" if entry.count > len(entry.examples) else ""
            self.warn(code, f"{entry.count} × {what} (in {', '.join(entry.examples)}{more})")
        self._tallies.clear()
        return self.warnings
