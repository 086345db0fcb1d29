import type { Entry } from "../ledger/journal";
import { type Cents, formatCents } from "../money";

export interface BalanceRow {
  account: string;
  currency: string;
  total: Cents;
}

/**
 * Sum the postings per account and currency. The balancing posting of an entry (no amount) gets
 * the negated sum of the other postings in the same currency.
 */
export function balances(entries: readonly Entry[], depth = Infinity): BalanceRow[] {
  const totals = new Map<string, BalanceRow>();
  const add = (account: string, currency: string, cents: Cents) => {
    const folded = account.split(":").slice(0, depth).join(":");
    const key = `${folded}\u0000${currency}`;
    const row = totals.get(key) ?? { account: folded, currency, total: 0 };
    row.total += cents;
    totals.set(key, row);
  };
  for (const entry of entries) {
    let rest = 0;
    let currency = "";
    for (const p of entry.postings) {
      if (p.amount === undefined) continue;
      add(p.account, p.currency ?? "", p.amount);
      rest -= p.amount;
      currency = p.currency ?? currency;
    }
    for (const p of entry.postings) if (p.amount === undefined) add(p.account, currency, rest);
  }
  return [...totals.values()].sort((a, b) => a.account.localeCompare(b.account) || a.currency.localeCompare(b.currency));
}

export function formatBalances(rows: readonly BalanceRow[]): string {
  const width = Math.max(20, ...rows.map((r) => r.account.length + 2));
  return rows.map((r) => `${r.account.padEnd(width)}${formatCents(r.total).padStart(12)} ${r.currency}`).join("\n");
}
