// How podman is called on this kind of machine (Debian's podman 4.3 as root in a sandbox): runc,
// because crun refuses the host's hybrid cgroups; limits below the host's, because raising one is
// refused and podman's defaults raise nofile and nproc.
import { run, succeeds } from './proc.ts';

/** Global flags: they go before the podman subcommand. */
export const PODMAN = ['--runtime', 'runc'];
export const LIMITS = ['--ulimit', 'nofile=16384:16384', '--ulimit', 'nproc=4096:4096'];

export const podman = (args: string[], opts: { inherit?: boolean } = {}): string => run('podman', [...PODMAN, ...args], opts);

export const imageExists = (ref: string): boolean => succeeds('podman', [...PODMAN, 'image', 'exists', ref]);

/** Size of the image with all its layers, in bytes, as `podman images` counts it. */
export const imageSize = (ref: string): number => Number(podman(['image', 'inspect', '--format', '{{.Size}}', ref]).trim());

export const megabytes = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/** A label of a local image ('' when it has none). */
export const imageLabel = (ref: string, label: string): string =>
  podman(['image', 'inspect', '--format', `{{index .Labels "${label}"}}`, ref])
    .trim()
    .replace(/^<no value>$/, '');
