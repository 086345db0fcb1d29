// The plugin's log: OpenCode's own (the client's `app.log`, which writes to OpenCode's log file
// under its data dir and to stderr with `--print-logs`), never stdout, which belongs to OpenCode.
// Each line also goes to a file of the plugin's own (`plugin.log` beside the sidecar's log): a short
// `opencode run` can end before OpenCode's file has its last lines.

import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: Level, message: string, extra?: Record<string, unknown>): void;
}

/** What the plugin needs of OpenCode's client to log (its `app.log`). */
export interface LogApi {
  app: {
    log(options: {
      body: { service: string; level: Level; message: string; extra?: Record<string, unknown> };
    }): Promise<unknown>;
  };
}

export const SERVICE = 'mimo-sidecar';

/** OpenCode's log, every line prefixed with the service (OpenCode's file drops the service field),
 * and `file` when given. */
export function openCodeLogger(client: LogApi, file?: string, minimum: Level = 'info'): Logger {
  const rank: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };
  let fileOk = file !== undefined;
  return {
    log(level, message, extra) {
      if (rank[level] < rank[minimum]) return;
      const body = { service: SERVICE, level, message: `${SERVICE}: ${message}`, ...(extra ? { extra } : {}) };
      // Fire and forget: a log line never holds up a model call; a failed one is lost, not thrown.
      client.app.log({ body }).catch(() => undefined);
      if (!fileOk || !file) return;
      try {
        mkdirSync(dirname(file), { recursive: true });
        appendFileSync(file, `${new Date().toISOString()} ${level.toUpperCase()} ${message}${extra ? ` ${JSON.stringify(extra)}` : ''}\n`);
      } catch {
        fileOk = false; // an unwritable file: OpenCode's log alone
      }
    },
  };
}

/** The message of anything thrown. */
export function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
