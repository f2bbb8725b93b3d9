// The Dockerfile's RUN steps reach the npm registry the way this machine's npm does: its registry and
// the CA bundle it trusts (a network that inspects TLS signs with a CA of its own, which no image
// knows). Both are handed to the build as read-only mounts (an npmrc for root, the bundle), which no
// layer keeps: the image itself trusts only Debian's CAs, and the Dockerfile stays the one Docker
// users build.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './proc.ts';

const DEFAULT_REGISTRY = 'https://registry.npmjs.org/';
const CA_IN_BUILD = '/run/host-registry/ca.crt';

const npmConfig = (key: string): string => {
  const v = run('npm', ['config', 'get', key]).trim();
  return v === 'null' || v === 'undefined' ? '' : v;
};

/** podman build flags for the registry access of this machine ([] when npm's defaults do); `dir` holds the npmrc. */
export function registryMounts(dir: string): string[] {
  const ca = [npmConfig('cafile'), process.env['NODE_EXTRA_CA_CERTS'] ?? ''].find((f) => f && existsSync(f));
  const registry = npmConfig('registry');
  const lines = [...(ca ? [`cafile=${CA_IN_BUILD}`] : []), ...(registry && registry !== DEFAULT_REGISTRY ? [`registry=${registry}`] : [])];
  if (lines.length === 0) return [];
  const npmrc = join(dir, 'npmrc');
  writeFileSync(npmrc, `${lines.join('\n')}\n`);
  return [`--volume=${npmrc}:/root/.npmrc:ro`, ...(ca ? [`--volume=${ca}:${CA_IN_BUILD}:ro`] : [])];
}
