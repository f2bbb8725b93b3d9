import { createHmac, randomBytes } from 'node:crypto';

/**
 * A key is `isk_` and 256 random bits (base64url); its id is `key_` and 64 random bits (hex). The
 * prefix lets secret scanners recognise a leaked key; the id is what logs, metrics and the views
 * name (never the key).
 */
export function mintKey(): { keyId: string; key: string } {
  return { keyId: `key_${randomBytes(8).toString('hex')}`, key: `isk_${randomBytes(32).toString('base64url')}` };
}

/** What a presented key must look like before it is worth hashing: the alphabet and length of mintKey's. */
export const KEY_SHAPE = /^isk_[A-Za-z0-9_-]{43}$/;

/**
 * The stored form of a key: HMAC-SHA-256 keyed with the server's pepper (API_KEY_PEPPER). A key is
 * 256 random bits, so a fast hash is safe (a slow password hash such as scrypt or argon2 defends
 * low-entropy secrets against guessing, which 2^256 already rules out, and would cost milliseconds
 * of CPU on every request whose key is not cached). The pepper, kept out of the database, makes the
 * table alone useless: with a dump but not the pepper, a hash cannot even be checked against a key.
 */
export function keyHash(pepper: string, key: string): Buffer {
  return createHmac('sha256', pepper).update(key).digest();
}
