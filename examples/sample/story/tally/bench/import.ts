/**
 * Import benchmark: generates an export of N rows in the Kontor format and times importText.
 *
 *   bun run bench/import.ts --rows 40000
 *   bun run bench/import.ts --file ~/finance/exports/kontor-2025.csv
 */
import { readFileSync } from "node:fs";
import { importText } from "../src/import/importer";
import { profileById } from "../src/import/profiles";

const PAYEES = ["REWE Markt", "Deutsche Bahn", "Stadtwerke", "Buchhandlung am Markt", "Apotheke Nord"];

function syntheticExport(rows: number): string {
  const lines = ["Kontonummer;0012345678", "Zeitraum;01.01.2025 - 31.12.2025", "", "Umsätze"];
  lines.push("Buchungstag;Valuta;Auftraggeber/Empfänger;Verwendungszweck;Referenz;Betrag;Währung");
  for (let i = 0; i < rows; i++) {
    const day = String((i % 28) + 1).padStart(2, "0");
    const month = String(((i / 28) | 0) % 12 + 1).padStart(2, "0");
    const cents = ((i * 7919) % 250000) - 125000;
    const amount = `${(cents / 100).toFixed(2).replace(".", ",")}`;
    lines.push(`${day}.${month}.2025;${day}.${month}.2025;${PAYEES[i % PAYEES.length]};Buchung ${i};R${i};${amount};EUR`);
  }
  return lines.join("\r\n");
}

const args = process.argv.slice(2);
const file = args[args.indexOf("--file") + 1];
const rows = Number(args[args.indexOf("--rows") + 1] ?? 10000);
const text = args.includes("--file") && file ? readFileSync(file, "utf8") : syntheticExport(rows);
const profile = profileById("kontor");

for (let run = 1; run <= 5; run++) {
  const start = performance.now();
  const result = importText(text, profile);
  const ms = performance.now() - start;
  console.log(`run ${run}: ${result.transactions.length} rows in ${ms.toFixed(1)} ms (${result.skipped.length} skipped)`);
}
