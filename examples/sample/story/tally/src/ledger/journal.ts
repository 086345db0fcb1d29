/**
 * The journal: plain text that ledger and hledger read. One entry per transaction:
 *
 *   2026-04-03 * REWE Markt Hamburg
 *       ; ref: 2026040300012345
 *       ; Kartenzahlung 02.04. 18:22
 *       Expenses:Groceries                     45.90 EUR
 *       Assets:Kontor:Checking
 *
 * Tags (`; key: value`) come first, then free comments, then the postings. See
 * docs/journal-format.md.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { ImportedTransaction } from "../import/importer";
import type { BankProfile } from "../import/profiles";
import { type Cents, amountColumn, negate, parseAmount } from "../money";
import { type AccountRule, accountFor } from "./accounts";

export interface Posting {
  account: string;
  /** Absent on the balancing posting, whose amount ledger infers. */
  amount?: Cents;
  currency?: string;
}

export interface Entry {
  date: string;
  cleared: boolean;
  payee: string;
  tags: Record<string, string>;
  comments: string[];
  postings: Posting[];
}

const ACCOUNT_WIDTH = 36;
const INDENT = "    ";

export function toEntry(tx: ImportedTransaction, profile: BankProfile, rules: AccountRule[]): Entry {
  const tags: Record<string, string> = {};
  if (tx.reference) tags.ref = tx.reference;
  return {
    date: tx.date,
    cleared: true,
    payee: tx.payee || "(no payee)",
    tags,
    comments: tx.memo ? [tx.memo] : [],
    postings: [
      { account: accountFor(tx.payee, tx.amount, rules), amount: negate(tx.amount), currency: tx.currency },
      { account: profile.account },
    ],
  };
}

export function formatEntry(entry: Entry): string {
  const lines = [`${entry.date}${entry.cleared ? " *" : ""} ${entry.payee}`];
  for (const [key, value] of Object.entries(entry.tags)) lines.push(`${INDENT}; ${key}: ${value}`);
  for (const comment of entry.comments) lines.push(`${INDENT}; ${comment}`);
  for (const p of entry.postings) {
    if (p.amount === undefined) lines.push(INDENT + p.account);
    else lines.push(INDENT + p.account.padEnd(ACCOUNT_WIDTH) + amountColumn(p.amount, p.currency ?? ""));
  }
  return lines.join("\n");
}

export function formatJournal(entries: readonly Entry[]): string {
  return entries.map(formatEntry).join("\n\n") + "\n";
}

export class JournalError extends Error {
  constructor(
    readonly line: number,
    detail: string,
  ) {
    super(`line ${line}: ${detail}`);
    this.name = "JournalError";
  }
}

const HEADER = /^(\d{4}-\d{2}-\d{2})( [*!])? (.+)$/;
const TAG = /^\s+; ([a-z][a-z0-9-]*): (.*)$/;
const COMMENT = /^\s+; ?(.*)$/;
const POSTING = /^\s+(\S.*?)(?:\s{2,}(-?\d+\.\d{2}) (\S+))?\s*$/;

/** Parse a journal written by tally (or by hand in the same subset of the format). */
export function readJournal(text: string): Entry[] {
  const entries: Entry[] = [];
  let current: Entry | undefined;
  text.split("\n").forEach((raw, i) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") {
      current = undefined;
      return;
    }
    if (line.startsWith(";")) return; // a file-level comment
    const header = HEADER.exec(line);
    if (header) {
      const [, date, mark, payee] = header;
      current = { date: date!, cleared: mark === " *", payee: payee!, tags: {}, comments: [], postings: [] };
      entries.push(current);
      return;
    }
    if (!current) throw new JournalError(i + 1, `expected an entry header, got ${JSON.stringify(line)}`);
    const tag = TAG.exec(line);
    const comment = COMMENT.exec(line);
    const posting = POSTING.exec(line);
    if (tag) current.tags[tag[1]!] = tag[2]!;
    else if (comment) current.comments.push(comment[1]!);
    else if (posting) current.postings.push(readPosting(posting));
    else throw new JournalError(i + 1, `expected a posting or a comment, got ${JSON.stringify(line)}`);
  });
  return entries;
}

function readPosting(match: RegExpExecArray): Posting {
  const [, account, amount, currency] = match;
  if (amount === undefined) return { account: account! };
  return { account: account!, amount: parseAmount(amount), currency: currency! };
}

export function loadJournal(path: string): Entry[] {
  return existsSync(path) ? readJournal(readFileSync(path, "utf8")) : [];
}

export function appendEntries(path: string, entries: readonly Entry[]): void {
  if (entries.length === 0) return;
  const separator = existsSync(path) && readFileSync(path, "utf8").length > 0 ? "\n" : "";
  appendFileSync(path, separator + formatJournal(entries));
}
