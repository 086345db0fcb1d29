/** Dates are ISO calendar dates ("2026-04-03") everywhere inside tally. */

export type DateFormat = "YYYY-MM-DD" | "DD.MM.YYYY" | "MM/DD/YYYY";

export class DateError extends Error {
  constructor(
    readonly raw: string,
    readonly format: DateFormat,
  ) {
    super(`not a date: ${JSON.stringify(raw)} (expected ${format})`);
    this.name = "DateError";
  }
}

const PATTERNS: Record<DateFormat, RegExp> = {
  "YYYY-MM-DD": /^(?<y>\d{4})-(?<m>\d{2})-(?<d>\d{2})$/,
  "DD.MM.YYYY": /^(?<d>\d{2})\.(?<m>\d{2})\.(?<y>\d{4})$/,
  "MM/DD/YYYY": /^(?<m>\d{1,2})\/(?<d>\d{1,2})\/(?<y>\d{4})$/,
};

export function parseDate(raw: string, format: DateFormat): string {
  const match = PATTERNS[format].exec(raw.trim());
  const groups = match?.groups;
  if (!groups) throw new DateError(raw, format);
  const y = Number(groups.y);
  const m = Number(groups.m);
  const d = Number(groups.d);
  if (!isValidDay(y, m, d)) throw new DateError(raw, format);
  return `${y}-${pad2(m)}-${pad2(d)}`;
}

export function isValidDay(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  return d <= daysInMonth(y, m);
}

export function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

/** Whole days from `a` to `b` (both ISO dates); negative when `b` is earlier. */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(b) - Date.parse(a)) / 86_400_000);
}
