#!/usr/bin/env node
// Bundles the extension (dist/extension.js), the unit tests (out/test/) and the integration
// test's agent extension (test/integration/agent-extension/dist/) with esbuild. The typed client
// is bundled from its source (../typescript/src) and vscode-jsonrpc from this package's pinned
// copy, so one copy of each ends up in the bundle and the .vsix needs no node_modules.
//
// Usage: node scripts/build.mjs [extension] [tests] [agent]   (default: all three)

import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const clientSource = join(root, '..', 'typescript', 'src', 'index.ts');
const jsonrpc = join(root, 'node_modules', 'vscode-jsonrpc');

/** `mimo-sidecar-client` -> the client's source; `vscode-jsonrpc[/node]` -> our copy. */
const resolveClient = {
  name: 'mimo-sidecar-client-source',
  setup(b) {
    b.onResolve({ filter: /^mimo-sidecar-client$/ }, () => ({ path: clientSource }));
    b.onResolve({ filter: /^vscode-jsonrpc(\/node)?$/ }, (args) => ({
      path: join(jsonrpc, args.path.endsWith('/node') ? 'lib/node/main.js' : 'lib/common/api.js'),
    }));
  },
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  plugins: [resolveClient],
  absWorkingDir: root,
};

const targets = {
  extension: () =>
    build({ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', format: 'cjs', external: ['vscode'] }),
  tests: () =>
    build({
      ...common,
      entryPoints: readdirSync(join(root, 'test', 'unit'))
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => `test/unit/${f}`),
      outdir: 'out/test',
      format: 'esm',
      outExtension: { '.js': '.mjs' },
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    }),
  agent: () =>
    build({
      ...common,
      entryPoints: ['test/integration/agent-extension/src/extension.ts'],
      outfile: 'test/integration/agent-extension/dist/extension.js',
      format: 'cjs',
      external: ['vscode'],
    }),
};

const wanted = process.argv.slice(2);
for (const name of wanted.length ? wanted : Object.keys(targets)) {
  if (!targets[name]) throw new Error(`unknown target ${name}; one of ${Object.keys(targets).join(', ')}`);
  await targets[name]();
}
