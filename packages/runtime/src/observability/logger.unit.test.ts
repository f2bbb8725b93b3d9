import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, wantsPrettyLogs } from './logger.ts';
import { withLogContext } from './logContext.ts';

/** The raw lines a logger writes (raw: JSON.parse would hide a duplicated key). */
function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

/** Every key of a flat JSON line, in order, duplicates included. */
const keysOf = (line: string): string[] => [...line.matchAll(/[{,]"([^"]+)":/g)].map((m) => m[1] as string);

describe('logger', () => {
  it('a child binding a key its parent has replaces it: no duplicate component key (npm start wrote two)', () => {
    const { lines, stream } = capture();
    const log = createLogger({ name: 'ingest', destination: stream });
    // scripts/start.ts binds component=projector, and the projector's service binds component=relay.
    log.child({ component: 'projector' }).child({ component: 'relay', shop: 'a' }).child({ shop: 'b' }).info('x');
    const line = lines[0] as string;
    const keys = keysOf(line);
    expect(new Set(keys).size).toBe(keys.length);
    expect(JSON.parse(line)).toMatchObject({ component: 'projector/relay', shop: 'b', service: 'ingest', msg: 'x' });
    log.child({ component: 'projector' }).child({ component: 'projector' }).info('same');
    expect(JSON.parse(lines[1] as string)).toMatchObject({ component: 'projector' });
  });

  it('a child without a clash keeps its parent bindings and the level', () => {
    const { lines, stream } = capture();
    const log = createLogger({ name: 'ingest', level: 'warn', destination: stream });
    const child = log.child({ component: 'kafka' });
    child.info('dropped');
    child.warn({ n: 1 }, 'kept');
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ component: 'kafka', n: 1, msg: 'kept' }),
    ]);
  });

  it('every line written inside a request carries its request id, however deep the child', async () => {
    const { lines, stream } = capture();
    const log = createLogger({ name: 'gateway', destination: stream }).child({ component: 'gateway' });
    await withLogContext({ request_id: 'req-1' }, async () => {
      log.info('first');
      await new Promise((r) => setTimeout(r, 1));
      log.child({ component: 'submit' }).warn('after an await');
    });
    log.info('outside');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.map((p) => p['request_id'])).toEqual(['req-1', 'req-1', undefined]);
  });

  it('a request id the line or a binding states itself is written once', () => {
    const { lines, stream } = capture();
    const log = createLogger({ name: 'gateway', destination: stream });
    withLogContext({ request_id: 'ctx' }, () => {
      log.info({ request_id: 'own' }, 'own field');
      log.child({ request_id: 'bound' }).info('bound');
    });
    for (const line of lines) {
      const keys = keysOf(line);
      expect(keys.filter((k) => k === 'request_id')).toHaveLength(1);
    }
    expect(lines.map((l) => (JSON.parse(l) as { request_id: string }).request_id)).toEqual(['own', 'bound']);
  });

  it('secrets in bindings and fields stay redacted', () => {
    const { lines, stream } = capture();
    const log = createLogger({ name: 'gateway', destination: stream });
    log
      .child({ component: 'a' })
      .child({ component: 'b' })
      .info({ headers: { authorization: 'Bearer s' } }, 'h');
    expect(lines[0]).not.toContain('Bearer');
  });

  it('pretty only for a terminal outside production, unless LOG_FORMAT says', () => {
    expect(wantsPrettyLogs({}, true)).toBe(true);
    expect(wantsPrettyLogs({}, false)).toBe(false);
    expect(wantsPrettyLogs({ NODE_ENV: 'production' }, true)).toBe(false);
    expect(wantsPrettyLogs({ LOG_FORMAT: 'json' }, true)).toBe(false);
    expect(wantsPrettyLogs({ LOG_FORMAT: 'pretty' }, false)).toBe(true);
  });
});
