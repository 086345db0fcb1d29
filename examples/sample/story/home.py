"""The files of the user's home directory that the story touches, outside the project.

`~/.config/tally/rules.txt` (the user's account rules), `~/finance/2026.journal` (January to
March, imported with tally 0.4) and `~/finance/exports/kontor-2026-04.csv`, the bank's real April
export: the anonymised fixture with the real names, stored in Windows-1252 as the bank sends it.
"""

from __future__ import annotations

from pathlib import Path

from kit import HOME, ROOT, Checkout
from tally_model import Behaviour, Entry, journal_text

DATA = Path(__file__).resolve().parent / "data"
RULES = f"{HOME}/.config/tally/rules.txt"
JOURNAL = f"{HOME}/finance/2026.journal"
REAL_APRIL = f"{HOME}/finance/exports/kontor-2026-04.csv"
MAY_FIXTURE = f"{ROOT}/tests/fixtures/kontor-2026-05-sample.csv"

RULES_TEXT = """\
# tally rules: payee pattern (case-insensitive), at least two spaces, account
rewe|edeka|lidl|aldi                   Expenses:Groceries
hausverwaltung                         Expenses:Housing:Rent
stadtwerke                             Expenses:Housing:Utilities
deutsche bahn|db vertrieb              Expenses:Travel:Train
hvv                                    Expenses:Travel:Local
telekom                                Expenses:Phone
nordsee software                       Income:Salary
"""

# January to March, typed in by hand before the user started importing: (day, payee, account,
# bank-side cents). April is the first imported month.
_MONTHLY = [
    ("01", "Hausverwaltung Nordlicht", "Expenses:Housing:Rent", -123456),
    ("01", "Stadtwerke Hamburg", "Expenses:Housing:Utilities", -14200),
    ("03", "Nordsee Software", "Income:Salary", 387022),
    ("07", "HVV Deutschlandticket", "Expenses:Travel:Local", -5800),
    ("08", "Telekom", "Expenses:Phone", -3995),
    ("13", "Spotify", "Expenses:Subscriptions", -1799),
    ("16", "REWE", "Expenses:Groceries", -6188),
    ("24", "ETF-Sparplan", "Assets:Kontor:Depot", -30000),
    ("27", "Netflix", "Expenses:Subscriptions", -1399),
]


def first_quarter() -> list[Entry]:
    return [
        Entry(f"2026-{month}-{day}", payee, cents, "EUR", account)
        for month in ("01", "02", "03")
        for day, payee, account, cents in _MONTHLY
    ]


REAL_NAMES = (("Anonymisiert", "Mara Berger"), ("A. Muster", "Jonas Weber"), ("B. Beispiel", "Lena Hoffmann"))


def install(fs: Checkout) -> None:
    """Add the home files to the checkout (the story reaches them with `~/` paths)."""
    fs.write(RULES, RULES_TEXT)
    fs.write(
        JOURNAL, "; 2026: January to March typed in by hand\n\n" + journal_text(first_quarter(), Behaviour())
    )
    real = fs.read("tests/fixtures/kontor-sample.csv")
    for anonymised, name in REAL_NAMES:
        real = real.replace(anonymised, name)
    fs.write(REAL_APRIL, real)
    fs.encodings[REAL_APRIL] = "cp1252"


def may_fixture() -> str:
    with open(DATA / "kontor-2026-05-sample.csv", encoding="utf-8", newline="") as f:
        return f.read()


ELBE_HELP = """\
# Umsätze exportieren

Im Online-Banking der Elbe Sparkasse können Sie Ihre Umsätze als Datei exportieren:
**Konto auswählen → Umsätze → Export**.

## Formate

| Format | Inhalt | Hinweis |
| --- | --- | --- |
| CSV-CAMT V2 | Umsätze mit vollständigem Verwendungszweck | empfohlen |
| CSV-MT940 | Umsätze im älteren Format | wird zum 30.06.2026 eingestellt |
| PDF | Kontoauszug zum Ausdrucken | |

## Aufbau der CSV-CAMT-V2-Datei

- Trennzeichen: Semikolon (`;`); Textfelder stehen in Anführungszeichen.
- Zeichensatz: ISO-8859-1 (Latin-1).
- Datumsangaben im Format TT.MM.JJ, z. B. `03.04.26`.
- Beträge mit Dezimalkomma und ohne Tausenderpunkt, z. B. `-1234,56`.
- Spalten: `Auftragskonto`, `Buchungstag`, `Valutadatum`, `Buchungstext`, `Verwendungszweck`,
  `Glaeubiger ID`, `Mandatsreferenz`, `Kundenreferenz (End-to-End)`, `Sammlerreferenz`,
  `Lastschrift Ursprungsbetrag`, `Auslagenersatz Ruecklastschrift`, `Beguenstigter/Zahlungspflichtiger`,
  `Kontonummer/IBAN`, `BIC (SWIFT-Code)`, `Betrag`, `Waehrung`, `Info`.

Die Spalte `Info` enthält „Umsatz gebucht“ oder „Umsatz vorgemerkt“. Vorgemerkte Umsätze können
sich bis zur Buchung noch ändern und erscheinen im nächsten Export erneut.

## Häufige Fragen

**Warum fehlen Umlaute, wenn ich die Datei in Excel öffne?**
Wählen Sie beim Import den Zeichensatz „Westeuropäisch (ISO)“.

**Wie weit reicht der Export zurück?**
Bis zu 24 Monate.
"""
