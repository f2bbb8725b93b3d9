// The service image: the repository's Dockerfile on the local base (scripts/image/base.ts), tagged
// retail-ingestion:<git short sha> and :latest. The hash of the build context is kept as a label, so
// that a caller that only needs "the image of these sources" (npm run test:image) builds only when
// the sources, the Dockerfile or the base changed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contextHash } from './context.ts';
import { ensureBaseImage } from './base.ts';
import { LIMITS, imageExists, imageLabel, imageSize, podman } from './podman.ts';
import { run, say } from './proc.ts';
import { registryMounts } from './registry.ts';

export const SERVICE_REPOSITORY = 'localhost/retail-ingestion';
const CONTEXT_LABEL = 'ingest.context';

export interface ServiceImage {
  ref: string;
  tags: string[];
  base: string;
  bytes: number;
  /** Seconds the build took; null when an existing image was reused. */
  buildSeconds: number | null;
}

const gitSha = (short: boolean): string => run('git', ['rev-parse', ...(short ? ['--short'] : []), 'HEAD']).trim();

export function buildServiceImage(base: string): ServiceImage {
  const tags = [`${SERVICE_REPOSITORY}:${gitSha(true)}`, `${SERVICE_REPOSITORY}:latest`];
  const t0 = Date.now();
  say(`podman build with NODE_IMAGE=${base} -> ${tags.join(', ')}`);
  const work = mkdtempSync(join(tmpdir(), 'ingest-build-'));
  try {
    podman(
      [
        'build',
        '--pull=never',
        // RUN steps fetch pnpm and the packages from the npm registry: the host's network and resolver.
        '--network=host',
        ...registryMounts(work),
        ...LIMITS,
        `--build-arg=NODE_IMAGE=${base}`,
        `--label=${CONTEXT_LABEL}=${contextHash(base)}`,
        `--label=org.opencontainers.image.revision=${gitSha(false)}`,
        ...tags.map((t) => `--tag=${t}`),
        '--file=Dockerfile',
        '.',
      ],
      { inherit: true },
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const buildSeconds = (Date.now() - t0) / 1000;
  return { ref: tags[0]!, tags, base, bytes: imageSize(tags[0]!), buildSeconds };
}

/** The image of the current sources: reused when its label says it was built from them, else built. */
export function ensureServiceImage(): ServiceImage {
  const base = ensureBaseImage();
  const ref = `${SERVICE_REPOSITORY}:${gitSha(true)}`;
  if (imageExists(ref) && imageLabel(ref, CONTEXT_LABEL) === contextHash(base)) {
    say(`${ref} is built from the current sources: reused`);
    return { ref, tags: [ref], base, bytes: imageSize(ref), buildSeconds: null };
  }
  return buildServiceImage(base);
}
