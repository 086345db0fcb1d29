import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { MissingColumnError, importFile, importText } from "../src/import/importer";
import { profileById } from "../src/import/profiles";

const fixture = (name: string) => join(import.meta.dir, "fixtures", name);
const ridgeway = profileById("ridgeway");

describe("ridgeway", () => {
  test("imports every row of the sample", () => {
    const result = importFile(fixture("ridgeway-sample.csv"), ridgeway);
    expect(result.transactions).toHaveLength(12);
    expect(result.skipped).toEqual([]);
  });

  test("first transaction", () => {
    const [first] = importFile(fixture("ridgeway-sample.csv"), ridgeway).transactions;
    expect(first).toEqual({
      date: "2026-04-01",
      payee: "TRADER JOE'S #552",
      memo: "",
      amount: -6437,
      currency: "USD",
    });
  });

  test("thousands separators in amounts", () => {
    const tx = importFile(fixture("ridgeway-sample.csv"), ridgeway).transactions;
    expect(tx.find((t) => t.payee.startsWith("PAYROLL"))?.amount).toBe(482150);
  });
});

describe("importText", () => {
  test("missing column names the column and the profile", () => {
    expect(() => importText("Date,Amount\n04/01/2026,1.00", ridgeway)).toThrow(MissingColumnError);
  });

  test("a row with too few fields is skipped and reported", () => {
    const text = "Posting Date,Description,Amount\n04/01/2026,COFFEE,-3.50\n04/02/2026,BROKEN\n";
    const result = importText(text, ridgeway);
    expect(result.transactions).toHaveLength(1);
    expect(result.skipped).toEqual([{ row: 3, reason: "expected 3 fields, got 2" }]);
  });

  test("the profile currency fills a missing currency column", () => {
    const result = importText("Posting Date,Description,Amount\n04/01/2026,COFFEE,-3.50\n", ridgeway);
    expect(result.transactions[0]?.currency).toBe("USD");
  });

  test("an empty export gives nothing", () => {
    expect(importText("", ridgeway)).toEqual({ transactions: [], skipped: [] });
  });
});
