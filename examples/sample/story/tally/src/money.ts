/**
 * Money is kept in integer cents. A `Cents` value is a plain number, but only ever an integer:
 * every amount that enters the program goes through `parseAmount`, and every amount that leaves
 * it goes through `formatCents`.
 */

export type Cents = number;

export class AmountError extends Error {
  constructor(readonly raw: string) {
    super(`not an amount: ${JSON.stringify(raw)}`);
    this.name = "AmountError";
  }
}

/** Parse an amount as it appears in a bank export: "1,234.56", "-45.90", "12". */
export function parseAmount(raw: string): Cents {
  const cleaned = raw.trim().replace(/[^\d.,+-]/g, "");
  if (cleaned === "") throw new AmountError(raw);
  // Thousands separators are commas; drop them.
  const normalized = cleaned.replace(/,/g, "");
  const value = Number.parseFloat(normalized);
  if (Number.isNaN(value)) throw new AmountError(raw);
  return Math.round(value * 100);
}

/** The journal's notation: a dot, two decimals, no thousands separator ("-1234.50"). */
export function formatCents(cents: Cents): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100);
  const frac = String(abs % 100).padStart(2, "0");
  return `${sign}${whole}.${frac}`;
}

export function sumCents(values: readonly Cents[]): Cents {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

export function negate(cents: Cents): Cents {
  return cents === 0 ? 0 : -cents;
}

/** Right-align an amount and its currency in a column of `width` characters. */
export function amountColumn(cents: Cents, currency: string, width = 14): string {
  const text = `${formatCents(cents)} ${currency}`;
  return text.length >= width ? text : " ".repeat(width - text.length) + text;
}
