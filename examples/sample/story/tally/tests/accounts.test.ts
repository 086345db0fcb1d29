import { describe, expect, test } from "bun:test";
import { UNSORTED_EXPENSE, UNSORTED_INCOME, accountFor, parseRules } from "../src/ledger/accounts";

describe("parseRules", () => {
  test("pattern and account", () => {
    const [rule] = parseRules("rewe|edeka   Expenses:Groceries");
    expect(rule?.account).toBe("Expenses:Groceries");
    expect(rule?.pattern.test("EDEKA Center")).toBe(true);
  });

  test("comments and blank lines", () => {
    expect(parseRules("# header\n\nbahn  Expenses:Travel  # trains\n")).toHaveLength(1);
  });

  test("a line without an account is an error", () => {
    expect(() => parseRules("just-a-pattern")).toThrow("rules line 1");
  });
});

describe("accountFor", () => {
  const rules = parseRules("rewe  Expenses:Groceries");

  test("first matching rule", () => {
    expect(accountFor("REWE Markt", -4590, rules)).toBe("Expenses:Groceries");
  });

  test("unsorted expense", () => {
    expect(accountFor("Kiosk", -250, rules)).toBe(UNSORTED_EXPENSE);
  });

  test("unsorted income", () => {
    expect(accountFor("Gehalt", 320000, rules)).toBe(UNSORTED_INCOME);
  });
});
