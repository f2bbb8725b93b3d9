import { ConfigError } from './env.ts';
import { setting } from './settings.ts';

/**
 * The address clients reach the gateway at (PUBLIC_BASE_URL): the schema `$id`s the
 * gateway serves and the `dataschema` of every emitted CloudEvent are built on it, so both name
 * one URL. Default: the gateway's listen address (HOST, PORT; a wildcard host reads as 127.0.0.1),
 * which only suits one machine: a deployment sets it. `listenPort` is the port actually bound
 * (PORT=0 picks one).
 */
export function publicBaseUrl(env: NodeJS.ProcessEnv, listenPort?: number): string {
  const raw = setting(env, 'PUBLIC_BASE_URL'); // an absolute http(s) URL (the catalog's check)
  if (raw) {
    const url = new URL(raw);
    if (url.search || url.hash) throw new ConfigError(`PUBLIC_BASE_URL must not carry a query or fragment (got ${raw})`);
    return url.href.replace(/\/+$/, '');
  }
  const host = setting(env, 'HOST');
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const port = listenPort ?? (setting(env, 'PORT') || 8080);
  return `http://${shown}:${port}`;
}
