// `$/progress` of the sidecar's rebuilds as progress notifications: one per token, opened at
// `begin`, its message changed at `report`, closed at `end` (or when the process goes away, which
// sends no `end`). The opener is VS Code's `window.withProgress` in the extension, a recorder in
// the tests.

import type { ProgressParams } from 'mimo-sidecar-client';

export interface ProgressHandle {
  report(message: string): void;
  done(): void;
}

export type OpenProgress = (title: string, message: string) => ProgressHandle;

export class ProgressTracker {
  private readonly open = new Map<string, ProgressHandle>();

  constructor(private readonly opener: OpenProgress) {}

  handle({ token, value }: ProgressParams): void {
    if (value.kind === 'begin') {
      this.open.get(token)?.done();
      this.open.set(token, this.opener(value.title ?? 'Rebuilding conversation context', value.message ?? ''));
    } else if (value.kind === 'report') {
      if (value.message) this.open.get(token)?.report(value.message);
    } else {
      this.open.get(token)?.done();
      this.open.delete(token);
    }
  }

  /** Closes every notification still open (the process that owned them is gone). */
  clear(): void {
    for (const handle of this.open.values()) handle.done();
    this.open.clear();
  }

  get size(): number {
    return this.open.size;
  }
}
