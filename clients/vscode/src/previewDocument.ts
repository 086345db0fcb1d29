// "Preview a Rebuild": `rebuild/compute` with `preview` and `includeText` (a dry run: nothing
// changes in the session), as a read-only Markdown document: the outcome and sizes, the sections
// against their caps, what the boundary keeps, then the rebuild text the model would read.

import type { ComputeResult } from 'mimo-sidecar-client';
import { fidelityLines, sections } from './composition.js';

const n = (value: number) => value.toLocaleString('en-US');
const MARKS = { ok: '✓', partial: '!', lost: '✗', none: '–' } as const;

export function previewDocument(sessionId: string, computed: ComputeResult): string {
  const lines: string[] = [`# Rebuild preview: ${sessionId}`, ''];
  const t = computed.trigger;
  const preview = computed.preview;
  lines.push(
    `A dry run of \`rebuild/compute\` at revision ${computed.revision}: nothing was inserted. ` +
      `Trigger: ${n(t.count)} tokens counted (${t.usageSource}) against the line of ${n(t.usable)}: ` +
      `${t.shouldRebuild ? 'a rebuild is due' : 'not due'}.`,
    '',
  );
  lines.push(
    `- Stored watermark: ${computed.storedWatermark ? `\`${computed.storedWatermark}\`` : 'none (no writer has succeeded yet)'}`,
    `- A writer starting now would cover: ${computed.watermark ? `\`${computed.watermark.messageId}\` (${n(computed.watermark.tailTokens)} tokens after it)` : 'nothing (the view is empty)'}`,
    `- Writer in flight: ${computed.writerInFlight ? 'yes' : 'no'}`,
  );
  if (!preview) {
    lines.push('', 'The sidecar sent no preview.');
    return lines.join('\n') + '\n';
  }
  const sizes = preview.sizes ? `: the request would go from ${n(preview.sizes.beforeTokens)} to ${n(preview.sizes.afterTokens)} estimated tokens` : '';
  lines.push(`- Outcome now: **${preview.outcome}**${sizes}`, '', '## Sections', '', '| section | tokens | cap | |', '| --- | ---: | ---: | --- |');
  for (const s of sections(preview.report.sections)) {
    const cap = s.cap === undefined ? '' : `${n(s.cap)}${s.unit === 'tokens' ? '' : ` ${s.unit}`}`;
    lines.push(`| ${s.heading} | ${n(s.tokens)} | ${cap} | ${s.status}${s.reason ? `: ${s.reason}` : ''} |`);
  }
  lines.push(`| **Rebuild text** | **${n(preview.report.totalTokens)}** | ${preview.report.totalCap ? n(preview.report.totalCap) : ''} | |`, '');
  lines.push('## What the boundary keeps', '');
  for (const f of fidelityLines(preview.fidelity)) lines.push(`- ${MARKS[f.mark]} ${f.label}: ${f.text}`);
  for (const warning of t.warnings ?? []) lines.push(`- Warning: ${warning}`);
  lines.push('', '## The rebuild text', '');
  const text = preview.report.text;
  if (text) lines.push('````markdown', text, '````');
  else lines.push(preview.report.emptyReason ? `No text: ${preview.report.emptyReason}` : 'No text was rendered.');
  return lines.join('\n') + '\n';
}
