// Finding the command that starts the sidecar: the order of the candidates, and the probe against
// real interpreters (the repository's venv, a Python without mimo-sidecar, missing files).

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { candidates, describeMiss, findSidecar, probeVersionIn, type Probe } from '../../src/interpreter.js';
import { python } from './fixtures.js';

const neutral = mkdtempSync(join(tmpdir(), 'mimo-vscode-probe-'));
const probe = probeVersionIn(neutral);

/** A workspace folder whose `.venv` is the venv of the test's Python (a link to it). */
function folderWithVenv(): string {
  const folder = mkdtempSync(join(tmpdir(), 'mimo-vscode-ws-'));
  symlinkSync(dirname(dirname(python)), join(folder, '.venv'));
  return folder;
}

describe('finding the sidecar', () => {
  it('tries the settings alone when one is set', () => {
    const fromCommand = candidates({ serverCommand: ['mimo-sidecar'], interpreter: '/py', trustedFolders: ['/w'], platform: 'linux' });
    assert.deepEqual(fromCommand, { list: [{ command: ['mimo-sidecar'], source: 'mimoSidecar.serverCommand' }], explicit: true });
    const fromInterpreter = candidates({ serverCommand: [], interpreter: '/py', pythonExtension: '/other', trustedFolders: ['/w'], platform: 'linux' });
    assert.deepEqual(fromInterpreter.list, [{ command: ['/py', '-m', 'mimo_sidecar'], source: 'mimoSidecar.interpreter' }]);
  });

  it('otherwise looks at the Python extension, the workspace venvs, then PATH', () => {
    const { list, explicit } = candidates({ serverCommand: [], interpreter: '', pythonExtension: '/pe/python', trustedFolders: ['/w'], platform: 'linux' });
    assert.equal(explicit, false);
    assert.deepEqual(
      list.map((c) => `${c.source}: ${c.command.join(' ')}`),
      [
        'python extension: /pe/python -m mimo_sidecar',
        'workspace venv: /w/.venv/bin/python -m mimo_sidecar',
        'workspace venv: /w/venv/bin/python -m mimo_sidecar',
        'PATH: mimo-sidecar',
        'PATH: python3 -m mimo_sidecar',
        'PATH: python -m mimo_sidecar',
      ],
    );
    const windows = candidates({ serverCommand: [], interpreter: '', trustedFolders: ['C:\\w'], platform: 'win32' });
    assert.match(windows.list[0]?.command[0] ?? '', /Scripts.python\.exe$/);
  });

  it("finds the repository's venv as a workspace venv, with its version", async () => {
    const folder = folderWithVenv();
    const search = await findSidecar({ serverCommand: [], interpreter: '', trustedFolders: [folder], platform: 'linux' }, probe);
    assert.equal(search.found?.source, 'workspace venv');
    assert.deepEqual(search.found?.command, [join(folder, '.venv', 'bin', 'python'), '-m', 'mimo_sidecar']);
    assert.match(search.found?.version ?? '', /^\d+\.\d+/);
  });

  it('never runs a venv of an untrusted workspace', async () => {
    const seen: string[][] = [];
    const recording: Probe = async (command) => {
      seen.push(command);
      return { problem: 'not found' };
    };
    const search = await findSidecar({ serverCommand: [], interpreter: '', trustedFolders: [], platform: 'linux' }, recording);
    assert.equal(search.found, undefined);
    assert.ok(seen.every((c) => !c[0]?.includes('venv')), JSON.stringify(seen));
    assert.equal(seen.length, 3);
  });

  it('says why each candidate is not a sidecar', async () => {
    const missing = await probe(['/nonexistent/python', '-m', 'mimo_sidecar']);
    assert.deepEqual(missing, { problem: 'not found' });
    const script = join(neutral, 'not-a-sidecar');
    writeFileSync(script, '#!/bin/sh\necho "usage: something else" >&2\nexit 3\n');
    chmodSync(script, 0o755);
    const other = await probe([script]);
    assert.deepEqual(other, { problem: 'not a mimo-sidecar: usage: something else' });
  });

  it("runs in its own directory, where a checkout's source cannot answer for a Python", async () => {
    // `python -m` imports from its working directory first: in a mimo-sidecar checkout any
    // python3 answers --version from the source tree, dependencies or not.
    const answer = await probe(['/bin/sh', '-c', 'pwd >&2; exit 1']);
    assert.deepEqual(answer, { problem: `not a mimo-sidecar: ${neutral}` });
  });

  it('an explicit interpreter that fails is an error that names the setting, with no fallback', async () => {
    const search = await findSidecar({ serverCommand: [], interpreter: '/nonexistent/python', trustedFolders: [folderWithVenv()], platform: 'linux' }, probe);
    assert.equal(search.found, undefined);
    assert.equal(search.tried.length, 1);
    const text = describeMiss(search);
    assert.match(text, /\/nonexistent\/python -m mimo_sidecar \(mimoSidecar\.interpreter\): not found/);
    assert.match(text, /Fix the setting named above/);
  });
});
