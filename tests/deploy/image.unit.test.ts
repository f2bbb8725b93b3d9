// The Dockerfile, its build context (.dockerignore, read with Docker's own matching rules) and the
// compose file's healthchecks. No image is built here: `npm run image` builds one with podman and
// checks inside it that /app holds exactly the context listed here (tests/image, docs/deploying.md).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import dockerignore from '@balena/dockerignore';
import { describe, expect, it } from 'vitest';
import { contextFiles } from '../../scripts/image/context.ts';
import { read, readYamlDocs, REPO } from './support.ts';
import { SERVICE_NODE_FLAGS as YOUNG_GENERATION } from '../faults/procs.ts';

// A CommonJS module whose types declare an ES default: under nodenext its callable is `.default`.
const ignore = dockerignore.default;
const dockerfile = read('Dockerfile');
const rootPackage = JSON.parse(read('package.json')) as { packageManager: string; engines: { node: string } };

/** The processes the image runs: the services' package names and their entry points. */
const IMAGE_PACKAGES = ['@ingest/gateway', '@ingest/projector', '@ingest/operator'];
const ENTRY_POINTS = [
  'services/gateway/src/main.ts',
  'services/projector/src/main.ts',
  ...['migrate', 'topics', 'parked', 'replay', 'verify'].map((cli) => `services/operator/src/cli/${cli}.ts`),
];

interface Manifest {
  name: string;
  dir: string;
  dependencies: Record<string, string>;
}

/** Every workspace package under packages/ and services/, by name. */
function workspace(): Map<string, Manifest> {
  const out = new Map<string, Manifest>();
  for (const group of ['packages', 'services'])
    for (const d of readdirSync(join(REPO, group), { withFileTypes: true })) {
      if (!d.isDirectory()) continue;
      const dir = `${group}/${d.name}`;
      const pkg = JSON.parse(read(`${dir}/package.json`)) as { name: string; dependencies?: Record<string, string> };
      out.set(pkg.name, { name: pkg.name, dir, dependencies: pkg.dependencies ?? {} });
    }
  return out;
}

/** The image's packages and the workspace packages they depend on in production, transitively. */
function imageClosure(ws: Map<string, Manifest>): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    const m = ws.get(name);
    if (!m) throw new Error(`${name} is not a workspace package`);
    seen.add(name);
    for (const [dep, spec] of Object.entries(m.dependencies)) if (spec.startsWith('workspace:')) visit(dep);
  };
  IMAGE_PACKAGES.forEach(visit);
  return seen;
}

