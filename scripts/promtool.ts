// promtool for the deploy checks of `npm test` (tests/deploy): Prometheus' own
// checker of rule files, scrape configuration and exposition text. The project fetches it itself,
// the way scripts/bootstrap.mjs fetches Node: Debian's `prometheus` package ships it, so this takes
// that .deb from deb.debian.org (pinned version and SHA-256), extracts usr/bin/promtool with
// dpkg-deb (or ar + tar) and caches it under .tools/promtool/. Where the pinned build does not fit
// (another architecture, or Debian has replaced it in its pool) the package comes from
// `apt-get download prometheus` (no root needed, but an apt index). Elsewhere than Linux, the
// promtool on PATH is used (e.g. Homebrew's `prometheus`).
//
//   node scripts/promtool.ts              prints the path of promtool, fetching it first if needed
//   import { promtoolPath } from …        the same, from a test
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { arch, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MIRROR = 'https://deb.debian.org/debian';
// Debian 12 (bookworm), main, from `apt-cache show prometheus` (Filename, SHA256). When a point
// release replaces this build in Debian's pool, update it from `apt-cache show prometheus`.
const VERSION = '2.42.0+ds-5+deb12u1';
const PINNED: Record<string, { file: string; sha256: string }> = {
  x64: {
    file: `pool/main/p/prometheus/prometheus_${VERSION}_amd64.deb`,
    sha256: '81d59a24fce84f7fbe97a45a4f2914b6a5881b5cd1db2a6a0e129e515e1a5f55',
  },
};

function fail(msg: string): never {
  throw new Error(`promtool: ${msg}`);
}

const works = (bin: string): boolean => spawnSync(bin, ['--version'], { encoding: 'utf8' }).status === 0;

/** The pinned .deb into `file`; false when the mirror no longer has it. */
async function fetchPinned(deb: { file: string; sha256: string }, file: string): Promise<boolean> {
  process.stderr.write(`[promtool] fetching Debian's prometheus ${VERSION} from ${MIRROR} into .tools/promtool/\n`);
  const res = await fetch(`${MIRROR}/${deb.file}`);
  if (res.status === 404) return false;
  if (!res.ok) fail(`GET ${MIRROR}/${deb.file} answered ${res.status} ${res.statusText}`);
  const body = Buffer.from(await res.arrayBuffer());
  const sum = createHash('sha256').update(body).digest('hex');
  if (sum !== deb.sha256) fail(`${deb.file}: SHA-256 ${sum}, expected ${deb.sha256}`);
  writeFileSync(file, body);
  return true;
}

/** The .deb of this machine's apt (its signed index) into `file`. */
function fetchWithApt(file: string): void {
  process.stderr.write('[promtool] fetching prometheus with apt-get download\n');
  const work = dirname(file);
  const r = spawnSync('apt-get', ['download', 'prometheus'], { cwd: work, stdio: ['ignore', 'inherit', 'inherit'] });
  const got = r.status === 0 ? readdirSync(work).find((f) => f.startsWith('prometheus_') && f.endsWith('.deb')) : undefined;
  if (!got) fail(`apt-get download prometheus failed (no apt, or no index: apt-get update); no other source is tried`);
  renameSync(join(work, got), file);
}

function extract(deb: string, into: string): void {
  mkdirSync(into, { recursive: true });
  if (spawnSync('dpkg-deb', ['-x', deb, into], { stdio: 'inherit' }).status === 0) return;
  // Without dpkg: a .deb is an ar archive holding data.tar.{xz,zst,gz}.
  if (spawnSync('ar', ['x', deb], { cwd: into, stdio: 'inherit' }).status !== 0) fail('neither dpkg-deb nor ar could unpack the .deb');
  const data = ['data.tar.xz', 'data.tar.zst', 'data.tar.gz'].find((f) => existsSync(join(into, f)));
  if (!data) fail('the .deb holds no data.tar');
  if (spawnSync('tar', ['-xf', data, './usr/bin/promtool'], { cwd: into, stdio: 'inherit' }).status !== 0)
    fail(`tar could not unpack ${data}`);
}

/** The path of a working promtool: the cached one, fetched from Debian on first use (Linux); else the one on PATH. */
export async function promtoolPath(): Promise<string> {
  if (process.platform !== 'linux') {
    if (works('promtool')) return 'promtool';
    fail(`Debian builds it for Linux only: install Prometheus' promtool on PATH`);
  }
  const pinned = PINNED[arch()];
  const dir = join(root, '.tools', 'promtool', pinned ? `${VERSION}-${arch()}` : `apt-${arch()}`);
  const bin = join(dir, 'promtool');
  if (existsSync(bin) && works(bin)) return bin;
  const work = mkdtempSync(join(tmpdir(), 'promtool-'));
  try {
    const file = join(work, 'prometheus.deb');
    if (!pinned || !(await fetchPinned(pinned, file))) fetchWithApt(file);
    extract(file, join(work, 'x'));
    const found = join(work, 'x', 'usr', 'bin', 'promtool');
    if (!existsSync(found)) fail('the .deb holds no usr/bin/promtool');
    mkdirSync(dir, { recursive: true });
    copyFileSync(found, `${bin}.tmp`);
    chmodSync(`${bin}.tmp`, 0o755);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  renameSync(`${bin}.tmp`, bin);
  if (!works(bin)) fail(`${bin} does not run on this machine`);
  return bin;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${await promtoolPath()}\n`);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
