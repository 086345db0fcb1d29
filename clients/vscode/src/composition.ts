// "Show Session Composition": the `mimo-sidecar inspect` picture (docs/inspect.md) as one view
// model, made from either source:
//   - a transcript file: `mimo-sidecar inspect FILE --json` (its `inspect: 1` layout), which runs
//     the whole cycle in process on a copy, insert included;
//   - a live session of the running sidecar: `session/get`, `rebuild/compute` with `preview` (a
//     dry run: nothing changes) and `request/build`, so the "after" side is the dry run's sizes.
// Every number shown is one of those answers; nothing here decides a rule of its own.

import type { BuildResult, ComputeResult, EstimateAccuracy, FidelityReport, SectionInfo, SessionInfo, TriggerInfo } from 'mimo-sidecar-client';

export type Mark = 'ok' | 'partial' | 'lost' | 'none';

export interface CompositionSection {
  heading: string;
  tokens: number;
  cap?: number;
  unit: string;
  status: 'in full' | 'cut' | 'shed' | 'absent';
  reason?: string;
  path?: string;
}

export interface Composition {
  title: string;
  /** Where the numbers come from, said in one line. */
  source: string;
  standing?: {
    window: number;
    usable: number;
    count: number;
    usageSource: string;
    shouldRebuild: boolean;
    verdict: string;
  };
  watermark: { used?: string; usedHow: string; writer?: string; writerIndex?: number; tailTokens?: number };
  memory?: string;
  request: {
    beforeMessages?: number;
    beforeTokens?: number;
    afterMessages?: number;
    afterTokens?: number;
    outcome: string;
    detail?: string;
  };
  sections: CompositionSection[];
  totalTokens?: number;
  totalCap?: number;
  fidelity: { mark: Mark; label: string; text: string }[];
  accuracy: { model: string; ratio: number; estimatedTokens: number; usageTokens: number }[];
  warnings: string[];
}

function verdict(trigger: TriggerInfo): string {
  if (trigger.usageRecovered) return 'a rebuild already answered this usage record (each record triggers at most one)';
  if (trigger.shouldRebuild) return `a rebuild is due: ${trigger.count.toLocaleString('en-US')} tokens counted, over the line of ${trigger.usable.toLocaleString('en-US')}`;
  return `not due yet: ${trigger.count.toLocaleString('en-US')} of ${trigger.usable.toLocaleString('en-US')} tokens`;
}

function standing(trigger: TriggerInfo): Composition['standing'] {
  return {
    window: trigger.budget ?? trigger.hard,
    usable: trigger.usable,
    count: trigger.count,
    usageSource: trigger.usageSource,
    shouldRebuild: trigger.shouldRebuild,
    verdict: verdict(trigger),
  };
}

