/**
 * A small CSV reader for bank exports. tally has no runtime dependencies, so this is hand-written;
 * it covers the delimiters and the quoting the supported banks use.
 */

export interface CsvOptions {
  delimiter: "," | ";" | "\t";
  /** The quote character; every bank we know uses the double quote. */
  quote?: string;
}

export type Row = string[];

export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Split an export into rows of fields. Blank lines and lines of bare delimiters are skipped. */
export function readRows(text: string, options: CsvOptions): Row[] {
  const quote = options.quote ?? '"';
  const rows: Row[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.split(options.delimiter).join("").trim() === "") continue;
    rows.push(splitLine(line, options.delimiter, quote));
  }
  return rows;
}

/** One line into fields; a doubled quote inside a quoted field is a literal quote. */
export function splitLine(line: string, delimiter: string, quote: string): Row {
  const fields: Row = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === quote && line[i + 1] === quote) {
        field += quote;
        i++;
      } else if (ch === quote) {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch === quote) {
      quoted = true;
    } else if (ch === delimiter) {
      fields.push(field);
      field = "";
    } else {
      field += ch;
    }
  }
  fields.push(field);
  return fields;
}

/** Header-indexed access to the fields of a row. */
export function headerIndex(header: Row): Map<string, number> {
  const index = new Map<string, number>();
  header.forEach((name, i) => index.set(name.trim(), i));
  return index;
}
