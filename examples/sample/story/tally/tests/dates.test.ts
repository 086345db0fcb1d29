import { describe, expect, test } from "bun:test";
import { DateError, daysBetween, daysInMonth, parseDate } from "../src/dates";

describe("parseDate", () => {
  test("ISO", () => {
    expect(parseDate("2026-04-03", "YYYY-MM-DD")).toBe("2026-04-03");
  });

  test("German day.month.year", () => {
    expect(parseDate("03.04.2026", "DD.MM.YYYY")).toBe("2026-04-03");
  });

  test("US month/day/year without padding", () => {
    expect(parseDate("4/3/2026", "MM/DD/YYYY")).toBe("2026-04-03");
  });

  test("surrounding spaces are ignored", () => {
    expect(parseDate(" 03.04.2026 ", "DD.MM.YYYY")).toBe("2026-04-03");
  });

  test("31 April is rejected", () => {
    expect(() => parseDate("31.04.2026", "DD.MM.YYYY")).toThrow(DateError);
  });

  test("wrong format is rejected", () => {
    expect(() => parseDate("2026-04-03", "DD.MM.YYYY")).toThrow(DateError);
  });
});

describe("calendar helpers", () => {
  test("leap February", () => {
    expect(daysInMonth(2028, 2)).toBe(29);
  });

  test("daysBetween", () => {
    expect(daysBetween("2026-04-28", "2026-05-03")).toBe(5);
  });
});
