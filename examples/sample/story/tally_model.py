"""What the fictional `tally` CLI prints, computed from the files, at each stage of the story.

The story's `bun run src/cli.ts ...` outputs come from here, so that the amounts, the skipped rows
and the journal text an agent sees match the fixture files and the code as the agent has changed
it so far. `Behaviour` names the changes; the story switches them on as its edits land. This is a
model of the TypeScript in `tally/src`, not a port: it covers the Kontor profile, which is the
only one the story runs.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field, replace

KONTOR = {
    "skip": 4,
    "columns": {
        "date": "Buchungstag",
        "payee": "Auftraggeber/Empfänger",
        "memo": "Verwendungszweck",
        "amount": "Betrag",
        "currency": "Währung",
        "reference": "Referenz",
    },
    "account": "Assets:Kontor:Checking",
}
ACCOUNT_WIDTH = 36


@dataclass(frozen=True)
class Behaviour:
    amounts: str = "float"  # "float": the old parseFloat parser; "cents": the profile's decimal separator
    reader: str = (
        "lines"  # "lines": split lines first; "stream": quote-aware; "stream+skip": and skip empty rows
    )
    memo_lines: bool = False  # each line of a multi-line memo becomes its own comment line
    card_payees: bool = False  # "KARTENZAHLUNG <shop>//<place> <time>" payees are cleaned up
    detect_encoding: bool = False  # Windows-1252 exports are decoded as such
    dedupe: bool = False  # entries get a tally-id tag; known ids are skipped
    closing_line: bool = False  # the closing "Kontostand am ..." line is read, not skipped

    def but(self, **changes: object) -> Behaviour:
        return replace(self, **changes)  # type: ignore[arg-type]


class CliCrash(Exception):
    """An uncaught error: the story supplies the stack trace text for it."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


# -- CSV -----------------------------------------------------------------------------------------
def split_line(line: str) -> list[str]:
    fields, cur, quoted, i = [], "", False, 0
    while i < len(line):
        ch = line[i]
        if quoted:
            if ch == '"' and line[i + 1 : i + 2] == '"':
                cur, i = cur + '"', i + 1
            elif ch == '"':
                quoted = False
            else:
                cur += ch
        elif ch == '"':
            quoted = True
        elif ch == ";":
            fields.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    return [*fields, cur]


def rows_by_line(text: str) -> list[list[str]]:
    return [split_line(line) for line in re.split(r"\r?\n", text) if line.replace(";", "").strip()]


def rows_joined(text: str, skip_empty: bool) -> list[list[str]]:
    """The new reader: lines join into one record while its quote count is odd."""
    rows: list[list[str]] = []
    record: str | None = None
    for line in re.split(r"\r?\n", text):
        record = line if record is None else record + "\n" + line
        if record.count('"') % 2:
            continue  # inside a quoted field
        if (record.replace(";", "") if skip_empty else record).strip():
            rows.append(split_line(record))
        record = None
    if record is not None:
        rows.append(split_line(record))
    return rows


# -- amounts and dates ---------------------------------------------------------------------------
def js_round(x: float) -> int:
    return math.floor(x + 0.5)


def parse_amount(raw: str, b: Behaviour) -> int:
    if b.amounts == "float":  # cleaned, commas dropped, parseFloat, Math.round(value * 100)
        normalized = re.sub(r"[^\d.,+-]", "", raw.strip()).replace(",", "")
        match = re.match(r"[+-]?(\d+\.?\d*|\.\d+)", normalized)
        if not match:
            raise CliCrash("AmountError", f"not an amount: {raw!r}")
        return js_round(float(match.group(0)) * 100)
    text = re.sub(r"[^\d.,+-]", "", raw.strip())
    sign = -1 if text.startswith("-") else 1
    whole, _, frac = text.lstrip("+-").replace(".", "").partition(",")
    return sign * (int(whole) * 100 + int(frac.ljust(2, "0") or "0"))


def parse_date(raw: str) -> str:
    match = re.fullmatch(r"(\d{2})\.(\d{2})\.(\d{4})", raw.strip())
    if not match:
        raise CliCrash("DateError", f'not a date: "{raw}" (expected DD.MM.YYYY)')
    d, m, y = match.groups()
    return f"{y}-{m}-{d}"


