// The composition (composition.ts) as the HTML of a webview: static (no script), themed with VS
// Code's colour variables, every string escaped. Bars are widths on one scale per block, as the
// terminal picture of `mimo-sidecar inspect` draws them.

import type { Composition, CompositionSection, Mark } from './composition.js';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

const n = (value: number | undefined) => (value === undefined ? '—' : value.toLocaleString('en-US'));
const MARKS: Record<Mark, string> = { ok: '✓', partial: '!', lost: '✗', none: '–' };

function bar(value: number, scale: number, kind = ''): string {
  const width = scale > 0 ? Math.max(0, Math.min(100, (value / scale) * 100)) : 0;
  return `<div class="bar"><div class="fill ${kind}" style="width:${width.toFixed(1)}%"></div></div>`;
}

/** A section's cap in tokens for the bar: characters at 4 a token; lines get no bar. */
function capTokens(section: CompositionSection): number | undefined {
  if (section.cap === undefined) return undefined;
  if (section.unit === 'chars') return section.cap / 4;
  if (section.unit === 'lines') return undefined;
  return section.cap;
}

function sectionRows(list: readonly CompositionSection[]): string {
  const scale = Math.max(1, ...list.map((s) => Math.max(s.tokens, capTokens(s) ?? 0)));
  return list
    .map((s) => {
      const cap = s.cap === undefined ? '—' : `${n(s.cap)}${s.unit === 'tokens' ? '' : ` ${s.unit}`}`;
      const status = s.status === 'absent' ? `absent${s.reason ? `: ${s.reason}` : ''}` : s.status;
      const kind = s.status === 'cut' ? 'warn' : s.status === 'shed' ? 'bad' : '';
      const capped = capTokens(s);
      return `<tr><td>${escapeHtml(s.heading)}</td><td class="num">${n(s.tokens)}</td><td class="num">${escapeHtml(cap)}</td><td class="wide">${capped === undefined ? '' : bar(s.tokens, scale, kind)}</td><td class="${kind}">${escapeHtml(status)}</td></tr>`;
    })
    .join('\n');
}

export function compositionHtml(c: Composition, cspSource: string): string {
  const s = c.standing;
  const r = c.request;
  const scale = Math.max(r.beforeTokens ?? 0, r.afterTokens ?? 0, 1);
  const standing = s
    ? `<section><h2>Where the session stands</h2>
<table><tr><td>Window</td><td class="num">${n(s.window)}</td></tr>
<tr><td>Trigger line</td><td class="num">${n(s.usable)}</td></tr>
<tr><td>Counted</td><td class="num">${n(s.count)}</td><td>from ${escapeHtml(s.usageSource)}</td></tr></table>
${bar(s.count, s.window, s.shouldRebuild ? 'warn' : '')}
<p class="verdict">${escapeHtml(s.verdict)}</p></section>`
    : '';
  const w = c.watermark;
  const watermark = `<section><h2>Checkpoint watermark</h2><table>
<tr><td>W</td><td><code>${escapeHtml(w.used ?? 'none')}</code></td></tr>
<tr><td>Chosen</td><td>${escapeHtml(w.usedHow)}</td></tr>
${w.writer ? `<tr><td>A writer now</td><td><code>${escapeHtml(w.writer)}</code> (message ${n(w.writerIndex)} of the view; ${n(w.tailTokens)} tokens after it)</td></tr>` : ''}
${c.memory ? `<tr><td>Memory root</td><td>${escapeHtml(c.memory)}</td></tr>` : ''}
</table></section>`;
  const saved = r.beforeTokens !== undefined && r.afterTokens !== undefined && r.beforeTokens > 0 ? ` (${Math.round((1 - r.afterTokens / r.beforeTokens) * 100)}% smaller)` : '';
  const request = `<section><h2>The request to the model, before and after the rebuild</h2>
<table><tr><th></th><th>messages</th><th>est. tokens</th><th class="wide"></th></tr>
<tr><td>before</td><td class="num">${n(r.beforeMessages)}</td><td class="num">${n(r.beforeTokens)}</td><td class="wide">${bar(r.beforeTokens ?? 0, scale)}</td></tr>
<tr><td>after</td><td class="num">${n(r.afterMessages)}</td><td class="num">${n(r.afterTokens)}</td><td class="wide">${bar(r.afterTokens ?? 0, scale, 'good')}</td></tr></table>
<p class="outcome">Outcome <strong>${escapeHtml(r.outcome)}</strong>${escapeHtml(saved)}${r.detail ? `: ${escapeHtml(r.detail)}` : ''}</p>
${c.accuracy.length ? `<p>The estimate against the provider's count: ${c.accuracy.map((a) => `${escapeHtml(a.model)} ${a.ratio.toFixed(2)} (${n(a.estimatedTokens)} estimated, ${n(a.usageTokens)} counted)`).join('; ')}</p>` : ''}
</section>`;
  const sectionsBlock = `<section><h2>The boundary, section by section</h2>
<table><tr><th>section</th><th>tokens</th><th>cap</th><th class="wide"></th><th></th></tr>
${sectionRows(c.sections)}
${c.totalTokens !== undefined ? `<tr class="total"><td>Rebuild text</td><td class="num">${n(c.totalTokens)}</td><td class="num">${c.totalCap ? n(c.totalCap) : ''}</td><td></td><td></td></tr>` : ''}
</table></section>`;
  const fidelity = c.fidelity.length
    ? `<section><h2>What the boundary keeps of the live conversation</h2><table>
${c.fidelity.map((f) => `<tr><td class="mark ${f.mark}">${MARKS[f.mark]}</td><td>${escapeHtml(f.label)}</td><td>${escapeHtml(f.text)}</td></tr>`).join('\n')}
</table></section>`
    : '';
  const warnings = c.warnings.length ? `<section><h2>Warnings</h2><ul>${c.warnings.map((x) => `<li>${escapeHtml(x)}</li>`).join('')}</ul></section>` : '';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${escapeHtml(cspSource)} 'unsafe-inline';">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(c.title)}</title>
<style>
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1.5em 2em; }
h1 { font-size: 1.3em; } h2 { font-size: 1.05em; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: .2em; margin-top: 1.6em; }
table { border-collapse: collapse; width: 100%; } td, th { padding: .15em .6em .15em 0; text-align: left; vertical-align: top; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; } .wide { width: 40%; }
.bar { background: var(--vscode-editorWidget-background); height: .8em; margin-top: .25em; min-width: 8em; }
.fill { background: var(--vscode-progressBar-background); height: 100%; }
.fill.warn { background: var(--vscode-editorWarning-foreground); } .fill.bad { background: var(--vscode-editorError-foreground); }
.fill.good { background: var(--vscode-testing-iconPassed, var(--vscode-progressBar-background)); }
.warn { color: var(--vscode-editorWarning-foreground); } .bad, .mark.lost { color: var(--vscode-editorError-foreground); }
.mark { width: 1.5em; font-weight: bold; } .mark.ok { color: var(--vscode-testing-iconPassed, inherit); } .mark.partial { color: var(--vscode-editorWarning-foreground); }
.source { color: var(--vscode-descriptionForeground); } .total td { border-top: 1px solid var(--vscode-panel-border); }
</style></head>
<body>
<h1>Session composition: <code>${escapeHtml(c.title)}</code></h1>
<p class="source">${escapeHtml(c.source)}</p>
${standing}
${watermark}
${request}
${sectionsBlock}
${fidelity}
${warnings}
</body></html>`;
}
