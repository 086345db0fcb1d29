// The settings and what they become: the sidecar's config, a restart or a configure, the setting
// a refused config key names; and the manifest's settings against the ones the code reads.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BUDGETS, expandPath, READ_SETTINGS, readSettings, settingFor, settingsChange, sidecarConfig, type SettingsReader } from '../../src/settings.js';
import { repo } from './fixtures.js';

const manifest = JSON.parse(readFileSync(join(repo, 'clients', 'vscode', 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, { default?: unknown }> }; commands: { command: string }[] };
  devDependencies: Record<string, string>;
};
const properties = manifest.contributes.configuration.properties;

/** A reader as VS Code's: the user's value, else the manifest's default. */
function reader(values: Record<string, unknown> = {}): SettingsReader {
  return (key) => (key in values ? values[key] : properties[`mimoSidecar.${key}`]?.default);
}

describe('settings', () => {
  it('sends nothing of the named settings left at their defaults but trigger.auto', () => {
    assert.deepEqual(sidecarConfig(reader()), { compaction: { auto: true } });
  });

  it('lays the named settings over mimoSidecar.config', () => {
    const config = sidecarConfig(
      reader({
        config: { checkpoint: { inflation_guard: false, push_caps: { memory: 1, notes: 2 } }, compaction: { trigger_ratio: 0.5 } },
        'trigger.ratio': '85%',
        'trigger.maxContext': { 'anthropic/*': '150K' },
        'budgets.projectMemory': 8000,
        'budgets.recentUser': 0,
        'writerWait.withWatermarkMs': 5000,
      }),
    );
    assert.deepEqual(config, {
      checkpoint: { inflation_guard: false, push_caps: { memory: 8000, notes: 2, recent_user: 0 }, writer_wait_ms: { with_watermark: 5000 } },
      compaction: { trigger_ratio: '85%', max_context: { 'anthropic/*': '150K' }, auto: true },
    });
  });

  it('does not change the mimoSidecar.config value it read', () => {
    const raw = { checkpoint: { push_caps: { memory: 1 } } };
    sidecarConfig(reader({ config: raw, 'budgets.projectMemory': 9 }));
    assert.deepEqual(raw, { checkpoint: { push_caps: { memory: 1 } } });
  });

  it('maps every budget setting onto its push cap', () => {
    const values = Object.fromEntries(BUDGETS.map((b, i) => [`budgets.${b.setting}`, 100 + i]));
    const caps = sidecarConfig(reader(values)).checkpoint?.push_caps as Record<string, number>;
    assert.deepEqual(Object.keys(caps).sort(), ['actor_ledger', 'checkpoint', 'global', 'memory', 'memory_titles', 'notes', 'recent_user', 'recent_user_per_msg', 'tasks_ledger', 'total']);
    assert.equal(caps.recent_user_per_msg, 100 + BUDGETS.findIndex((b) => b.cap === 'recent_user_per_msg'));
  });

  it('asks for a restart for the command, the memory root and the log level, a configure for the config', () => {
    const base = readSettings(reader());
    assert.deepEqual(settingsChange(base, readSettings(reader())), { kind: 'none', settings: [] });
    assert.deepEqual(settingsChange(base, readSettings(reader({ 'budgets.notes': 10 }))), { kind: 'configure', settings: [] });
    assert.deepEqual(settingsChange(base, readSettings(reader({ memoryRoot: '/m', logLevel: 'debug' }))), {
      kind: 'restart',
      settings: ['mimoSidecar.memoryRoot', 'mimoSidecar.logLevel'],
    });
    assert.equal(readSettings(reader({ logLevel: 'debug' })).logLevel, 'DEBUG');
    assert.equal(readSettings(reader({ logLevel: 'chatty' })).logLevel, 'INFO');
  });

  it('names the setting behind a key the sidecar refused', () => {
    const get = reader({ 'trigger.ratio': 7, config: { checkpoint: { push_caps: { memory: -1 } } } });
    assert.equal(settingFor('initializationOptions.config.compaction.trigger_ratio', get), 'mimoSidecar.trigger.ratio');
    assert.equal(settingFor('config.checkpoint.push_caps.memory', get), 'mimoSidecar.config (checkpoint.push_caps.memory)');
    assert.equal(settingFor('config.checkpoint.push_caps.memory', reader({ 'budgets.projectMemory': -1 })), 'mimoSidecar.budgets.projectMemory');
    assert.equal(settingFor('sessionId', get), undefined);
  });

  it('expands ~ and ${workspaceFolder}, and refuses a folder the window lacks', () => {
    const folders = [
      { name: 'app', path: '/src/app' },
      { name: 'lib', path: '/src/lib' },
    ];
    assert.equal(expandPath('~/mem', '/home/me', folders), '/home/me/mem');
    assert.equal(expandPath('${workspaceFolder}/.venv/bin/python', '/h', folders), '/src/app/.venv/bin/python');
    assert.equal(expandPath('${workspaceFolder:lib}/m', '/h', folders), '/src/lib/m');
    assert.equal(expandPath('${workspaceFolder:nope}/m', '/h', folders), undefined);
    assert.equal(expandPath('${workspaceFolder}/m', '/h', []), undefined);
  });

  it('reads every setting the manifest contributes, and the manifest contributes every one it reads', () => {
    const contributed = Object.keys(properties).map((key) => key.replace(/^mimoSidecar\./, '')).sort();
    assert.deepEqual([...READ_SETTINGS].sort(), contributed);
  });
});

describe('the manifest', () => {
  it('contributes every command extension.ts registers, and registers every one it contributes', () => {
    const source = readFileSync(join(repo, 'clients', 'vscode', 'src', 'extension.ts'), 'utf8');
    const registered = [...source.matchAll(/registerCommand\('([^']+)'/g)].map((m) => m[1]).sort();
    assert.deepEqual(registered, manifest.contributes.commands.map((c) => c.command).sort());
  });

  it("bundles the vscode-jsonrpc the typed client pins", () => {
    const client = JSON.parse(readFileSync(join(repo, 'clients', 'typescript', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    assert.equal(manifest.devDependencies['vscode-jsonrpc'], client.dependencies['vscode-jsonrpc']);
  });
});
