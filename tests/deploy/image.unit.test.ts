// The Dockerfile, its build context (.dockerignore, read with Docker's own matching rules) and the
// compose file's healthchecks. No image is built here: there is no container engine on this machine.
import { execFileSync } from 'node:child_process';
import dockerignore from '@balena/dockerignore';
import { describe, expect, it } from 'vitest';
import { read, readYamlDocs, REPO } from './support.ts';

// A CommonJS module whose types declare an ES default: under nodenext its callable is `.default`.
const ignore = dockerignore.default;
const dockerfile = read('Dockerfile');
const rootPackage = JSON.parse(read('package.json')) as { packageManager: string; engines: { node: string } };

/** The files `docker build .` sends: the working tree (tracked and untracked, less .gitignore) minus .dockerignore. */
function buildContext(): { files: string[]; ignores: (path: string) => boolean } {
  const ig = ignore().add(read('.dockerignore').split('\n'));
  const tree = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter(Boolean);
  return { files: tree.filter((f) => !ig.ignores(f)), ignores: (p) => ig.ignores(p) };
}

describe('Dockerfile', () => {
  const stages = [...dockerfile.matchAll(/^FROM (\S+) AS (\S+)$/gm)].map((m) => ({ image: m[1], name: m[2] }));
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  it('builds on Node 24 slim, the Node the project requires, in a dependency stage and a runtime stage', () => {
    expect(/^ARG NODE_IMAGE=node:24-slim$/m.test(dockerfile)).toBe(true);
    expect(rootPackage.engines.node).toBe('>=24');
    expect(stages).toEqual([
      { image: '${NODE_IMAGE}', name: 'deps' },
      { image: '${NODE_IMAGE}', name: 'runtime' },
    ]);
    expect(runtime).toContain('COPY --from=deps /app /app');
  });

  it("installs the pnpm of package.json's packageManager, and production dependencies only, from the lockfile", () => {
    const pnpm = /npm install --global [^\n]*pnpm@(\S+)/.exec(dockerfile)?.[1];
    expect(`pnpm@${pnpm}`).toBe(rootPackage.packageManager);
    expect(dockerfile).toMatch(/^RUN pnpm fetch --prod\b/m);
    expect(dockerfile).toMatch(/^RUN pnpm install --prod --frozen-lockfile --offline\b/m);
    expect(dockerfile).not.toMatch(/pnpm install(?![^\n]*--prod)/);
  });

  it('runs as a numeric non-root user and starts the gateway by default', () => {
    const user = /^USER (\d+):(\d+)$/m.exec(runtime);
    expect(user).not.toBeNull();
    expect(Number(user![1])).toBeGreaterThan(0);
    expect(runtime).toMatch(/^CMD \["node", "services\/gateway\/src\/main\.ts"\]$/m);
    expect(runtime).toMatch(/^EXPOSE 8080 9091$/m);
  });

  it('sends the builder the manifests, the sources, schemas/, migrations/ and the entry points, and no tests or secrets', () => {
    const { files, ignores } = buildContext();
    const needed = (f: string) =>
      /^(packages|services)\/[^/]+\/(package\.json|src\/.+)$/.test(f) && !f.endsWith('.test.ts')
        ? true
        : /^(schemas|migrations)\//.test(f) || ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', 'scripts/migrate.ts'].includes(f);
    const tree = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(tree.filter(needed).filter((f) => !files.includes(f))).toEqual([]);
    for (const entry of ['services/gateway/src/main.ts', 'services/projector/src/main.ts', 'scripts/migrate.ts']) expect(files).toContain(entry);
    expect(files.filter((f) => !needed(f))).toEqual([]);
    for (const secretOrBulk of ['.env', '.env.local', 'node_modules/x', 'packages/db/node_modules/pg/index.js', '.data/kafka/x', '.tools/x', 'deploy/kafka/libs/kafka.jar', 'tests/package.json', '.git/config']) {
      expect(ignores(secretOrBulk), secretOrBulk).toBe(true);
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
