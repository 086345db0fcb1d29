#!/usr/bin/env bun
import { importFile } from "./import/importer";
import { PROFILES, profileById } from "./import/profiles";
import { loadRules } from "./ledger/accounts";
import { appendEntries, formatJournal, loadJournal, toEntry } from "./ledger/journal";
import { balances, formatBalances } from "./report/balance";

const USAGE = `usage:
  tally import --profile <id> [--journal <file>] [--rules <file>] <export.csv>...
  tally balance --journal <file> [--depth N]
  tally profiles`;

interface Args {
  command: string;
  flags: Map<string, string>;
  files: string[];
}

function parseArgs(argv: string[]): Args {
  const [command = "", ...rest] = argv;
  const flags = new Map<string, string>();
  const files: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg.startsWith("--")) {
      const value = rest[i + 1];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      flags.set(arg.slice(2), value);
      i++;
    } else {
      files.push(arg);
    }
  }
  return { command, flags, files };
}

class UsageError extends Error {}

function runImport(args: Args): number {
  const profile = profileById(args.flags.get("profile") ?? "");
  const rules = loadRules(args.flags.get("rules"));
  const journal = args.flags.get("journal");
  if (args.files.length === 0) throw new UsageError("no export file given");
  let imported = 0;
  for (const file of args.files) {
    const result = importFile(file, profile);
    for (const s of result.skipped) console.error(`${file}:${s.row}: skipped: ${s.reason}`);
    const entries = result.transactions.map((tx) => toEntry(tx, profile, rules));
    if (journal) appendEntries(journal, entries);
    else process.stdout.write(formatJournal(entries));
    imported += entries.length;
  }
  console.error(`imported ${imported} transaction(s) with profile ${profile.id}`);
  return 0;
}

function runBalance(args: Args): number {
  const journal = args.flags.get("journal");
  if (!journal) throw new UsageError("--journal is required");
  const depth = Number(args.flags.get("depth") ?? Infinity);
  console.log(formatBalances(balances(loadJournal(journal), depth)));
  return 0;
}

function runProfiles(): number {
  for (const p of Object.values(PROFILES)) {
    console.log(`${p.id.padEnd(10)} ${p.name.padEnd(30)} ${p.csv.delimiter}  ${p.decimal}  ${p.dateFormat}`);
  }
  return 0;
}

export function main(argv: string[]): number {
  try {
    const args = parseArgs(argv);
    switch (args.command) {
      case "import":
        return runImport(args);
      case "balance":
        return runBalance(args);
      case "profiles":
        return runProfiles();
      default:
        throw new UsageError(args.command ? `unknown command ${args.command}` : "no command");
    }
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n${USAGE}`);
      return 2;
    }
    throw error;
  }
}

if (import.meta.main) process.exit(main(process.argv.slice(2)));
