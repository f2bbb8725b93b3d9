// The image is made with Debian's own tools, not Docker (no engine or registry is reachable here):
// mmdebstrap for the root file system, podman (with runc) to import and build. A machine without
// them gets them from apt, which needs root.
import { spawnSync } from 'node:child_process';
import { run, say, succeeds } from './proc.ts';

/** Command → Debian package. fuse-overlayfs and uidmap: podman's storage where the kernel's overlay or id mapping is refused. */
const NEEDED: Array<[string, string]> = [
  ['podman', 'podman'],
  ['runc', 'runc'],
  ['mmdebstrap', 'mmdebstrap'],
  ['fuse-overlayfs', 'fuse-overlayfs'],
  ['newuidmap', 'uidmap'],
];

const has = (cmd: string): boolean => succeeds('sh', ['-c', `command -v ${cmd}`]);

export function ensureHostTools(): void {
  const missing = NEEDED.filter(([cmd]) => !has(cmd)).map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  const install = ['install', '-y', ...missing];
  if (process.getuid?.() !== 0) throw new Error(`missing ${missing.join(', ')}: run \`apt-get ${install.join(' ')}\` as root`);
  say(`installing ${missing.join(', ')} with apt-get (not found on this machine)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // A fresh machine may have no package lists yet; update only when the install cannot proceed.
  const first = spawnSync('apt-get', install, { stdio: ['ignore', 2, 2], env });
  if (first.status !== 0) {
    run('apt-get', ['update'], { inherit: true });
    const again = spawnSync('apt-get', install, { stdio: ['ignore', 2, 2], env });
    if (again.status !== 0) throw new Error(`apt-get ${install.join(' ')} failed (exit ${again.status})`);
  }
}
