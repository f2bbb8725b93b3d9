#!/usr/bin/env node
// Toolchain bootstrap: runs on any Node >= 18 (the machine ships Node 20, end of life).
// Brings Node 24 LTS and pnpm from the npm registry into .tools/ when the running Node is older
// than 22 or pnpm is missing, installs the workspace, then runs the given script under Node 24.
// A user who already has Node >= 22 and pnpm is not slowed down: nothing is fetched.
//
//   node scripts/bootstrap.mjs <script.ts> [args...]   run a TypeScript entry point under Node 24
//   node scripts/bootstrap.mjs --pnpm [args...]        run pnpm under Node 24
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const NODE_MAJOR = 24;
const PNPM_VERSION = '10.34.9';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const tools = join(root, '.tools');

function say(msg) {
  process.stderr.write(`[bootstrap] ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

function major(v) {
  return Number(String(v).replace(/^v/, '').split('.')[0]);
}

function toolsInstall(spec) {
  mkdirSync(tools, { recursive: true });
  if (!existsSync(join(tools, 'package.json'))) writeFileSync(join(tools, 'package.json'), '{"private":true}\n');
  say(`fetching ${spec} from the npm registry into .tools/`);
  const status = run('npm', ['install', '--prefix', tools, '--no-audit', '--no-fund', '--loglevel=error', spec], {
    shell: process.platform === 'win32',
  });
  if (status !== 0) throw new Error(`npm install ${spec} failed (exit ${status})`);
}

// Node runs .ts entry points natively (type stripping on by default) from 22.18 and 23.6.
function canStripTypes(v) {
  const [maj, min] = String(v).replace(/^v/, '').split('.').map(Number);
  return maj >= 24 || (maj === 23 && min >= 6) || (maj === 22 && min >= 18);
}

function nodeBinary() {
  if (canStripTypes(process.versions.node)) return process.execPath;
  const pkg = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
  const bin = join(tools, 'node_modules', pkg, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
  const ok = () => existsSync(bin) && major(spawnSync(bin, ['--version']).stdout?.toString() ?? '0') === NODE_MAJOR;
  if (!ok()) toolsInstall(`${pkg}@${NODE_MAJOR}`);
  if (!ok()) throw new Error(`could not install Node ${NODE_MAJOR} (${pkg})`);
  return bin;
}

function pnpmCommand(node) {
  const onPath = spawnSync('pnpm', ['--version'], { shell: process.platform === 'win32' });
  if (onPath.status === 0 && major(onPath.stdout.toString()) >= 10) return ['pnpm'];
  const cli = join(tools, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs');
  if (!existsSync(cli)) toolsInstall(`pnpm@${PNPM_VERSION}`);
  return [node, cli];
}

function installWorkspace(pnpm, env) {
  // Re-run `pnpm install` only when the manifests or lockfile changed since the last install.
  const files = ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml'];
  const hash = createHash('sha256');
  for (const f of files) if (existsSync(join(root, f))) hash.update(readFileSync(join(root, f)));
  const pkgs = spawnSync('git', ['ls-files', '*package.json'], { cwd: root }).stdout?.toString() ?? '';
  for (const f of pkgs.split('\n').filter(Boolean)) if (existsSync(join(root, f))) hash.update(readFileSync(join(root, f)));
  const digest = hash.digest('hex');
  const marker = join(root, 'node_modules', '.bootstrap-install');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === digest) return;
  say('installing workspace dependencies (pnpm install)');
  const frozen = process.env.CI ? ['--frozen-lockfile'] : [];
  const [cmd, ...pre] = pnpm;
  const status = run(cmd, [...pre, 'install', ...frozen], { cwd: root, env });
  if (status !== 0) throw new Error(`pnpm install failed (exit ${status})`);
  writeFileSync(marker, digest);
}

function main() {
  const args = process.argv.slice(2);
  // Node's own flags go before the script (`--max-semi-space-size=16 scripts/replay.ts`): they must
  // be set when the child starts, as V8 sizes its heap once.
  const nodeFlags = [];
  while (args[0]?.startsWith('--') && args[0] !== '--pnpm') nodeFlags.push(args.shift());
  const [first, ...rest] = args;
  if (!first) {
    say('usage: bootstrap.mjs [--node-flag ...] <script.ts> [args...] | --pnpm [args...]');
    return 2;
  }
  const node = nodeBinary();
  const pnpm = pnpmCommand(node);
  const env = {
    ...process.env,
    PATH: [dirname(node), join(root, 'node_modules', '.bin'), process.env.PATH].join(delimiter),
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
    npm_config_loglevel: 'error',
  };
  if (first === '--pnpm') {
    const [cmd, ...pre] = pnpm;
    return run(cmd, [...pre, ...rest], { cwd: root, env });
  }
  installWorkspace(pnpm, env);
  // The long-running entry point runs as a child that gets our signals, so stopping this wrapper
  // (SIGTERM from a supervisor, Ctrl-C) shuts the pipeline down gracefully instead of orphaning it.
  const child = spawn(node, [...nodeFlags, resolve(root, first), ...rest], { cwd: process.cwd(), env, stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  // `npm start` runs us under `sh -c`, which dies on SIGTERM without passing it on: when our parent
  // goes away, stop the pipeline as if we had been signalled, instead of leaving it orphaned.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    child.kill('SIGTERM');
  }, 500);
  watch.unref();
  return new Promise((done) => child.on('exit', (code, signal) => done(code ?? (signal ? 128 + 15 : 1))));
}

try {
  process.exitCode = await main();
} catch (err) {
  say(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
}
