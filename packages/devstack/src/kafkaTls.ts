// A throwaway certificate (its own CA) and a broker keystore for the dev broker's SASL_SSL listener
// (docs/operations.md#a-secured-dev-broker), made at start with the JDK's keytool (the broker needs a JDK anyway; Node cannot sign).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface DevTls {
  /** PEM of the throwaway self-signed certificate: what clients trust (KAFKA_SSL_CA_FILE). */
  caFile: string;
  /** PKCS12 keystore with the broker's key and certificate (CN=localhost, SAN 127.0.0.1 and localhost). */
  keystoreFile: string;
  keystorePassword: string;
}

function keytoolBin(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'keytool') : 'keytool';
}

// keytool is a JVM start each time: C1 only and a small heap keep the runs short.
const JVM = ['-J-XX:TieredStopAtLevel=1', '-J-XX:+UseSerialGC', '-J-Xmx64m'];

function keytool(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(keytoolBin(), [...JVM, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const keep = (b: Buffer) => (out = (out + b.toString()).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => reject(new Error(`could not run keytool (a JDK 17+ on PATH or JAVA_HOME is needed): ${err.message}`)));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`keytool ${args[0]} failed (exit ${code}):\n${out.trim()}`))));
  });
}

/**
 * A fresh self-signed broker certificate in `dir` (replacing older ones), valid for 30 days: it is its
 * own CA, which clients trust through its PEM. Two keytool runs (each a JVM start), no signing round.
 */
export function devTlsPaths(dir: string): DevTls {
  return { caFile: join(dir, 'ca.pem'), keystoreFile: join(dir, 'broker.p12'), keystorePassword: randomBytes(12).toString('hex') };
}

/**
 * Makes the files `devTlsPaths` names (they can be written into server.properties first). The nodes
 * of a cluster each make their own, and clients trust the bundle of all of them: each needs a subject
 * of its own (`commonName`), as a TLS library looks a trusted certificate up by its subject name.
 */
export async function makeDevTls(dir: string, paths: DevTls = devTlsPaths(dir), commonName = 'localhost'): Promise<DevTls> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { caFile, keystoreFile, keystorePassword: password } = paths;
  const store = ['-keystore', keystoreFile, '-storetype', 'PKCS12', '-storepass', password];
  await keytool([
    '-genkeypair',
    '-alias',
    'broker',
    '-keyalg',
    'EC',
    '-groupname',
    'secp256r1',
    '-dname',
    `CN=${commonName}`,
    '-validity',
    '30',
    '-ext',
    'SAN=ip:127.0.0.1,dns:localhost',
    ...store,
    '-keypass',
    password,
  ]);
  await keytool(['-exportcert', '-rfc', '-alias', 'broker', ...store, '-file', caFile]);
  if (!existsSync(caFile)) throw new Error(`keytool made no ${caFile}`);
  return paths;
}
