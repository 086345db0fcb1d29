import { readFileSync } from "node:fs";
import { parseDate } from "../dates";
import { type Cents, parseAmount } from "../money";
import { headerIndex, readRows, type Row, stripBom } from "./csv";
import type { BankProfile } from "./profiles";

export interface ImportedTransaction {
  date: string;
  payee: string;
  memo: string;
  amount: Cents;
  currency: string;
  reference?: string;
}

export interface SkippedRow {
  /** 1-based line number in the export, counting the lines the profile skips. */
  row: number;
  reason: string;
}

export interface ImportResult {
  transactions: ImportedTransaction[];
  skipped: SkippedRow[];
}

export class MissingColumnError extends Error {
  constructor(
    readonly column: string,
    readonly profile: string,
  ) {
    super(`column ${JSON.stringify(column)} not found in the header (profile ${profile})`);
    this.name = "MissingColumnError";
  }
}

type ColumnIndex = { [K in keyof BankProfile["columns"]]: number | undefined };

function columnIndex(header: Row, profile: BankProfile): ColumnIndex {
  const byName = headerIndex(header);
  const find = (name: string | undefined, required: boolean): number | undefined => {
    if (name === undefined) return undefined;
    const i = byName.get(name);
    if (i === undefined && required) throw new MissingColumnError(name, profile.id);
    return i;
  };
  const c = profile.columns;
  return {
    date: find(c.date, true),
    payee: find(c.payee, true),
    memo: find(c.memo, false),
    amount: find(c.amount, true),
    currency: find(c.currency, false),
    reference: find(c.reference, false),
  };
}

function cell(row: Row, i: number | undefined): string {
  return i === undefined ? "" : (row[i] ?? "");
}

export function importText(text: string, profile: BankProfile): ImportResult {
  const rows = readRows(stripBom(text), profile.csv).slice(profile.skipLines);
  const [header, ...body] = rows;
  const result: ImportResult = { transactions: [], skipped: [] };
  if (!header) return result;
  const index = columnIndex(header, profile);
  body.forEach((row, i) => {
    const line = profile.skipLines + i + 2;
    if (row.length !== header.length) {
      result.skipped.push({ row: line, reason: `expected ${header.length} fields, got ${row.length}` });
      return;
    }
    const reference = cell(row, index.reference).trim();
    result.transactions.push({
      date: parseDate(cell(row, index.date), profile.dateFormat),
      payee: cell(row, index.payee).trim(),
      memo: cell(row, index.memo).trim(),
      amount: parseAmount(cell(row, index.amount)),
      currency: cell(row, index.currency).trim() || profile.currency,
      ...(reference ? { reference } : {}),
    });
  });
  return result;
}

export function importFile(path: string, profile: BankProfile): ImportResult {
  return importText(readFileSync(path, "utf8"), profile);
}
