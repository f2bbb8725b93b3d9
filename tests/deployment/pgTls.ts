// A throwaway PostgreSQL server that accepts only TLS connections with a password (SCRAM), as a
// managed production database does: its own data directory under .data/, its own CA, a server
// certificate for 127.0.0.1 and localhost. The deployment test points the manifests'
// `sslmode=verify-full&sslrootcert=…` URLs at it, so a client that skips TLS or does not check the
// server's certificate is refused. Made with the machine's PostgreSQL binaries (initdb, pg_ctl) and
// openssl; as root the server runs as the `postgres` user, which PostgreSQL requires.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';

export interface TlsPostgres {
  port: number;
  /** The CA that signed the server certificate (what `sslrootcert` names), and its PEM. */
  caFile: string;
  caPem: string;
  /** Superuser URL over verify-full TLS (the harness's own checks, and the migrating owner). */
  superUrl(database: string): string;
  password: string;
  stop(): Promise<void>;
}

function binDir(): string {
  const fromPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (fromPath) return join(fromPath, '..');
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin');
  throw new Error('no PostgreSQL server binaries (initdb) found: install postgresql (Debian) or put initdb on PATH');
}

function openssl(args: string[], cwd: string): void {
  const r = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (r.error) throw new Error(`openssl is needed for the test certificates: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
}

/** A CA and a server certificate it signed, for 127.0.0.1 and localhost (what verify-full checks). */
function makeCertificates(dir: string): { caFile: string; certFile: string; keyFile: string } {
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '7',
      '-subj',
      '/CN=ingest test CA',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
    ],
    dir,
  );
  openssl(
    [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
    ],
    dir,
  );
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '7',
      '-extfile',
      'san.ext',
      '-out',
      'server.crt',
    ],
    dir,
  );
  return { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') };
}

export async function startTlsPostgres(opts: { dir: string; port: number; log: (m: string) => void }): Promise<TlsPostgres> {
  const bin = binDir();
  const asRoot = userInfo().uid === 0;
  const owner = asRoot ? Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()) : userInfo().uid;
  const ownerGid = asRoot ? Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()) : userInfo().gid;
  // PostgreSQL refuses to run as root: as root, every server step runs as `postgres`.
  const run = (cmd: string, args: string[]) => {
    const r = asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { encoding: 'utf8' })
      : spawnSync(join(bin, cmd), args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
    return r.stdout;
  };
  rmSync(opts.dir, { recursive: true, force: true });
  const certs = join(opts.dir, 'certs');
  const data = join(opts.dir, 'data');
  mkdirSync(certs, { recursive: true });
  mkdirSync(data, { recursive: true, mode: 0o700 });
  const password = `pg-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  const { caFile, certFile, keyFile } = makeCertificates(certs);
  const pwfile = join(opts.dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  for (const p of [opts.dir, data, certs, pwfile, keyFile, certFile, caFile]) chownSync(p, owner, ownerGid);
  chmodSync(keyFile, 0o600);
  chmodSync(opts.dir, 0o755);
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '--no-sync', '-E', 'UTF8', '--locale=C']);
  // TLS only, passwords only: a plaintext connection is refused by pg_hba, not merely discouraged.
  writeFileSync(
    join(data, 'pg_hba.conf'),
    ['hostssl all all 127.0.0.1/32 scram-sha-256', 'hostnossl all all 0.0.0.0/0 reject', 'local all all scram-sha-256', ''].join('\n'),
  );
  writeFileSync(
    join(data, 'postgresql.auto.conf'),
    [
      `port = ${opts.port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${data}'`,
      'ssl = on',
      `ssl_cert_file = '${certFile}'`,
      `ssl_key_file = '${keyFile}'`,
      "password_encryption = 'scram-sha-256'",
      'fsync = off',
      'max_connections = 200',
      '',
    ].join('\n'),
  );
  chownSync(join(data, 'pg_hba.conf'), owner, ownerGid);
  chownSync(join(data, 'postgresql.auto.conf'), owner, ownerGid);
  run('pg_ctl', ['-D', data, '-l', join(opts.dir, 'server.log'), '-w', '-t', '60', 'start']);
  opts.log(`PostgreSQL (TLS only, SCRAM) on 127.0.0.1:${opts.port}, CA ${caFile}`);
  const superUrl = (database: string) =>
    `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${opts.port}/${database}?sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}`;
  return {
    port: opts.port,
    caFile,
    caPem: readFileSync(caFile, 'utf8'),
    superUrl,
    password,
    stop: async () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } catch (err) {
        opts.log(`stopping the TLS PostgreSQL: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  };
}