def format_cents(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def amount_column(cents: int, currency: str, width: int = 14) -> str:
    return f"{format_cents(cents)} {currency}".rjust(width)


# -- transactions and entries --------------------------------------------------------------------
@dataclass
class Entry:
    date: str
    payee: str
    amount: int  # the bank account's side: negative for a debit
    currency: str
    account: str
    tags: dict[str, str] = field(default_factory=dict)
    comments: list[str] = field(default_factory=list)

    def text(self, b: Behaviour) -> str:
        lines = [f"{self.date} * {self.payee}"]
        lines += [f"    ; {k}: {v}" for k, v in self.tags.items()]
        for comment in self.comments:
            pieces = comment.split("\n") if b.memo_lines else [comment]
            lines += [f"    ; {piece}" for piece in pieces]
        lines.append("    " + self.account.ljust(ACCOUNT_WIDTH) + amount_column(-self.amount, self.currency))
        lines.append("    " + KONTOR["account"])
        return "\n".join(lines)


CARD = re.compile(r"^KARTENZAHLUNG (.+?)//.*$")
CLOSING = re.compile(r"^Kontostand am (\d{2}\.\d{2}\.\d{4}): (.+) EUR$")


def parse_rules(text: str) -> list[tuple[re.Pattern[str], str]]:
    rules = []
    for raw in text.split("\n"):
        line = re.sub(r"#.*$", "", raw).strip()
        if line:
            pattern, account = re.match(r"^(.*?\S)\s{2,}(\S+)$", line).groups()  # type: ignore[union-attr]
            rules.append((re.compile(pattern, re.IGNORECASE), account))
    return rules


def account_for(payee: str, amount: int, rules: list[tuple[re.Pattern[str], str]]) -> str:
    for pattern, account in rules:
        if pattern.search(payee):
            return account
    return "Income:Unsorted" if amount > 0 else "Expenses:Unsorted"


def payee_key(payee: str) -> str:
    return re.sub(r"\s+", " ", payee.strip().lower())


def tally_id(date: str, cents: int, payee: str, reference: str, occurrence: int) -> str:
    key = "\u001f".join([date, str(cents), payee_key(payee), reference, str(occurrence)])
    return hashlib.sha256(key.encode()).hexdigest()[:12]


@dataclass
class Imported:
    entries: list[Entry]
    skipped: list[tuple[int, str]]


def decode(raw: str, cp1252: bool, b: Behaviour) -> str:
    """`raw` is the file's text; `cp1252` says it is stored in Windows-1252 on disk."""
    if not cp1252 or b.detect_encoding:
        return raw
    return raw.encode("cp1252").decode("utf-8", errors="replace")


def import_text(text: str, rules_text: str, b: Behaviour) -> Imported:
    text = text.removeprefix("\ufeff")
    rows = rows_by_line(text) if b.reader == "lines" else rows_joined(text, b.reader == "stream+skip")
    rows = rows[KONTOR["skip"] :]
    header, body = rows[0], rows[1:]
    index = {name.strip(): i for i, name in enumerate(header)}
    for column in ("date", "payee", "amount"):
        if KONTOR["columns"][column] not in index:
            raise CliCrash(
                "MissingColumnError",
                f'column "{KONTOR["columns"][column]}" not found in the header (profile kontor)',
            )
    col = {k: index.get(v) for k, v in KONTOR["columns"].items()}
    rules = parse_rules(rules_text)
    out = Imported([], [])
    seen: dict[tuple[str, int, str, str], int] = {}
    for i, row in enumerate(body):
        line = KONTOR["skip"] + i + 2
        if b.closing_line and CLOSING.match(";".join(row)):
            continue
        if len(row) != len(header):
            out.skipped.append((line, f"expected {len(header)} fields, got {len(row)}"))
            continue

        def cell(name: str, row: list[str] = row) -> str:
            j = col[name]
            return "" if j is None else row[j]

        date = parse_date(cell("date"))
        raw_payee = cell("payee").strip()
        amount = parse_amount(cell("amount"), b)
        payee, comments = raw_payee, [cell("memo").strip()] if cell("memo").strip() else []
        card = CARD.match(raw_payee) if b.card_payees else None
        if card:
            payee = card.group(1).strip()
            comments.append(f"bank payee: {raw_payee}")
        tags = {"ref": cell("reference").strip()} if cell("reference").strip() else {}
        if b.dedupe:
            key = (date, amount, payee_key(payee), tags.get("ref", ""))
            seen[key] = seen.get(key, 0) + 1
            tags["tally-id"] = tally_id(date, amount, payee, tags.get("ref", ""), seen[key])
        entry = Entry(
            date, payee, amount, cell("currency").strip() or "EUR", account_for(payee, amount, rules)
        )
        entry.tags, entry.comments = tags, comments
        out.entries.append(entry)
    return out


def journal_text(entries: list[Entry], b: Behaviour) -> str:
    return "\n\n".join(e.text(b) for e in entries) + "\n"


def balances(entries: list[Entry], depth: int | None = None) -> str:
    totals: dict[str, int] = {}
    for e in entries:
        for account, cents in ((e.account, -e.amount), (KONTOR["account"], e.amount)):
            folded = ":".join(account.split(":")[:depth]) if depth else account
            totals[folded] = totals.get(folded, 0) + cents
    rows = sorted(totals.items())
    width = max(20, *(len(a) + 2 for a, _ in rows))
    return "\n".join(f"{a.ljust(width)}{format_cents(c).rjust(12)} EUR" for a, c in rows)
