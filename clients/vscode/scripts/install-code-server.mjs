#!/usr/bin/env node
// Installs the real VS Code the integration test runs in: code-server 4.100.3 (VS Code 1.100.3)
// from test/integration/code-server/package-lock.json, into a cache directory outside the
// checkout, once per lockfile (a stamp holds the lockfile's hash). Prints the directory.
//
// Why it takes more than `npm ci`, on a machine that reaches only the npm registry (and PyPI and
// Debian's packages):
//   - code-server's postinstall refuses any Node major but the one it was built for: 4.100.3 is
//     the last release for Node 20 (4.103 asks for 22, 4.13x for 24);
//   - as root, npm must be told `unsafe-perm` or that postinstall refuses to run;
//   - the postinstall runs `npm install` in lib/vscode, which compiles VS Code's native modules
//     (node-gyp, which would download Node's headers: `nodedir` points it at this Node's own);
//     kerberos needs the GSSAPI headers (Debian's libkrb5-dev);
//   - @vscode/ripgrep downloads rg from GitHub, which is unreachable: its download cache (in
//     TMPDIR) is filled beforehand with Debian's ripgrep, the same program;
//   - node-pty's postinstall runs `npx node-gyp`, which asks before it installs: `yes`.
//
// Environment: MIMO_CODE_SERVER_DIR (default ~/.cache/mimo-sidecar-vscode/code-server-<hash>).

import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, '..', 'test', 'integration', 'code-server');
const lock = readFileSync(join(source, 'package-lock.json'));
const hash = createHash('sha256').update(lock).update(process.version.split('.')[0]).digest('hex').slice(0, 12);
const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
export const codeServerDir = process.env.MIMO_CODE_SERVER_DIR || join(cache, 'mimo-sidecar-vscode', `code-server-${hash}`);
export const codeServerBin = join(codeServerDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const stamp = join(codeServerDir, '.installed');

function which(command) {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/** The directory holding include/node/node.h of the running Node, for node-gyp's `nodedir`. */
function nodeHeaders() {
  for (const prefix of [join(dirname(process.execPath), '..'), '/usr', '/usr/local']) {
    if (existsSync(join(prefix, 'include', 'node', 'node.h'))) return prefix;
  }
  return undefined;
}

export function install() {
  if (existsSync(stamp)) return codeServerDir;
  const major = Number(process.versions.node.split('.')[0]);
  const problems = [];
  if (major !== 20) problems.push(`code-server 4.100.3 installs on Node 20 only; this is Node ${process.versions.node}`);
  const rg = which('rg');
  if (!rg) problems.push('ripgrep (rg) is not on PATH: apt-get install -y ripgrep');
  if (!existsSync('/usr/include/gssapi/gssapi.h')) problems.push('the GSSAPI headers are missing (kerberos compiles against them): apt-get install -y libkrb5-dev');
  for (const tool of ['make', 'g++', 'python3']) if (!which(tool)) problems.push(`${tool} is not on PATH (node-gyp needs it): apt-get install -y build-essential python3`);
  const nodedir = nodeHeaders();
  if (!nodedir) problems.push(`no include/node/node.h next to ${process.execPath}: node-gyp would download the headers, which this machine cannot`);
  if (problems.length) throw new Error(`cannot install code-server:\n  ${problems.join('\n  ')}`);

  rmSync(codeServerDir, { recursive: true, force: true });
  mkdirSync(codeServerDir, { recursive: true });
  copyFileSync(join(source, 'package.json'), join(codeServerDir, 'package.json'));
  copyFileSync(join(source, 'package-lock.json'), join(codeServerDir, 'package-lock.json'));
  // @vscode/ripgrep 1.15.11 (lib/vscode's shrinkwrap) looks for its download in
  // $TMPDIR/vscode-ripgrep-cache-<its version>/ripgrep-<release>-<target>.tar.gz before it downloads.
  const tmp = join(codeServerDir, 'tmp');
  const ripgrepCache = join(tmp, 'vscode-ripgrep-cache-1.15.11');
  mkdirSync(ripgrepCache, { recursive: true });
  const target = process.arch === 'arm64' ? 'aarch64-unknown-linux-musl' : 'x86_64-unknown-linux-musl';
  execFileSync('tar', ['czf', join(ripgrepCache, `ripgrep-v13.0.0-10-${target}.tar.gz`), '-C', dirname(rg), 'rg']);
  const env = {
    ...process.env,
    TMPDIR: tmp,
    npm_config_nodedir: nodedir,
    npm_config_unsafe_perm: 'true',
    npm_config_yes: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
  const started = Date.now();
  process.stderr.write(`installing code-server 4.100.3 into ${codeServerDir} (native modules are compiled: about a minute)\n`);
  const result = spawnSync('npm', ['ci', '--foreground-scripts'], { cwd: codeServerDir, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    writeFileSync(join(codeServerDir, 'install.log'), `${result.stdout}\n${result.stderr}`);
    throw new Error(`npm ci of code-server failed (exit ${result.status}); the log: ${join(codeServerDir, 'install.log')}\n${result.stderr.split('\n').slice(-15).join('\n')}`);
  }
  rmSync(tmp, { recursive: true, force: true });
  if (!existsSync(codeServerBin)) throw new Error(`code-server installed, but ${codeServerBin} is missing`);
  writeFileSync(stamp, `code-server 4.100.3, installed in ${Math.round((Date.now() - started) / 1000)} s\n`);
  return codeServerDir;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(install());
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
