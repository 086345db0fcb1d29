import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Cents } from "../money";

export interface AccountRule {
  pattern: RegExp;
  account: string;
}

export const DEFAULT_RULES_PATH = join(homedir(), ".config", "tally", "rules.txt");
export const UNSORTED_EXPENSE = "Expenses:Unsorted";
export const UNSORTED_INCOME = "Income:Unsorted";

/**
 * One rule per line: a case-insensitive regular expression, at least two spaces, an account.
 * `#` starts a comment anywhere on a line.
 */
export function parseRules(text: string): AccountRule[] {
  const rules: AccountRule[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*$/, "").trim();
    if (line === "") return;
    const match = /^(.*?\S)\s{2,}(\S+)$/.exec(line);
    if (!match) throw new Error(`rules line ${i + 1}: expected "<pattern>  <account>"`);
    rules.push({ pattern: new RegExp(match[1]!, "i"), account: match[2]! });
  });
  return rules;
}

export function loadRules(path = DEFAULT_RULES_PATH): AccountRule[] {
  return existsSync(path) ? parseRules(readFileSync(path, "utf8")) : [];
}

/** The first rule whose pattern matches the payee; otherwise the unsorted account for the sign. */
export function accountFor(payee: string, amount: Cents, rules: readonly AccountRule[]): string {
  for (const rule of rules) if (rule.pattern.test(payee)) return rule.account;
  return amount > 0 ? UNSORTED_INCOME : UNSORTED_EXPENSE;
}