export function sections(list: readonly SectionInfo[]): CompositionSection[] {
  return list.map((s) => ({
    heading: s.heading.replace(/^#+\s*/, ''),
    tokens: s.tokens,
    ...(typeof s.cap === 'number' ? { cap: s.cap } : {}),
    unit: s.unit,
    status: !s.present ? 'absent' : s.shed ? 'shed' : s.truncated ? 'cut' : 'in full',
    ...(s.reason ? { reason: s.reason } : {}),
    ...(s.path ? { path: s.path } : {}),
  }));
}

/** The fidelity report (protocol.md "The fidelity report") as marked lines, as inspect prints it. */
export function fidelityLines(report: FidelityReport | null | undefined): Composition['fidelity'] {
  if (!report) return [];
  const lines: Composition['fidelity'] = [];
  const ask = report.newestUserAsk;
  const askText: Record<string, [Mark, string]> = {
    verbatim: ['ok', 'verbatim in Recent user input'],
    truncated: ['partial', 'truncated in Recent user input'],
    missing: ['lost', 'missing from the boundary'],
    none: ['none', 'no user ask in the session'],
  };
  const [askMark, askSays] = askText[ask.status] ?? ['none', ask.status];
  lines.push({ mark: askMark, label: 'Newest user ask', text: `${askSays}${ask.appended ? ' (appended)' : ''}${ask.reason ? `: ${ask.reason}` : ''}` });
  const tasks = report.tasks;
  const unlisted = tasks.unlisted ?? [];
  lines.push({
    mark: tasks.openHeld === 0 ? 'none' : unlisted.length === 0 ? 'ok' : 'partial',
    label: 'Open tasks',
    text: tasks.openHeld === 0 ? 'none open' : `${tasks.openListed} of ${tasks.openHeld} listed in the Tasks ledger${unlisted.length ? `; not listed: ${unlisted.map((u) => `${u.taskId} (${u.reason})`).join(', ')}` : ''}`,
  });
  const error = report.newestToolError;
  lines.push(
    error
      ? {
          mark: error.inDigest ? 'ok' : 'lost',
          label: 'Newest tool error',
          text: `${error.tool} (call ${error.callId}): ${error.inDigest ? 'its error line is in Recent activity' : `not in the digest${error.reason ? `: ${error.reason}` : ''}`}`,
        }
      : { mark: 'none', label: 'Newest tool error', text: 'no tool error after the watermark' },
  );
  const cut = report.cutSections ?? [];
  const shed = report.shedSections ?? [];
  lines.push({
    mark: shed.length ? 'lost' : cut.length ? 'partial' : 'ok',
    label: 'Sections cut',
    text: cut.length || shed.length ? [cut.length ? `cut to their caps: ${cut.join(', ')}` : '', shed.length ? `shed by the total cap: ${shed.join(', ')}` : ''].filter(Boolean).join('; ') : 'none: every section fits its cap',
  });
  return lines;
}

function accuracy(list: readonly EstimateAccuracy[] | undefined): Composition['accuracy'] {
  return (list ?? []).map((a) => ({
    model: [a.providerId, a.modelId].filter(Boolean).join('/') || 'the model in use',
    ratio: a.ratio,
    estimatedTokens: a.estimatedTokens,
    usageTokens: a.usageTokens,
  }));
}

/** The `--json` layout of `mimo-sidecar inspect` (docs/inspect.md), the keys this view reads. */
export interface InspectJson {
  inspect: number;
  source: { path: string; format: string; sessionId: string; messages: number; mainView: number };
  trigger: TriggerInfo;
  watermark: { messageId: string | null; source: string; indexInView: number | null; writer: { messageId: string; index: number; tailTokens: number } | null };
  memory: { root: string | null; temporary: boolean; checkpoint: string };
  preview: { outcome: string; report: { sections: SectionInfo[] } | null } | null;
  rebuild: { outcome: string; detail: string | null; report: { sections: SectionInfo[]; totalTokens: number; totalCap?: number | null } | null };
  request: {
    before: { messages: number; estimatedTokens: number };
    after: { messages: number; estimatedTokens: number } | null;
    sizes: { beforeTokens: number; afterTokens: number } | null;
  };
  estimateAccuracy: EstimateAccuracy[];
  fidelity: FidelityReport | null;
  warnings: string[];
}

const WATERMARK_SOURCES: Record<string, string> = {
  option: 'given with --watermark',
  file: "the file's stored watermark",
  writer: 'the one a checkpoint writer starting now would cover (the file stores none)',
  none: 'none: no message can be covered yet',
};

export function fromInspect(json: InspectJson): Composition {
  if (json.inspect !== 1) throw new Error(`mimo-sidecar inspect answered layout ${String(json.inspect)}; this extension reads layout 1`);
  const report = json.rebuild.report ?? json.preview?.report ?? null;
  return {
    title: `${json.source.sessionId}`,
    source: `${json.source.path} (${json.source.format}, ${json.source.messages} messages): mimo-sidecar inspect, run in process on a copy, nothing changed on disk`,
    standing: standing(json.trigger),
    watermark: {
      ...(json.watermark.messageId ? { used: json.watermark.messageId } : {}),
      usedHow: WATERMARK_SOURCES[json.watermark.source] ?? json.watermark.source,
      ...(json.watermark.writer ? { writer: json.watermark.writer.messageId, writerIndex: json.watermark.writer.index, tailTokens: json.watermark.writer.tailTokens } : {}),
    },
    memory: json.memory.temporary ? 'a temporary root holding the checkpoint template (no --memory-root)' : `${json.memory.root ?? ''} (checkpoint.md ${json.memory.checkpoint})`,
    request: {
      beforeMessages: json.request.before.messages,
      beforeTokens: json.request.before.estimatedTokens,
      ...(json.request.after ? { afterMessages: json.request.after.messages, afterTokens: json.request.after.estimatedTokens } : json.request.sizes ? { afterTokens: json.request.sizes.afterTokens } : {}),
      outcome: json.rebuild.outcome,
      ...(json.rebuild.detail ? { detail: json.rebuild.detail } : {}),
    },
    sections: sections(report?.sections ?? []),
    ...(json.rebuild.report ? { totalTokens: json.rebuild.report.totalTokens, ...(json.rebuild.report.totalCap ? { totalCap: json.rebuild.report.totalCap } : {}) } : {}),
    fidelity: fidelityLines(json.fidelity),
    accuracy: accuracy(json.estimateAccuracy),
    warnings: [...json.trigger.warnings ?? [], ...json.warnings].filter((w, i, all) => all.indexOf(w) === i),
  };
}

/** A live session: its `session/get`, a `rebuild/compute` with `preview: true`, a `request/build`. */
export function fromLive(info: SessionInfo, computed: ComputeResult, built: BuildResult | undefined): Composition {
  const preview = computed.preview;
  const report = preview?.report;
  return {
    title: info.sessionId,
    source: `the live session in the sidecar (revision ${info.revision}, ${info.messageCount} stored messages): a dry run of rebuild/compute, nothing changed`,
    standing: standing(computed.trigger),
    watermark: {
      ...(computed.storedWatermark ? { used: computed.storedWatermark } : {}),
      usedHow: computed.storedWatermark ? 'the stored watermark (the last writer that succeeded)' : 'none stored yet: a rebuild needs a checkpoint writer first',
      ...(computed.watermark ? { writer: computed.watermark.messageId, writerIndex: computed.watermark.index, tailTokens: computed.watermark.tailTokens } : {}),
    },
    request: {
      ...(built ? { beforeMessages: built.messages.length, beforeTokens: built.estimatedTokens } : preview?.sizes ? { beforeTokens: preview.sizes.beforeTokens } : {}),
      ...(preview?.sizes ? { afterTokens: preview.sizes.afterTokens } : {}),
      outcome: preview?.outcome ?? 'unknown (the sidecar sent no preview)',
    },
    sections: sections(report?.sections ?? []),
    ...(report ? { totalTokens: report.totalTokens, ...(report.totalCap ? { totalCap: report.totalCap } : {}) } : {}),
    fidelity: fidelityLines(preview?.fidelity),
    accuracy: accuracy(computed.estimateAccuracy),
    warnings: [...(computed.trigger.warnings ?? []), ...(built?.warnings ?? [])].filter((w, i, all) => all.indexOf(w) === i),
  };
}
