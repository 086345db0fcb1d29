import { describe, expect, test } from "bun:test";
import { parseRules } from "../src/ledger/accounts";
import { type Entry, JournalError, formatEntry, formatJournal, readJournal, toEntry } from "../src/ledger/journal";
import { profileById } from "../src/import/profiles";

const kontor = profileById("kontor");
const rules = parseRules("rewe|edeka   Expenses:Groceries\nmiete  Expenses:Housing:Rent\n");

const groceries: Entry = {
  date: "2026-04-03",
  cleared: true,
  payee: "REWE Markt Hamburg",
  tags: { ref: "2026040300012345" },
  comments: ["Kartenzahlung 02.04. 18:22"],
  postings: [{ account: "Expenses:Groceries", amount: 4590, currency: "EUR" }, { account: "Assets:Kontor:Checking" }],
};

describe("formatEntry", () => {
  test("header, tags, comments, postings", () => {
    expect(formatEntry(groceries)).toBe(
      [
        "2026-04-03 * REWE Markt Hamburg",
        "    ; ref: 2026040300012345",
        "    ; Kartenzahlung 02.04. 18:22",
        "    Expenses:Groceries                       45.90 EUR",
        "    Assets:Kontor:Checking",
      ].join("\n"),
    );
  });

  test("uncleared entries have no star", () => {
    expect(formatEntry({ ...groceries, cleared: false }).split("\n")[0]).toBe("2026-04-03 REWE Markt Hamburg");
  });
});

describe("toEntry", () => {
  test("a debit becomes an expense", () => {
    const entry = toEntry(
      { date: "2026-04-01", payee: "Hausverwaltung Miete April", memo: "", amount: -123456, currency: "EUR" },
      kontor,
      rules,
    );
    expect(entry.postings[0]).toEqual({ account: "Expenses:Housing:Rent", amount: 123456, currency: "EUR" });
    expect(entry.postings[1]).toEqual({ account: "Assets:Kontor:Checking" });
  });

  test("the reference becomes a ref tag", () => {
    const entry = toEntry(
      { date: "2026-04-01", payee: "X", memo: "", amount: -1, currency: "EUR", reference: "R1" },
      kontor,
      rules,
    );
    expect(entry.tags).toEqual({ ref: "R1" });
  });
});

describe("readJournal", () => {
  test("round trip", () => {
    expect(readJournal(formatJournal([groceries, groceries]))).toEqual([groceries, groceries]);
  });

  test("CRLF and file comments", () => {
    const text = "; my journal\r\n" + formatEntry(groceries).replaceAll("\n", "\r\n") + "\r\n";
    expect(readJournal(text)).toEqual([groceries]);
  });

  test("a stray line is a JournalError with its line number", () => {
    expect(() => readJournal("2026-04-03 * X\nnot indented\n")).toThrow(new JournalError(2, 'expected an entry header, got "not indented"'));
  });
});