describe('Dockerfile', () => {
  const stages = [...dockerfile.matchAll(/^FROM (\S+) AS (\S+)$/gm)].map((m) => ({ image: m[1], name: m[2] }));
  const deps = dockerfile.slice(dockerfile.indexOf('\nFROM '), dockerfile.lastIndexOf('\nFROM '));
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  /** The WORKDIR in effect at the first line of the deps stage that matches. */
  const workdirAt = (line: RegExp): string | undefined => {
    const at = deps.search(line);
    return [...deps.slice(0, at).matchAll(/^WORKDIR (\S+)$/gm)].at(-1)?.[1];
  };

  it('builds on Node 24 slim by default, the Node the project requires, in a dependency stage and a runtime stage', () => {
    expect(/^ARG NODE_IMAGE=node:24-slim$/m.test(dockerfile)).toBe(true);
    expect(rootPackage.engines.node).toBe('>=24');
    expect(stages).toEqual([
      { image: '${NODE_IMAGE}', name: 'deps' },
      { image: '${NODE_IMAGE}', name: 'runtime' },
    ]);
    expect(runtime).toContain('COPY --from=deps /app /app');
    expect(runtime.match(/^COPY /gm)).toHaveLength(1);
  });

  it("installs the pnpm of package.json's packageManager, and production dependencies only, from the lockfile", () => {
    const pnpm = /npm install --global [^\n]*pnpm@(\S+)/.exec(dockerfile)?.[1];
    expect(`pnpm@${pnpm}`).toBe(rootPackage.packageManager);
    expect(dockerfile).toMatch(/^RUN pnpm fetch --prod\b/m);
    expect(dockerfile).toMatch(/^RUN pnpm install --prod --frozen-lockfile --offline\b/m);
    expect(dockerfile).not.toMatch(/^RUN [^\n]*pnpm install(?![^\n]*--prod)/m);
  });

  it('installs only the gateway, the projector and the operator and what they depend on', () => {
    const install = /^RUN pnpm install (?:[^\n]*\\\n)*[^\n]*/m.exec(dockerfile)?.[0] ?? '';
    expect([...install.matchAll(/--filter '([^']+)'/g)].map((m) => m[1])).toEqual(IMAGE_PACKAGES.map((p) => `${p}...`));
  });

  it('fetches the whole lockfile outside /app, so that the runtime stage copies only what the filtered install links', () => {
    // pnpm fetch fills the virtual store of its directory with every importer's packages (the dev stack's too).
    expect(workdirAt(/^RUN pnpm fetch /m)).not.toBe('/app');
    expect(workdirAt(/^COPY \. \.$/m)).toBe('/app');
    expect(workdirAt(/^RUN pnpm install /m)).toBe('/app');
  });

  it('runs as a numeric non-root user and starts the gateway by default', () => {
    const user = /^USER (\d+):(\d+)$/m.exec(runtime);
    expect(user).not.toBeNull();
    expect(Number(user![1])).toBeGreaterThan(0);
    // A young generation of fixed size (docs/operations.md#memory), as the manifests' commands.
    const cmd = JSON.stringify(['node', ...YOUNG_GENERATION, 'services/gateway/src/main.ts']).replaceAll('","', '", "');
    expect(runtime.split('\n')).toContain(`CMD ${cmd}`);
    expect(runtime).toMatch(/^EXPOSE 8080 9090 9091$/m);
  });
});

describe("the services' Node flags", () => {
  // docs/operations.md#memory: V8 grows a young generation sized from the host's memory under load,
  // which a 60-minute soak saw as an RSS step 14-24 minutes in. With the flags the image runs the
  // services with, it is at its full size after the first collections and grows no further.
  const newSpaceMiB = (flags: string[]) => {
    const script = `const a = []; for (let i = 0; i < 3e6; i++) { a.push({ i }); if (a.length > 3e5) a.length = 0; }
      console.log(require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 2 ** 20);`;
    return Number(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' }).trim());
  };
  it('are the ones `npm start` runs with too', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts['start'];
    expect(start).toBe(`node scripts/bootstrap.mjs ${YOUNG_GENERATION.join(' ')} scripts/start.ts`);
  });
  // Two Node processes that allocate 3 million objects each: about a second alone, but the unit tier
  // runs three workers on two cores, and a fresh clone's run took more than the default 5 s.
  it('fix the young generation: 2 x 64 MiB under load, whatever the host', { timeout: 30_000 }, () => {
    expect(newSpaceMiB(YOUNG_GENERATION)).toBe(128);
    expect(newSpaceMiB([...YOUNG_GENERATION, '--max-old-space-size=256'])).toBe(128);
  });
});

describe('.dockerignore', () => {
  const ig = ignore().add(read('.dockerignore').split('\n'));
  const files = contextFiles();
  const ws = workspace();
  const closure = imageClosure(ws);

  it('sends the manifests, the sources of the packages the image installs, schemas/, migrations/ and every entry point', () => {
    const needed = (f: string): boolean =>
      ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml'].includes(f) ||
      /^(schemas|migrations)\//.test(f) ||
      [...closure].some((name) => {
        const dir = ws.get(name)!.dir;
        return f === `${dir}/package.json` || (f.startsWith(`${dir}/src/`) && !f.endsWith('.test.ts'));
      });
    // Tracked and untracked files of the working tree (less .gitignore), deleted ones left out.
    const tree = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f && existsSync(join(REPO, f)));
    expect(tree.filter(needed).filter((f) => !files.includes(f))).toEqual([]);
    for (const entry of ENTRY_POINTS) expect(files, entry).toContain(entry);
    expect(files.filter((f) => !needed(f))).toEqual([]);
  });

  it('leaves out the workspace packages no service of the image depends on (the dev stack), with their manifests', () => {
    expect(closure.has('@ingest/devstack')).toBe(false);
    const sent = [...ws.values()].filter((m) => files.includes(`${m.dir}/package.json`)).map((m) => m.name);
    expect(sent.sort(), 'exclude a package no image service depends on in .dockerignore').toEqual([...closure].sort());
    for (const f of ['packages/devstack/package.json', 'packages/devstack/src/index.ts']) expect(ig.ignores(f), f).toBe(true);
  });

  it('sends no tests, fixtures, scripts, secrets or installed modules', () => {
    for (const path of [
      '.env',
      '.env.local',
      'node_modules/x',
      'packages/db/node_modules/pg/index.js',
      'packages/db/src/node_modules/x.js',
      'packages/domain/testing/index.ts',
      'packages/runtime/testing/index.ts',
      'services/gateway/testing/testGateway.ts',
      'services/gateway/src/edge/auth.unit.test.ts',
      'packages/db/README.md',
      'scripts/migrate.ts',
      'scripts/image.ts',
      '.data/kafka/x',
      '.tools/x',
      'deploy/kafka/libs/kafka.jar',
      'tests/package.json',
      '.git/config',
    ]) {
      expect(ig.ignores(path), path).toBe(true);
    }
  });
});

describe('deploy/compose.yaml', () => {
  const compose = readYamlDocs('deploy/compose.yaml')[0]!;
  const services = compose['services'] as Record<string, Record<string, any>>;

  it('gives every service a healthcheck', () => {
    for (const [name, s] of Object.entries(services)) expect(s['healthcheck']?.test, name).toBeDefined();
  });

  it("checks the app's /readyz on the port it listens on, with time for the first install", () => {
    const app = services['app']!;
    const test: string[] = app['healthcheck'].test;
    expect(test.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    expect(test[3]).toContain(`http://127.0.0.1:${app['environment'].PORT}/readyz`);
    expect(app['healthcheck'].start_period).toBe('10m');
    for (const key of ['interval', 'timeout', 'retries', 'start_interval']) expect(app['healthcheck'][key], key).toBeDefined();
  });
});
