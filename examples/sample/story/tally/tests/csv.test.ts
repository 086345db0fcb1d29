import { describe, expect, test } from "bun:test";
import { headerIndex, readRows, splitLine, stripBom } from "../src/import/csv";

describe("splitLine", () => {
  test("plain fields", () => {
    expect(splitLine("a;b;c", ";", '"')).toEqual(["a", "b", "c"]);
  });

  test("empty fields", () => {
    expect(splitLine(";;x;", ";", '"')).toEqual(["", "", "x", ""]);
  });

  test("quoted delimiter", () => {
    expect(splitLine('"a;b";c', ";", '"')).toEqual(["a;b", "c"]);
  });

  test("doubled quote is a literal quote", () => {
    expect(splitLine('"say ""hi""",x', ",", '"')).toEqual(['say "hi"', "x"]);
  });
});

describe("readRows", () => {
  test("CRLF line endings", () => {
    expect(readRows("a;b\r\nc;d\r\n", { delimiter: ";" })).toEqual([
      ["a", "b"],
      ["c", "d"],
    ]);
  });

  test("blank lines are skipped", () => {
    expect(readRows("a,b\n\n  \nc,d", { delimiter: "," })).toHaveLength(2);
  });

  test("tab delimiter", () => {
    expect(readRows("a\tb", { delimiter: "\t" })).toEqual([["a", "b"]]);
  });
});

describe("helpers", () => {
  test("stripBom", () => {
    expect(stripBom("\ufeffBuchungstag")).toBe("Buchungstag");
  });

  test("headerIndex trims names", () => {
    expect(headerIndex([" Date", "Amount "]).get("Amount")).toBe(1);
  });
});
