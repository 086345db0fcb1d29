import { describe, expect, test } from "bun:test";
import { AmountError, amountColumn, formatCents, negate, parseAmount, sumCents } from "../src/money";

describe("parseAmount", () => {
  test("plain integer", () => {
    expect(parseAmount("12")).toBe(1200);
  });

  test("dot decimals", () => {
    expect(parseAmount("45.90")).toBe(4590);
  });

  test("negative amount", () => {
    expect(parseAmount("-45.90")).toBe(-4590);
  });

  test("explicit plus sign", () => {
    expect(parseAmount("+3.10")).toBe(310);
  });

  test("thousands commas", () => {
    expect(parseAmount("1,234.56")).toBe(123456);
  });

  test("currency symbols and spaces are ignored", () => {
    expect(parseAmount(" $1,050.00 ")).toBe(105000);
  });

  test("empty input is an error", () => {
    expect(() => parseAmount("")).toThrow(AmountError);
  });

  test("letters only is an error", () => {
    expect(() => parseAmount("n/a")).toThrow(AmountError);
  });
});

describe("formatCents", () => {
  test("two decimals", () => {
    expect(formatCents(4590)).toBe("45.90");
  });

  test("small amounts keep the leading zero", () => {
    expect(formatCents(5)).toBe("0.05");
  });

  test("negative", () => {
    expect(formatCents(-123456)).toBe("-1234.56");
  });

  test("zero", () => {
    expect(formatCents(0)).toBe("0.00");
  });
});

describe("helpers", () => {
  test("sumCents", () => {
    expect(sumCents([100, -250, 5])).toBe(-145);
  });

  test("negate keeps zero positive", () => {
    expect(Object.is(negate(0), 0)).toBe(true);
  });

  test("amountColumn right-aligns", () => {
    expect(amountColumn(4590, "EUR")).toBe("     45.90 EUR");
  });
});
