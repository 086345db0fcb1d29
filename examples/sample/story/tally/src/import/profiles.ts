import type { DateFormat } from "../dates";
import type { CsvOptions } from "./csv";

/** What tally needs to know about one bank's CSV export. */
export interface BankProfile {
  id: string;
  name: string;
  csv: CsvOptions;
  /** Lines before the header row (account number, period, ...). */
  skipLines: number;
  /** Header names of the columns tally reads. */
  columns: {
    date: string;
    payee: string;
    memo?: string;
    amount: string;
    currency?: string;
    reference?: string;
  };
  dateFormat: DateFormat;
  /** The export's decimal separator; the other of "." and "," separates thousands. */
  decimal: "." | ",";
  /** Used when the export has no currency column. */
  currency: string;
  /** The journal account of the bank account itself. */
  account: string;
}

export const PROFILES: Record<string, BankProfile> = {
  kontor: {
    id: "kontor",
    name: "Kontor Bank (DE)",
    csv: { delimiter: ";" },
    skipLines: 4,
    columns: {
      date: "Buchungstag",
      payee: "Auftraggeber/Empfänger",
      memo: "Verwendungszweck",
      amount: "Betrag",
      currency: "Währung",
      reference: "Referenz",
    },
    dateFormat: "DD.MM.YYYY",
    decimal: ",",
    currency: "EUR",
    account: "Assets:Kontor:Checking",
  },
  elbe: {
    id: "elbe",
    name: "Elbe Sparkasse (DE)",
    csv: { delimiter: ";" },
    skipLines: 0,
    columns: {
      date: "Buchungsdatum",
      payee: "Zahlungspflichtige*r / Zahlungsempfänger*in",
      memo: "Verwendungszweck",
      amount: "Betrag (€)",
    },
    dateFormat: "DD.MM.YYYY",
    decimal: ",",
    currency: "EUR",
    account: "Assets:Elbe:Giro",
  },
  ridgeway: {
    id: "ridgeway",
    name: "Ridgeway Bank (US)",
    csv: { delimiter: "," },
    skipLines: 0,
    columns: { date: "Posting Date", payee: "Description", amount: "Amount" },
    dateFormat: "MM/DD/YYYY",
    decimal: ".",
    currency: "USD",
    account: "Assets:Ridgeway:Checking",
  },
  northwind: {
    id: "northwind",
    name: "Northwind Credit Union (US)",
    csv: { delimiter: "," },
    skipLines: 0,
    columns: { date: "Date", payee: "Payee", memo: "Memo", amount: "Amount", reference: "Transaction ID" },
    dateFormat: "YYYY-MM-DD",
    decimal: ".",
    currency: "USD",
    account: "Assets:Northwind:Share",
  },
};

export class UnknownProfileError extends Error {
  constructor(readonly id: string) {
    super(`unknown profile ${JSON.stringify(id)}; known: ${Object.keys(PROFILES).join(", ")}`);
    this.name = "UnknownProfileError";
  }
}

export function profileById(id: string): BankProfile {
  const profile = PROFILES[id];
  if (!profile) throw new UnknownProfileError(id);
  return profile;
}
