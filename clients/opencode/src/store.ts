// What a rebuild changed in a session, kept on disk by the plugin: OpenCode's storage holds the
// session's own messages, and the sidecar keeps its state in memory only, so the boundaries, their
// compaction marks and the stored watermark live here (protocol.md "Host obligations"). A new
// sidecar (after a restart of OpenCode, or of a sidecar that died) gets them back with the
// session's history in `session/open` ("After a restart").
//
// One JSON file per session, `<stateDir>/<sessionID>.json`, replaced atomically (written beside it,
// then renamed), so a crash leaves the old file or the new one, never half of one.

import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CompactionMark, HostMessage } from './messages.js';

/** One rebuilt insert. */
export interface Rebuild {
  /** The boundary message, exactly as `rebuild/insert` returned it. */
  boundary: HostMessage;
  /** Its compaction marks. */
  marks: CompactionMark[];
  /** The newest of OpenCode's messages when it was inserted: while that one is gone (an undo went
   * back before it), so is the rebuild. */
  newest?: string;
}

export interface SessionRecord {
  version: 1;
  sessionId: string;
  /** The watermark the last successful checkpoint writer stored. */
  watermark?: string;
  /** Each rebuild, in insertion order. */
  rebuilds: Rebuild[];
}

export function emptyRecord(sessionId: string): SessionRecord {
  return { version: 1, sessionId, rebuilds: [] };
}

/** Every mark of a record's rebuilds. */
export function allMarks(record: SessionRecord): CompactionMark[] {
  return record.rebuilds.flatMap((rebuild) => rebuild.marks);
}

export class StateStore {
  // One write at a time per session: a writer's watermark and an insert's boundary may be saved
  // moments apart, and the second must not race the first's rename.
  private readonly writes = new Map<string, Promise<void>>();

  constructor(readonly dir: string) {}

  file(sessionId: string): string {
    // OpenCode's session IDs are `ses_` + letters and digits; anything else is refused rather
    // than turned into a path outside the directory.
    if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) throw new Error(`not a session ID the plugin stores: ${sessionId}`);
    return join(this.dir, `${sessionId}.json`);
  }

  /** The session's record; an empty one when it has none. A file that is not one is an error. */
  async load(sessionId: string): Promise<SessionRecord> {
    let text: string;
    try {
      text = await readFile(this.file(sessionId), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyRecord(sessionId);
      throw error;
    }
    const data = JSON.parse(text) as Partial<SessionRecord>;
    if (data.version !== 1 || data.sessionId !== sessionId || !Array.isArray(data.rebuilds)) {
      throw new Error(`${this.file(sessionId)}: not a session record of this plugin`);
    }
    return data as SessionRecord;
  }

  /** Write `record` as it is when the write starts; resolves once it is on disk. */
  save(record: SessionRecord): Promise<void> {
    const previous = this.writes.get(record.sessionId) ?? Promise.resolve();
    const write = previous.catch(() => undefined).then(async () => {
      const target = this.file(record.sessionId);
      await mkdir(this.dir, { recursive: true });
      const temporary = `${target}.${process.pid}.tmp`;
      await writeFile(temporary, JSON.stringify(record), 'utf8');
      await rename(temporary, target);
    });
    this.writes.set(record.sessionId, write);
    return write;
  }

  async remove(sessionId: string): Promise<void> {
    await rm(this.file(sessionId), { force: true });
  }
}
